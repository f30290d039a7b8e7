"""The conformance tab's item models and plain-text renderings: outcomes, results grouped
by spec section, the plan, evidence rows and a result's detail (no widgets)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QIcon, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QWidget,
)

from inspector.conformance.model import (
    CheckResult,
    ConformanceReport,
    Outcome,
    Plan,
)
from inspector.ui import theme
from inspector.ui.text import PARAGRAPH_LIMIT, bound, pretty_json, tooltip

RESULT_ROLE = Qt.ItemDataRole.UserRole + 1
"""Data role holding the `CheckResult` of a result row (column 0)."""
EXCHANGE_ROLE = Qt.ItemDataRole.UserRole + 2
"""Data role holding an evidence exchange id."""


# --------------------------------------------------------------------------------------
# outcomes


_OUTCOME_STYLE: dict[Outcome, tuple[str, str, str]] = {
    # outcome → icon, colour token, label
    Outcome.PASS: ("ok", "ok", "pass"),
    Outcome.FAIL: ("error", "error", "fail"),
    Outcome.WARNING: ("warning", "warn", "warning"),
    Outcome.NOT_APPLICABLE: ("cancel", "muted", "not applicable"),
    Outcome.NEEDS_SETUP: ("about", "warn", "needs setup"),
    Outcome.ERROR: ("error", "warn", "error"),
    Outcome.SKIPPED: ("cancel", "muted", "skipped"),
}
_SEVERITY = [
    Outcome.FAIL,
    Outcome.ERROR,
    Outcome.NEEDS_SETUP,
    Outcome.WARNING,
    Outcome.PASS,
    Outcome.NOT_APPLICABLE,
    Outcome.SKIPPED,
]


def outcome_label(outcome: Outcome) -> str:
    return _OUTCOME_STYLE[outcome][2]


def outcome_icon(outcome: Outcome) -> QIcon:
    name, token, _ = _OUTCOME_STYLE[outcome]
    return theme.icon(name, theme.colors(theme.current())[token])


def worst(outcomes: Sequence[Outcome]) -> Outcome | None:
    """The most severe outcome of a group (its icon is the group's icon)."""
    return min(outcomes, key=_SEVERITY.index) if outcomes else None


def section_key(section: str) -> tuple[Any, ...]:
    """Spec order: "§2.2" < "§3.10" < "§10" (numbers compared as numbers)."""
    nums = re.findall(r"\d+", section)
    return (0, tuple(int(n) for n in nums), section) if nums else (1, (), section)


def summary_text(report: ConformanceReport) -> str:
    """One line: counts per outcome and the verdict on the MUST checks."""
    counts = report.summary.counts
    parts = [f"{counts[o.value]} {outcome_label(o)}" for o in _SEVERITY if counts.get(o.value)]
    return " · ".join(parts) + f" — {report.verdict()}"


def summary_role(report: ConformanceReport) -> str:
    """ok when every MUST passed, warn when nothing failed but checks need setup (a
    conforming provider must not be shown in red), error when something failed."""
    if report.passed:
        return "ok"
    return "error" if report.summary.must_failed or report.by_outcome(Outcome.ERROR) \
        else "warn"


# --------------------------------------------------------------------------------------
# models


def _item(text: object, limit: int = 200) -> QStandardItem:
    it = QStandardItem(bound(text, limit))
    it.setEditable(False)
    return it


class ResultsModel(QStandardItemModel):
    """Check results grouped by spec section (sections in spec order, checks as they come).

    Columns: Check, Outcome, Level, Message. Group rows show the section, a count and the
    worst outcome's icon; result rows carry their `CheckResult` under `RESULT_ROLE`.
    """

    COLUMNS = ("Check", "Outcome", "Level", "Message")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setHorizontalHeaderLabels(list(self.COLUMNS))
        self._groups: dict[str, QStandardItem] = {}
        self._rows: dict[str, QStandardItem] = {}

    def clear_results(self) -> None:
        self.removeRows(0, self.rowCount())
        self._groups.clear()
        self._rows.clear()

    def set_results(self, results: Sequence[CheckResult]) -> None:
        self.clear_results()
        for r in results:
            self.add_result(r)

    def results(self) -> list[CheckResult]:
        out = []
        for g in self._groups.values():
            for row in range(g.rowCount()):
                r = g.child(row, 0).data(RESULT_ROLE)
                if isinstance(r, CheckResult):
                    out.append(r)
        return out

    def _group(self, section: str) -> QStandardItem:
        g = self._groups.get(section)
        if g is not None:
            return g
        g = _item(section or "(no section)")
        keys = [section_key(s) for s in self._groups]
        pos = sum(1 for k in keys if k < section_key(section))
        self.insertRow(pos, [g, _item(""), _item(""), _item("")])
        self._groups[section] = g
        return g

    def add_result(self, r: CheckResult) -> None:
        """Add or replace the row of `r.check_id`."""
        old = self._rows.get(r.check_id)
        if old is not None and old.parent() is not None:
            parent = old.parent()
            parent.removeRow(old.row())
            self._refresh_group(parent)
        g = self._group(r.section)
        head = _item(f"{r.check_id} — {r.title}")
        head.setData(r, RESULT_ROLE)
        head.setToolTip(tooltip(r.title, 300))
        out = _item(outcome_label(r.outcome))
        out.setIcon(outcome_icon(r.outcome))
        msg = _item(r.message, 400)
        msg.setToolTip(tooltip(r.message, PARAGRAPH_LIMIT))
        g.appendRow([head, out, _item(r.level), msg])
        self._rows[r.check_id] = head
        self._refresh_group(g)

    def _refresh_group(self, g: QStandardItem) -> None:
        results = [g.child(i, 0).data(RESULT_ROLE) for i in range(g.rowCount())]
        outcomes = [r.outcome for r in results if isinstance(r, CheckResult)]
        w = worst(outcomes)
        row = g.row()
        status = self.item(row, 1)
        if w is not None:
            g.setIcon(outcome_icon(w))
            bad = sum(1 for o in outcomes if not o.ok and o != Outcome.WARNING)
            warn = outcomes.count(Outcome.WARNING)
            text = f"{len(outcomes)} check(s)"
            if bad:
                text += f", {bad} not passed"
            if warn:
                text += f", {warn} warning(s)"
            status.setText(text)

    def result_at(self, index: QModelIndex | QPersistentModelIndex) -> CheckResult | None:
        if not index.isValid():
            return None
        first = index.siblingAtColumn(0)
        r = self.data(first, RESULT_ROLE)
        return r if isinstance(r, CheckResult) else None

    def index_of(self, check_id: str) -> QModelIndex:
        it = self._rows.get(check_id)
        return it.index() if it is not None else QModelIndex()


class PlanModel(QStandardItemModel):
    """The plan: one row per check (status, level, section, reason), its calls as children."""

    COLUMNS = ("Check", "Status", "Level", "Section", "Why / call")
    _STATUS = {
        "run": "will run",
        "needs_setup": "needs setup",
        "not_applicable": "not applicable",
        "skipped": "skipped",
    }

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setHorizontalHeaderLabels(list(self.COLUMNS))

    def set_plan(self, plan: Plan | None) -> None:
        self.removeRows(0, self.rowCount())
        if plan is None:
            return
        if plan.prelude:
            head = _item("prelude (read-only discovery)")
            for c in plan.prelude:
                head.appendRow(
                    [
                        _item(c.method + (f" {c.tool}" if c.tool else "")),
                        _item(""),
                        _item(""),
                        _item(""),
                        _item(c.note, 300),
                    ]
                )
            self.appendRow([head, _item("will run"), _item(""), _item(""), _item("")])
        for it in sorted(plan.items, key=lambda i: section_key(i.section)):
            head = _item(f"{it.check_id} — {it.title}")
            status = _item(self._STATUS.get(it.status, it.status))
            if it.status == "needs_setup":
                status.setIcon(outcome_icon(Outcome.NEEDS_SETUP))
            for c in it.calls:
                call = _item(c.method + (f" {c.tool}" if c.tool else ""))
                flag = _item("MUTATES" if c.mutating else "")
                if c.mutating:
                    flag.setForeground(QColor(theme.colors(theme.current())["error"]))
                call.setToolTip(tooltip(c.note, 300))
                head.appendRow([call, flag, _item(""), _item(""), _item(c.note, 300)])
            self.appendRow(
                [head, status, _item(it.level), _item(it.section), _item(it.reason, 300)]
            )


ExchangeLookup = Callable[[str], Any]
"""exchange id → the recorded `Exchange` (or None): lets evidence rows say what each call was."""


def _field(ex: Any, name: str) -> Any:
    """An exchange's field, whether it is a recorded `Exchange` or one embedded in a JSON
    report (a dict)."""
    return ex.get(name) if isinstance(ex, dict) else getattr(ex, name, None)


def describe_exchange(ex: Any) -> str:
    """"execute_tool create_alert → provider_error INVALID_ARGS · 12:03:04.512": method,
    tool, outcome and when (local time), so an evidence row says which call it was."""
    tool = f" {_field(ex, 'tool')}" if _field(ex, "tool") else ""
    err = f" {_field(ex, 'error_code')}" if _field(ex, "error_code") else ""
    status = _field(ex, "status")
    status = getattr(status, "value", status)
    started = _field(ex, "started_ms")
    when = ""
    if isinstance(started, int | float) and started > 0:
        t = time.localtime(started / 1000)
        when = " · " + time.strftime("%H:%M:%S", t) + f".{int(started) % 1000:03d}"
    return bound(f"{_field(ex, 'method')}{tool} → {status}{err}{when}", 300)


class EvidenceModel(QStandardItemModel):
    """The exchanges a result cites (double-click or "Show in traffic log" to jump)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setHorizontalHeaderLabels(["Evidence exchange", "Id"])
        self.lookup: ExchangeLookup | None = None
        #: exchanges embedded in the report (`ConformanceReport.exchanges`), by id: evidence
        #: of a report loaded from a file resolves without the session's traffic log
        self.embedded: dict[str, dict[str, Any]] = {}

    def set_ids(self, ids: Sequence[str]) -> None:
        self.removeRows(0, self.rowCount())
        for x in ids:
            ex = self.lookup(x) if self.lookup is not None else None
            if ex is None:
                ex = self.embedded.get(x)
            what = _item(describe_exchange(ex) if ex is not None else "(exchange)", 200)
            what.setData(x, EXCHANGE_ROLE)
            ident = _item(x, 80)
            ident.setData(x, EXCHANGE_ROLE)
            self.appendRow([what, ident])


def result_detail(r: CheckResult) -> str:
    """The plain-text detail of one result: message, observed values, findings."""
    lines = [
        f"{r.check_id}: {r.title}",
        f"{r.level} {r.section} · {r.category.value} · "
        f"{outcome_label(r.outcome)} · {r.duration_ms:.0f} ms",
        "",
    ]
    if r.message:
        lines += [bound(r.message, PARAGRAPH_LIMIT, single_line=False), ""]
    if r.caused_by:
        lines += [f"Probably a consequence of {bound(r.caused_by, 120)} failing: fix that "
                  "first.", ""]
    if r.sent is not None:
        lines += ["Sent:", pretty_json(r.sent, 4000), ""]
    if r.received is not None:
        lines += ["Came back:", pretty_json(r.received, 4000), ""]
    for q in r.requirements[:3]:
        lines.append(f"Rule {q.id} ({q.section}, {q.keyword}): \u201c{bound(q.quote, 400)}"
                     "\u201d")
    if r.requirements:
        lines.append("")
    if r.evidence.observed:
        lines += ["Values seen:", pretty_json(r.evidence.observed, 20_000), ""]
    if r.evidence.findings:
        lines.append("Findings:")
        for f in r.evidence.findings[:200]:
            lines.append(
                f"  {'ok  ' if f.ok else 'FAIL'} {f.level} {f.section} {f.rule_id}"
                f"{' at ' + bound(f.path, 120) if f.path else ''}: "
                f"{bound(f.message, 400)}"
            )
    return "\n".join(lines)
