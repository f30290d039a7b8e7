"""Everything a check needs: the target, the prelude's data, recorded calls, safety rules.

`RunContext` wraps the consumer engine's recorded `Caller` (every call is an `Exchange`
in the session's traffic log) with the crafted requests conformance needs (bad tokens,
unknown methods, replays with one request_id, concurrent calls), and enforces the safety
rule: **no tool that is not a plain read is invoked unless the user allowed it by name**.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from inspector.conformance.model import (
    ConformanceSetup,
    Observer,
    Outcome,
)
from inspector.consumer.calls import Caller, CallResult
from inspector.consumer.clock import Clock, SystemClock
from inspector.consumer.options import EngineOptions
from inspector.consumer.recorder import Recorder
from inspector.protocol import cetp
from inspector.protocol.bundle import Bundle, PendingIntentHandle
from inspector.protocol.cetp import (
    KNOWN_CAPABILITIES,
    FileResult,
    InlineResult,
    NegotiateResult,
    OperationState,
    ProtocolViolation,
    ProviderInfo,
    Reply,
    ToolDescriptor,
    ToolList,
    V1ToolList,
)
from inspector.protocol.discovery import CetpDeclaration, Discovery
from inspector.protocol.exchange import Finding
from inspector.relay.api import ActivityResult, RelayApi, RelayError
from inspector.tasks import Spawner

RestartHook = Callable[[str], Awaitable[None]]
HumanPrompt = Callable[[str], Awaitable[None]]
SecondCaller = Callable[[], Awaitable[RelayApi]]
"""Opens a relay connection that reaches the provider as *another app* (another UID), for
the caller-binding checks; the virtual device offers one, a phone cannot."""

NO_SECOND_CALLER = (
    "needs a second caller (another app's UID): run against the virtual device, whose relay "
    "can act as a consumer app; a phone has one relay app, so every call carries its UID")


class NeedsSetup(Exception):
    """The check cannot run without something from the user (the message says what)."""


class NotApplicable(Exception):
    """The check does not apply to this provider."""


@dataclass
class Verdict:
    outcome: Outcome
    message: str = ""
    observed: dict[str, Any] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    exchange_ids: list[str] = field(default_factory=list)


def passed(message: str = "", **observed: Any) -> Verdict:
    return Verdict(Outcome.PASS, message, observed)


def failed(message: str, **observed: Any) -> Verdict:
    return Verdict(Outcome.FAIL, message, observed)


def not_applicable(message: str, **observed: Any) -> Verdict:
    return Verdict(Outcome.NOT_APPLICABLE, message, observed)


def from_findings(findings: Iterable[Finding], *, rule_ids: Iterable[str] | None = None,
                  none_message: str = "nothing to check", exchange_ids: Iterable[str] = ()
                  ) -> Verdict:
    """A verdict from rule findings: any failure → fail (MUST) / warning (SHOULD, INFO);
    all ok → pass; none → not applicable."""
    ids = set(rule_ids) if rule_ids is not None else None
    fs = [f for f in findings if ids is None or f.rule_id in ids]
    bad = [f for f in fs if not f.ok]
    xs = list(dict.fromkeys(exchange_ids))
    if bad:
        must = any(f.level == "MUST" for f in bad)
        msg = "; ".join(f"{f.path + ': ' if f.path else ''}{f.message}" for f in bad[:6])
        if len(bad) > 6:
            msg += f"; … {len(bad) - 6} more"
        return Verdict(Outcome.FAIL if must else Outcome.WARNING, msg, {}, fs, xs)
    if fs:
        return Verdict(Outcome.PASS, f"{len(fs)} item(s) conform", {}, fs, xs)
    return Verdict(Outcome.NOT_APPLICABLE, none_message, {}, [], xs)


# --------------------------------------------------------------------------------------
# outcome signatures and effect comparison
# --------------------------------------------------------------------------------------


class JsonDict(dict):  # type: ignore[type-arg]
    """A dict that prints as JSON: messages that embed an outcome or an effect vector
    (f"got {sig}") show JSON an author can paste, not Python reprs."""

    def __repr__(self) -> str:
        return json.dumps(self, ensure_ascii=False, sort_keys=True, default=str)

    __str__ = __repr__


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def signature(r: CallResult) -> dict[str, Any]:
    """What a call came back with, comparable across replays (`settle` resolves
    accepted operations to their terminal outcome)."""
    if r.transport is not None:
        return JsonDict({"kind": "transport", "code": r.transport.code})
    if r.violation is not None or r.reply is None:
        return JsonDict({"kind": "malformed", "field": r.violation.field if r.violation else ""})
    rep = r.reply
    if rep.is_error and rep.error is not None:
        return JsonDict({"kind": "error", "code": rep.error.error_code})
    if rep.accepted:
        op = rep.decoded.get("operation_id") if isinstance(rep.decoded, dict) else None
        return JsonDict({"kind": "accepted", "operation_id": op})
    try:
        env = cetp.parse_result_envelope(rep.decoded)
    except ProtocolViolation as v:
        return JsonDict({"kind": "malformed", "field": v.field})
    if isinstance(env, FileResult):
        return JsonDict({"kind": "file", "sha256": env.sha256, "size": env.size_bytes})
    return JsonDict({"kind": "success", "value": env.value})


def op_signature(op: OperationState) -> dict[str, Any]:
    if op.state == cetp.OpState.SUCCEEDED and op.result is not None:
        if isinstance(op.result, FileResult):
            return JsonDict({"kind": "file", "sha256": op.result.sha256,
                             "size": op.result.size_bytes})
        return JsonDict({"kind": "success", "value": op.result.value})
    if op.state == cetp.OpState.FAILED and op.error is not None:
        return JsonDict({"kind": "error", "code": op.error.error_code})
    return JsonDict({"kind": op.state.value})


def op_reply_problem(last: CallResult | None, states: list[OperationState] | None = None
                     ) -> dict[str, Any]:
    """Why polling ended without a terminal state, said exactly: still running (the state
    it was in), an error reply, or a status reply that is not a valid operation state
    (which field is wrong) — never "malformed data.kind" for an operation reply."""
    if last is None:
        return JsonDict({"kind": "no_reply"})
    if last.reply is not None and last.reply.ok:
        try:
            op = cetp.parse_operation(last.reply.decoded)
        except ProtocolViolation as v:
            out = JsonDict({"kind": "malformed_operation", "field": v.field,
                            "problem": str(v)})
            data = last.reply.decoded
            err = data.get("error") if isinstance(data, dict) else None
            if v.field.startswith("data.error"):
                # name every missing field of the §5 error object, not just the first
                missing = [k for k in ("error_code", "error_message", "retryable")
                           if not isinstance(err, dict) or k not in err]
                if missing:
                    out["missing_error_fields"] = missing
                    out["problem"] = (f"the {data.get('state', '?')} state's error object "
                                      f"lacks {', '.join(missing)} (CETP v2 §5)")
            return out
        if op.is_terminal:
            return JsonDict({"kind": "operation", "state": op.state.value,
                             "operation_id": op.operation_id})
        return JsonDict({"kind": "still_" + op.state.value, "operation_id": op.operation_id,
                         "polls": len(states or [])})
    return signature(last)


def _shape(value: Any, path: str, arrays: dict[str, int], scalars: dict[str, Any],
           in_array: bool = False) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _shape(v, f"{path}.{k}", arrays, scalars, in_array)
    elif isinstance(value, list):
        arrays[path] = arrays.get(path, 0) + len(value)
        for v in value:
            _shape(v, f"{path}[]", arrays, scalars, True)
    elif not in_array:
        scalars[path] = value


def effect_vector(before: Any, after: Any) -> dict[str, float]:
    """How an observer's output changed: array lengths (growth per path, arrays inside
    arrays summed), numbers outside arrays (their difference) and other values outside
    arrays (1 when changed). `{}` means unchanged; two executions of an appending or
    counting mutation give twice one execution's vector."""
    a_arr: dict[str, int] = {}
    a_sc: dict[str, Any] = {}
    b_arr: dict[str, int] = {}
    b_sc: dict[str, Any] = {}
    _shape(before, "", a_arr, a_sc)
    _shape(after, "", b_arr, b_sc)
    out: dict[str, float] = {}
    for p in sorted(set(a_arr) | set(b_arr)):
        d = b_arr.get(p, 0) - a_arr.get(p, 0)
        if d:
            out[f"len({p or '.'})"] = d
    for p in sorted(set(a_sc) | set(b_sc)):
        x, y = a_sc.get(p), b_sc.get(p)
        if x == y and (p in a_sc) == (p in b_sc):
            continue
        num = (isinstance(x, int | float) and isinstance(y, int | float)
               and not isinstance(x, bool) and not isinstance(y, bool))
        out[p or "."] = (y - x) if num else 1
    return JsonDict(out)


def effect_size(before: Any, after: Any) -> int:
    """0 when the observer's output did not change, else the number of changed aspects."""
    return len(effect_vector(before, after))


@dataclass
class Snapshot:
    value: Any
    exchange_id: str

    @property
    def text(self) -> str:
        return canonical(self.value)


# --------------------------------------------------------------------------------------
# the context
# --------------------------------------------------------------------------------------


@dataclass
class Prelude:
    """What the read-only first calls fetched."""

    negotiate: CallResult | None = None
    negotiation: NegotiateResult | None = None
    negotiate_error: str = ""
    requested_caps: tuple[str, ...] = ()
    info: ProviderInfo | None = None
    info_call: CallResult | None = None
    info_error: str = ""
    tools: ToolList | None = None
    tools_call: CallResult | None = None
    tools_error: str = ""
    tool_violations: list[ProtocolViolation] = field(default_factory=list)
    v1_tools: V1ToolList | None = None
    v1_call: CallResult | None = None
    v1_error: str = ""

    def exchange_ids(self) -> list[str]:
        return [c.exchange.id for c in (self.negotiate, self.info_call, self.tools_call,
                                        self.v1_call) if c is not None]


class RunContext:
    def __init__(
        self,
        relay: RelayApi,
        decl: CetpDeclaration,
        *,
        decls: list[CetpDeclaration] | None = None,
        discovery: Discovery | None = None,
        setup: ConformanceSetup | None = None,
        recorder: Recorder | None = None,
        options: EngineOptions | None = None,
        clock: Clock | None = None,
        session: Any = None,
        restart: RestartHook | None = None,
        human_prompt: HumanPrompt | None = None,
        reconnects: bool = False,
        second_caller: SecondCaller | None = None,
    ) -> None:
        self.relay = relay
        self.second_caller = second_caller
        self._other: RunContext | None = None
        self.decl = decl
        self.decls = decls or [decl]
        self.discovery = discovery
        self.setup = setup or ConformanceSetup()
        self.recorder = recorder or Recorder()
        self.options = options or EngineOptions()
        self.clock = clock or SystemClock()
        self.session = session
        self.restart_hook = restart
        self.human_prompt = human_prompt
        self.reconnects = reconnects
        self.prelude = Prelude()
        self.token: str | None = None
        self.negotiation: NegotiateResult | None = None
        self.replies: list[tuple[str, str, Reply]] = []  # (exchange id, method, reply)
        self.violations: list[tuple[str, str, ProtocolViolation]] = []
        self.inline_successes: list[tuple[str, str | None, Any, str]] = []  # id, tool, value, data
        self.files_with_caps: list[tuple[str, FileResult, frozenset[str]]] = []
        self.token_caps: dict[str, frozenset[str]] = {}
        self.single_effect: dict[str, float] | None = None  # one mutation's effect vector
        self.approved: dict[str, Any] | None = None  # the approved confirmation flow
        self.async_run: dict[str, Any] | None = None  # the polled background operation
        self._desired_answer: bool | None = None
        self._handler_installed = False
        self._spawner = Spawner()  # answers to confirmation events, kept referenced
        try:
            caps = relay.hello_info.capabilities
        except (AttributeError, RelayError, RuntimeError):
            caps = ()
        self.relay_caps = frozenset(caps)

    # ------------------------------------------------------------------ basics
    @property
    def authority(self) -> str:
        return self.decl.authority or ""

    @property
    def package(self) -> str:
        return self.decl.package

    @property
    def capabilities(self) -> frozenset[str]:
        """Capabilities negotiated in the main session (asked for and granted)."""
        if self.negotiation is None:
            return frozenset()
        return self.token_caps.get(self.negotiation.session_token, frozenset())

    @property
    def limits(self) -> cetp.Limits | None:
        return self.negotiation.limits if self.negotiation else None

    @property
    def tools(self) -> ToolList | None:
        return self.prelude.tools

    def tool(self, name: str) -> ToolDescriptor | None:
        return self.tools.tool(name) if self.tools else None

    def caller(self, timeout_ms: int | None = None) -> Caller:
        opts = self.options
        if timeout_ms is not None:
            opts = opts.model_copy(update={"call_timeout_ms": timeout_ms})
        return Caller(self.relay, self.authority, self.package, self.recorder, self.clock, opts)

    def deadline(self, ms: int | None = None) -> int:
        return self.clock.now_ms() + (ms if ms is not None else self.options.deadline_ms)

    # ------------------------------------------------------------------ safety
    def safety_problem(self, name: str) -> str | None:
        """Why the suite may not invoke `name`, or None when it may."""
        if name in self.setup.allow_mutations:
            return None
        t = self.tool(name)
        if t is None:
            return (f"{name} is not in the provider's tool list, so its effects are unknown; "
                    f"allow it explicitly to invoke it")
        a = t.annotations
        if a.effect != cetp.Effect.READ or a.destructive or a.risk == cetp.Risk.HIGH:
            what = ", ".join(x for x in (
                f"effect={a.effect.value}" if a.effect != cetp.Effect.READ else "",
                "destructive" if a.destructive else "",
                "risk=high" if a.risk == cetp.Risk.HIGH else "") if x)
            return (f"{name} is {what}; the suite invokes it only when you allow it "
                    f"(--allow-mutations {name})")
        return None

    def is_safe(self, name: str) -> bool:
        return self.safety_problem(name) is None

    def is_mutating(self, name: str) -> bool:
        t = self.tool(name)
        return t is None or t.annotations.mutating_or_risky

    def guard(self, name: str) -> None:
        why = self.safety_problem(name)
        if why is not None:
            raise NeedsSetup(why)

    # ------------------------------------------------------------------ calls
    def _record(self, method: str, r: CallResult, tool: str | None = None,
                token: str | None = None) -> None:
        if r.reply is not None:
            self.replies.append((r.exchange.id, method, r.reply))
            if r.reply.ok and method == cetp.EXECUTE_TOOL:
                try:
                    env = cetp.parse_result_envelope(r.reply.decoded)
                except ProtocolViolation:
                    pass
                else:
                    if isinstance(env, InlineResult):
                        self.inline_successes.append((r.exchange.id, tool, env.value,
                                                      r.reply.data or ""))
                    else:
                        caps = self.token_caps.get(token or "", frozenset())
                        self.files_with_caps.append((r.exchange.id, env, caps))
        elif r.violation is not None:
            self.violations.append((r.exchange.id, method, r.violation))

    async def raw(self, method: str, extras: Bundle | None, *, v2: bool = True,
                  request_id: str | None = None, tool: str | None = None,
                  timeout_ms: int | None = None, check_echo: bool = True) -> CallResult:
        """One recorded ContentResolver.call with exactly these extras."""
        r = await self.caller(timeout_ms).call(method, extras, v2=v2, request_id=request_id,
                                               tool=tool, check_echo=check_echo)
        tok = extras.get("session_token") if extras is not None else None
        self._record(method, r, tool, tok if isinstance(tok, str) else None)
        return r

    async def negotiate(self, caps: Iterable[str] | None = None,
                        versions: Iterable[int] = (2, 1)) -> tuple[CallResult,
                                                                   NegotiateResult | None]:
        caps_t = tuple(KNOWN_CAPABILITIES if caps is None else caps)
        r = await self.raw(cetp.NEGOTIATE, cetp.negotiate_extras(versions, caps_t))
        if r.reply is None or not r.reply.ok:
            return r, None
        try:
            res = cetp.parse_negotiate(r.reply.decoded)
        except ProtocolViolation:
            return r, None
        self.token_caps[res.session_token] = frozenset(res.capabilities) & frozenset(caps_t)
        return r, res

    async def renegotiate(self) -> str:
        """A fresh main session with the prelude's capabilities (RuntimeError on failure)."""
        r, res = await self.negotiate(self.prelude.requested_caps or None)
        if res is None:
            raise RuntimeError(f"re-negotiation failed ({signature(r)})")
        self.negotiation = res
        self.token = res.session_token
        return self.token

    async def ensure_token(self) -> str:
        if self.token is None:
            return await self.renegotiate()
        return self.token

    async def v2(self, method: str, *, request_id: str | None = None,
                 token: str | None = None, more: dict[str, Any] | None = None,
                 timeout_ms: int | None = None, tool: str | None = None,
                 renegotiate: bool = True, deadline_at_ms: int | None = None) -> CallResult:
        """A v2 call with the common envelope; re-negotiates once on NEGOTIATION_REQUIRED
        when it used the main session (same request_id). `deadline_at_ms` overrides the
        deadline (the expired-deadline check sends one in the past)."""
        rid = request_id or cetp.new_request_id()
        own = token is None
        tok = token if token is not None else await self.ensure_token()
        for attempt in (1, 2):
            deadline = self.deadline() if deadline_at_ms is None else deadline_at_ms
            extras = cetp.v2_extras(tok, rid, deadline, **(more or {}))
            r = await self.raw(method, extras, request_id=rid, tool=tool, timeout_ms=timeout_ms)
            err = r.reply.error if r.reply is not None else None
            if (attempt == 1 and own and renegotiate and err is not None
                    and err.error_code == "NEGOTIATION_REQUIRED"):
                tok = await self.renegotiate()
                continue
            return r
        return r  # pragma: no cover

    async def execute(self, tool: str, args: Any, *, request_id: str | None = None,
                      resume_token: str | None = None, token: str | None = None,
                      more: dict[str, Any] | None = None, timeout_ms: int | None = None,
                      safety: bool = True, renegotiate: bool = True,
                      deadline_at_ms: int | None = None) -> CallResult:
        """execute_tool — refused (NeedsSetup) for a tool the user has not allowed."""
        if safety:
            self.guard(tool)
        m: dict[str, Any] = {"tool_name": tool, "args": cetp.args_json(args)}
        if resume_token is not None:
            m["resume_token"] = resume_token
        m.update(more or {})
        return await self.v2(cetp.EXECUTE_TOOL, request_id=request_id, token=token, more=m,
                             timeout_ms=timeout_ms, tool=tool, renegotiate=renegotiate,
                             deadline_at_ms=deadline_at_ms)

    async def get_operation(self, operation_id: str, request_id: str, *,
                            token: str | None = None) -> tuple[CallResult,
                                                               OperationState | None]:
        r = await self.v2(cetp.GET_OPERATION, request_id=request_id, token=token,
                          more={"operation_id": operation_id})
        return r, self._op(r)

    async def cancel_operation(self, operation_id: str, request_id: str
                               ) -> tuple[CallResult, OperationState | None]:
        r = await self.v2(cetp.CANCEL_OPERATION, request_id=request_id,
                          more={"operation_id": operation_id})
        return r, self._op(r)

    @staticmethod
    def _op(r: CallResult) -> OperationState | None:
        if r.reply is None or not r.reply.ok:
            return None
        try:
            return cetp.parse_operation(r.reply.decoded)
        except ProtocolViolation:
            return None

    async def poll(self, operation_id: str, request_id: str, *,
                   timeout_ms: int | None = None,
                   on_state: Callable[[OperationState, CallResult], None] | None = None
                   ) -> tuple[OperationState | None, list[OperationState], CallResult | None]:
        """get_operation until a terminal state (honouring poll_after_ms, bounded)."""
        limit = timeout_ms if timeout_ms is not None else self.setup.poll_timeout_ms
        start = self.clock.now_ms()
        states: list[OperationState] = []
        last: CallResult | None = None
        while True:
            last, op = await self.get_operation(operation_id, request_id)
            if op is None:
                return None, states, last
            states.append(op)
            if on_state is not None:
                on_state(op, last)
            if op.is_terminal:
                return op, states, last
            if self.clock.now_ms() - start > limit:
                return None, states, last
            wait = op.poll_after_ms if op.poll_after_ms is not None else 200
            await self.clock.sleep_ms(max(20, min(wait, 2000)))

    async def settle(self, r: CallResult, request_id: str) -> dict[str, Any]:
        """The call's terminal outcome: an accepted operation is polled to its end."""
        sig = signature(r)
        if sig["kind"] != "accepted" or not sig.get("operation_id"):
            return sig
        op, states, last = await self.poll(str(sig["operation_id"]), request_id)
        if op is None:
            return JsonDict({"kind": "unfinished", "operation_id": sig["operation_id"],
                             "last": op_reply_problem(last, states)})
        return op_signature(op)

    # ------------------------------------------------------------------ observing effects
    async def observe(self, observer: Observer) -> Snapshot:
        """Call the observer (a read) and return its output; NeedsSetup if it cannot."""
        why = self.safety_problem(observer.tool)
        t = self.tool(observer.tool)
        if why is not None or t is None or t.annotations.side_effecting:
            raise NeedsSetup(f"the observer {observer.tool} must be a listed read tool "
                             "(effect=read)")
        r = await self.execute(observer.tool, observer.args)
        rid = r.exchange.request_id or ""
        sig = await self.settle(r, rid)
        if sig["kind"] != "success":
            raise NeedsSetup(f"the observer {observer.tool} did not return an inline result "
                             f"({sig}); fix its arguments")
        value = sig["value"]
        if isinstance(value, dict) and observer.ignore_keys:
            value = {k: v for k, v in value.items() if k not in observer.ignore_keys}
        return Snapshot(value, r.exchange.id)

    # ------------------------------------------------------------------ confirmations
    def confirmation_problem(self) -> str | None:
        mode = self.setup.confirmations
        if mode == "none":
            return "confirmations are disabled in the setup (confirmations=none)"
        if mode == "human":
            return None if self.human_prompt is not None else (
                "confirmations=human needs a front end that prompts the person at the device")
        if self.session is not None and hasattr(self.session, "confirmation_policy"):
            return None
        if "answer_confirmation" in self.relay_caps:
            return None
        return ("this relay cannot answer the provider's confirmation screen; run with "
                "confirmations=human and answer on the device")

    async def launch(self, handle: PendingIntentHandle, approve: bool) -> ActivityResult:
        """Launch the provider's resolution and answer its screen (approve or deny)."""
        why = self.confirmation_problem()
        if why is not None:
            raise NeedsSetup(why)
        self._desired_answer = approve
        try:
            if self.setup.confirmations == "human":
                assert self.human_prompt is not None
                await self.human_prompt(
                    ("APPROVE" if approve else "DENY") + " the confirmation the provider "
                    "is about to show on the device")
            elif self.session is not None and hasattr(self.session, "confirmation_policy"):
                pass  # the session's policy (installed by the runner) answers
            elif not self._handler_installed:
                self.relay.add_event_handler(self._on_event)
                self._handler_installed = True
            return await self.relay.launch_pending_intent(handle.id, timeout_ms=60_000)
        finally:
            self._desired_answer = None

    async def session_policy(self, _request: Any) -> bool:
        """Installed as the Session's confirmation policy while the suite runs."""
        return bool(self._desired_answer)

    def _on_event(self, event: Bundle) -> None:
        if event.get("event") != "confirmation_request" or self._desired_answer is None:
            return
        cid = event.get("confirmation_id")
        if not isinstance(cid, str):
            return
        self._spawner.spawn(self.relay.answer_confirmation(cid, self._desired_answer),
                            name=f"conformance-confirm-{cid}")

    def detach(self) -> None:
        remover = getattr(self.relay, "remove_event_handler", None)
        if self._handler_installed and callable(remover):
            remover(self._on_event)
        self._handler_installed = False

    # ------------------------------------------------------------------ a second caller
    def caller_uid(self) -> int | None:
        """The UID the relay reports calls arrive with (its hello), or None."""
        try:
            return int(self.relay.hello_info.caller_uid)
        except (AttributeError, RelayError, RuntimeError):
            return None

    def second_caller_problem(self) -> str | None:
        return None if self.second_caller is not None else NO_SECOND_CALLER

    async def other_caller(self) -> RunContext:
        """A context on a second connection that reaches the provider as another app.

        It shares this run's recorder (its exchanges are evidence too), setup and prelude
        (so the same safety rules apply); it negotiates its own session. NeedsSetup when
        there is no second caller or it turns out to have this caller's UID."""
        if self._other is not None:
            return self._other
        if self.second_caller is None:
            raise NeedsSetup(NO_SECOND_CALLER)
        relay = await self.second_caller()
        other = RunContext(relay, self.decl, decls=self.decls, discovery=self.discovery,
                           setup=self.setup, recorder=self.recorder, options=self.options,
                           clock=self.clock)
        other.prelude = self.prelude
        uid, mine = other.caller_uid(), self.caller_uid()
        if uid is None or uid == mine:
            await _close(relay)
            raise NeedsSetup(f"the second connection calls with UID {uid}, the same as the "
                             f"first ({mine}); give a connector for another app")
        self._other = other
        return other

    async def close_other(self) -> None:
        """Close the second caller's connection (the runner calls this at the end)."""
        other, self._other = self._other, None
        if other is not None:
            other.detach()
            await _close(other.relay)

    # ------------------------------------------------------------------ restarts
    def restart_problem(self) -> str | None:
        if not self.setup.allow_restart:
            return "restarting the provider is disabled in the setup (allow_restart=false)"
        if self.restart_hook is not None or "force_stop" in self.relay_caps:
            return None
        return "this relay cannot force-stop the provider app and no restart hook was given"

    async def restart_provider(self) -> None:
        why = self.restart_problem()
        if why is not None:
            raise NeedsSetup(why)
        if self.restart_hook is not None:
            await self.restart_hook(self.package)
        else:
            await self.relay.force_stop(self.package)


async def _close(relay: Any) -> None:
    close = getattr(relay, "close", None)
    if close is not None:
        res = close()
        if hasattr(res, "__await__"):
            await res
