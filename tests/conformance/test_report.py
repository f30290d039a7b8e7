"""The JSON report validates against its documented schema; the JUnit XML loads in a
standard JUnit parser."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from inspector.conformance import (
    Outcome,
    report_json,
    report_schema,
    run_conformance,
    write_junit,
)
from inspector.conformance.model import CheckResult, ConformanceReport, TargetInfo
from inspector.conformance.report import load_report, write_json

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
async def report(client) -> ConformanceReport:
    return await run_conformance(client, "com.example.badprovider")


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(report_schema())


async def test_json_report_matches_schema(report: ConformanceReport, tmp_path: Path) -> None:
    doc = json.loads(report_json(report))
    jsonschema.Draft202012Validator(report_schema()).validate(doc)
    assert doc["schema_version"] == 1 and doc["passed"] is False
    assert doc["summary"]["counts"]["fail"] == len(doc["summary"]["must_failed"])
    write_json(report, tmp_path / "r.json")
    again = load_report((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert again.results == report.results and again.plan == report.plan


async def test_junit_parses(report: ConformanceReport, tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    xml = write_junit(report, path)
    root = ET.fromstring(path.read_bytes())
    assert xml.startswith("<?xml")
    assert root.tag == "testsuites"
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == len(report.results)
    assert int(root.get("failures")) == len(report.by_outcome(Outcome.FAIL))
    failures = [c for c in cases if c.find("failure") is not None]
    assert {c.find("properties/property[@name='check_id']").get("value")
            for c in failures} == {r.check_id for r in report.by_outcome(Outcome.FAIL)}


async def test_junit_loads_in_junitparser(report: ConformanceReport, tmp_path: Path) -> None:
    import junitparser
    path = tmp_path / "junit.xml"
    write_junit(report, path)
    xml = junitparser.JUnitXml.fromfile(str(path))
    cases = [c for suite in xml for c in suite]
    assert len(cases) == len(report.results)
    failed = [c for c in cases if any(isinstance(r, junitparser.Failure) for r in c.result)]
    assert len(failed) == len(report.by_outcome(Outcome.FAIL))
    skipped = [c for c in cases if any(isinstance(r, junitparser.Skipped) for r in c.result)]
    assert len(skipped) == len(report.by_outcome(Outcome.NEEDS_SETUP, Outcome.NOT_APPLICABLE,
                                                 Outcome.SKIPPED))


def test_junit_survives_hostile_text() -> None:
    r = ConformanceReport(target=TargetInfo(package="p\x00q"), results=[CheckResult(
        check_id="text.control_chars", title="t", section="§7.3", level="SHOULD",
        category="untrusted", outcome=Outcome.FAIL, message="bad \x1b[31m\u202e text\x00")])
    r.finalize()
    root = ET.fromstring(write_junit(r).encode())
    assert "\\u{001b}" in root.find("./testsuite/testcase/failure").get("message")


def test_text_summary() -> None:
    r = ConformanceReport(target=TargetInfo(package="p"), results=[CheckResult(
        check_id="a.b", title="t", section="§1", level="MUST", category="errors",
        outcome=Outcome.NEEDS_SETUP, message="needs x")])
    r.finalize()
    assert not r.passed and r.summary.must_not_passed == ["a.b"]
    assert "NEEDS_SETUP" in r.text()
    # nothing failed: the verdict leads with that, then what needs setup
    assert r.verdict() == "0 failed, 1 need setup (a.b)"
    assert r.text().endswith("RESULT: 0 failed, 1 need setup (a.b)")
    r.results.append(CheckResult(check_id="c.d", title="t", section="§2", level="MUST",
                                 category="errors", outcome=Outcome.FAIL, message="broken"))
    r.finalize()
    assert r.verdict() == "1 failed (c.d), 1 need setup (a.b)"


def test_docs_list_every_check() -> None:
    from inspector.conformance import catalogue

    doc = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
    missing = [c["id"] for c in catalogue() if f"`{c['id']}`" not in doc]
    assert missing == []
