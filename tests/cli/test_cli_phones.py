"""The CLI with phones that behave like real ones (issue 11, issue 10 part 3), through the real
adb server and the fake phone: no silent fallback, causes named, diagnostics shown, output
that survives any terminal encoding, and a quiet adb server start."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import adbutils
import pytest

from inspector.cli.context import Ctx
from inspector.cli.main import error_info, run_command
from inspector.cli.output import print_error
from inspector.cli.parser import build_parser
from inspector.device.adb_server import AdbEndpoint, kill_server
from inspector.device.layer import AdbDeviceLayer
from inspector.device.shipped_relay import ShippedRelay
from inspector.device.vendors import MIUI_SETTING
from inspector.session.devices import AdbLayerSource, DeviceManager
from tests.cli.conftest import run_subprocess
from tests.device import fakephone_android as android
from tests.device.conftest import adb_endpoint, connect_phone, phone, shipped  # noqa: F401
from tests.device.fakephone import FakePhone, free_port
from tests.device.tiny_relay import (
    preinstall_relay,
    serving_reference_apps,
)

pytestmark = pytest.mark.adb


@dataclass
class Run:
    code: int
    out: str
    err: str

    @property
    def doc(self) -> dict:
        return json.loads(self.out)


def cli(argv: list[str], endpoint: AdbEndpoint, shipped: ShippedRelay,  # noqa: F811
        capsys: pytest.CaptureFixture[str], *, as_json: bool = True) -> Run:
    """One command with the CLI's own wiring, its adb layer on the test's adb server."""
    capsys.readouterr()
    layer = AdbDeviceLayer(endpoint, shipped=shipped)
    ctx = Ctx(build_parser().parse_args([*argv, "--json"] if as_json else argv))
    own = ctx.device_manager()
    ctx.manager = DeviceManager(adb=AdbLayerSource(
        layer, confirm_uninstall=own._confirm_uninstall, notify=ctx.note))

    async def go() -> int:
        try:
            return await run_command(ctx)
        finally:
            assert not layer.links  # the command ended its relay session itself
            await layer.stop()

    try:
        code = asyncio.run(go())
    except Exception as exc:  # as main() does
        info, exit_code = error_info(exc)
        print_error(info, as_json=as_json, command=ctx.command, extra=ctx.error_extra())
        if not as_json:
            ctx.print_failure_diagnostics()
        code = int(exit_code)
    captured = capsys.readouterr()
    return Run(code, captured.out, captured.err)


@pytest.fixture(autouse=True)
def _use_adb(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CETP_INSPECTOR_NO_ADB", raising=False)


@pytest.fixture
def apps(phone: FakePhone, shipped: ShippedRelay) -> Iterator[FakePhone]:  # noqa: F811
    """The phone with the relay serving the virtual device's reference apps."""
    with serving_reference_apps(phone, shipped):
        yield phone



@pytest.fixture
def second_phone(adb_endpoint: AdbEndpoint) -> Iterator[FakePhone]:  # noqa: F811
    p = FakePhone().start()
    assert connect_phone(adb_endpoint, p).startswith("connected")
    yield p
    adbutils.AdbClient(port=adb_endpoint.port).disconnect(p.serial)
    p.stop()


# -- no silent fallback -------------------------------------------------------------------------
def test_two_phones_without_d_is_an_error_naming_both(
    adb_endpoint: AdbEndpoint, phone: FakePhone, second_phone: FakePhone,  # noqa: F811
    shipped: ShippedRelay, capsys: pytest.CaptureFixture[str],  # noqa: F811
) -> None:
    r = cli(["providers"], adb_endpoint, shipped, capsys)
    assert r.code == 2 and r.doc["error"]["code"] == "TOO_MANY_DEVICES"
    assert phone.serial in r.doc["error"]["message"]
    assert second_phone.serial in r.doc["error"]["message"]
    r = cli(["devices"], adb_endpoint, shipped, capsys)
    assert r.code == 0 and r.doc["default"] is None
    assert "2 phones are attached" in r.doc["default_note"]


def test_only_an_unauthorized_phone_says_what_to_do(
    adb_endpoint: AdbEndpoint, shipped: ShippedRelay,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    p = FakePhone(mode="unauthorized").start()
    try:
        connect_phone(adb_endpoint, p)
        r = cli(["providers"], adb_endpoint, shipped, capsys, as_json=False)
        assert r.code == 3 and r.out == ""
        assert "DEVICE_NOT_READY" in r.err and "unauthorized" in r.err
        assert "Allow USB debugging" in r.err  # the hint says what to do
    finally:
        adbutils.AdbClient(port=adb_endpoint.port).disconnect(p.serial)
        p.stop()


def test_no_phone_uses_the_virtual_device_and_says_so(
    adb_endpoint: AdbEndpoint, shipped: ShippedRelay,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    r = cli(["providers"], adb_endpoint, shipped, capsys)
    assert r.code == 0 and r.doc["device"] == "virtual"
    assert r.doc["device_fallback"] == "no phone is attached; using the virtual device"
    r = cli(["providers"], adb_endpoint, shipped, capsys, as_json=False)
    assert r.code == 0 and "note: no phone is attached; using the virtual device" in r.err


# -- trust ---------------------------------------------------------------------------------------
def test_foreign_newer_relay_stops_with_its_certificate_and_the_consent_flag(
    adb_endpoint: AdbEndpoint, apps: FakePhone, shipped: ShippedRelay,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    preinstall_relay(apps, shipped, shipped.version_code + 3, "their certificate")
    r = cli(["providers"], adb_endpoint, shipped, capsys)
    assert r.code == 3 and r.doc["error"]["code"] == "INSTALL_NEEDS_CONFIRMATION"
    theirs = hashlib.sha256(b"their certificate").hexdigest()[:2].upper()
    assert f"SHA-256 {theirs}:" in r.doc["error"]["message"]
    assert "--allow-uninstall" in r.doc["error"]["hint"]
    assert not any(c.startswith("am start") for c in apps.state.commands)
    r = cli(["providers", "--allow-uninstall"], adb_endpoint, shipped, capsys)
    assert r.code == 0 and "com.example.finance" in {p["package"] for p in r.doc["providers"]}


# -- diagnostics ---------------------------------------------------------------------
def test_refused_grants_are_shown_with_the_vendor_setting(
    adb_endpoint: AdbEndpoint, apps: FakePhone, shipped: ShippedRelay,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    android.vendor(apps, "hyperos")
    r = cli(["providers"], adb_endpoint, shipped, capsys)
    assert r.code == 0
    refused = [d for d in r.doc["device_diagnostics"] if d["code"] == "GRANT_REFUSED"]
    assert refused and MIUI_SETTING in refused[0]["hint"]
    r = cli(["providers"], adb_endpoint, shipped, capsys, as_json=False)
    assert r.code == 0 and "warning: The phone refused `pm grant" in r.err
    assert "USB debugging (Security settings)" in r.err


def test_devices_lists_what_is_wrong_on_each_phone(
    adb_endpoint: AdbEndpoint, apps: FakePhone, shipped: ShippedRelay,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    android.screen(apps, android.PhoneScreen(keyguard=True, exit_info=["6 (ANR) Input timeout"]))
    r = cli(["devices"], adb_endpoint, shipped, capsys)
    (row,) = [d for d in r.doc["devices"] if d["serial"] == apps.serial]
    codes = {d["code"] for d in row["diagnostics"]}
    assert {"KEYGUARD_LOCKED", "RELAY_KILLED"} <= codes
    r = cli(["devices"], adb_endpoint, shipped, capsys, as_json=False)
    assert "The phone is locked" in r.out and "6 (ANR) Input timeout" in r.out


def test_install_prompt_note_reaches_the_user_while_waiting(
    adb_endpoint: AdbEndpoint, apps: FakePhone, shipped: ShippedRelay,  # noqa: F811
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    import inspector.device.relay_lifecycle as lc

    monkeypatch.setattr(lc, "INSTALL_PROMPT_NOTICE_S", 0.3)
    android.install_prompt(apps, 1.2)
    r = cli(["providers"], adb_endpoint, shipped, capsys)
    assert r.code == 0 and any("look at the phone" in n for n in r.doc["notes"])


def test_am_start_that_never_answers_still_connects_and_says_why(
    adb_endpoint: AdbEndpoint, apps: FakePhone, shipped: ShippedRelay,  # noqa: F811
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    import inspector.device.relay_lifecycle as lc

    monkeypatch.setattr(lc, "AM_START_WAIT_S", 0.5)
    android.am_start_wait_hangs(apps)
    r = cli(["providers"], adb_endpoint, shipped, capsys)
    assert r.code == 0 and "com.example.finance" in {p["package"] for p in r.doc["providers"]}
    assert any("did not answer" in n and "screen may be off" in n for n in r.doc["notes"])
    human = cli(["providers"], adb_endpoint, shipped, capsys, as_json=False)
    assert human.code == 0 and "com.example.finance" in human.out
    assert "note:" in human.err and "Unlock the phone" in human.err


# -- terminals and the adb server ----------------------------------------------------
def test_ascii_terminal_degrades_instead_of_crashing(
    adb_endpoint: AdbEndpoint, phone: FakePhone,  # noqa: F811
) -> None:
    phone.state.props["ro.product.model"] = "Größe § Phone"
    proc = run_subprocess("-m", "inspector.cli", "devices", env={
        "PYTHONIOENCODING": "ascii", "CETP_INSPECTOR_NO_ADB": "0"})
    assert proc.returncode == 0, proc.stderr
    assert "UnicodeEncodeError" not in proc.stderr + proc.stdout
    assert "Gr\\xf6\\xdfe \\xa7 Phone" in proc.stdout


def test_connecting_starts_the_adb_server_quietly_like_listing(
    tmp_path: os.PathLike[str],
) -> None:
    endpoint = AdbEndpoint(port=free_port())
    env = {"ANDROID_ADB_SERVER_PORT": str(endpoint.port), "CETP_INSPECTOR_NO_ADB": "0"}
    try:
        proc = run_subprocess("-m", "inspector.cli", "providers", "-d", "NOPE123", env=env)
        assert "daemon" not in proc.stderr and "starting now" not in proc.stderr, proc.stderr
        assert "NOPE123" in proc.stderr and proc.returncode == 3
        assert endpoint.is_running()
    finally:
        asyncio.run(kill_server(endpoint))


def test_devices_with_a_wedged_phone_lists_every_phone_quickly(
    adb_endpoint: AdbEndpoint, phone: FakePhone, shipped: ShippedRelay,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    import time

    wedged = android.getprop_hangs(FakePhone()).start()
    try:
        assert connect_phone(adb_endpoint, wedged).startswith("connected")
        start = time.monotonic()
        r = cli(["devices"], adb_endpoint, shipped, capsys)
        assert time.monotonic() - start < 10
        rows = {d["serial"]: d for d in r.doc["devices"]}
        assert rows[phone.serial]["model"].startswith("Fakeco Fake Phone 7")
        assert "did not answer" in rows[wedged.serial]["error"]
        assert rows[wedged.serial]["message"] == rows[wedged.serial]["error"]
        assert r.doc["adb_error"] is None
    finally:
        adbutils.AdbClient(port=adb_endpoint.port).disconnect(wedged.serial)
        wedged.stop()


def test_a_command_pins_the_relay_only_while_it_runs(
    adb_endpoint: AdbEndpoint, apps: FakePhone, shipped: ShippedRelay,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    scr = android.screen(apps, android.PhoneScreen(buckets={shipped.package: 40}))
    r = cli(["providers"], adb_endpoint, shipped, capsys)
    assert r.code == 0
    pinned = [c for c in apps.state.commands if c.startswith(("am set-standby-bucket",
                                                               "cmd deviceidle whitelist "))]
    assert pinned == [f"am set-standby-bucket {shipped.package} active",
                      f"cmd deviceidle whitelist +{shipped.package}",
                      f"am set-standby-bucket {shipped.package} 40",
                      f"cmd deviceidle whitelist -{shipped.package}"]
    assert scr.buckets[shipped.package] == 40 and not scr.idle_allowlist


def test_recorded_journal_of_a_phone_session_holds_no_token_piece(
    adb_endpoint: AdbEndpoint, apps: FakePhone, shipped: ShippedRelay,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    r = cli(["providers", "--record", "phone-session"], adb_endpoint, shipped, capsys)
    assert r.code == 0 and r.doc["journal"]
    (start,) = [c for c in apps.state.commands if c.startswith("am start")]
    token = start.split()[-1]
    home = os.environ["CETP_INSPECTOR_HOME"]
    texts = [p.read_text("utf-8", "replace") for p in Path(home).rglob("*")
             if p.is_file()]
    assert texts, "the journal was written"
    for text in [*texts, r.out, r.err]:
        assert all(token[i:i + 8] not in text for i in range(len(token) - 7))


def test_a_failed_call_says_the_target_app_is_stopped_or_restricted(
    adb_endpoint: AdbEndpoint, phone: FakePhone, shipped: ShippedRelay,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    from inspector.protocol.bundle import Bundle
    from tests.device.fakephone import InstalledPackage

    pkg = "com.example.finance"
    with serving_reference_apps(phone, shipped) as device:
        phone.call(_arm(device, Bundle(kind="cold_start", package=pkg)))
        phone.state.packages[pkg] = InstalledPackage(pkg, 1, "1", "k", b"apk")
        android.screen(phone, android.PhoneScreen(stopped={pkg}, buckets={pkg: 45}))
        r = cli(["call", pkg, "get_portfolio_holdings"], adb_endpoint, shipped, capsys)
        assert r.code != 0 and r.doc["ok"] is False, r.out
        codes = [d["code"] for d in r.doc["device_diagnostics"]]
        assert codes == ["APP_STOPPED", "APP_RESTRICTED"]
        r = cli(["call", pkg, "get_portfolio_holdings"], adb_endpoint, shipped, capsys,
                as_json=False)
        assert "warning: on the phone: com.example.finance is in the stopped state" in r.err


async def _arm(device: object, args: object) -> None:
    device.faults.arm(args)  # type: ignore[attr-defined]
