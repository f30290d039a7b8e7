"""The sessions panel over real journals recorded on the virtual device."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import pytest

from inspector.consumer.engine import ProviderSession
from inspector.consumer.recorder import Recorder
from inspector.session.bundle_file import open_bundle
from inspector.session.journal import JournalContents, JournalWriter, list_sessions
from inspector.tasks import spawn
from inspector.ui.sessions_panel import (
    REDACT_OFF_WARNING,
    BundleChoice,
    ExportBundleDialog,
    SessionsPanel,
)
from tests.ui.test_conformance_panel import vclient as vclient
from tests.ui.test_conformance_panel import wait_task

AUTHORITY = "com.example.pricealerts.clawseed.tools"
PACKAGE = "com.example.pricealerts"


async def _record(client: Any, directory: Path, name: str) -> tuple[Path, str]:
    """negotiate, list_tools, a read and a mutation on the virtual device, journaled."""
    recorder = Recorder(device="virtual")
    writer = JournalWriter.create(name=name, directory=directory,
                                  device={"serial": "virtual", "manufacturer": "Virtual",
                                          "model": "Pixel"})
    recorder.add_listener(writer.on_exchange)
    provider = ProviderSession(client, AUTHORITY, package=PACKAGE, recorder=recorder)
    await provider.negotiate()
    await provider.list_tools()
    await provider.execute_tool("list_alerts", {})
    await provider.execute_tool("create_alert",
                                {"symbol": "ACME", "price": 101.25, "direction": "above"})
    writer.close()
    token = str(recorder.exchanges[0].decoded["session_token"])
    return writer.path, token


def record_session(qtbot: Any, client: Any, directory: Path, name: str) -> tuple[Path, str]:
    """Record a session (see `_record`); returns the journal path and its session token."""
    return wait_task(qtbot, spawn(_record(client, directory, name), "t-record"))


def _panel(qtbot: Any, directory: Path) -> SessionsPanel:
    panel = SessionsPanel(directory)
    qtbot.addWidget(panel)
    panel.resize(900, 400)
    wait_task(qtbot, panel.refresh())
    return panel


def test_list_open_rename_delete(qtbot, vclient, qtmodeltester, tmp_path) -> None:
    d = tmp_path / "sessions"
    record_session(qtbot, vclient, d, "first")
    record_session(qtbot, vclient, d, "second <b>bug</b>")
    panel = _panel(qtbot, d)
    qtmodeltester.check(panel.model)
    assert panel.model.rowCount() == 2
    names = {panel.model.data(panel.model.index(r, 0)) for r in range(2)}
    assert names == {"first", "second <b>bug</b>"}  # plain text, literally
    row = next(r for r in range(2) if panel.model.data(panel.model.index(r, 0)) == "first")
    assert panel.model.data(panel.model.index(row, 2)) == "Virtual Pixel (virtual)"
    count = panel.model.summary(row).exchange_count  # distinct exchanges, not journal lines
    assert count >= 4 and panel.model.data(panel.model.index(row, 3)) == str(count)
    assert not panel.open_button.isEnabled()  # nothing selected yet

    sid = panel.model.summary(row).session_id
    assert panel.select(sid) and panel.open_button.isEnabled()
    with qtbot.waitSignal(panel.session_opened) as opened:
        panel.open_selected()
    contents: JournalContents = opened.args[0]
    assert contents.name == "first"
    assert [e.method for e in contents.exchanges][:3] == ["negotiate", "list_tools",
                                                          "execute_tool"]
    assert {e.tool for e in contents.exchanges} >= {"list_alerts", "create_alert"}

    panel.ask_name = lambda current: current + " renamed"
    wait_task(qtbot, panel.rename_selected())
    qtbot.waitUntil(lambda: panel.model.row_of(sid) is not None)
    assert panel.model.summary(panel.model.row_of(sid)).name == "first renamed"
    assert panel.selected() is not None and panel.selected().session_id == sid  # kept

    panel.confirm_delete = lambda s: False
    assert panel.delete_selected() is None and len(list_sessions(d)) == 2
    panel.active_sessions = lambda: {sid}  # being recorded: never deleted, not even asked
    panel.confirm_delete = lambda s: pytest.fail("asked to delete an active session")
    assert panel.delete_selected() is None and "being recorded" in (panel.error or "")
    panel.active_sessions = set
    panel.confirm_delete = lambda s: s.session_id == sid
    wait_task(qtbot, panel.delete_selected())
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1)
    assert [s.name for s in list_sessions(d)] == ["second <b>bug</b>"]
    assert "Deleted first renamed" in panel.status.text()


def test_export_bundle_redacts_by_default(qtbot, vclient, tmp_path) -> None:
    d = tmp_path / "sessions"
    _, token = record_session(qtbot, vclient, d, "alerts")
    panel = _panel(qtbot, d)
    panel.select(panel.model.summary(0).session_id)

    dialog = ExportBundleDialog(str(tmp_path / "x.cetpbundle"))
    qtbot.addWidget(dialog)
    assert dialog.redact.isChecked() and not dialog.warning.isVisibleTo(dialog)
    dialog.redact.setChecked(False)  # opting out shows the warning
    assert dialog.warning.isVisibleTo(dialog) and dialog.warning.text() == REDACT_OFF_WARNING
    assert dialog.choice().redact is False
    dialog.redact.setChecked(True)
    dialog.extra_keys.setText("symbol, price")
    assert dialog.choice().secret_keys == ["symbol", "price"]

    safe = tmp_path / "safe.cetpbundle"
    panel.ask_export = lambda s: BundleChoice(path=str(safe), note="create_alert bug")
    with qtbot.waitSignal(panel.bundle_exported, timeout=20_000) as done:
        panel.export_selected()
    assert done.args[0] == str(safe)
    with zipfile.ZipFile(safe) as z:
        raw = b"".join(z.read(n) for n in z.namelist())
    assert token.encode() not in raw
    report = open_bundle(safe)
    assert report.manifest.redacted and "create_alert bug" in report.summary
    assert "secrets redacted" in panel.status.text()

    unsafe = tmp_path / "unsafe.cetpbundle"
    panel.ask_export = lambda s: BundleChoice(path=str(unsafe), redact=False)
    with qtbot.waitSignal(panel.bundle_exported, timeout=20_000):
        panel.export_selected()
    with zipfile.ZipFile(unsafe) as z:
        assert token.encode() in z.read("session.jsonl")
    assert "SECRETS INCLUDED" in panel.status.text()


def test_errors_are_reported(qtbot, qloop, tmp_path) -> None:
    d = tmp_path / "sessions"
    d.mkdir()
    (d / "broken.jsonl").write_text("not a journal\n")
    panel = _panel(qtbot, d)
    assert panel.model.rowCount() == 1  # listed as damaged (issue 12), not hidden
    assert panel.model.summary(0).damaged
    (d / "broken.jsonl").unlink()
    # a journal that vanishes between listing and opening
    w = JournalWriter.create(name="gone", directory=d)
    w.close()
    wait_task(qtbot, panel.refresh())
    panel.select(panel.model.summary(0).session_id)
    w.path.unlink()
    wait_task(qtbot, panel.open_selected())
    assert panel.error is not None and "Cannot open the session" in panel.error
    panel.ask_export = lambda s: BundleChoice(path=str(tmp_path / "nope" / "x.cetpbundle"))
    wait_task(qtbot, panel.export_selected())
    assert panel.error is not None and "Cannot export" in panel.error
