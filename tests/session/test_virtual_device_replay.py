"""End to end: record a session on the virtual device, bundle it, replay it both ways."""

from __future__ import annotations

import zipfile
from pathlib import Path

from inspector.consumer.engine import ProviderSession
from inspector.consumer.recorder import Recorder
from inspector.relay.server import connect_in_process
from inspector.session.bundle_file import create_bundle, open_bundle
from inspector.session.journal import JournalWriter, read_journal
from inspector.session.replay import ReplayAction, ReplayKind, replay_session
from inspector.virtual import VirtualDevice
from inspector.virtual.inprocess import connect_virtual_device
from tests.session.test_bundle_replay import RecordedBackend

AUTHORITY = "com.example.pricealerts.clawseed.tools"
PACKAGE = "com.example.pricealerts"


async def test_record_bundle_and_replay_on_the_virtual_device(tmp_path: Path) -> None:
    device = VirtualDevice(tmp_path / "device")
    client = await connect_virtual_device(device)
    try:
        recorder = Recorder(device="virtual")
        writer = JournalWriter.create(
            name="alerts", device={"serial": "virtual"}, directory=tmp_path / "sessions"
        )
        recorder.add_listener(writer.on_exchange)
        provider = ProviderSession(client, AUTHORITY, package=PACKAGE, recorder=recorder)
        await provider.negotiate()
        await provider.list_tools()
        await provider.execute_tool("list_alerts", {})
        writer.close()

        # the provider's state changes after the recording (not journaled)
        other = ProviderSession(client, AUTHORITY, package=PACKAGE)
        await other.negotiate()
        quote = await other.execute_tool("get_quote", {"symbol": "ACME"})
        assert str(quote.state) == "succeeded"
        created = await other.execute_tool(
            "create_alert", {"symbol": "ACME", "price": 101.25, "direction": "above"}
        )
        assert str(created.state) == "succeeded"

        bundle = create_bundle(tmp_path / "alerts.cetpbundle", read_journal(writer.path))
        with zipfile.ZipFile(bundle) as z:
            raw = b"".join(z.read(n) for n in z.namelist())  # decompressed members
        real_token = recorder.exchanges[0].decoded["session_token"]
        assert len(real_token) > 8 and real_token.encode() not in raw

        recorded = open_bundle(bundle).session
        report = await replay_session(recorded, client)
        assert [r.kind for r in report.results] == [ReplayKind.READ] * 3
        assert all(
            r.action == ReplayAction.REISSUED and r.error_code is None for r in report.results
        )
        [changed] = report.changed
        assert changed.tool == "list_alerts"
        assert any(d.path.startswith("data.value.alerts") for d in changed.diff)
    finally:
        await client.close()
        await device.aclose()

    # replay as a virtual provider: the recorded answers come back unchanged
    served = await connect_in_process(RecordedBackend(recorded), "t")
    try:
        again = await replay_session(recorded, served)
    finally:
        await served.close()
    assert [r.action for r in again.results] == [ReplayAction.REISSUED] * 3
    assert again.changed == []
