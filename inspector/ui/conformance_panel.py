"""The conformance tab of one provider: plan, per-tool permission, run, results, export.

The panel owns no suite logic. It is handed a `ConformanceBackend` (three coroutines: the
provider's tools, the plan for a setup, the run) and shows what they return. The safety
rule of the suite is visible here: every mutating, destructive or high-risk tool gets an
unticked checkbox with its annotations, and only ticked tools go into
`ConformanceSetup.allow_mutations` for this run.

Embedding (the main window wires it):

    panel = ConformancePanel(backend, provider_label, parent=tabs)
    panel.evidence_requested.connect(window.select_exchange)   # exchange id → traffic log
    panel.report_ready.connect(journal_writer_record_conformance)  # ConformanceReport
    panel.set_tools(tool_descriptors); panel.refresh_plan()

Provider text (tool names, messages, observed values) is untrusted: shown only as plain,
bounded strings in item models and QPlainTextEdit.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from inspector.conformance.junit import write_junit
from inspector.conformance.model import (
    CheckResult,
    ConformanceReport,
    ConformanceSetup,
    Plan,
)
from inspector.conformance.presets import reference_setup
from inspector.conformance.report import load_report, write_json
from inspector.protocol.cetp import ToolDescriptor
from inspector.ui import theme
from inspector.ui.conformance_binding import SuiteBackend
from inspector.ui.conformance_models import (  # noqa: F401 - re-exported
    _SEVERITY,
    EXCHANGE_ROLE,
    RESULT_ROLE,
    EvidenceModel,
    ExchangeLookup,
    PlanModel,
    ResultsModel,
    _item,
    describe_exchange,
    outcome_icon,
    outcome_label,
    result_detail,
    section_key,
    summary_role,
    summary_text,
    worst,
)
from inspector.ui.conformance_parts import (  # noqa: F401 - re-exported
    ConformanceBackend,
    OnResult,
    WidgetTasks,
    _cancel,
    _ToolPermission,
    suggest_setup,
)
from inspector.ui.conformance_results import ConformanceResultsView
from inspector.ui.flow_layout import FlowLayout
from inspector.ui.json_view import mono_font
from inspector.ui.text import bound, shrinkable, tooltip


class ConformancePanel(QWidget):
    """Conformance tab for one provider (see the module docstring for wiring).

    Signals: `evidence_requested(str)` — exchange id to select in the traffic log;
    `report_ready(object)` — a finished `ConformanceReport`; `running_changed(bool)`.
    Test hooks: `confirm_mutations(tools) -> bool` (asked before a run that will invoke
    mutating tools), `ask_save_path(title, filter, suggested) -> str | None`,
    `ask_open_path() -> str | None`.
    """

    evidence_requested = Signal(str)
    report_ready = Signal(object)
    running_changed = Signal(bool)

    def __init__(
        self, backend: ConformanceBackend, provider_label: str = "", parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.backend = backend
        self.provider_label = provider_label
        self.plan: Plan | None = None
        self.report: ConformanceReport | None = None
        self.error: str | None = None
        self._task: asyncio.Task[Any] | None = None
        self._plan_task: asyncio.Task[Any] | None = None
        self._permissions: list[_ToolPermission] = []
        self._tools: list[ToolDescriptor] = []
        self._done = 0
        self.device_prompt: QMessageBox | None = None
        self.tasks = WidgetTasks(self)
        self.confirm_mutations: Callable[[list[str]], bool] = self._confirm_mutations_dialog
        self.ask_save_path: Callable[[str, str, str], str | None] = self._save_dialog

        title = QLabel(
            bound(f"Conformance of {provider_label}" if provider_label else "Conformance", 200)
        )
        title.setTextFormat(Qt.TextFormat.PlainText)
        title.setProperty("role", "heading")
        self.run_button = QPushButton(theme.icon("send"), "Run suite")
        self.cancel_button = QPushButton(theme.icon("cancel"), "Cancel")
        self.cancel_button.setEnabled(False)
        self.refresh_button = QPushButton(theme.icon("refresh"), "Refresh plan")
        self.export_json_button = QPushButton(theme.icon("save"), "Export JSON…")
        self.export_junit_button = QPushButton(theme.icon("save"), "Export JUnit…")
        for b in (self.export_json_button, self.export_junit_button):
            b.setEnabled(False)
        self.load_button = QPushButton("Open report…")
        self.load_button.setToolTip("Show a JSON report written by `cetp-inspector conformance "
                                    "--json` (e.g. from CI)")
        self.ask_open_path: Callable[[], str | None] = self._open_dialog
        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.progress.setFormat("idle")
        self.progress.setValue(0)
        self.status = QLabel("")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        shrinkable(self.status)  # provider text may have no spaces (issue 14)

        # plan tab: permissions + advanced setup + plan tree
        self.permission_box = QWidget()
        self._perm_layout = QVBoxLayout(self.permission_box)
        self._perm_layout.setContentsMargins(0, 0, 0, 0)
        self.no_mutating = QLabel("This provider lists no mutating tools.")
        self.no_mutating.setTextFormat(Qt.TextFormat.PlainText)
        self._perm_layout.addWidget(self.no_mutating)
        self._perm_layout.addStretch(1)
        perm_scroll = QScrollArea()
        perm_scroll.setWidgetResizable(True)
        perm_scroll.setWidget(self.permission_box)
        self.perm_scroll = perm_scroll
        perm_head = QLabel(
            "Mutating tools — the suite never calls one you have not ticked "
            "(per tool, for this run only):"
        )
        perm_head.setTextFormat(Qt.TextFormat.PlainText)
        perm_head.setWordWrap(True)
        self.setup_edit = QPlainTextEdit()
        self.setup_edit.setFont(mono_font())
        self.setup_edit.setPlaceholderText(
            "Advanced setup (JSON, optional): scenarios and observers, e.g.\n"
            '{"mutation": {"tool": "create_alert", "args": {…}, "observer": '
            '{"tool": "list_alerts"}}}'
        )
        self.setup_edit.setMaximumHeight(90)
        self.template_button = QPushButton("Suggest setup from ticked tools")
        self.template_button.setToolTip("Fill the advanced setup with scenarios for the "
                                        "tools you allowed (edit before running)")
        self.template_button.clicked.connect(self.fill_setup_template)
        self.preset = reference_setup(self.package or "")
        self.preset_button = QPushButton("Use reference setup")
        self.preset_button.setToolTip("The scenarios prepared for this reference provider of "
                                      "the virtual device (it allows no tool by itself)")
        self.preset_button.setVisible(self.preset is not None)
        self.preset_button.clicked.connect(self.use_preset)
        self.setup_error = QLabel("")
        self.setup_error.setTextFormat(Qt.TextFormat.PlainText)
        self.setup_error.setProperty("role", "error")
        self.setup_error.setWordWrap(True)
        shrinkable(self.setup_error)  # provider text may have no spaces (issue 14)
        self.setup_error.hide()
        self.plan_model = PlanModel(self)
        self.plan_view = QTreeView()
        self.plan_view.setModel(self.plan_model)
        self.plan_view.setUniformRowHeights(True)
        self.plan_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.plan_summary = QLabel("")
        self.plan_summary.setTextFormat(Qt.TextFormat.PlainText)
        self.plan_summary.setWordWrap(True)
        shrinkable(self.plan_summary)  # provider text may have no spaces (issue 14)
        plan_page = QWidget()
        pl = QVBoxLayout(plan_page)
        pl.addWidget(perm_head)
        pl.addWidget(perm_scroll, 1)
        setup_row = QHBoxLayout()
        setup_row.addWidget(self.setup_edit, 1)
        setup_buttons = QVBoxLayout()
        setup_buttons.addWidget(self.template_button)
        setup_buttons.addWidget(self.preset_button)
        setup_buttons.addStretch(1)
        setup_row.addLayout(setup_buttons)
        pl.addLayout(setup_row)
        pl.addWidget(self.setup_error)
        pl.addWidget(self.plan_summary)
        pl.addWidget(self.plan_view, 3)

        self.results = ConformanceResultsView()
        self.results_summary = QLabel("No run yet.")
        self.results_summary.setTextFormat(Qt.TextFormat.PlainText)
        self.results_summary.setWordWrap(True)
        shrinkable(self.results_summary)  # provider text may have no spaces (issue 14)
        results_page = QWidget()
        rl = QVBoxLayout(results_page)
        rl.addWidget(self.results_summary)
        rl.addWidget(self.results, 1)
        self.tabs = QTabWidget()
        self.tabs.addTab(plan_page, "Plan")
        self.tabs.addTab(results_page, "Results")

        # the title on its own line: beside six buttons it made the whole window wider
        # the six buttons wrap onto a second line in a narrow window (issue 14: side by side
        # they needed 730 px, and with the Device screen dock open the window grew to 1214)
        bar_widget = QWidget()
        bar_widget.setObjectName("conformanceButtons")
        bar = FlowLayout(bar_widget, spacing=6)
        for b in (self.run_button, self.cancel_button, self.refresh_button,
                  self.load_button, self.export_json_button, self.export_junit_button):
            bar.addWidget(b)
        shrinkable(title)  # a 200-character provider label must not widen the window
        title.setToolTip(tooltip(provider_label or "Conformance"))
        lay = QVBoxLayout(self)
        lay.addWidget(title)
        lay.addWidget(bar_widget)
        prog = QHBoxLayout()
        prog.addWidget(self.progress, 1)
        prog.addWidget(self.status, 2)
        lay.addLayout(prog)
        lay.addWidget(self.tabs, 1)

        self.run_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        self.refresh_button.clicked.connect(self.refresh_plan)
        self.export_json_button.clicked.connect(self._export_json_clicked)
        self.export_junit_button.clicked.connect(self._export_junit_clicked)
        self.load_button.clicked.connect(self._load_clicked)
        self.results.evidence_requested.connect(self.evidence_requested)
        if hasattr(backend, "human_prompt") and backend.human_prompt is None:
            backend.human_prompt = self.prompt_on_device  # confirmations=human
        lookup = getattr(backend, "exchange", None)
        if callable(lookup):
            self.results.set_exchange_lookup(lookup)

    # ------------------------------------------------------------------ tools & setup
    def set_tools(self, tools: Sequence[ToolDescriptor]) -> None:
        """Show a permission checkbox (unticked) for every mutating or risky tool."""
        for p in self._permissions:
            self._perm_layout.removeWidget(p)
            p.deleteLater()
        self._permissions = []
        self._tools = list(tools)
        risky = [t for t in tools if t.annotations.mutating_or_risky]
        for i, t in enumerate(risky):
            p = _ToolPermission(t)
            p.box.toggled.connect(lambda _on: self.refresh_plan())
            self._perm_layout.insertWidget(i, p)
            self._permissions.append(p)
        self.no_mutating.setVisible(not risky)
        # as tall as the list (up to ~4 tools), so one tool leaves no empty box
        per_tool = 2 * self.fontMetrics().height() + 34
        want = per_tool * min(len(risky), 4) if risky else self.fontMetrics().height() + 16
        self.perm_scroll.setFixedHeight(want + 2 * self.perm_scroll.frameWidth())

    def permission(self, tool: str) -> QCheckBox | None:
        return next((p.box for p in self._permissions if p.tool_name == tool), None)

    def allowed_tools(self) -> list[str]:
        return [p.tool_name for p in self._permissions if p.box.isChecked()]

    def setup(self) -> ConformanceSetup:
        """The setup for the next run: advanced JSON + the ticked tools (ValueError if bad)."""
        text = self.setup_edit.toPlainText().strip()
        try:
            base = ConformanceSetup.model_validate_json(text) if text else ConformanceSetup()
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(x) for x in first.get("loc", ()))
            raise ValueError(
                f"advanced setup: {where + ': ' if where else ''}{first.get('msg', 'invalid')}"
            ) from None
        allowed = list(dict.fromkeys(base.allow_mutations + self.allowed_tools()))
        return base.model_copy(update={"allow_mutations": allowed})

    @property
    def package(self) -> str | None:
        """The provider's package, from the backend (`SuiteBackend` or the window's)."""
        d = getattr(self.backend, "declaration", None) or getattr(self.backend, "provider", None)
        return d if isinstance(d, str) else getattr(d, "package", None)

    def use_preset(self) -> None:
        """Fill the advanced setup with the reference scenarios (no tool gets allowed)."""
        if self.preset is None:
            return
        data = self.preset.model_dump(mode="json", exclude_defaults=True)
        data.pop("allow_mutations", None)
        self.setup_edit.setPlainText(json.dumps(data, indent=1, ensure_ascii=False))
        self.refresh_plan()

    def fill_setup_template(self) -> None:
        """Put `suggest_setup` for the ticked tools into the advanced setup field."""
        text = self.setup_edit.toPlainText().strip()
        try:
            current = json.loads(text) if text else {}
        except ValueError:
            current = {}
        if not isinstance(current, dict):
            current = {}
        current.update(suggest_setup(self._tools, self.allowed_tools()))
        self.setup_edit.setPlainText(json.dumps(current, indent=1, ensure_ascii=False))
        self.refresh_plan()

    # ------------------------------------------------------------------ plan
    def load_tools(self) -> asyncio.Task[Any]:
        """Fetch the provider's tools through the backend, then refresh the plan."""

        async def go() -> None:
            try:
                tools = await self.backend.tools()
            except Exception as exc:
                self._set_status(f"Could not list the provider's tools: {exc}", error=True)
                return
            self.set_tools(tools)
            self.refresh_plan()

        return self.tasks.spawn(go(), "conformance-tools")

    def refresh_plan(self) -> asyncio.Task[Any] | None:
        try:
            setup = self.setup()
        except ValueError as exc:
            self.setup_error.setText(str(exc))
            self.setup_error.show()
            return None
        self.setup_error.hide()
        if self._plan_task is not None and not self._plan_task.done():
            self._plan_task.cancel()
        self._plan_task = self.tasks.spawn(self._plan(setup), "conformance-plan")
        return self._plan_task

    async def _plan(self, setup: ConformanceSetup) -> None:
        self.plan_summary.setText("Planning…")
        try:
            plan = await self.backend.plan(setup)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.error = f"Could not plan the run: {exc}"
            self.plan_summary.setText(f"{self.error}. Check the device connection, then "
                                      "Refresh plan.")
            return
        self.error = None
        self.set_plan(plan)

    def set_plan(self, plan: Plan) -> None:
        self.plan = plan
        self.plan_model.set_plan(plan)
        self.plan_view.expandAll()
        self.plan_view.resizeColumnToContents(0)
        self.plan_view.setColumnWidth(0, min(self.plan_view.columnWidth(0), 420))
        counts: dict[str, int] = {}
        for it in plan.items:
            counts[it.status] = counts.get(it.status, 0) + 1
        text = f"{len(plan.items)} checks: " + ", ".join(
            f"{n} {PlanModel._STATUS.get(s, s)}" for s, n in sorted(counts.items())
        )
        if plan.mutating_tools:
            text += ". It will call these mutating tools: " + ", ".join(
                bound(t, 60) for t in plan.mutating_tools
            )
        else:
            text += ". It will call no mutating tool."
        for w in plan.warnings[:5]:
            text += "\nNote: " + bound(w, 300)
        self.plan_summary.setText(text)

    # ------------------------------------------------------------------ run
    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> asyncio.Task[Any] | None:
        """Run the suite (after confirming the mutating tools it will call)."""
        if self.running:
            return None
        try:
            setup = self.setup()
        except ValueError as exc:
            self.setup_error.setText(str(exc))
            self.setup_error.show()
            self.tabs.setCurrentIndex(0)
            return None
        self.setup_error.hide()
        if setup.allow_mutations and not self.confirm_mutations(list(setup.allow_mutations)):
            self._set_status("Run cancelled: mutating tools not confirmed.")
            return None
        self.report = None
        self.error = None
        self._done = 0
        self.results.set_results([])
        total = len(self.plan.items) if self.plan is not None else 0
        self.progress.setRange(0, total)  # 0..0 = busy indicator until the plan is known
        self.progress.setValue(0)
        self.progress.setFormat("%v / %m checks" if total else "running…")
        self.tabs.setCurrentIndex(1)
        self.results_summary.setText("Running…")
        self._set_running(True)
        self._task = self.tasks.spawn(self._run(setup), "conformance-run")
        return self._task

    def cancel(self) -> None:
        if self.running and self._task is not None:
            self._task.cancel()

    async def _run(self, setup: ConformanceSetup) -> None:
        try:
            report = await self.backend.run(setup, self._on_result)
        except asyncio.CancelledError:
            self._set_status(f"Cancelled after {self._done} check(s); partial results shown.")
            self.results_summary.setText("Cancelled — partial results.")
            self.progress.setFormat("cancelled")
            self._set_running(False)
            return  # swallow: a user cancel is not a failure
        except Exception as exc:
            self.error = str(exc)
            self._set_status(
                f"The run failed: {exc}. Check the device connection and try again.", error=True
            )
            self.results_summary.setText("The run failed.")
            self.progress.setFormat("failed")
            self._set_running(False)
            return
        self.show_report(report)
        self._set_running(False)
        self.report_ready.emit(report)

    def _on_result(self, r: CheckResult) -> None:
        self._done += 1
        self.results.add_result(r)
        if self.progress.maximum() and self._done <= self.progress.maximum():
            self.progress.setValue(self._done)
        self._set_status(bound(f"{r.check_id}: {outcome_label(r.outcome)}", 200))

    def show_report(self, report: ConformanceReport) -> None:
        """Show a finished report (from a run, or loaded from a file or bundle)."""
        self.report = report
        self.results.set_embedded(report.exchanges)
        self.results.set_results(report.results)
        n = len(report.results)
        self.progress.setRange(0, max(n, 1))
        self.progress.setValue(max(n, 1))
        self.progress.setFormat("done: %m checks" if n else "done")
        self.results_summary.setText(summary_text(report))
        self.results_summary.setProperty("role", summary_role(report))
        self.results_summary.style().unpolish(self.results_summary)
        self.results_summary.style().polish(self.results_summary)
        self._set_status(
            "Finished." if report.passed else f"Finished: {report.verdict()}."
        )
        self.export_json_button.setEnabled(True)
        self.export_junit_button.setEnabled(True)
        self.tabs.setCurrentIndex(1)

    def _set_running(self, on: bool) -> None:
        self.run_button.setEnabled(not on)
        self.refresh_button.setEnabled(not on)
        self.cancel_button.setEnabled(on)
        for p in self._permissions:
            p.box.setEnabled(not on)
        self.setup_edit.setReadOnly(on)
        self.running_changed.emit(on)

    def _set_status(self, text: str, *, error: bool = False) -> None:
        self.status.setText(text)
        self.status.setProperty("role", "error" if error else "")

    # ------------------------------------------------------------------ export
    def export_json(self, path: Path | str) -> Path:
        """Write the JSON report (schema: docs/conformance.md)."""
        if self.report is None:
            raise ValueError("no report yet: run the suite first")
        write_json(self.report, path)
        return Path(path)

    def export_junit(self, path: Path | str) -> Path:
        if self.report is None:
            raise ValueError("no report yet: run the suite first")
        write_junit(self.report, path)
        return Path(path)

    def _load_clicked(self) -> None:
        path = self.ask_open_path()
        if not path:
            return
        try:
            report = load_report_file(path)
        except ValueError as exc:
            self._set_status(bound(str(exc), 400), error=True)
            return
        self.show_report(report)
        self._set_status(bound(f"Showing {path} ({report.target.package})", 300))

    def _open_dialog(self) -> str | None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a conformance report", "",
                                              "JSON (*.json);;All files (*)")
        return path or None

    def _suggested(self, ext: str) -> str:
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", self.provider_label or "provider")[:80]
        return f"conformance-{name}.{ext}"

    def _export_json_clicked(self) -> None:
        path = self.ask_save_path(
            "Export conformance report (JSON)", "JSON (*.json)", self._suggested("json")
        )
        if path:
            self._export(self.export_json, path)

    def _export_junit_clicked(self) -> None:
        path = self.ask_save_path(
            "Export conformance report (JUnit XML)", "JUnit XML (*.xml)", self._suggested("xml")
        )
        if path:
            self._export(self.export_junit, path)

    def _export(self, fn: Callable[[str], Path], path: str) -> None:
        try:
            fn(path)
        except OSError as exc:
            self._set_status(f"Could not write {path}: {exc.strerror or exc}", error=True)
        else:
            self._set_status(f"Saved {path}")

    async def prompt_on_device(self, text: str) -> None:
        """Ask the person at the phone to answer the provider's screen (confirmations=human).

        Non-modal and awaited (a nested exec() inside a running task would re-enter the
        asyncio loop); returns when the user presses OK.
        """
        box = QMessageBox(self)
        box.setIcon(QMessageBox.Icon.Information)
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setWindowTitle("Answer on the device")
        box.setText(bound(text, 600, single_line=False)
                    + "\n\nPress OK once the provider's screen is showing on the device.")
        box.setStandardButtons(QMessageBox.StandardButton.Ok)
        fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        box.finished.connect(lambda code: fut.done() or fut.set_result(code))
        self.device_prompt = box
        box.open()
        try:
            await fut
        finally:
            self.device_prompt = None
            box.deleteLater()

    # ------------------------------------------------------------------ default dialogs
    def _confirm_mutations_dialog(self, tools: list[str]) -> bool:
        box = QMessageBox(self)
        box.setIcon(QMessageBox.Icon.Warning)
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setWindowTitle("Allow mutating tools?")
        box.setText(
            "The suite will call these tools, which change data in the app on the "
            "device:\n\n"
            + "\n".join(f"  • {bound(t, 80)}" for t in tools)
            + "\n\nRun only against test data you can lose."
        )
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        return box.exec() == QMessageBox.StandardButton.Yes

    def _save_dialog(self, title: str, flt: str, suggested: str) -> str | None:
        path, _ = QFileDialog.getSaveFileName(self, title, suggested, flt)
        return path or None

    def closeEvent(self, event: Any) -> None:
        self.tasks.cancel_all()
        super().closeEvent(event)


def load_report_file(path: Path | str) -> ConformanceReport:
    """Read a JSON report file (ValueError saying why when it is not one)."""
    try:
        return load_report(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path} is not a conformance report: {exc}") from None


__all__ = [
    "ConformanceBackend",
    "ConformancePanel",
    "ConformanceResultsView",
    "EvidenceModel",
    "PlanModel",
    "ResultsModel",
    "SuiteBackend",
    "WidgetTasks",
    "load_report_file",
    "outcome_icon",
    "suggest_setup",
]
