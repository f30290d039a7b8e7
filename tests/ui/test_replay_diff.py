"""Replay a session recorded on the virtual device; recorded vs new side by side."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from inspector.protocol.exchange import Exchange
from inspector.session.journal import read_journal
from inspector.session.replay import DiffEntry, ReplayAction, ReplayKind
from inspector.tasks import spawner
from inspector.ui.replay_diff import (
    NEW_IDS_RULE,
    ReplayPanel,
    changed_lines,
    mutation_prompt,
    readable,
    render,
)
from tests.ui.test_conformance_panel import vclient as vclient
from tests.ui.test_sessions_panel import record_session


def _panel(qtbot: Any, client: Any, tmp_path: Path) -> ReplayPanel:
    # the recording reads the alerts, then creates one: replaying the read sees it
    journal, _ = record_session(qtbot, client, tmp_path / "s", "replay me")
    panel = ReplayPanel(read_journal(journal), relay=client)
    qtbot.addWidget(panel)
    panel.resize(1200, 800)
    return panel


def _run(qtbot: Any, panel: ReplayPanel) -> Any:
    with qtbot.waitSignal(panel.finished, timeout=30_000) as done:
        assert panel.start() is not None
    return done.args[0]


def test_reads_reissued_mutations_declined_diff_shown(qtbot, vclient, qtmodeltester, tmp_path):
    panel = _panel(qtbot, vclient, tmp_path)
    assert not panel.new_ids.isChecked() and NEW_IDS_RULE in panel.new_ids_help.text()
    asked: list[tuple[str, bool]] = []
    panel.confirm_mutation = lambda ex, new: asked.append((ex.tool or ex.method, new)) or False
    report = _run(qtbot, panel)
    mutations = [r for r in report.results if r.kind == ReplayKind.MUTATION]
    assert mutations and all(r.action == ReplayAction.DECLINED for r in mutations)
    assert ("create_alert", False) in asked  # asked before each mutation, recorded ids
    reads = [r for r in report.results if r.kind == ReplayKind.READ]
    assert reads and all(r.action == ReplayAction.REISSUED for r in reads)
    [changed] = [r for r in report.results if r.changed]
    assert changed.tool == "list_alerts"

    view = panel.diff
    qtmodeltester.check(view.model)
    assert view.model.rowCount() == len(report.results)
    row = report.results.index(changed)
    assert view.table.currentIndex().row() == row  # the first changed row is selected
    assert view.model.data(view.model.index(row, 5)).endswith("changed")
    assert view.model.data(view.model.index(row, 0), 8) is not None  # highlighted background
    assert "ACME" in view.new.toPlainText() and "ACME" not in view.recorded.toPlainText()
    assert view.new.marked and view.recorded.marked  # changed lines highlighted both sides
    qtmodeltester.check(view.entries_model)
    assert view.entries_model.rowCount() == len(changed.diff)
    assert "1 changed" in view.counts.text() or "changed" in view.counts.text()
    view.only_changed.setChecked(True)
    hidden = [r for r in range(view.model.rowCount()) if view.table.isRowHidden(r)]
    assert len(hidden) == len(report.results) - 1
    # a declined mutation explains itself in the right pane
    view.show_row(report.results.index(mutations[0]))
    assert "not re-issued" in view.new.toPlainText()


def test_confirmed_mutation_keeps_the_recorded_request_id(qtbot, vclient, tmp_path) -> None:
    panel = _panel(qtbot, vclient, tmp_path)
    panel.confirm_mutation = lambda ex, new: ex.tool == "create_alert"
    report = _run(qtbot, panel)
    recorded = {e.id: e for e in panel.session.exchanges}
    [r] = [r for r in report.results if r.tool == "create_alert"
           and r.action == ReplayAction.REISSUED]
    sent = readable(r.request)
    assert sent["request_id"] == recorded[r.exchange_id].request_id


def test_new_ids_only_after_the_rule_is_accepted(qtbot, vclient, tmp_path) -> None:
    panel = _panel(qtbot, vclient, tmp_path)
    panel.confirm_new_ids = lambda: False
    panel.new_ids.setChecked(True)
    assert not panel.new_ids.isChecked()
    panel.confirm_new_ids = lambda: True
    panel.new_ids.setChecked(True)
    assert panel.new_ids.isChecked()

    async def approve(ex: Exchange, new: bool) -> bool:  # async hooks are awaited
        assert new
        return ex.tool == "create_alert"

    panel.confirm_mutation = approve
    report = _run(qtbot, panel)
    recorded = {e.id: e for e in panel.session.exchanges}
    [r] = [r for r in report.results if r.tool == "create_alert"
           and r.action == ReplayAction.REISSUED]
    assert readable(r.request)["request_id"] != recorded[r.exchange_id].request_id


def test_no_relay_no_run(qtbot, vclient, tmp_path) -> None:
    journal, _ = record_session(qtbot, vclient, tmp_path / "s", "x")
    panel = ReplayPanel(read_journal(journal))
    qtbot.addWidget(panel)
    assert not panel.run_button.isEnabled() and panel.start() is None
    assert "Connect a device" in panel.status.text()
    panel.set_relay(vclient)
    assert panel.run_button.isEnabled()


def test_readable_render_and_changed_lines() -> None:
    typed = {"t": "Bundle", "v": {"status": {"t": "String", "v": "success"},
                                  "data": {"t": "String", "v": '{"alerts": [{"s": "A"}]}'},
                                  "n": {"t": "int", "v": 2}, "z": {"t": "null"}}}
    value = readable(typed)
    assert value == {"status": "success", "data": {"alerts": [{"s": "A"}]}, "n": 2, "z": None}
    text, spans = render(value)
    lines = text.splitlines()
    assert '"s": "A"' in lines[spans["data.alerts[0].s"][0]]
    assert changed_lines([DiffEntry(path="data.alerts[0].s")], spans) == {
        spans["data.alerts[0].s"][0]}
    # a path only the other side has: its nearest ancestor is marked
    _, end = spans["data.alerts[0]"]
    assert changed_lines([DiffEntry(path="data.alerts[0].gone")], spans) == {end}
    ex = Exchange(kind="cetp", target="a.b", method="execute_tool", tool="zap",
                  request_id="r-1", request={"t": "Bundle", "v": {
                      "args": {"t": "String", "v": '{"id": 7}'}}})
    assert "r-1" in mutation_prompt(ex, False) and '{"id": 7}' in mutation_prompt(ex, False)
    assert "NEW request id" in mutation_prompt(ex, True)


def _box(panel: ReplayPanel) -> QMessageBox | None:
    boxes = [b for b in panel.findChildren(QMessageBox) if b.isVisible()]
    return boxes[0] if boxes else None


def test_default_confirmation_dialog_and_closing_mid_run(qtbot, vclient, tmp_path) -> None:
    panel = _panel(qtbot, vclient, tmp_path)
    panel.show()
    panel.start()
    qtbot.waitUntil(lambda: _box(panel) is not None, timeout=20_000)
    box = _box(panel)
    assert "create_alert" in box.text() and "recorded request id" in box.text()
    assert box.textFormat() == Qt.TextFormat.PlainText
    with qtbot.waitSignal(panel.finished, timeout=20_000) as done:
        box.button(QMessageBox.StandardButton.No).click()
    [declined] = [r for r in done.args[0].results if r.kind == ReplayKind.MUTATION]
    assert declined.action == ReplayAction.DECLINED

    # closing the window while a confirmation is open stops the replay quietly
    errors: list[str] = []
    spawner().on_error = lambda name, exc: errors.append(f"{name}: {exc}")
    try:
        task = panel.start()
        qtbot.waitUntil(lambda: _box(panel) is not None, timeout=20_000)
        panel.close()
        qtbot.waitUntil(task.done)
    finally:
        spawner().on_error = None
    assert errors == [] and not panel.running
    assert "Cancelled" in panel.status.text()


def test_an_extension_call_prompt_names_function_params_and_bridge() -> None:
    """Extension calls have no request ids: the prompt says what will run instead."""
    ex = Exchange(kind="extension", target="dice", package="com.example.dice",
                  method="broadcast", request={"t": "Bundle", "v": {
                      "function": {"t": "String", "v": "roll"},
                      "params": {"t": "String", "v": '{"sides": 6}'}}})
    text = mutation_prompt(ex, False)
    assert "roll via the broadcast bridge of com.example.dice" in text
    assert '{"sides": 6}' in text and "request id" in text and "may act again" in text
    assert mutation_prompt(ex, True) == text  # the new-id option does not apply


def test_approve_all_remaining_runs_the_rest_without_asking_and_sums_up(
        qtbot, vclient, tmp_path) -> None:
    journal, _ = record_session(qtbot, vclient, tmp_path / "s", "many mutations")
    contents = read_journal(journal)
    [mutation] = [x for x in contents.exchanges
                  if x.method == "execute_tool" and x.tool == "create_alert"]
    contents.exchanges.extend(mutation.model_copy(update={"id": f"{mutation.id}-{i}"})
                              for i in range(3))
    panel = ReplayPanel(contents, relay=vclient)
    qtbot.addWidget(panel)
    panel.show()
    assert panel.mutations_total == 4
    panel.start()
    qtbot.waitUntil(lambda: _box(panel) is not None, timeout=20_000)
    box = _box(panel)
    assert "4 mutation(s) are left" in box.informativeText()
    [approve_all] = [b for b in box.buttons() if b.text() == "Approve all 4 remaining"]
    with qtbot.waitSignal(panel.finished, timeout=30_000) as done:
        approve_all.click()
    mutations = [r for r in done.args[0].results if r.kind == ReplayKind.MUTATION]
    assert len(mutations) == 4
    assert all(r.action != ReplayAction.DECLINED for r in mutations)
    assert panel.asked == 4 and panel.auto_approved == 3  # one dialog, not four
    assert "4 approved, 3 of them by “approve all”, 0 declined" in panel.status.text()
