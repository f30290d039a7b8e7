"""Device-level behaviour: discovery records, events, plugins, faults, wake/force-stop."""

from __future__ import annotations

import asyncio
import gc
import time
import uuid
import warnings
from pathlib import Path
from typing import Any

import pytest

from inspector.protocol.bundle import Bundle, BundleArray, Int, Long, StringArray
from inspector.relay.api import BAD_ARGS, IPC_FAILED, NOT_FOUND, RelayError
from inspector.virtual.app import VirtualApp
from inspector.virtual.apps.badprovider import BadProvider
from inspector.virtual.device import VirtualDevice
from inspector.virtual.manifest import PackageManifest, ProviderDecl, ServiceDecl
from inspector.virtual.plugins import PluginError
from tests.virtual.phones import PRICE_AUTH, V2, BackendPhone, value

PLUGINS = Path(__file__).parent / "plugin_files"


async def test_package_records_follow_section_4_1(phone: Any) -> None:
    records = {r["package"]: r for r in await phone.discover()}
    assert set(records) >= {
        "com.example.pricealerts",
        "com.example.finance",
        "org.ethereumphone.extensionexample",
        "com.example.unitconverter",
        "com.example.dice",
        "com.example.flashlight",
        "com.example.badprovider",
    }
    uids = [r["uid"] for r in records.values()]
    assert len(set(uids)) == len(uids) and all(isinstance(u, Int) for u in uids)
    p = records["com.example.pricealerts"]
    assert isinstance(p["version_code"], Long)
    assert isinstance(p["cert_sha256"], StringArray) and len(p["cert_sha256"][0]) == 64
    [svc] = p["services"]
    assert svc["name"] == "com.example.pricealerts.cetp.ToolProviderService"
    assert svc["exported"] is True and svc["actions"] == ("com.clawseed.action.TOOL_PROVIDER",)
    assert svc["meta_data"] == {
        "com.clawseed.tools.authority": PRICE_AUTH,
        "com.clawseed.tools.version": Int(1),
        "com.clawseed.tools.versions": "1,2",
    }
    [prov] = p["providers"]
    assert prov["authority"] == PRICE_AUTH
    assert prov["permission"] == "com.clawseed.permission.ACCESS_TOOLS"
    assert prov["init_order"] == Int(100)
    assert p["permissions"] == BundleArray(
        [Bundle(name="com.clawseed.permission.ACCESS_TOOLS", protection_level=Int(0))]
    )
    hello = records["org.ethereumphone.extensionexample"]
    assert hello["app_meta_data"]["org.ethereumphone.andyclaw.EXTENSION"] is True
    assert hello["app_meta_data"]["org.ethereumphone.andyclaw.EXTENSION_ID"] == "hello_world"
    assert isinstance(hello["app_meta_data"]["org.ethereumphone.andyclaw.EXTENSION_MANIFEST"], Int)
    fin = records["com.example.finance"]
    assert "com.clawseed.tools.versions" not in fin["services"][0]["meta_data"]
    assert records["com.example.dice"]["receivers"][0]["actions"] == (
        "org.ethereumphone.andyclaw.EXTENSION_BROADCAST",
    )
    assert [r["package"] for r in await phone.discover("com.example.dice")] == ["com.example.dice"]
    assert await phone.discover("com.not.installed") == []


async def test_plugin_changes_one_behaviour_and_emits_events(device: VirtualDevice) -> None:
    phone = BackendPhone(device)
    await phone.discover()  # the connection is known to the device from here on
    assert device.load_plugin(PLUGINS / "retry_bug.py") == ["com.example.bug42"]
    assert phone.events[-1] == Bundle(
        event="package_changed", change="added", package="com.example.bug42"
    )
    c = V2(phone, "com.example.bug42.clawseed.tools")
    await c.negotiate()
    rid = str(uuid.uuid4())
    a = value(await c.execute("create_alert", {"symbol": "ACME", "price": 100}, request_id=rid))
    b = value(await c.execute("create_alert", {"symbol": "ACME", "price": 100}, request_id=rid))
    assert a != b  # the reproduced bug: executed twice
    device.uninstall("com.example.bug42")
    assert phone.events[-1]["change"] == "removed"
    device.install(BadProvider())
    assert phone.events[-1]["change"] == "replaced"


def test_broken_plugins_say_why(device: VirtualDevice, tmp_path: Path) -> None:
    with pytest.raises(PluginError, match="register"):
        device.load_plugin(PLUGINS / "broken.py")
    with pytest.raises(PluginError, match="does not exist"):
        device.load_plugin(tmp_path / "missing.py")
    bad = tmp_path / "syntax.py"
    bad.write_text("def register(:\n")
    with pytest.raises(PluginError, match="failed to import"):
        device.load_plugin(bad)


async def test_delay_fault(phone: Any) -> None:
    await phone.fault("delay", ms=150)
    t = time.monotonic()
    await phone.call(PRICE_AUTH, "list_tools", None)
    assert time.monotonic() - t >= 0.14
    t = time.monotonic()
    await phone.call(PRICE_AUTH, "list_tools", None)
    assert time.monotonic() - t < 0.14


async def _call_cancelled_during_delay(phone: BackendPhone) -> None:
    try:
        async with asyncio.timeout(0.05):
            await phone.call(PRICE_AUTH, "list_tools", None)
    except TimeoutError:
        return
    raise AssertionError("the delayed call was not cancelled")


async def test_cancel_during_delay_fault_leaves_no_unawaited_coroutine(
    device: VirtualDevice,
) -> None:
    """Regression: `_in_process` got the app's coroutine before the injected delay; a
    cancel during the delay dropped it unawaited ("coroutine … was never awaited")."""
    phone = BackendPhone(device)
    await phone.fault("delay", ms=10_000)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        await _call_cancelled_during_delay(phone)
        for _ in range(3):  # let the loop drop the cancelled request's last references
            await asyncio.sleep(0)
        gc.collect()
    leaked = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert leaked == []
    assert not device.faults.delays  # the delay was used up; the next call is prompt
    t = time.monotonic()
    assert (await phone.call(PRICE_AUTH, "list_tools", None))["status"] == "success"
    assert time.monotonic() - t < 1


async def test_bad_faults_are_refused(phone: Any) -> None:
    with pytest.raises(RelayError) as exc:
        await phone.fault("meteor_strike")
    assert exc.value.code == BAD_ARGS
    with pytest.raises(RelayError) as exc:
        await phone.fault("restart_process", package="com.not.there")
    assert exc.value.code == NOT_FOUND


async def test_wake_and_force_stop(phone: Any, device: VirtualDevice) -> None:
    app = device.app("com.example.pricealerts")
    assert not app.process_running
    ok, detail = await phone.wake_provider(PRICE_AUTH, "com.example.pricealerts", "acquire")
    assert ok and "process started" in detail and app.process_running
    ok, detail = await phone.wake_provider(PRICE_AUTH, "com.example.finance", "launch")
    assert not ok
    assert await phone.force_stop("com.example.pricealerts")
    assert not app.process_running
    with pytest.raises(RelayError):
        await phone.force_stop("com.not.there")


async def test_confirmation_times_out_without_answer(device: VirtualDevice) -> None:
    phone = BackendPhone(device)
    c = V2(phone)
    await c.negotiate()
    alert = value(await c.execute("create_alert", {"symbol": "ACME", "price": 100}))
    r = await c.execute("delete_alert", alert)
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(phone.launch_pending_intent(r["resolution"].id), 0.1)
    assert device.pending_confirmations == {}


class SlowProvider(VirtualApp):
    """A provider whose call blocks until released (to kill its process mid-call)."""

    PACKAGE = "com.example.slow"

    def __init__(self) -> None:
        super().__init__()
        self.entered = asyncio.Event()

    def build_manifest(self) -> PackageManifest:
        return PackageManifest(
            package=self.package,
            label="Slow",
            uid=self.uid,
            providers=(ProviderDecl(name=".P", authority="com.example.slow.tools"),),
            services=(ServiceDecl(name=".S", actions=("com.clawseed.action.TOOL_PROVIDER",)),),
        )

    async def call(self, ctx: Any, authority: str, method: str, arg: Any, extras: Any) -> Any:
        self.entered.set()
        await asyncio.sleep(30)
        return Bundle(status="success", data="{}")


async def test_process_death_mid_call_is_a_dead_binder(phone: Any, device: VirtualDevice) -> None:
    app = SlowProvider()
    device.install(app)
    call = asyncio.ensure_future(phone.call("com.example.slow.tools", "list_tools", None))
    await asyncio.wait_for(app.entered.wait(), 5)
    assert await phone.force_stop("com.example.slow")
    with pytest.raises(RelayError) as exc:
        await asyncio.wait_for(call, 5)
    assert exc.value.code == IPC_FAILED
    assert "DeadObjectException" in exc.value.message
    # the app starts again on the next call
    app.entered.clear()
    again = asyncio.ensure_future(phone.call("com.example.slow.tools", "list_tools", None))
    await asyncio.wait_for(app.entered.wait(), 5)
    assert app.process_starts == 2
    again.cancel()
