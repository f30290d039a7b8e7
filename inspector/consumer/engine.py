"""`ProviderSession`: one CETP v2 provider, driven by a user (negotiate, info, tools, execute).

Behaviour held here (CETP v2): negotiate first with versions in descending order and only
use the capabilities both sides agreed (§2.2–2.3); a failed v2 negotiation raises and never
falls back to v1 (§8); the tool list's revision is checked once per negotiation and diffed
(§3.3); one logical execution keeps one request_id through retries, re-negotiation and the
confirmation resume (§4.1, §6); max_request_bytes is checked before sending (§4.1); retries
only when retryable, after retry_after_ms, never on auth/confirmation/argument errors (§5).
Async operations live in `operations.py`, file results in `large_results.py`, v1 in `v1.py`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any

from inspector.consumer import errors as cerr
from inspector.consumer.calls import Caller, CallResult
from inspector.consumer.clock import Clock, SystemClock
from inspector.consumer.execution import Attempt, CancelOutcome, ExecState, Execution
from inspector.consumer.findings import finding, quote, violation_finding
from inspector.consumer.large_results import (
    FileVerdict,
    ProgressCallback,
)
from inspector.consumer.negotiation import (
    Session,
    ToolListDiff,
    choose_protocol,
    diff_tool_lists,
    parse_expires_at,
)
from inspector.consumer.options import EngineOptions
from inspector.consumer.outputs import output_findings
from inspector.consumer.recorder import Recorder
from inspector.protocol import errors as perr
from inspector.protocol import rules
from inspector.protocol.cetp import (
    EXECUTE_TOOL,
    GET_PROVIDER_INFO,
    LIMIT_MINIMUMS,
    LIST_TOOLS,
    META_AUTHORITY,
    NEGOTIATE,
    FileResult,
    InlineResult,
    ProtocolViolation,
    ProviderInfo,
    Reply,
    ToolDescriptor,
    ToolList,
    args_json,
    execute_extras,
    negotiate_extras,
    new_request_id,
    parse_accepted,
    parse_negotiate,
    parse_provider_info,
    parse_result_envelope,
    parse_tool_list_lenient,
    v2_extras,
)
from inspector.protocol.discovery import CetpDeclaration
from inspector.protocol.exchange import Exchange, ExchangeKind, ExchangeStatus, Finding
from inspector.relay.api import DISCONNECTED, IPC_FAILED, RelayApi

#: errors the engine never retries on its own, whatever `retryable` says (§5)
NO_AUTO_RETRY = frozenset({
    perr.AUTH_REQUIRED, perr.USER_ACTION_REQUIRED, perr.USER_CANCELLED, perr.INVALID_ARGS,
    perr.INVALID_REQUEST, perr.PERMISSION_DENIED, perr.TOOL_NOT_FOUND,
    perr.UNSUPPORTED_CAPABILITY, perr.UNSUPPORTED_VERSION, perr.METHOD_NOT_FOUND,
})

#: relay failures after which negotiate is re-sent once (connection lost / binder died)
RENEGOTIATE_AFTER = frozenset({DISCONNECTED, IPC_FAILED})

ExecutionListener = Callable[[Execution], None]


class ProviderSession:
    """A CETP v2 provider as the inspector drives it (one per authority)."""

    version = 2

    def __init__(
        self,
        relay: RelayApi,
        authority: str,
        *,
        package: str = "",
        recorder: Recorder | None = None,
        clock: Clock | None = None,
        options: EngineOptions | None = None,
    ) -> None:
        self.relay = relay
        self.authority = authority
        self.package = package
        self.recorder = recorder or Recorder()
        self.clock = clock or SystemClock()
        self.options = options or EngineOptions()
        self.caller = Caller(relay, authority, package, self.recorder, self.clock, self.options)
        self.session: Session | None = None
        self.info: ProviderInfo | None = None
        self.tools: ToolList | None = None
        self.tool_violations: list[ProtocolViolation] = []
        self.diffs: list[ToolListDiff] = []
        self.findings: list[Finding] = []
        self.executions: dict[str, Execution] = {}
        self._listed_for: str | None = None  # session exchange id the list was checked for
        self._listeners: list[ExecutionListener] = []
        self._negotiate_lock = asyncio.Lock()
        self._info_findings: set[tuple[str, str, str]] = set()
        self._list_lock = asyncio.Lock()

    # ------------------------------------------------------------------ listeners
    def add_execution_listener(self, listener: ExecutionListener) -> Callable[[], None]:
        """Called whenever an execution changes state (GUI, journal)."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _changed(self, ex: Execution) -> None:
        for listener in list(self._listeners):
            listener(ex)

    # ------------------------------------------------------------------ helpers
    def _deadline(self) -> int:
        return self.clock.now_ms() + self.options.deadline_ms

    def tool(self, name: str) -> ToolDescriptor | None:
        return self.tools.tool(name) if self.tools else None

    def _flag(self, exchange: Exchange, findings: Iterable[Finding]) -> None:
        items = list(findings)
        if items:
            self.recorder.add_findings(exchange, items)

    # ------------------------------------------------------------------ negotiate
    async def negotiate(self) -> Session:
        """negotiate (§2.2). Raises NegotiationFailed; never falls back to v1."""
        versions = tuple(sorted(set(self.options.consumer_versions), reverse=True))
        caps = tuple(self.options.capabilities)
        extras = negotiate_extras(versions, caps)
        self.session = None
        # verdicts on an earlier negotiation describe a session that is gone
        self.findings = [f for f in self.findings if not f.rule_id.startswith("negotiate.")]
        r = await self.caller.call(NEGOTIATE, extras, v2=True)
        if r.transport is not None and r.transport.code in RENEGOTIATE_AFTER:
            # negotiate has no side effect, so one retry is safe; a RelayLink reconnects on
            # this next call. Anything else (or a second loss) is reported as transport.
            await self.clock.sleep_ms(self.options.transport_retry_delay_ms)
            first = r.exchange.id
            r = await self.caller.call(NEGOTIATE, extras, v2=True, attempt=2, parent_id=first)
            r.exchange.notes.append(f"negotiate retried once after {first} lost the "
                                    "connection (negotiate has no side effect)")
        no_fallback = "a failed v2 negotiation never falls back to v1 (CETP v2 §8)"
        if r.transport is not None:
            raise cerr.TransportFailure(r.transport.code, r.transport.message, r.transport.hint,
                                        r.exchange.id)
        if r.violation is not None:
            raise cerr.NegotiationFailed(cerr.MALFORMED_REPLY, str(r.violation), no_fallback,
                                         r.exchange.id)
        reply = r.reply
        assert reply is not None
        if reply.error is not None:
            hint = ("the provider shares no protocol version with the inspector; "
                    if reply.error.error_code == perr.UNSUPPORTED_VERSION else "") + no_fallback
            raise cerr.NegotiationFailed(reply.error.error_code, reply.error.error_message,
                                         hint, r.exchange.id)
        try:
            result = parse_negotiate(reply.decoded)
        except ProtocolViolation as v:
            self._flag(r.exchange, [violation_finding(v)])
            r.exchange.status = ExchangeStatus.MALFORMED
            raise cerr.NegotiationFailed(cerr.MALFORMED_REPLY, str(v), no_fallback,
                                         r.exchange.id) from None
        found = rules.check_negotiation(result, caps, versions)
        self._flag(r.exchange, found)
        self.findings.extend(found)
        if result.selected_version != 2:
            raise cerr.NegotiationFailed(
                cerr.NEGOTIATION_FAILED,
                f"the provider advertises v2 but selected version {result.selected_version}",
                "a silent downgrade is refused; " + no_fallback, r.exchange.id)
        raw = reply.decoded.get("limits") if isinstance(reply.decoded, dict) else None
        expires_ms = parse_expires_at(result.expires_at)
        now = self.clock.now_ms()
        if result.expires_at and expires_ms is None:
            found = [finding("negotiate.expires_at", "§2.2",
                             f"expires_at {quote(result.expires_at)} is not an ISO 8601 time",
                             level="SHOULD", path="data.expires_at")]
        elif expires_ms is not None and expires_ms <= now:
            found = [finding("negotiate.expires_at", "§2.2",
                             f"the session already expired at {result.expires_at}",
                             level="SHOULD", path="data.expires_at")]
        else:
            found = []
        self._flag(r.exchange, found)
        self.findings.extend(found)
        self.caller.set_concurrency(result.limits.max_concurrent_requests)
        self.session = Session(result=result, requested_capabilities=caps,
                               consumer_versions=versions, negotiated_ms=now,
                               exchange_id=r.exchange.id, expires_ms=expires_ms,
                               raw_limits=raw if isinstance(raw, dict) else {})
        return self.session

    async def ensure_session(self) -> Session:
        """The current session, negotiating first if there is none (one at a time)."""
        if self.session is not None and not self.session.expired(self.clock.now_ms()):
            return self.session
        async with self._negotiate_lock:
            if self.session is not None and not self.session.expired(self.clock.now_ms()):
                return self.session
            return await self.negotiate()  # none yet, or past expires_at

    async def _renegotiate(self, stale_token: str | None) -> Session:
        """After NEGOTIATION_REQUIRED: negotiate again unless a concurrent call already did."""
        async with self._negotiate_lock:
            if self.session is not None and self.session.token != stale_token:
                return self.session
            self.session = None
            return await self.negotiate()

    # ------------------------------------------------------------------ reads
    async def _read(self, method: str, *, tool: str | None = None) -> CallResult:
        """A retryable read: one request_id across its retries (§4.1)."""
        rid = new_request_id()
        renegotiated = False
        retries = 0
        attempt = 0
        while True:
            attempt += 1
            session = await self.ensure_session()
            r = await self.caller.call(method, v2_extras(session.token, rid, self._deadline()),
                                       v2=True, request_id=rid, tool=tool, attempt=attempt)
            if r.transport is not None:
                if r.outcome_unknown and retries < self.options.max_auto_retries:
                    retries += 1
                    await self.clock.sleep_ms(self.options.transport_retry_delay_ms)
                    continue
                raise cerr.TransportFailure(r.transport.code, r.transport.message,
                                            r.transport.hint, r.exchange.id)
            if r.violation is not None:
                raise cerr.MalformedReply(cerr.MALFORMED_REPLY, str(r.violation),
                                          exchange_id=r.exchange.id)
            err = r.reply.error if r.reply else None
            if err is None:
                return r
            if err.error_code == perr.NEGOTIATION_REQUIRED:
                if renegotiated:  # again right after a fresh negotiation: do not loop
                    raise cerr.ProviderError(err, r.exchange.id,
                                             "NEGOTIATION_REQUIRED right after a "
                                             "re-negotiation; check the provider's sessions")
                renegotiated = True
                await self._renegotiate(session.token)
                continue
            delay = err.retry_after_ms or 0
            if (err.retryable and err.error_code not in NO_AUTO_RETRY
                    and retries < self.options.max_auto_retries
                    and delay <= self.options.max_auto_wait_ms):
                retries += 1
                await self.clock.sleep_ms(delay)
                continue
            raise cerr.ProviderError(err, r.exchange.id, perr.meaning(err.error_code))

    def _parsed(self, r: CallResult, parse: Callable[[Any], Any]) -> Any:
        try:
            return parse(r.reply.decoded if r.reply else None)
        except ProtocolViolation as v:
            self._flag(r.exchange, [violation_finding(v)])
            r.exchange.status = ExchangeStatus.MALFORMED
            raise cerr.MalformedReply(cerr.MALFORMED_REPLY, str(v),
                                      exchange_id=r.exchange.id) from None

    async def get_provider_info(self) -> ProviderInfo:
        r = await self._read(GET_PROVIDER_INFO)
        self.info = self._parsed(r, lambda d: parse_provider_info(d, True))
        found = rules.check_descriptors(self.info, None, package=self.package or None)
        self._info_findings = {(f.rule_id, f.path, f.message) for f in found}
        if self.session is not None:
            found += rules.check_provider_id_stable(self.session.result.provider_id,
                                                    self.info.provider_id)
        self._flag(r.exchange, found)
        return self.info

    async def list_tools(self) -> ToolList:
        """list_tools; keeps the valid tools, flags the invalid ones, diffs the revision."""
        r = await self._read(LIST_TOOLS)
        tools, bad = self._parsed(r, parse_tool_list_lenient)
        self.tool_violations = bad
        found = [violation_finding(v) for v in bad]
        diff = diff_tool_lists(self.tools, tools)
        if self.tools is not None:
            found += rules.check_revision(self.tools, tools)
            if diff.revision_changed or diff.tools_changed:
                self.diffs.append(diff)
                r.exchange.notes.append(diff.summary())
        # every string of every tool is checked (lengths, controls, instruction-like text):
        # on a hostile list that is 100 ms+ of pure Python, so it runs in a worker thread and
        # the event loop (the window's UI thread) keeps turning
        checked = await asyncio.to_thread(
            rules.check_descriptors, self.info, tools, package=self.package or None,
            capabilities=self.session.capabilities if self.session else None)
        found += [f for f in checked
                  if (f.rule_id, f.path, f.message) not in self._info_findings]  # said on info
        self._flag(r.exchange, found)
        self.findings.extend(found)
        self.tools = tools
        self._listed_for = self.session.exchange_id if self.session else None
        return tools

    @property
    def last_diff(self) -> ToolListDiff | None:
        return self.diffs[-1] if self.diffs else None

    # ------------------------------------------------------------------ executions
    def new_execution(self, tool_name: str, args: Any) -> Execution:
        """A new logical execution (new request_id). Only the user starts one."""
        ex = Execution(tool_name=tool_name, args_json=args_json(args), protocol_version=2)
        self.executions[ex.request_id] = ex
        return ex

    async def execute_tool(self, tool_name: str, args: Any, *,
                           auto_retry: bool = True) -> Execution:
        """Start a new execution and run it (see `run`)."""
        return await self.run(self.new_execution(tool_name, args), auto_retry=auto_retry)

    async def run(self, ex: Execution, *, auto_retry: bool = True) -> Execution:
        """Send (or re-send with the SAME request_id) and follow automatic retries."""
        self.executions.setdefault(ex.request_id, ex)
        return await self._drive(ex, resume_token=None, auto_retry=auto_retry)

    async def resume(self, ex: Execution) -> Execution:
        """Resume after a resolution: same request_id, same args bytes, the resume_token."""
        if not ex.resume_token:
            raise cerr.RequestRefused(cerr.WRONG_STATE,
                                      f"execution {ex.request_id} has no resume_token",
                                      "resume is only possible after AUTH_REQUIRED or "
                                      "USER_ACTION_REQUIRED")
        token, ex.resume_token = ex.resume_token, None
        return await self._drive(ex, resume_token=token, auto_retry=True)

    def _refuse(self, ex: Execution, code: str, message: str) -> Execution:
        x = self.recorder.refused(ExchangeKind.CETP, self.authority, EXECUTE_TOOL, code,
                                  message, package=self.package, tool=ex.tool_name,
                                  request_id=ex.request_id)
        ex.exchange_ids.append(x.id)
        ex.state = ExecState.REFUSED
        ex.message = message
        self._changed(ex)
        return ex

    async def _drive(self, ex: Execution, *, resume_token: str | None,
                     auto_retry: bool) -> Execution:
        retries = 0
        waited = 0
        renegotiated = False
        while True:
            try:
                session = await self.ensure_session()
                if self._listed_for != session.exchange_id:
                    await self._check_tools_quietly(ex)
                    session = await self.ensure_session()  # list_tools may re-negotiate
            except cerr.TransportFailure as exc:  # the device, not the provider, failed
                ex.state = ExecState.TRANSPORT_FAILED
                what_to_try = exc.hint or "Check the device connection"
                ex.message = (f"not sent: the relay failed while negotiating ({exc.code}: "
                              f"{exc.message}); execute_tool never reached the provider. "
                              f"{what_to_try.rstrip('.')}, then run it again (the same "
                              f"request id {ex.request_id} is safe).")
                self._changed(ex)
                return ex
            except cerr.ConsumerError as exc:
                ex.state = ExecState.FAILED
                ex.message = f"not sent: negotiation failed ({exc})"
                self._changed(ex)
                return ex
            if ex.args is None and ex.args_json.strip() != "null":
                return self._refuse(ex, cerr.INVALID_ARGS_JSON,
                                    "args is not valid JSON; fix the arguments")
            limit = session.max_request_bytes
            if ex.args_bytes > limit:
                floor = LIMIT_MINIMUMS["max_request_bytes"]
                why = (f" (below the §2.2 minimum {floor}: the provider's negotiation is "
                       "broken, see its findings)" if limit < floor else "")
                return self._refuse(ex, cerr.REQUEST_TOO_LARGE,
                                    f"args are {ex.args_bytes} bytes (UTF-8), above the "
                                    f"negotiated max_request_bytes {limit}{why}; not sent — "
                                    "shorten the arguments")
            extras = execute_extras(session.token, ex.request_id, self._deadline(),
                                    ex.tool_name, ex.args_json, resume_token)
            ex.state = ExecState.RUNNING
            self._changed(ex)
            r = await self.caller.call(EXECUTE_TOOL, extras, v2=True,
                                       request_id=ex.request_id, tool=ex.tool_name,
                                       parent_id=ex.exchange_ids[0] if ex.exchange_ids else None,
                                       attempt=len(ex.attempts) + 1)
            att = Attempt(number=len(ex.attempts) + 1, exchange_id=r.exchange.id,
                          resumed=resume_token is not None, waited_ms=waited)
            ex.attempts.append(att)
            ex.exchange_ids.append(r.exchange.id)
            waited = 0
            if r.transport is not None:
                att.outcome = f"transport:{r.transport.code}"
                if (r.outcome_unknown and auto_retry
                        and retries < self.options.max_auto_retries):
                    retries += 1
                    waited = self.options.transport_retry_delay_ms
                    await self.clock.sleep_ms(waited)
                    continue
                if r.outcome_unknown:
                    ex.state = ExecState.OUTCOME_UNKNOWN
                    ex.message = (f"{r.transport.code}: {r.transport.message}. The provider may "
                                  "have acted: retry or query with the SAME request id "
                                  f"{ex.request_id} (never a new one).")
                else:
                    ex.state = ExecState.FAILED
                    ex.message = f"{r.transport.code}: {r.transport.message}. {r.transport.hint}"
                self._changed(ex)
                return ex
            if r.violation is not None or r.reply is None:
                att.outcome = "malformed"
                ex.state = ExecState.MALFORMED
                ex.message = f"the reply broke the protocol: {r.violation}"
                self._changed(ex)
                return ex
            reply = r.reply
            if reply.ok:
                att.outcome = "success"
                self._on_success(ex, reply, r.exchange)
                await self.check_output(ex, r.exchange)
                return ex
            if reply.accepted:
                att.outcome = "accepted"
                self._on_accepted(ex, reply, r.exchange)
                return ex
            err = reply.error
            assert err is not None
            ex.error = err
            code = err.error_code
            att.outcome = f"error:{code}"
            att.retry_after_ms = err.retry_after_ms
            self._check_error(r.exchange, reply)
            if code == perr.NEGOTIATION_REQUIRED:
                if renegotiated:
                    ex.state = ExecState.FAILED
                    ex.message = ("NEGOTIATION_REQUIRED again right after a re-negotiation; "
                                  "not looping — check the provider's session handling")
                    self._changed(ex)
                    return ex
                renegotiated = True
                ex.renegotiated += 1
                try:
                    await self._renegotiate(session.token)
                except cerr.ConsumerError as exc:
                    ex.state = ExecState.FAILED
                    ex.message = f"NEGOTIATION_REQUIRED, and re-negotiation failed: {exc}"
                    self._changed(ex)
                    return ex
                continue  # same request_id, same resume_token
            if code in (perr.AUTH_REQUIRED, perr.USER_ACTION_REQUIRED):
                self._on_resolution(ex)
                return ex
            if code == perr.USER_CANCELLED:
                ex.state = ExecState.USER_CANCELLED
                ex.message = "the user denied or cancelled the confirmation (USER_CANCELLED)"
                self._changed(ex)
                return ex
            if code == perr.CANCELLED:
                ex.state = ExecState.CANCELLED
                ex.message = "the provider says the operation is confirmed cancelled"
                self._changed(ex)
                return ex
            delay = err.retry_after_ms or 0
            may_retry = bool(err.retryable) and code not in NO_AUTO_RETRY
            if may_retry and auto_retry and retries < self.options.max_auto_retries \
                    and delay <= self.options.max_auto_wait_ms:
                retries += 1
                waited = delay
                await self.clock.sleep_ms(delay)
                continue
            ex.state = ExecState.FAILED
            ex.message = f"{quote(code)}: {quote(err.error_message)}"
            if may_retry:
                ex.message += (" — retryable: retry the same execution"
                               + (f" after {delay} ms" if delay else ""))
            self._changed(ex)
            return ex

    async def _check_tools_quietly(self, ex: Execution) -> None:
        """Check the revision once per negotiation (§3.3) without failing the execution."""
        async with self._list_lock:
            if self.session is not None and self._listed_for == self.session.exchange_id:
                return
            await self._list_quietly(ex)

    async def _list_quietly(self, ex: Execution) -> None:
        try:
            await self.list_tools()
        except cerr.ConsumerError as exc:
            if isinstance(exc, cerr.NegotiationFailed):
                raise
            self._listed_for = self.session.exchange_id if self.session else None
            ex.message = f"(list_tools failed: {exc})"
            return
        diff = self.last_diff
        if diff is not None and diff.tools_changed and len(ex.attempts) > 0:
            ex.message = f"tools changed after re-negotiation: {diff.summary()}"

    def _check_error(self, exchange: Exchange, reply: Reply) -> None:
        """§5 / §4.3 error-envelope rules (retryable vs table, resolution fields …)."""
        self._flag(exchange, rules.check_error(reply))

    def _on_resolution(self, ex: Execution) -> None:
        err = ex.error
        assert err is not None
        ex.resolution = err.resolution
        ex.resume_token = err.resume_token
        ex.state = ExecState.NEEDS_RESOLUTION
        ex.message = (f"{quote(err.error_code)}: {quote(err.error_message)}. "
                      + ("Launch the provider's resolution, then resume with the same "
                         "request id." if err.resolution else
                         "The provider gave no resolution to launch."))
        self._changed(ex)

    def _on_success(self, ex: Execution, reply: Reply, exchange: Exchange) -> None:
        try:
            env = parse_result_envelope(reply.decoded)
        except ProtocolViolation as v:
            self._flag(exchange, [violation_finding(v)])
            exchange.status = ExchangeStatus.MALFORMED
            ex.state = ExecState.MALFORMED
            ex.message = f"the result envelope broke the protocol: {v}"
            self._changed(ex)
            return
        if isinstance(env, InlineResult) and self.session is not None and reply.data is not None:
            self._flag(exchange, rules.check_inline_size(reply.data, self.session.result.limits))
        self._apply_result(ex, env, reply.result_fd, exchange)

    def _apply_result(self, ex: Execution, env: InlineResult | FileResult, fd: Any,
                      exchange: Exchange) -> None:
        found: list[Finding] = []
        if isinstance(env, InlineResult):
            ex.value, ex.has_value = env.value, True
            ex.output_findings = []  # check_output validates it, off the event loop
            ex.state = ExecState.SUCCEEDED
            ex.message = "succeeded"
            tool = self.tool(ex.tool_name)
            if tool is not None and tool.output_schema is not None:
                self._flag(exchange, found)
                return  # check_output tells the listeners, once the output is checked
        else:
            ex.file = env
            if self.session is not None:
                found += rules.check_result_kind(env, self.session.capabilities)
            if fd is None:
                found.append(finding("result.file.result_fd", "§4.5",
                                     "file result without result_fd", path="result_fd"))
                ex.state = ExecState.MALFORMED
                ex.message = "file result without a result_fd to read"
            else:
                ex.result_fd = fd
                ex.state = ExecState.SUCCEEDED
                ex.message = (f"file result: {env.size_bytes} bytes of {env.media_type}; "
                              "fetch it to read and verify")
        self._flag(exchange, found)
        self._changed(ex)

    def _on_accepted(self, ex: Execution, reply: Reply, exchange: Exchange) -> None:
        found: list[Finding] = []
        try:
            acc = parse_accepted(reply.decoded)
        except ProtocolViolation as v:
            self._flag(exchange, [violation_finding(v)])
            ex.state = ExecState.MALFORMED
            ex.message = f"accepted reply broke the protocol: {v}"
            self._changed(ex)
            return
        caps = self.session.capabilities if self.session is not None else frozenset()
        found += rules.check_accepted(self.tool(ex.tool_name), caps)
        self._flag(exchange, found)
        ex.operation_id = acc.operation_id
        ex.poll_after_ms = acc.poll_after_ms
        ex.state = ExecState.ACCEPTED
        ex.message = (f"accepted as operation {acc.operation_id}; poll it"
                      + (f" after {acc.poll_after_ms} ms" if acc.poll_after_ms else ""))
        self._changed(ex)

    # ------------------------------------------------------------------ resolution
    async def check_output(self, ex: Execution, exchange: Exchange | None) -> None:
        """Validate an inline output against output_schema in a worker thread: provider
        schemas are hostile (issue 12), so never on the event loop, which in the GUI is
        the UI thread. The validation itself is bounded (`schema_budget`)."""
        if ex.state != ExecState.SUCCEEDED or not ex.has_value or ex.output_findings:
            return
        tool = self.tool(ex.tool_name)
        schema = tool.output_schema if tool else None
        if schema is None:
            return
        out = await asyncio.to_thread(output_findings, schema, ex.value, ex.tool_name)
        ex.output_findings = out
        bad = [f for f in out if not f.ok]
        if bad:
            ex.message = (f"succeeded, but the output does not match output_schema: "
                          f"{bad[0].message}")
        if exchange is not None:
            self._flag(exchange, out)
        self._changed(ex)

    async def launch_resolution(self, ex: Execution, *, resume: bool = True) -> Execution:
        """Launch the provider's PendingIntent; on RESULT_OK resume (same id + token)."""
        from inspector.consumer.resolution import launch_resolution
        return await launch_resolution(self, ex, resume=resume)

    # ------------------------------------------------------------------ operations
    async def refresh_operation(self, ex: Execution) -> Execution:
        """One get_operation (request_id = the execution's id)."""
        from inspector.consumer.operations import refresh
        return await refresh(self, ex)

    async def wait_operation(self, ex: Execution,
                             on_progress: Callable[[Execution], None] | None = None) -> Execution:
        """Poll honouring poll_after_ms until a terminal state."""
        from inspector.consumer.operations import wait
        return await wait(self, ex, on_progress)

    async def cancel_operation(self, ex: Execution, *, confirm: bool = True) -> CancelOutcome:
        """Request cancellation; with `confirm`, query until a terminal state (§4.4)."""
        from inspector.consumer.operations import cancel
        return await cancel(self, ex, confirm=confirm)

    # ------------------------------------------------------------------ file results
    async def fetch_file(self, ex: Execution, *, user_cap: int | None = None,
                         on_progress: ProgressCallback | None = None,
                         keep_content: bool = True) -> FileVerdict:
        """Stream and verify a file result (§4.5); the handle is always closed."""
        from inspector.consumer.file_results import fetch_file
        return await fetch_file(self, ex, user_cap=user_cap, on_progress=on_progress,
                                keep_content=keep_content)

    async def close_result(self, ex: Execution) -> bool:
        """Close a file result's descriptor without reading it."""
        from inspector.consumer.file_results import close_result
        return await close_result(self, ex)


def open_provider(
    relay: RelayApi,
    authority: str,
    manifest_versions: Iterable[int],
    *,
    package: str = "",
    recorder: Recorder | None = None,
    clock: Clock | None = None,
    options: EngineOptions | None = None,
) -> Any:
    """A `ProviderSession` (v2) or `V1ProviderSession`, chosen from the manifest (§8)."""
    version = choose_protocol(manifest_versions)
    if version == 2:
        return ProviderSession(relay, authority, package=package, recorder=recorder,
                               clock=clock, options=options)
    if version == 1:
        from inspector.consumer.v1 import V1ProviderSession
        return V1ProviderSession(relay, authority, package=package, recorder=recorder,
                                 clock=clock, options=options)
    raise cerr.RequestRefused(cerr.NO_COMMON_VERSION,
                              f"{authority} advertises versions {sorted(manifest_versions)}; "
                              "the inspector speaks 1 and 2")


def open_declaration(
    relay: RelayApi,
    decl: CetpDeclaration,
    *,
    allow_foreign_authority: bool = False,
    recorder: Recorder | None = None,
    clock: Clock | None = None,
    options: EngineOptions | None = None,
) -> Any:
    """`open_provider` for a discovered declaration, after the §2.1 same-package check.

    A Consumer MUST verify that the Service and the authority's ContentProvider belong to
    the same package; an inspector user may override that to look at a broken provider.
    """
    if not decl.authority:
        raise cerr.RequestRefused(cerr.WRONG_STATE,
                                  f"{decl.key} declares no {META_AUTHORITY} meta-data")
    if decl.same_package is False and not allow_foreign_authority:
        raise cerr.RequestRefused(
            cerr.AUTHORITY_MISMATCH,
            f"the authority {decl.authority} belongs to {decl.authority_owner}, not to "
            f"{decl.package}",
            "a consumer MUST verify the Service and the ContentProvider belong to the same "
            "package (CETP v2 §2.1); override only to inspect the provider")
    return open_provider(relay, decl.authority, decl.versions, package=decl.package,
                         recorder=recorder, clock=clock, options=options)
