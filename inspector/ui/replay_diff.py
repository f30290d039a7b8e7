"""Replay a recorded session against a device and see recorded vs new side by side.

`ReplayPanel` drives `inspector.session.replay.Replayer` and follows its rules (CETP v2
§4.1): reads are re-issued; every mutation waits for an explicit confirmation; recorded
request ids are kept unless the user explicitly ticks "new request ids", which explains
the spec rule first (a provider that deduplicates answers a recorded id with the recorded
outcome; a new id is a new call and may repeat the effect — never a way to guess an
outcome). `ReplayDiffView` shows a `ReplayReport`: one row per exchange, changed ones
highlighted, and for the selected row the two replies side by side with the changed lines
marked, plus the list of changed paths.

Embedding (the main window wires it, e.g. from the bundle viewer's Replay… or the
sessions panel):

    panel = ReplayPanel(journal_contents, relay=current_relay_or_None, parent=None)
    panel.finished.connect(lambda report: ...)     # ReplayReport
    panel.show()

Replies come from providers: shown as plain text only, bounded.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QTextCursor, QTextFormat
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableView,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from inspector.protocol.exchange import Exchange
from inspector.relay.api import RelayApi
from inspector.session.journal import JournalContents
from inspector.session.replay import (
    DiffEntry,
    ReplayAction,
    Replayer,
    ReplayKind,
    ReplayReport,
    ReplayResult,
    classify,
    extension_call,
    params_value,
    read_only_tools_from,
)
from inspector.ui import theme
from inspector.ui.conformance_panel import WidgetTasks
from inspector.ui.json_view import mono_font
from inspector.ui.provider_logs_view import describe_log_lines
from inspector.ui.row_table_model import RowTableModel
from inspector.ui.text import bound

_Index = QModelIndex | QPersistentModelIndex
TEXT_LIMIT = 400_000

NEW_IDS_RULE = (
    "CETP v2 §4.1: for side-effecting or asynchronous calls a consumer MUST query or retry "
    "with the same request_id and MUST NOT create a new ID to guess the outcome. Replaying "
    "with the recorded ids asks the provider what happened to those calls (a conforming "
    "provider answers with the recorded outcome and does not act again). New ids make every "
    "confirmed mutation a NEW call that can repeat its effect — use them only to "
    "re-execute on purpose, never to find out what happened."
)


# --------------------------------------------------------------------------------------
# readable replies and line maps


def readable(typed: Any) -> Any:
    """A typed-JSON reply as plain JSON: Bundles as objects, JSON strings parsed.

    Paths in the readable form match `DiffEntry.path` (Bundle keys, then keys inside a
    parsed JSON string), so changed entries can be located in the text.
    """
    if not isinstance(typed, dict) or "t" not in typed:
        return typed
    t, v = typed.get("t"), typed.get("v")
    if t == "Bundle" and isinstance(v, dict):
        return {str(k): readable(x) for k, x in v.items()}
    if t == "Bundle[]" and isinstance(v, list):
        return [readable(x) for x in v]
    if t == "String" and isinstance(v, str):
        s = v.lstrip()
        if s.startswith(("{", "[")):
            try:
                parsed = json.loads(v)
            except ValueError:
                return v
            if isinstance(parsed, dict | list):
                return parsed
        return v
    if t == "null":
        return None
    return v


def render(value: Any) -> tuple[str, dict[str, tuple[int, int]]]:
    """Indented JSON text and, for every path, its (first, last) line numbers."""
    lines: list[str] = []
    spans: dict[str, tuple[int, int]] = {}

    def leaf(v: Any) -> str:
        return json.dumps(v, ensure_ascii=False)

    def walk(v: Any, path: str, indent: int, prefix: str, suffix: str) -> None:
        pad = "  " * indent
        start = len(lines)
        if isinstance(v, dict) and v:
            lines.append(f"{pad}{prefix}{{")
            items = list(v.items())
            for i, (k, x) in enumerate(items):
                sub = f"{path}.{k}" if path else str(k)
                walk(x, sub, indent + 1, f"{leaf(str(k))}: ", "," if i < len(items) - 1 else "")
            lines.append(f"{pad}}}{suffix}")
        elif isinstance(v, list) and v:
            lines.append(f"{pad}{prefix}[")
            for i, x in enumerate(v):
                walk(x, f"{path}[{i}]", indent + 1, "", "," if i < len(v) - 1 else "")
            lines.append(f"{pad}]{suffix}")
        else:
            lines.append(f"{pad}{prefix}{leaf(v)}{suffix}")
        if path:
            spans[path] = (start, len(lines) - 1)

    walk(value, "", 0, "", "")
    return "\n".join(lines), spans


def changed_lines(entries: Sequence[DiffEntry], spans: dict[str, tuple[int, int]]) -> set[int]:
    """The lines to highlight: each changed path's lines; for a path this side lacks, the
    closing line of its nearest ancestor (where the missing entry would be)."""
    out: set[int] = set()
    for e in entries:
        if e.path in spans:
            a, b = spans[e.path]
            out.update(range(a, b + 1))
            continue
        path = e.path
        while path and path not in spans:
            cut = max(path.rfind("."), path.rfind("["))
            path = path[:cut] if cut > 0 else ""
        if path in spans:
            out.add(spans[path][1])
    return out


def _short(v: Any, limit: int = 160) -> str:
    r = readable(v)
    text = r if isinstance(r, str) else json.dumps(r, ensure_ascii=False, default=repr)
    return bound(text, limit)


# --------------------------------------------------------------------------------------
# models


class ReplayResultsModel(RowTableModel[ReplayResult]):
    """One row per replayed exchange: #, Method, Tool, Kind, Action, Changes."""

    COLUMNS = ("#", "Method", "Tool", "Kind", "Action", "Changes")

    def set_results(self, results: Sequence[ReplayResult]) -> None:
        self.set_rows(results)

    def append(self, r: ReplayResult) -> None:
        self.append_row(r)

    def result(self, row: int) -> ReplayResult | None:
        return self.row_at(row)

    def results(self) -> list[ReplayResult]:
        return self.rows()

    @staticmethod
    def changes_text(r: ReplayResult) -> str:
        if r.action != ReplayAction.REISSUED:
            return bound(r.reason, 200)
        if r.error_code:
            return bound(f"failed: {r.error_code} {r.error_message or ''}", 200)
        return f"{len(r.diff)} changed" if r.diff else "same"

    def row_data(self, r: ReplayResult, index: _Index, role: int) -> Any:
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return (str(index.row() + 1), bound(r.method, 60), bound(r.tool or "", 64),
                    r.kind.value, r.action.value, self.changes_text(r))[col]
        if role == Qt.ItemDataRole.BackgroundRole and r.changed:
            return theme.color("warnbg")
        if role == Qt.ItemDataRole.ForegroundRole:
            if r.error_code:
                return theme.color("error")
            if r.action != ReplayAction.REISSUED:
                return theme.color("muted")
            if r.changed and col == 5:
                return theme.color("warn")
        if role == Qt.ItemDataRole.ToolTipRole:
            return bound(f"{r.method} {r.tool or ''} on {r.target}: {self.changes_text(r)}",
                         400)
        return None


class DiffEntriesModel(RowTableModel[DiffEntry]):
    """Changed paths of one result: Path, Recorded, New (plain, bounded)."""

    COLUMNS = ("Path", "Recorded", "New")

    def set_entries(self, entries: Sequence[DiffEntry]) -> None:
        self.set_rows(entries)

    def row_data(self, e: DiffEntry, index: _Index, role: int) -> Any:
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            limit = 160 if role == Qt.ItemDataRole.DisplayRole else 1000
            return (bound(e.path, 200), _short(e.recorded, limit), _short(e.new, limit))[
                index.column()]
        return None


# --------------------------------------------------------------------------------------
# the diff view


class _Pane(QPlainTextEdit):
    def __init__(self, placeholder: str) -> None:
        super().__init__()
        self.setReadOnly(True)
        self.setFont(mono_font())
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setPlaceholderText(placeholder)
        self.marked: set[int] = set()

    def show_value(self, value: Any, entries: Sequence[DiffEntry]) -> None:
        text, spans = render(value)
        if len(text) > TEXT_LIMIT:
            text = text[:TEXT_LIMIT] + "\n… [cut]"
        self.setPlainText(text)
        self.mark(changed_lines(entries, spans))

    def mark(self, lines: set[int]) -> None:
        self.marked = lines
        sels = []
        bg = QColor(theme.colors(theme.current())["warnbg"])
        doc = self.document()
        for n in sorted(lines)[:5000]:
            block = doc.findBlockByNumber(n)
            if not block.isValid():
                continue
            sel = QTextEdit.ExtraSelection()
            sel.format.setBackground(bg)
            sel.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            cur = QTextCursor(block)
            sel.cursor = cur
            sels.append(sel)
        self.setExtraSelections(sels)

    def reveal_first_mark(self) -> None:
        """Scroll so the first changed line is in view."""
        if self.marked:
            block = self.document().findBlockByNumber(min(self.marked))
            if block.isValid():
                self.setTextCursor(QTextCursor(block))
                self.centerCursor()


class ReplayDiffView(QWidget):
    """A `ReplayReport`: results table, recorded vs new side by side, changed paths."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = ReplayResultsModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setWordWrap(False)
        for col, w in enumerate((36, 130, 150, 80, 80)):
            self.table.setColumnWidth(col, w)
        self.only_changed = QCheckBox("Only changed")
        self.only_changed.toggled.connect(lambda _on: self.apply_filter())
        self.counts = QLabel("")
        self.counts.setTextFormat(Qt.TextFormat.PlainText)
        self.info = QLabel("")
        self.info.setTextFormat(Qt.TextFormat.PlainText)
        self.info.setWordWrap(True)
        self.recorded = _Pane("recorded reply")
        self.new = _Pane("new reply")
        self.entries_model = DiffEntriesModel(self)
        self.entries = QTableView()
        self.entries.setModel(self.entries_model)
        self.entries.verticalHeader().setVisible(False)
        self.entries.horizontalHeader().setStretchLastSection(True)
        self.entries.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.entries.setWordWrap(False)

        left_head = QLabel("Recorded")
        left_head.setProperty("role", "muted")
        right_head = QLabel("New")
        right_head.setProperty("role", "muted")
        lw, rw = QWidget(), QWidget()
        ll, rl = QVBoxLayout(lw), QVBoxLayout(rw)
        for lay, head, pane in ((ll, left_head, self.recorded), (rl, right_head, self.new)):
            lay.setContentsMargins(0, 0, 0, 0)
            lay.addWidget(head)
            lay.addWidget(pane, 1)
        # issue 16: what the provider logged when the recorded answer was given
        self.recorded_log = QLabel("")
        self.recorded_log.setObjectName("recordedLog")
        self.recorded_log.setTextFormat(Qt.TextFormat.PlainText)
        self.recorded_log.setWordWrap(True)
        ll.addWidget(self.recorded_log)
        sides = QSplitter(Qt.Orientation.Horizontal)
        sides.addWidget(lw)
        sides.addWidget(rw)
        bottom = QSplitter(Qt.Orientation.Vertical)
        bottom.addWidget(sides)
        bottom.addWidget(self.entries)
        bottom.setStretchFactor(0, 3)
        bottom.setStretchFactor(1, 1)
        top = QWidget()
        tl = QVBoxLayout(top)
        tl.setContentsMargins(0, 0, 0, 0)
        bar = QHBoxLayout()
        bar.addWidget(self.counts, 1)
        bar.addWidget(self.only_changed)
        tl.addLayout(bar)
        tl.addWidget(self.table, 1)
        detail = QWidget()
        dl = QVBoxLayout(detail)
        dl.setContentsMargins(0, 0, 0, 0)
        dl.addWidget(self.info)
        dl.addWidget(bottom, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(detail)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(split)

        # scroll both sides together
        self.recorded.verticalScrollBar().valueChanged.connect(
            self.new.verticalScrollBar().setValue)
        self.new.verticalScrollBar().valueChanged.connect(
            self.recorded.verticalScrollBar().setValue)
        self.table.selectionModel().currentRowChanged.connect(
            lambda cur, _prev: self.show_row(cur.row()))

    def set_report(self, report: ReplayReport) -> None:
        self.model.set_results(report.results)
        self._after_change()
        first = next((i for i, r in enumerate(report.results) if r.changed), 0)
        if report.results:
            self.table.selectRow(first)

    def add_result(self, r: ReplayResult) -> None:
        self.model.append(r)
        self._after_change()

    def clear(self) -> None:
        self.model.set_results([])
        self._after_change()
        self.show_row(-1)

    def _after_change(self) -> None:
        rs = self.model.results()
        changed = sum(1 for r in rs if r.changed)
        reissued = sum(1 for r in rs if r.action == ReplayAction.REISSUED)
        declined = sum(1 for r in rs if r.action == ReplayAction.DECLINED)
        self.counts.setText(f"{len(rs)} exchange(s): {reissued} re-issued, {changed} changed, "
                            f"{declined} mutation(s) declined")
        self.apply_filter()

    def apply_filter(self) -> None:
        only = self.only_changed.isChecked()
        for row, r in enumerate(self.model.results()):
            self.table.setRowHidden(row, only and not r.changed)

    def show_row(self, row: int) -> None:
        r = self.model.result(row)
        if r is None:
            self.info.setText("")
            self.recorded.clear()
            self.new.clear()
            self.entries_model.set_entries([])
            return
        what = f"{r.method}{' ' + r.tool if r.tool else ''} on {r.target} — {r.kind.value}, "
        if r.action != ReplayAction.REISSUED:
            what += f"{r.action.value}: {r.reason}"
        elif r.error_code:
            what += f"re-issued, failed: {r.error_code} {r.error_message or ''}"
        else:
            what += (f"re-issued, {len(r.diff)} changed path(s)" if r.diff
                     else "re-issued, same reply (volatile keys ignored)")
        self.info.setText(bound(what, 600))
        self.recorded_log.setText("\n".join(
            line.removeprefix("// ") for line in describe_log_lines(r.recorded_logs))[:4000])
        self.recorded_log.setVisible(bool(r.recorded_logs))
        self.recorded.show_value(readable(r.recorded), r.diff)
        if r.action == ReplayAction.REISSUED and r.new is not None:
            self.new.show_value(readable(r.new), r.diff)
        else:
            self.new.setPlainText("" if r.action == ReplayAction.REISSUED
                                  else f"(not re-issued: {r.reason})")
            self.new.mark(set())
        self.entries_model.set_entries(r.diff)
        self.entries.resizeColumnToContents(0)
        self.new.reveal_first_mark()  # the recorded side follows (scroll bars are linked)


# --------------------------------------------------------------------------------------
# the replay run


ConfirmMutation = Callable[[Exchange, bool], bool | str | Awaitable[bool | str]]
#: what a confirmation may answer besides True/False: approve this and every later mutation
APPROVE_ALL = "approve-all"


def mutation_prompt(ex: Exchange, new_ids: bool) -> str:
    """The confirmation text for one recorded mutation (plain, bounded)."""
    call = extension_call(ex)
    if call is not None:  # AndyClaw: no annotations and no request ids to lean on
        params = json.dumps(params_value(call.params), ensure_ascii=False)
        return bound(
            f"Re-run this recorded extension call?\n\n{call.function} via the {call.bridge} "
            f"bridge of {ex.package or ex.target}\nparams: {params}\n\nExtension functions "
            "declare no read/write semantics and carry no request id: the extension may act "
            "again.", 2000, single_line=False)
    args = ""
    req = readable(ex.request)
    if isinstance(req, dict) and "args" in req:
        args = json.dumps(req["args"], ensure_ascii=False)
    ident = ("a NEW request id (the provider treats it as a new call and may act again)"
             if new_ids else f"the recorded request id {ex.request_id or '—'} (a conforming "
             "provider answers with the recorded outcome without acting again)")
    return bound(
        f"Re-issue this recorded mutation?\n\n{ex.method} {ex.tool or ''} on {ex.target}\n"
        f"arguments: {args or '—'}\n\nIt will be sent with {ident}.", 2000, single_line=False)


class ReplayPanel(QWidget):
    """Replay a journaled session against a relay; the result in a `ReplayDiffView`.

    `relay` is the device (or virtual device) to replay on; `set_relay` changes it.
    Signals: `finished(object)` — the `ReplayReport`; `running_changed(bool)`.
    Test hooks: `confirm_mutation(exchange, new_ids) -> bool | Awaitable[bool]` (asked
    before each mutation), `confirm_new_ids() -> bool` (asked when the option is ticked).
    """

    finished = Signal(object)
    running_changed = Signal(bool)

    def __init__(self, session: JournalContents, relay: RelayApi | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.relay = relay
        self.report: ReplayReport | None = None
        self.error: str | None = None
        self._task: asyncio.Task[Any] | None = None
        self.tasks = WidgetTasks(self)
        self.confirm_mutation: ConfirmMutation = self._confirm_dialog
        self.confirm_new_ids: Callable[[], bool] = self._new_ids_dialog
        self.read_only_tools = read_only_tools_from(session.exchanges)
        self.setWindowTitle(bound(f"Replay — {session.name or session.header.session_id}", 120))

        kinds = [classify(e, self.read_only_tools) for e in session.exchanges]
        self.mutations_total = kinds.count(ReplayKind.MUTATION)
        self._reset_answers()
        self.confirm_box: QMessageBox | None = None  # the open mutation dialog, if any
        title = QLabel(bound(f"Replay: {session.name or session.header.session_id}", 200))
        title.setTextFormat(Qt.TextFormat.PlainText)
        title.setProperty("role", "heading")
        self.plan = QLabel(
            f"{len(kinds)} recorded exchange(s): {kinds.count(ReplayKind.READ)} read(s) "
            f"re-issued, {kinds.count(ReplayKind.MUTATION)} mutation(s) — each only after "
            f"you confirm it, {kinds.count(ReplayKind.SKIP)} not replayable (file reads, "
            "intents, refused calls).")
        self.plan.setTextFormat(Qt.TextFormat.PlainText)
        self.plan.setWordWrap(True)
        self.new_ids = QCheckBox("Send mutations with NEW request ids (re-execute on purpose)")
        self.new_ids.setChecked(False)
        self.new_ids_help = QLabel(NEW_IDS_RULE)
        self.new_ids_help.setTextFormat(Qt.TextFormat.PlainText)
        self.new_ids_help.setWordWrap(True)
        self.new_ids_help.setProperty("role", "muted")
        self.new_ids.toggled.connect(self._new_ids_toggled)
        self.run_button = QPushButton(theme.icon("send"), "Replay")
        self.cancel_button = QPushButton(theme.icon("cancel"), "Cancel")
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setRange(0, max(len(session.exchanges), 1))
        self.progress.setValue(0)
        self.progress.setFormat("%v / %m")
        self.status = QLabel("")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        self.diff = ReplayDiffView()

        bar = QHBoxLayout()
        bar.addWidget(title, 1)
        bar.addWidget(self.run_button)
        bar.addWidget(self.cancel_button)
        prog = QHBoxLayout()
        prog.addWidget(self.progress, 1)
        prog.addWidget(self.status, 2)
        lay = QVBoxLayout(self)
        lay.addLayout(bar)
        lay.addWidget(self.plan)
        lay.addWidget(self.new_ids)
        lay.addWidget(self.new_ids_help)
        lay.addLayout(prog)
        lay.addWidget(self.diff, 1)

        self.run_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        self.set_relay(relay)

    def set_relay(self, relay: RelayApi | None) -> None:
        self.relay = relay
        self.run_button.setEnabled(relay is not None and not self.running)
        if relay is None:
            self._set_status("Connect a device (or the virtual device) to replay on.")

    def _new_ids_toggled(self, on: bool) -> None:
        if on and not self.confirm_new_ids():
            self.new_ids.blockSignals(True)
            self.new_ids.setChecked(False)
            self.new_ids.blockSignals(False)

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> asyncio.Task[Any] | None:
        if self.running or self.relay is None:
            return None
        self.diff.clear()
        self._reset_answers()
        self.report = None
        self.error = None
        self.progress.setValue(0)
        self._set_running(True)
        self._task = self.tasks.spawn(self._run(self.relay, self.new_ids.isChecked()),
                                      "replay-run")
        return self._task

    def cancel(self) -> None:
        if self.running and self._task is not None:
            self._task.cancel()

    def _reset_answers(self) -> None:
        self.approve_all = False
        self.asked = self.approved = self.auto_approved = self.declined = 0

    @property
    def mutations_left(self) -> int:
        """Mutations not asked about yet, this one included."""
        return max(self.mutations_total - self.asked, 0)

    async def _ask(self, ex: Exchange, new_ids: bool) -> bool:
        if self.approve_all:  # "approve all remaining" was chosen earlier in this run
            self.asked += 1
            self.auto_approved += 1
            self.approved += 1
            return True
        answer = self.confirm_mutation(ex, new_ids)
        if inspect.isawaitable(answer):
            answer = await answer
        self.asked += 1
        if answer == APPROVE_ALL:
            self.approve_all = True
            answer = True
        if answer:
            self.approved += 1
        else:
            self.declined += 1
        return bool(answer)

    def answers_summary(self) -> str:
        if not self.asked:
            return ""
        auto = f", {self.auto_approved} of them by “approve all”" if self.auto_approved else ""
        return (f" Mutations: {self.approved} approved{auto}, {self.declined} declined "
                f"(of {self.mutations_total}).")

    async def _run(self, relay: RelayApi, new_ids: bool) -> None:
        replayer = Replayer(relay, confirm=lambda ex: self._ask(ex, new_ids),
                            new_request_ids=new_ids, read_only_tools=self.read_only_tools)
        report = ReplayReport()
        try:
            for i, ex in enumerate(self.session.exchanges):
                self._set_status(bound(f"{ex.method} {ex.tool or ''}", 200))
                r = await replayer.replay_one(ex)
                report.results.append(r)
                self.diff.add_result(r)
                self.progress.setValue(i + 1)
        except asyncio.CancelledError:
            self._set_status(f"Cancelled after {len(report.results)} exchange(s).")
            self.report = report
            self._set_running(False)
            return
        except Exception as exc:
            self.error = f"{type(exc).__name__}: {exc}"
            self._set_status(f"Replay stopped: {self.error}", error=True)
            self.report = report
            self._set_running(False)
            return
        self.report = report
        self.diff.set_report(report)
        n = len(report.changed)
        self._set_status((f"Done: {n} exchange(s) answered differently." if n
                          else "Done: every re-issued exchange answered as recorded.")
                         + self.answers_summary())
        self._set_running(False)
        self.finished.emit(report)

    def _set_running(self, on: bool) -> None:
        self.run_button.setEnabled(not on and self.relay is not None)
        self.cancel_button.setEnabled(on)
        self.new_ids.setEnabled(not on)
        self.running_changed.emit(on)

    def _set_status(self, text: str, *, error: bool = False) -> None:
        self.status.setText(text)
        self.status.setProperty("role", "error" if error else "")
        self.status.style().unpolish(self.status)
        self.status.style().polish(self.status)

    # ------------------------------------------------------------------ default dialogs
    async def _confirm_dialog(self, ex: Exchange, new_ids: bool) -> bool:
        box = QMessageBox(self)
        box.setIcon(QMessageBox.Icon.Warning)
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setWindowTitle("Replay a mutation?")
        box.setText(mutation_prompt(ex, new_ids))
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        left = self.mutations_left
        all_button = None
        if left > 1:  # one dialog per mutation is too many: say what "all" covers
            all_button = box.addButton(f"Approve all {left} remaining",
                                       QMessageBox.ButtonRole.YesRole)
            box.setInformativeText(
                f"{left} mutation(s) are left in this recording. “Approve all {left} "
                "remaining” re-issues them without asking again; the summary at the end "
                "counts them.")
        self.confirm_box = box
        fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        box.finished.connect(lambda code: fut.done() or fut.set_result(code))
        box.open()  # not exec(): a nested event loop inside a task would re-enter asyncio
        try:
            code = await fut
            if all_button is not None and box.clickedButton() is all_button:
                return APPROVE_ALL
        finally:
            self.confirm_box = None
            box.deleteLater()
        return code == QMessageBox.StandardButton.Yes

    def closeEvent(self, event: Any) -> None:
        self.tasks.cancel_all()  # closing the window stops the replay
        super().closeEvent(event)

    def _new_ids_dialog(self) -> bool:
        box = QMessageBox(self)
        box.setIcon(QMessageBox.Icon.Warning)
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setWindowTitle("Use new request ids?")
        box.setText(NEW_IDS_RULE + "\n\nUse new request ids for this replay?")
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        return box.exec() == QMessageBox.StandardButton.Yes


__all__ = ["APPROVE_ALL", "NEW_IDS_RULE", "DiffEntriesModel", "ReplayDiffView", "ReplayPanel",
           "ReplayResultsModel", "changed_lines", "mutation_prompt", "readable", "render"]
