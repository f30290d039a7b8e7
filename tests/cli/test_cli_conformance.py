"""`conformance`: plan, a passing run with report files, a failing run."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import Cli


def test_plan_only(cli: Cli) -> None:
    r = cli("conformance", "pricealerts", "--plan")
    assert r.code == 0, r.out
    plan = r.doc["plan"]
    assert plan["provider"] == "com.example.pricealerts"
    assert any(i["check_id"] == "negotiate.success" for i in plan["items"])
    assert plan["mutating_tools"] == []  # nothing mutates unless allowed


def test_conforming_v1_provider_passes_and_writes_reports(cli: Cli, tmp_path: Path) -> None:
    report, junit = tmp_path / "report.json", tmp_path / "junit.xml"
    r = cli("conformance", "com.example.finance", "--report", str(report), "--junit", str(junit))
    assert r.code == 0, r.out
    assert r.doc["ok"] is True and r.doc["report"]["passed"] is True
    assert json.loads(report.read_text())["target"]["package"] == "com.example.finance"
    assert junit.read_text().startswith("<?xml")


def test_nonconforming_provider_fails(cli: Cli) -> None:
    r = cli("conformance", "com.example.badprovider.clawseed.tools")
    assert r.code == 1
    assert r.doc["error"]["code"] == "NOT_CONFORMANT"
    failed = r.doc["report"]["summary"]["must_failed"]
    assert "negotiate.limits_minimums" in failed and "tool.name_pattern" in failed


def test_unknown_check_pattern_is_a_usage_error(cli: Cli) -> None:
    r = cli("conformance", "pricealerts", "--select", "no.such.check")
    assert r.code == 2 and r.doc["error"]["code"] == "CONFORMANCE"
