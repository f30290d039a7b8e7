"""The shared Android rule vectors (tests/vectors/android_rules/cases.json) run against the
virtual device itself: each case becomes a device, a relay manifest and an IPC."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from inspector.android import rules as r
from inspector.relay.api import RelayError
from inspector.virtual.manifest import EXT_ACTIVITY_ACTION, ProviderDecl
from tests.android.vectors import case_ids, load_cases, verdict_outcome
from tests.virtual.android_apps import RulesProbeApp, op, relay_manifest, strict_device
from tests.virtual.phones import FakeConnection
from tests.virtual.test_android_platform import broadcast_dice, probe_resolution

PROVIDER_CASES = [c for c in load_cases("provider_access")
                  if c["caller"]["uid"] != c["provider"]["uid"]]  # the relay is not the provider


def blocked(err: RelayError, expect: dict[str, Any]) -> dict[str, Any]:
    rule = err.details["rule"] if err.details is not None else None
    return verdict_outcome(False, err.code, rule, err.message, expect)


@pytest.mark.parametrize("case", PROVIDER_CASES, ids=case_ids(PROVIDER_CASES))
async def test_provider_access_vector(tmp_path: Path, case: dict[str, Any]) -> None:
    p = case["provider"]
    granted = tuple(case["caller"]["granted"])
    app = RulesProbeApp(ProviderDecl(
        name=".Tools", authority=RulesProbeApp.AUTHORITY, exported=p["exported"],
        permission=p["permission"], read_permission=p["read_permission"],
        write_permission=p["write_permission"]), defines=tuple(
            g for g in granted if not g.startswith("android.")))
    device = strict_device(tmp_path, case["api"], apps=[app],
                           # QUERY_ALL_PACKAGES: these cases are about the permission, not
                           # about visibility (the probe app matches no <queries>)
                           relay_manifest=relay_manifest(r.QUERY_ALL_PACKAGES, *granted))
    try:
        await op(device, "call", authority=RulesProbeApp.AUTHORITY, method="ping")
        got = verdict_outcome(True, None, None, "", case["expect"])
    except RelayError as err:
        got = blocked(err, case["expect"])
    await device.aclose()
    assert got == case["expect"]


BROADCAST_CASES = load_cases("broadcast")


@pytest.mark.parametrize("case", BROADCAST_CASES, ids=case_ids(BROADCAST_CASES))
async def test_broadcast_vector(tmp_path: Path, case: dict[str, Any]) -> None:
    device = strict_device(tmp_path, case["api"])
    if case["target_stopped"]:
        await op(device, "force_stop", package="com.example.dice")
    reply = await broadcast_dice(device, include_stopped=case["include_stopped"])
    await device.aclose()
    delivered = not reply["timed_out"]
    expect = case["expect"]
    got = verdict_outcome(delivered, None if delivered else r.TIMEOUT,
                          None if delivered else "stopped_package_broadcast", "", expect)
    assert got == expect


NULL_CASES = load_cases("null_binding")


@pytest.mark.parametrize("case", NULL_CASES, ids=case_ids(NULL_CASES))
async def test_null_binding_vector(tmp_path: Path, case: dict[str, Any]) -> None:
    device = strict_device(tmp_path, case["api"], apps=[RulesProbeApp()])
    with pytest.raises(RelayError) as err:
        await op(device, "bind_transact", package=RulesProbeApp.PACKAGE,
                 action=RulesProbeApp.NULL_ACTION, descriptor="x", code=1, strings=[],
                 timeout_ms=case["timeout_ms"])
    await device.aclose()
    assert blocked(err.value, case["expect"]) == case["expect"]


BAL_CASES = load_cases("background_start")


@pytest.mark.parametrize("case", BAL_CASES, ids=case_ids(BAL_CASES))
async def test_background_start_vector(tmp_path: Path, case: dict[str, Any]) -> None:
    device = strict_device(tmp_path, case["api"])
    device.android.ui = r.RelayUiState(**case["ui"])
    try:
        await op(device, "start_activity", package="com.example.flashlight",
                 action=EXT_ACTIVITY_ACTION, extras=None)
        got = verdict_outcome(True, None, None, "", case["expect"])
    except RelayError as err:
        got = blocked(err, case["expect"])
    await device.aclose()
    assert got == case["expect"]


PI_CASES = load_cases("pending_intent")


@pytest.mark.parametrize("case", PI_CASES, ids=case_ids(PI_CASES))
async def test_pending_intent_vector(tmp_path: Path, case: dict[str, Any]) -> None:
    pi = case["pi"]
    device = strict_device(tmp_path, case["api"], apps=[RulesProbeApp()])
    conn = FakeConnection()
    handle = await probe_resolution(
        device, conn, pi["kind"] + (":new_task" if pi["new_task"] else ""))
    if pi["cancelled"]:
        await op(device, "force_stop", conn, package=RulesProbeApp.PACKAGE)
    try:
        r_ = await op(device, "launch_pending_intent", conn, handle=handle)
        got: dict[str, Any] = {"outcome": "result" if r_["result_code"] == -1
                               else "cancelled_new_task"}
    except RelayError as err:
        got = {"outcome": "cancelled" if err.code == "NOT_FOUND" else "no_result"}
        if err.details is not None and err.details["rule"]:
            got["rule"] = err.details["rule"]
    if got["outcome"] == "cancelled_new_task":
        got["rule"] = "pending_intent_new_task"
    await device.aclose()
    assert got == case["expect"]
