"""The conformance tab's backend: the suite run on the window's own device session.

`ConformancePanel` (inspector/ui/conformance_panel.py) asks for three coroutines; this
adapter answers them with `inspector.conformance.runner` over the device's `Session`, so the
suite's exchanges land in the same traffic log and its evidence links resolve there.
"""

from __future__ import annotations

from typing import Any

from inspector.protocol.cetp import ToolDescriptor, ToolList
from inspector.protocol.discovery import CetpDeclaration


class SessionConformanceBackend:
    def __init__(self, session: Any, declaration: CetpDeclaration, engine: Any) -> None:
        self.session = session
        self.declaration = declaration
        self.engine = engine

    async def tools(self) -> list[ToolDescriptor]:
        tl = getattr(self.engine, "tools", None)
        if not isinstance(tl, ToolList) and hasattr(self.engine, "list_tools"):
            tl = await self.engine.list_tools()
        return list(tl.tools) if isinstance(tl, ToolList) else []

    async def plan(self, setup: Any) -> Any:
        from inspector.conformance.runner import plan_conformance

        return await plan_conformance(self.session, self.declaration, setup=setup,
                                      second_caller=self._second_caller())

    async def run(self, setup: Any, on_result: Any) -> Any:
        from inspector.conformance.runner import run_conformance

        def progress(ev: Any) -> None:
            if ev.kind == "result" and ev.result is not None:
                on_result(ev.result)

        return await run_conformance(self.session, self.declaration, setup=setup, progress=progress,
                                     second_caller=self._second_caller())

    def _second_caller(self) -> Any:
        """A connector acting as another app on the in-process virtual device (the caller.*
        checks), or None on a phone (those checks then report needs_setup)."""
        from inspector.virtual.callers import second_caller_connector

        return second_caller_connector(self.session)
