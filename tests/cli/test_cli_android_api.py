"""`--android-api N`: devices, providers, call and conformance on the in-process virtual
device under each Android profile; the profile and its rules are visible to the user, and a
call a rule blocks names the rule and its AOSP source."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.android.rules import rules_in_force
from inspector.cli.main import main
from inspector.conformance.presets import PRICE_ALERTS_MUTATIONS, reference_setup
from tests.cli.conftest import ROOT, Result

API_LEVELS = [26, 29, 31, 33, 34, 35]
GUARDED_PLUGIN = Path(__file__).parent / "plugins" / "guarded.py"


def run(capsys: pytest.CaptureFixture[str], *argv: str, json_out: bool = True) -> Result:
    capsys.readouterr()
    code = main([*argv, *(["--json"] if json_out else [])])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err, captured.err
    return Result(code, captured.out, captured.err)


@pytest.mark.parametrize("api", API_LEVELS)
def test_devices_shows_the_profile_and_its_rules(capsys: pytest.CaptureFixture[str],
                                                 api: int) -> None:
    doc = run(capsys, "devices", "--android-api", str(api)).doc
    (virtual,) = [d for d in doc["devices"] if d["serial"] == "virtual"]
    assert virtual["sdk"] == api
    assert virtual["android_rules"] == [r.id for r in rules_in_force(api)]
    assert ("background_activity_start" in virtual["android_rules"]) is (api >= 29)
    assert ("package_visibility" in virtual["android_rules"]) is (api >= 30)
    text = run(capsys, "devices", "--android-api", str(api), json_out=False).out
    assert f"(API {api}) rules in force: provider_permission" in text


@pytest.mark.parametrize("api", API_LEVELS)
def test_providers_and_call_run_under_each_profile(capsys: pytest.CaptureFixture[str],
                                                   api: int) -> None:
    doc = run(capsys, "providers", "--android-api", str(api)).doc
    assert doc["android"]["api"] == api
    assert "com.clawseed.permission.ACCESS_TOOLS" in doc["android"]["relay_granted_permissions"]
    packages = {p["package"] for p in doc["providers"]}
    assert {"com.example.pricealerts", "com.example.finance"} <= packages
    r = run(capsys, "call", "com.example.pricealerts", "get_quote", "--args",
            '{"symbol": "ACME"}', "--android-api", str(api))
    assert r.code == 0, r.out
    assert r.doc["android"]["api"] == api
    assert r.doc["android"]["rules"] == [x.id for x in rules_in_force(api)]


@pytest.mark.parametrize("api", [26, 29, 35])
def test_conformance_passes_every_must_under_the_profile(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, api: int) -> None:
    setup = reference_setup("com.example.pricealerts")
    assert setup is not None
    setup.allow_mutations = list(PRICE_ALERTS_MUTATIONS)
    setup_file = tmp_path / "setup.json"
    setup_file.write_text(setup.model_dump_json(), "utf-8")
    r = run(capsys, "conformance", "com.example.pricealerts", "--setup", str(setup_file),
            "--android-api", str(api))
    summary = r.doc["report"]["summary"]
    assert summary["must_failed"] == []
    # only the expired-token check waits for a short confirmation lifetime (not set here)
    assert summary["must_not_passed"] == ["confirmation.expired_token"]
    assert r.doc["android"]["api"] == api


@pytest.mark.parametrize("json_out", [True, False])
def test_a_blocked_call_names_the_rule_and_its_source(capsys: pytest.CaptureFixture[str],
                                                      json_out: bool) -> None:
    r = run(capsys, "call", "com.example.guarded", "get_quote", "--args", '{"symbol": "ACME"}',
            "--virtual-plugin", str(GUARDED_PLUGIN), "--android-api", "33", json_out=json_out)
    assert r.code != 0
    text = json.dumps(r.doc["error"]) if json_out else r.err
    assert "SECURITY" in text
    assert "Android rule provider_permission, API 33" in text
    assert "ContentProviderHelper.java" in text
    assert "com.example.guarded.permission.PRIVATE" in text


def test_an_unknown_api_level_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    r = run(capsys, "devices", "--android-api", "27")
    assert r.code == 2
    assert r.doc["error"]["code"] == "BAD_ANDROID_API"
    assert "26, 28, 29, 30, 31, 33, 34, 35" in r.doc["error"]["message"]


def test_the_standalone_virtual_device_plays_the_chosen_profile(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    sock = tmp_path / "v.sock"
    proc = subprocess.Popen(
        [sys.executable, "-m", "inspector.virtual", "--listen", f"unix:{sock}", "--token", "t",
         "--android-api", "29"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=ROOT)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("listening on")
        doc = run(capsys, "providers", "--relay-socket", f"unix:{sock}", "--token", "t").doc
        assert doc["android"]["api"] == 29
        assert "package_visibility" not in doc["android"]["rules"]
    finally:
        proc.terminate()
        proc.wait(10)


def test_the_standalone_virtual_device_refuses_an_unknown_profile(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "inspector.virtual", "--listen", f"unix:{tmp_path / 's'}",
         "--token", "t", "--android-api", "22"], capture_output=True, text=True, cwd=ROOT,
        timeout=60)
    assert proc.returncode == 2
    assert "no Android profile for API level 22" in proc.stderr


def test_ext_manifest_checks_required_permissions_against_the_relay_grants(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Rule andyclaw_required_permissions: the relay (the host here) holds no CAMERA."""
    doc = run(capsys, "ext-manifest", "com.example.flashlight").doc
    checks = {c["name"]: c for c in doc["security_checks"]}
    assert checks["required_permissions"]["result"] == "fail"
    assert "android.permission.CAMERA" in checks["required_permissions"]["message"]


@pytest.mark.parametrize(("api", "blocked"), [(28, False), (29, True), (35, True)])
def test_a_relay_in_the_background_cannot_start_activities_from_api_29(
        capsys: pytest.CaptureFixture[str], api: int, blocked: bool) -> None:
    r = run(capsys, "ext-call", "flashlight", "toggle_flashlight", "--args", '{"on": true}',
            "--approve", "--android-api", str(api), "--virtual-relay-background")
    if blocked:
        assert r.code != 0
        assert r.doc["error"]["code"] == "NEEDS_FOREGROUND"
        assert f"Android rule background_activity_start, API {api}" in r.doc["error"]["message"]
        assert "BackgroundActivityStartController" in r.doc["error"]["message"]
    else:
        assert r.code == 0, r.out
