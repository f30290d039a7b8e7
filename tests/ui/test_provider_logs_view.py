"""The provider's log in the exchange detail and the `logs:error` traffic filter."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from inspector.protocol.exchange import ExchangeStatus
from inspector.protocol.logs import CrashReport, LogLine
from inspector.ui.traffic_panel import TrafficPanel
from tests.ui.factories import exchange

pytestmark = pytest.mark.gui

PKG = "com.example.p1"


def log(level: str, message: str, tag: str = "CetpProvider") -> LogLine:
    return LogLine.make(time_ms=1_700_000_000_123.0, pid=4100, tid=4100, uid=10100,
                        level=level, tag=tag, message=message, package=PKG)


def exchanges():  # type: ignore[no-untyped-def]
    quiet = exchange(1, logs=[log("D", "call list_tools")])
    warned = exchange(2, logs=[log("W", "tool failed")])
    crashed = exchange(4, status=ExchangeStatus.TRANSPORT_ERROR, error_code="IPC_FAILED",
                       error_message="the provider crashed (com.example.p1, pid 4100)",
                       logs=[log("E", "FATAL EXCEPTION: main", "AndroidRuntime"),
                             log("E", "java.lang.IllegalStateException: boom\u202e",
                                 "AndroidRuntime")],
                       crash=CrashReport(package=PKG, pid=4100, exception="java.lang."
                                         "IllegalStateException: boom",
                                         trace=["java.lang.IllegalStateException: boom",
                                                "\tat com.example.Foo.bar(Foo.java:1)"]))
    crashed.finish(ExchangeStatus.TRANSPORT_ERROR)
    logged_error = exchange(5, logs=[log("E", "database locked")])
    return [quiet, warned, crashed, logged_error, exchange(6), exchange(8)]


def test_filter_finds_exchanges_whose_provider_logged_errors(qtbot, qloop):
    panel = TrafficPanel()
    qtbot.addWidget(panel)
    panel.show()
    items = exchanges()
    panel.model.add_many(items)
    qtbot.waitUntil(lambda: panel.model.rowCount() == 6)
    qtbot.keyClicks(panel.filter, "logs:error")
    qtbot.waitUntil(lambda: panel.model.rowCount() == 2)
    shown = {panel.model.exchange_at(r).id for r in range(2)}
    assert shown == {items[2].id, items[3].id}
    panel.filter.clear()
    qtbot.keyClicks(panel.filter, "logs:crash")
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1)
    assert "1 of 6 exchanges" in panel.count.text()


def test_detail_shows_the_crash_and_the_lines_as_plain_text(qtbot, qloop):
    panel = TrafficPanel()
    qtbot.addWidget(panel)
    panel.resize(1300, 600)
    panel.show()
    items = exchanges()
    panel.model.add_many(items)
    qtbot.waitUntil(lambda: panel.model.rowCount() == 6)
    rect = panel.table.visualRect(panel.model.index(2, 0))
    qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: "provider log" in panel.detail.toPlainText())
    text = panel.detail.toPlainText()
    assert "the provider crashed (com.example.p1, pid 4100)" in text
    assert "at com.example.Foo.bar(Foo.java:1)" in text
    assert "provider log: 2 lines, 2 errors" in text
    assert " E AndroidRuntime: FATAL EXCEPTION: main" in text
    assert "\u202e" not in text  # a bidi override in provider text is neutralised
    panel.grab().save("/tmp/i16_traffic_logs.png")


def test_export_dialog_offers_logs_and_screenshots(qtbot, qloop, tmp_path, monkeypatch) -> None:
    from inspector.protocol.exchange import ExchangeKind
    from inspector.session.bundle_file import open_bundle
    from inspector.session.journal import JournalWriter, list_sessions
    from inspector.session.screenshots import screens_dir
    from inspector.ui.sessions_panel import ExportBundleDialog, export_bundle

    d = tmp_path / "sessions"
    w = JournalWriter.create(name="logged", directory=d)
    logged = exchange(1, logs=[log("E", "database locked")])
    launch = exchange(2, kind=ExchangeKind.RESOLUTION, method="launch_pending_intent")
    w.on_exchange(logged)
    w.on_exchange(launch)
    w.close()
    shots = screens_dir(w.path)
    shots.mkdir()
    (shots / f"{launch.id}.png").write_bytes(b"\x89PNG\r\n\x1a\nscreen")

    dialog = ExportBundleDialog(str(tmp_path / "x.cetpbundle"))
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.include_logs.isChecked() and not dialog.screenshots.isChecked()
    qtbot.mouseClick(dialog.include_logs, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(dialog.screenshots, Qt.MouseButton.LeftButton)
    stray = tmp_path / "export.bin"
    stray.write_bytes(b"bytes of no recorded file result")
    monkeypatch.setattr("inspector.ui.sessions_panel.QFileDialog.getOpenFileNames",
                        lambda *a, **k: ([str(stray)], ""))
    qtbot.mouseClick(dialog.add_files, Qt.MouseButton.LeftButton)
    assert "1 file(s) to match" in dialog.files_label.text()
    assert "cap 33,554,432 bytes each" in dialog.files_label.text()
    choice = dialog.choice()
    assert choice.include_logs is False and choice.screenshots is True
    assert choice.files == [str(stray)]
    [summary] = list_sessions(d)
    report = open_bundle(export_bundle(summary, choice, d))
    assert all(not x.logs for x in report.exchanges)
    assert report.screenshots == {launch.id: b"\x89PNG\r\n\x1a\nscreen"}
    assert report.files == {}  # its digest matches no recorded file result
    assert "unmatched:export.bin" in report.manifest.model_dump()["file_results"]

    from inspector.ui.sessions_panel import SessionsPanel
    from tests.ui.test_conformance_panel import wait_task

    panel = SessionsPanel(d)
    qtbot.addWidget(panel)
    wait_task(qtbot, panel.refresh())
    panel.select(summary.session_id)
    panel.ask_export = lambda _s: choice.model_copy(update={"path": str(tmp_path / "z.cetpbundle")})
    with qtbot.waitSignal(panel.bundle_exported, timeout=20_000):
        panel.export_selected()
    assert "provider logs left out" in panel.status.text()
    assert "1 screenshot(s)" in panel.status.text()
    assert "1 file(s) matched no recorded file result" in panel.status.text()
    default = open_bundle(export_bundle(
        summary, choice.model_copy(update={"include_logs": True, "screenshots": False,
                                           "path": str(tmp_path / "y.cetpbundle")}), d))
    assert [ln.message for x in default.exchanges for ln in x.logs] == ["database locked"]
    assert default.screenshots == {}


def test_replay_shows_the_recorded_log_beside_the_recorded_reply(qtbot, qloop) -> None:
    from inspector.session.replay import ReplayAction, ReplayKind, ReplayReport, ReplayResult
    from inspector.ui.replay_diff import ReplayDiffView

    view = ReplayDiffView()
    qtbot.addWidget(view)
    view.show()
    logged = ReplayResult(exchange_id="a", method="list_tools", target="t", kind=ReplayKind.READ,
                          action=ReplayAction.REISSUED, recorded={"status": "success"},
                          new={"status": "success"},
                          recorded_logs=[log("W", "cache miss\u202e")])
    quiet = logged.model_copy(update={"exchange_id": "b", "recorded_logs": []})
    view.set_report(ReplayReport(results=[logged, quiet]))
    rect = view.table.visualRect(view.model.index(0, 0))
    qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: view.recorded_log.isVisible())
    text = view.recorded_log.text()
    assert "provider log: 1 line" in text and "W CetpProvider: cache miss" in text
    assert "\u202e" not in text
    rect = view.table.visualRect(view.model.index(1, 0))
    qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: not view.recorded_log.isVisible())
