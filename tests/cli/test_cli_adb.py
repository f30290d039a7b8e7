"""The CLI over a real adb server and a fake phone whose relay serves the virtual device's
apps: device listing, the default device choice and a call through adb."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest

from inspector.cli.context import Ctx
from inspector.cli.main import run_command
from inspector.cli.parser import build_parser
from inspector.device.adb_server import AdbEndpoint
from inspector.device.layer import AdbDeviceLayer
from inspector.device.shipped_relay import ShippedRelay
from inspector.session.devices import AdbLayerSource, DeviceManager
from tests.device.conftest import adb_endpoint, phone, shipped  # noqa: F401  (fixtures)
from tests.device.fakephone import FakePhone, InstalledPackage
from tests.device.tiny_relay import serving_reference_apps

pytestmark = pytest.mark.adb



@pytest.fixture
def phone_with_apps(phone: FakePhone, shipped: ShippedRelay) -> Iterator[FakePhone]:  # noqa: F811
    """The phone with the relay serving the virtual device's reference apps."""
    with serving_reference_apps(phone, shipped):
        yield phone


def run(argv: list[str], endpoint: AdbEndpoint, shipped: ShippedRelay,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    """Run one command with a device manager whose adb layer uses the test's adb server
    (the same wiring as `Ctx.device_manager`, with the test's layer injected)."""
    from inspector.cli.main import error_info

    layer = AdbDeviceLayer(endpoint, shipped=shipped)
    ctx = Ctx(build_parser().parse_args([*argv, "--json"]))
    own = ctx.device_manager()  # builds the CLI's confirm_uninstall from --allow-uninstall
    ctx.manager = DeviceManager(adb=AdbLayerSource(
        layer, confirm_uninstall=own._confirm_uninstall))

    async def go() -> int:
        try:
            return await run_command(ctx)
        finally:
            await layer.stop()

    try:
        code = asyncio.run(go())
    except Exception as exc:  # main() prints these as structured errors
        info, code = error_info(exc)
        return int(code), {"ok": False, "error": info.model_dump()}
    return code, json.loads(capsys.readouterr().out)


def test_devices_default_and_call_through_adb(
    adb_endpoint: AdbEndpoint,  # noqa: F811
    phone_with_apps: FakePhone,
    shipped: ShippedRelay,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    serial = phone_with_apps.serial
    code, doc = run(["devices"], adb_endpoint, shipped, capsys)
    assert code == 0
    rows = {d["serial"]: d for d in doc["devices"]}
    assert rows[serial]["kind"] == "adb" and rows[serial]["usable"] is True
    assert doc["default"] == serial  # the only adb device wins over the virtual device

    code, doc = run(["providers"], adb_endpoint, shipped, capsys)
    assert code == 0 and doc["device"] == serial
    assert "com.example.finance" in {p["package"] for p in doc["providers"]}

    code, doc = run(["call", "com.example.finance", "get_portfolio_holdings"], adb_endpoint,
                    shipped, capsys)
    assert code == 0, doc
    assert doc["device"] == serial and doc["execution"]["state"] == "succeeded"

    code, doc = run(["providers", "-d", "virtual"], adb_endpoint, shipped, capsys)
    assert code == 0 and doc["device"] == "virtual"


def test_incompatible_relay_needs_allow_uninstall(
    adb_endpoint: AdbEndpoint,  # noqa: F811
    phone_with_apps: FakePhone,
    shipped: ShippedRelay,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    phone_with_apps.state.packages[shipped.package] = InstalledPackage(
        shipped.package, shipped.version_code, "x", "other-key", b"someone's own relay build")
    code, doc = run(["providers"], adb_endpoint, shipped, capsys)
    assert code == 3 and doc["error"]["code"] == "INSTALL_NEEDS_CONFIRMATION"
    assert phone_with_apps.state.packages[shipped.package].cert_sha256 == "other-key"
    code, doc = run(["providers", "--allow-uninstall"], adb_endpoint, shipped, capsys)
    assert code == 0, doc
    assert "com.example.finance" in {p["package"] for p in doc["providers"]}
