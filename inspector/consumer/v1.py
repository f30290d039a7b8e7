"""CETP v1 (read-only) consumer: list_tools, execute_tool, get_provider_info.

Used only when the manifest has v1 and not v2 (§8). v1 has no negotiation, no retryable
flag and no resolutions: an AUTH_REQUIRED's `authorize_intent` action string is shown to
the user but never started (v2 forbids implicit intents and v1 is read-only).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspector.consumer import errors as cerr
from inspector.consumer.calls import Caller, CallResult
from inspector.consumer.clock import Clock, SystemClock
from inspector.consumer.execution import Attempt, ExecState, Execution
from inspector.consumer.findings import finding, quote, violation_finding
from inspector.consumer.options import EngineOptions
from inspector.consumer.recorder import Recorder
from inspector.protocol import errors as perr
from inspector.protocol.cetp import (
    EXECUTE_TOOL,
    GET_PROVIDER_INFO,
    LIST_TOOLS,
    ProtocolViolation,
    V1ProviderInfo,
    V1ToolList,
    args_json,
    parse_provider_info,
    parse_v1_tool_list,
    v1_execute_extras,
)
from inspector.protocol.exchange import ExchangeStatus, Finding


class V1ProviderSession:
    """A CETP v1 provider."""

    version = 1

    def __init__(self, relay: Any, authority: str, *, package: str = "",
                 recorder: Recorder | None = None, clock: Clock | None = None,
                 options: EngineOptions | None = None) -> None:
        self.relay = relay
        self.authority = authority
        self.package = package
        self.recorder = recorder or Recorder()
        self.clock = clock or SystemClock()
        self.options = options or EngineOptions()
        self.caller = Caller(relay, authority, package, self.recorder, self.clock, self.options)
        self.tools: V1ToolList | None = None
        self.info: V1ProviderInfo | None = None
        self.executions: dict[str, Execution] = {}
        self.findings: list[Finding] = []
        self._listeners: list[Callable[[Execution], None]] = []

    def add_execution_listener(self, listener: Callable[[Execution], None]
                               ) -> Callable[[], None]:
        """Called whenever an execution changes state (same as `ProviderSession`)."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _changed(self, ex: Execution) -> Execution:
        for listener in list(self._listeners):
            listener(ex)
        return ex

    async def _checked(self, method: str, extras: Any, **kw: Any) -> CallResult:
        r = await self.caller.call(method, extras, v2=False, **kw)
        if r.transport is not None:
            raise cerr.TransportFailure(r.transport.code, r.transport.message, r.transport.hint,
                                        r.exchange.id)
        if r.violation is not None:
            raise cerr.MalformedReply(cerr.MALFORMED_REPLY, str(r.violation),
                                      exchange_id=r.exchange.id)
        assert r.reply is not None
        if r.reply.error is not None:
            raise cerr.ProviderError(r.reply.error, r.exchange.id,
                                     perr.meaning(r.reply.error.error_code))
        return r

    def _parse(self, r: CallResult, parse: Any) -> Any:
        try:
            return parse(r.reply.decoded if r.reply else None)
        except ProtocolViolation as v:
            self.recorder.add_findings(r.exchange, [violation_finding(v)])
            r.exchange.status = ExchangeStatus.MALFORMED
            raise cerr.MalformedReply(cerr.MALFORMED_REPLY, str(v),
                                      exchange_id=r.exchange.id) from None

    async def list_tools(self) -> V1ToolList:
        """v1 list_tools: extras null; the schema is called `parameters`."""
        r = await self._checked(LIST_TOOLS, None)
        self.tools = self._parse(r, parse_v1_tool_list)
        return self.tools

    async def get_provider_info(self) -> V1ProviderInfo:
        """Optional in v1: a TOOL_NOT_FOUND answer means the provider does not offer it."""
        r = await self._checked(GET_PROVIDER_INFO, None)
        self.info = self._parse(r, lambda d: parse_provider_info(d, False))
        return self.info

    def new_execution(self, tool_name: str, args: Any) -> Execution:
        ex = Execution(tool_name=tool_name, args_json=args_json(args), protocol_version=1)
        self.executions[ex.request_id] = ex
        return ex

    async def execute_tool(self, tool_name: str, args: Any, *,
                           send_request_id: bool = True) -> Execution:
        return await self.run(self.new_execution(tool_name, args),
                              send_request_id=send_request_id)

    async def run(self, ex: Execution, *, send_request_id: bool = True) -> Execution:
        """v1 execute_tool: tool_name, args, optional request_id (kept on a re-run)."""
        self.executions.setdefault(ex.request_id, ex)
        extras = v1_execute_extras(ex.tool_name, ex.args_json,
                                   ex.request_id if send_request_id else None)
        r = await self.caller.call(EXECUTE_TOOL, extras, v2=False, tool=ex.tool_name,
                                   request_id=ex.request_id if send_request_id else None,
                                   parent_id=ex.exchange_ids[0] if ex.exchange_ids else None,
                                   attempt=len(ex.attempts) + 1)
        ex.state = ExecState.RUNNING
        att = Attempt(number=len(ex.attempts) + 1, exchange_id=r.exchange.id)
        ex.attempts.append(att)
        ex.exchange_ids.append(r.exchange.id)
        if r.transport is not None:
            att.outcome = f"transport:{r.transport.code}"
            ex.state = (ExecState.OUTCOME_UNKNOWN if r.outcome_unknown else ExecState.FAILED)
            ex.message = f"{r.transport.code}: {r.transport.message}. {r.transport.hint}"
            return self._changed(ex)
        if r.violation is not None or r.reply is None:
            att.outcome = "malformed"
            ex.state = ExecState.MALFORMED
            ex.message = f"the reply broke the protocol: {r.violation}"
            return self._changed(ex)
        reply = r.reply
        if reply.ok:
            att.outcome = "success"
            ex.value, ex.has_value = reply.decoded, True
            ex.state = ExecState.SUCCEEDED
            ex.message = "succeeded"
            return self._changed(ex)
        err = reply.error
        assert err is not None
        ex.error = err
        att.outcome = f"error:{err.error_code}"
        ex.state = ExecState.FAILED
        ex.message = f"{quote(err.error_code)}: {quote(err.error_message)}"
        if not perr.is_known_code(err.error_code, v2=False):
            self.recorder.add_findings(r.exchange, [finding(
                "v1.error.code.unknown", "§8", f"{err.error_code!r} is not a v1 error code",
                level="SHOULD")])
        if err.authorize_intent or err.resolution_hint:
            ex.message += (
                f". Provider hint: {err.resolution_hint or '-'}; authorize_intent "
                f"{err.authorize_intent or '-'} (shown, never started: v2 forbids implicit "
                "authorization intents and v1 is read-only)")
        return self._changed(ex)
