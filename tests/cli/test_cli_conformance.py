"""`conformance`: plan, a passing run with report files, a failing run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli.main import main
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


def test_coverage_prints_the_requirement_figure(cli: Cli) -> None:
    from inspector.conformance.requirements import coverage

    r = cli("conformance", "--coverage")
    assert r.code == 0, r.out
    cov = r.doc["coverage"]
    assert cov["musts_checked"] == coverage().musts_checked
    assert cov["must_percent"] >= 90.0


def test_the_documented_command_passes_the_stock_provider(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The one command of `conformance --help` and docs/conformance.md, on the in-process
    virtual device: every check passes (the device takes the short confirmation lifetime
    for the run, and acts as a second app for the caller checks)."""
    code = main(["conformance", "com.example.pricealerts", "--reference-setup",
                 "--confirmation-ttl-ms", "1500",
                 "--allow-mutations", "create_alert,sync_watchlist,share_watchlist",
                 "--virtual-state", str(tmp_path / "state"), "--json"])
    doc = json.loads(capsys.readouterr().out)
    results = doc["report"]["results"]
    bad = [(x["check_id"], x["outcome"], x["message"]) for x in results
           if x["outcome"] not in ("pass", "not_applicable")]
    assert bad == [] and code == 0
    expired = next(x for x in results if x["check_id"] == "confirmation.expired_token")
    assert expired["outcome"] == "pass"


def test_help_shows_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--reference-setup --confirmation-ttl-ms 1500" in out
    assert "--allow-mutations create_alert,sync_watchlist,share_watchlist" in out


def test_readme_example_runs_as_written(cli: Cli, tmp_path: Path) -> None:
    """README: `cetp-inspector conformance com.example.badprovider --junit report.xml`: the
    package declares two CETP services; the suite runs against its own and judges both."""
    junit = tmp_path / "report.xml"
    r = cli("conformance", "com.example.badprovider", "--junit", str(junit))
    assert r.code == 1, r.out  # it runs (and the provider is non-conforming)
    assert r.doc["report"]["target"]["authority"] == "com.example.badprovider.clawseed.tools"
    assert "discovery.same_package" in r.doc["report"]["summary"]["must_failed"]
    assert junit.read_text().startswith("<?xml")


def test_conformance_of_an_extension(cli: Cli) -> None:
    """`conformance EXTENSION`: the extension suite; functions only with --allow-calls."""
    r = cli("conformance", "dice", "--allow-calls", "roll_dice")
    assert r.code == 0, r.out
    results = {x["check_id"]: x["outcome"] for x in r.doc["report"]["results"]}
    assert results["ext.calls_answer"] == "pass" and results["ext.bridge"] == "pass"
    r = cli("conformance", "dice")
    assert r.code == 1 and "need setup (ext.calls_answer)" in r.doc["error"]["message"]


def test_setup_file_lifetime_applies_to_the_in_process_device(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A --setup file's resume_token_ttl_ms also shortens the in-process device's
    confirmation lifetime, so the expired-token check runs (and passes)."""
    from inspector.conformance.presets import reference_setup

    setup = reference_setup("com.example.pricealerts", confirmation_ttl_ms=1200)
    assert setup is not None
    setup.allow_mutations = ["create_alert"]
    path = tmp_path / "setup.json"
    path.write_text(setup.model_dump_json(exclude_none=True), encoding="utf-8")
    code = main(["conformance", "com.example.pricealerts", "--setup", str(path),
                 "--select", "confirmation.expired_token",
                 "--virtual-state", str(tmp_path / "state"), "--json"])
    doc = json.loads(capsys.readouterr().out)
    [r] = [x for x in doc["report"]["results"] if x["check_id"] == "confirmation.expired_token"]
    assert r["outcome"] == "pass", r["message"]
    assert code == 0
