"""The requirement matrix, the check registry and docs/conformance.md stay in step, and the
coverage figure meets the bar."""

from __future__ import annotations

import re
from pathlib import Path

from inspector.conformance.registry import CHECKS, _load
from inspector.conformance.requirements import (
    BEGIN,
    END,
    REQUIREMENTS,
    coverage,
    docs_section,
    requirements_for,
)

ROOT = Path(__file__).resolve().parents[2]
SPEC = Path("/work/shared/seeds/cetp-v2-spec.txt")


def _checks() -> dict[str, str]:
    _load()
    return {c.id: c.level for c in CHECKS.values()}


def test_ids_are_unique_and_numbered_in_order() -> None:
    ids = [r.id for r in REQUIREMENTS]
    assert ids == [f"P-{i:03d}" for i in range(1, len(ids) + 1)]


def test_every_named_check_exists() -> None:
    known = _checks()
    unknown = [(r.id, c) for r in REQUIREMENTS for c in r.checks if c not in known]
    assert unknown == []


def test_every_check_tests_a_requirement() -> None:
    homeless = [c for c in _checks() if not requirements_for(c)]
    assert homeless == []


def test_each_statement_is_checked_or_says_why_not() -> None:
    for r in REQUIREMENTS:
        assert bool(r.checks) != bool(r.unobservable), r.id
        assert re.fullmatch(r"§\d+(\.\d+)?", r.section), r.id
        assert r.quote and "|" not in r.quote + r.unobservable + r.note, r.id


def test_a_must_is_tested_by_a_failing_check_and_a_should_by_a_warning() -> None:
    levels = _checks()
    for r in REQUIREMENTS:
        if not r.checks:
            continue
        got = {levels[c] for c in r.checks}
        if r.is_must and r.normative:
            assert "MUST" in got, r.id
        if not r.is_must:
            assert got & {"SHOULD", "INFO"}, r.id  # a SHOULD never fails a run


def test_keyword_statements_quote_the_spec() -> None:
    """A normative statement's keyword is in the spec sentence it quotes (spot check on the
    words: every quoted word of 4+ letters appears in the spec)."""
    if not SPEC.exists():  # the shared seed lives outside the repository
        return
    spec = SPEC.read_text(encoding="utf-8").lower()
    for r in REQUIREMENTS:
        if not r.normative:
            continue
        words = [w for w in re.findall(r"[a-z_]{4,}", r.quote.lower())]
        missing = [w for w in words if w not in spec]
        assert missing == [], (r.id, missing)
        assert r.keyword.split()[0] in SPEC.read_text(encoding="utf-8"), r.id


def test_coverage_meets_the_bar() -> None:
    cov = coverage()
    assert cov.musts >= 40
    assert cov.must_percent >= 90.0, cov.text()
    # every observable SHOULD has a warning-level check
    assert cov.shoulds_checked == cov.shoulds_observable


def test_docs_carry_the_generated_matrix() -> None:
    doc = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
    start, end = doc.index(BEGIN), doc.index(END) + len(END)
    assert doc[start:end] == docs_section(), (
        "docs/conformance.md is out of date: run "
        "`python -m inspector.conformance.requirements --write docs/conformance.md`")
