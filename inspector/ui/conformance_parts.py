"""The conformance tab's building blocks outside the panel itself: widget-bound tasks, the
backend protocol, the suggested setup and a tool's permission checkbox."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from inspector.conformance.model import (
    CheckResult,
    ConformanceReport,
    ConformanceSetup,
    Plan,
)
from inspector.protocol.cetp import ToolDescriptor
from inspector.tasks import spawn
from inspector.ui.badges import BadgeRow, annotation_badges
from inspector.ui.text import bound

OnResult = Callable[[CheckResult], None]


def _cancel(tasks: set[asyncio.Task[Any]]) -> None:
    for t in list(tasks):
        with contextlib.suppress(RuntimeError):  # at exit the event loop may be gone
            t.cancel()


class WidgetTasks:
    """Background tasks owned by one widget (spawned through `inspector.tasks`).

    They are cancelled when the widget is destroyed (a panel replaced with deleteLater gets
    no closeEvent), and a task that touches the widget after it is gone ends quietly
    instead of logging "C++ object already deleted".
    """

    def __init__(self, widget: QWidget) -> None:
        self._widget = widget
        tasks: set[asyncio.Task[Any]] = set()
        self._tasks = tasks
        widget.destroyed.connect(lambda *_: _cancel(tasks))

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        task = spawn(self._guarded(coro), name)
        task.add_done_callback(lambda _t: coro.close())  # never started: no warning
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _guarded(self, coro: Coroutine[Any, Any, Any]) -> Any:
        try:
            return await coro
        except RuntimeError:
            if not isValid(self._widget):
                return None  # the widget went away mid-task
            raise

    def cancel_all(self) -> None:
        _cancel(self._tasks)



class ConformanceBackend(Protocol):
    """What the panel needs from the suite for one provider (all may touch the device)."""

    async def tools(self) -> list[ToolDescriptor]:
        """The provider's v2 tool descriptors (empty for a v1-only provider)."""
        ...

    async def plan(self, setup: ConformanceSetup) -> Plan:
        """What a run with `setup` would do, without calling any tool."""
        ...

    async def run(self, setup: ConformanceSetup, on_result: OnResult) -> ConformanceReport:
        """Run the suite; call `on_result` for each check as it finishes."""
        ...


def suggest_setup(tools: Sequence[ToolDescriptor], allowed: Sequence[str]) -> dict[str, Any]:
    """A starting setup for the allowed tools: scenarios with schema-valid arguments.

    A guess to edit, not a decision: the user still reads it before running. Only tools
    the user ticked appear in scenarios; the observer is a read tool (preferably list_*).
    """
    from inspector.conformance.argsgen import valid_args
    from inspector.protocol.cetp import Confirmation, Execution

    by_name = {t.name: t for t in tools}
    ok = [by_name[n] for n in allowed if n in by_name]
    reads = [t for t in tools if not t.annotations.mutating_or_risky]
    observer = next((t for t in reads if t.name.startswith("list_")
                     and valid_args(t.input_schema) is not None), None)
    out: dict[str, Any] = {}

    def call(t: ToolDescriptor) -> dict[str, Any]:
        args = valid_args(t.input_schema)
        c: dict[str, Any] = {"tool": t.name, "args": args if args is not None else {}}
        if observer is not None:
            c["observer"] = {"tool": observer.name,
                             "args": valid_args(observer.input_schema) or {}}
        return c

    plain = [t for t in ok if t.annotations.confirmation != Confirmation.ALWAYS
             and not t.annotations.destructive]
    if plain:  # "mutation" must run without a confirmation screen
        out["mutation"] = call(plain[0])
    confirmed = [t for t in ok if t.annotations.confirmation != Confirmation.NEVER]
    if confirmed:
        out["confirmation"] = call(confirmed[0])
    asynchronous = [t for t in ok if t.annotations.execution == Execution.SYNC_OR_ASYNC]
    if asynchronous:
        out["async_call"] = call(asynchronous[0])
    return out


# --------------------------------------------------------------------------------------
# the tab


class _ToolPermission(QWidget):
    """One mutating tool: an unticked checkbox, its annotations, its description."""

    def __init__(self, tool: ToolDescriptor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tool_name = tool.name
        self.box = QCheckBox(bound(f"Allow {tool.name}", 120))
        self.box.setChecked(False)
        self.box.setToolTip("The suite calls this tool only if you tick it, for this run only")
        badges = BadgeRow()
        badges.set_badges(annotation_badges(tool.annotations))
        desc = QLabel(bound(tool.description, 300))
        desc.setTextFormat(Qt.TextFormat.PlainText)
        desc.setWordWrap(True)
        desc.setProperty("role", "muted")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 6)
        top = QHBoxLayout()
        top.addWidget(self.box)
        top.addWidget(badges, 1)
        lay.addLayout(top)
        lay.addWidget(desc)
