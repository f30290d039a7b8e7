"""The conformance tab's backend: the suite run on the window's own device session.

`ConformancePanel` (inspector/ui/conformance_panel.py) asks for three coroutines; this
adapter answers them with `inspector.conformance.runner` over the device's `Session`, so the
suite's exchanges land in the same traffic log and its evidence links resolve there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspector.conformance.model import CheckResult, ConformanceReport, ConformanceSetup, Plan
from inspector.protocol.cetp import ToolDescriptor, ToolList
from inspector.protocol.discovery import CetpDeclaration

OnResult = Callable[[CheckResult], None]


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


class SuiteBackend:
    """`ConformanceBackend` over the real suite (`inspector.conformance.runner`).

    `target` is an `inspector.session.session.Session` (its relay, recorder and traffic log
    are used, so evidence ids match the traffic log) or a bare `RelayApi`; `provider` is a
    `CetpDeclaration`, package or authority. `human_prompt` answers confirmations=human.
    """

    def __init__(self, target: Any, provider: Any, *, recorder: Any = None,
                 options: Any = None, human_prompt: Any = None) -> None:
        self.target = target
        self.provider = provider
        self.recorder = recorder
        self.options = options
        self.human_prompt = human_prompt

    def exchange(self, exchange_id: str) -> Any:
        """The recorded exchange with this id (for evidence rows), or None."""
        rec = self.recorder or getattr(self.target, "recorder", None)
        for ex in reversed(getattr(rec, "exchanges", None) or []):
            if ex.id == exchange_id:
                return ex
        return None

    async def tools(self) -> list[ToolDescriptor]:
        from inspector.consumer.engine import ProviderSession
        from inspector.protocol.discovery import CetpDeclaration

        decl = self.provider
        relay = getattr(self.target, "relay", self.target)
        if not isinstance(decl, CetpDeclaration):
            from inspector.conformance.runner import _pick, _resolve

            _, _, _, disc, _ = await _resolve(self.target, decl)
            decl, _ = _pick(decl, disc)
        if not decl.supports_v2 or not decl.authority:
            return []
        ps = ProviderSession(relay, decl.authority, package=decl.package,
                             recorder=self.recorder or getattr(self.target, "recorder", None))
        await ps.negotiate()
        return list((await ps.list_tools()).tools)

    async def plan(self, setup: ConformanceSetup) -> Plan:
        from inspector.conformance.runner import plan_conformance

        return await plan_conformance(self.target, self.provider, setup=setup,
                                      options=self.options, recorder=self.recorder)

    async def run(self, setup: ConformanceSetup, on_result: OnResult) -> ConformanceReport:
        from inspector.conformance.runner import ProgressEvent, run_conformance

        def progress(ev: ProgressEvent) -> None:
            if ev.kind == "result" and ev.result is not None:
                on_result(ev.result)

        return await run_conformance(self.target, self.provider, setup=setup,
                                     progress=progress, options=self.options,
                                     recorder=self.recorder, human_prompt=self.human_prompt)
