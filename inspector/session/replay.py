"""Replay a recorded session: re-issue it against a device, or serve it as a virtual provider.

Re-running follows the spec's rules on side effects (CETP v2 §4): reads are re-issued;
mutations only after an explicit confirmation per exchange; request ids are kept (so a
provider that deduplicates answers with the recorded outcome) unless the user asks for new
ones — the inspector never invents new ids to guess an outcome. Stale values that would
make every call fail are refreshed: the session token from a replayed `negotiate` replaces
the recorded one, and `deadline_at_ms` is moved to now plus the original budget.
The result is a side-by-side diff of recorded vs new responses.

`recorded_providers` turns a session into data the virtual device can serve, so someone
without the phone can explore the exact behaviour that was reported.
"""

from __future__ import annotations

import inspect
import json
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from inspector.protocol.bundle import Bundle, Long, from_jsonable, to_jsonable
from inspector.protocol.exchange import Exchange, ExchangeKind, ExchangeStatus
from inspector.relay.api import RelayApi, RelayError
from inspector.session.journal import JournalContents

READ_METHODS = frozenset({"negotiate", "get_provider_info", "list_tools", "get_operation"})
MUTATION_METHODS = frozenset({"execute_tool", "cancel_operation"})
VOLATILE_KEYS = frozenset({"session_token", "expires_at", "deadline_at_ms", "request_id"})
"""Keys that differ between runs by design; ignored by the diff and by response matching."""
DEFAULT_BUDGET_MS = 30_000

Confirm = Callable[[Exchange], bool | Awaitable[bool]]


class ReplayKind(StrEnum):
    READ = "read"
    MUTATION = "mutation"
    SKIP = "skip"  # not a provider call (file reads, intents, relay housekeeping) or refused


class ReplayAction(StrEnum):
    REISSUED = "reissued"
    DECLINED = "declined"  # a mutation without confirmation
    SKIPPED = "skipped"


class DiffEntry(BaseModel):
    path: str
    recorded: Any = None
    new: Any = None


class ReplayResult(BaseModel):
    exchange_id: str
    method: str
    target: str
    tool: str | None = None
    kind: ReplayKind
    action: ReplayAction
    reason: str = ""
    request: Any = None  # typed JSON of the extras actually sent
    recorded: Any = None  # typed JSON of the recorded reply
    new: Any = None  # typed JSON of the new reply
    error_code: str | None = None
    error_message: str | None = None
    diff: list[DiffEntry] = Field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.diff) or (
            self.action == ReplayAction.REISSUED and self.error_code is not None
        )


class ReplayReport(BaseModel):
    results: list[ReplayResult] = Field(default_factory=list)

    @property
    def changed(self) -> list[ReplayResult]:
        return [r for r in self.results if r.changed]


# ---------------------------------------------------------------------------------------
# Classification


def _json_data(response: Any) -> Any:
    """The parsed `data` JSON string of a recorded typed reply, if any."""
    if not isinstance(response, dict) or response.get("t") != "Bundle":
        return None
    data = (response.get("v") or {}).get("data")
    if isinstance(data, dict) and data.get("t") == "String" and isinstance(data.get("v"), str):
        try:
            return json.loads(data["v"])
        except ValueError:
            return None
    return None


def read_only_tools_from(exchanges: Iterable[Exchange]) -> set[str]:
    """Tools whose recorded descriptor says `annotations.effect == "read"`."""
    found: set[str] = set()
    for ex in exchanges:
        if ex.method != "list_tools" or ex.status != ExchangeStatus.SUCCESS:
            continue
        for payload in (ex.decoded, _json_data(ex.response)):
            tools = payload.get("tools") if isinstance(payload, dict) else None
            for t in tools if isinstance(tools, list) else []:
                ann = t.get("annotations") if isinstance(t, dict) else None
                if isinstance(ann, dict) and ann.get("effect") == "read":
                    found.add(str(t.get("name")))
    return found


def classify(ex: Exchange, read_only_tools: Iterable[str] = ()) -> ReplayKind:
    """Read, mutation or not replayable. Unknown methods and tools count as mutations."""
    if ex.kind != ExchangeKind.CETP or ex.status == ExchangeStatus.REFUSED:
        return ReplayKind.SKIP
    if ex.method in READ_METHODS:
        return ReplayKind.READ
    if ex.method == "execute_tool" and ex.tool is not None and ex.tool in set(read_only_tools):
        return ReplayKind.READ
    return ReplayKind.MUTATION


# ---------------------------------------------------------------------------------------
# Diff


def _parse_container(s: str) -> Any:
    if not s.lstrip().startswith(("{", "[")):
        return None
    try:
        v = json.loads(s)
    except ValueError:
        return None
    return v if isinstance(v, dict | list) else None


def diff_responses(
    recorded: Any, new: Any, ignore_keys: Iterable[str] = VOLATILE_KEYS
) -> list[DiffEntry]:
    """Differences between two typed-JSON replies; JSON strings are compared structurally."""
    out: list[DiffEntry] = []
    _diff_typed(recorded, new, "", frozenset(ignore_keys), out)
    return out


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _diff_typed(a: Any, b: Any, path: str, ignore: frozenset[str], out: list[DiffEntry]) -> None:
    ta = a.get("t") if isinstance(a, dict) else None
    tb = b.get("t") if isinstance(b, dict) else None
    if ta == tb == "Bundle":
        va, vb = a.get("v") or {}, b.get("v") or {}
        for k in sorted(set(va) | set(vb)):
            if k not in ignore:
                _diff_typed(va.get(k), vb.get(k), _join(path, k), ignore, out)
        return
    if ta == tb == "Bundle[]":
        la, lb = a.get("v") or [], b.get("v") or []
        for i in range(max(len(la), len(lb))):
            _diff_typed(
                la[i] if i < len(la) else None,
                lb[i] if i < len(lb) else None,
                f"{path}[{i}]",
                ignore,
                out,
            )
        return
    if ta == tb == "String" and isinstance(a.get("v"), str) and isinstance(b.get("v"), str):
        ja, jb = _parse_container(a["v"]), _parse_container(b["v"])
        if ja is not None and jb is not None:
            _diff_json(ja, jb, path, ignore, out)
            return
    if a != b:
        out.append(DiffEntry(path=path or "(reply)", recorded=a, new=b))


def _diff_json(a: Any, b: Any, path: str, ignore: frozenset[str], out: list[DiffEntry]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k in ignore:
                continue
            if k not in a or k not in b:
                out.append(DiffEntry(path=_join(path, k), recorded=a.get(k), new=b.get(k)))
            else:
                _diff_json(a[k], b[k], _join(path, k), ignore, out)
        return
    if isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            if i >= len(a) or i >= len(b):
                out.append(
                    DiffEntry(
                        path=f"{path}[{i}]",
                        recorded=a[i] if i < len(a) else None,
                        new=b[i] if i < len(b) else None,
                    )
                )
            else:
                _diff_json(a[i], b[i], f"{path}[{i}]", ignore, out)
        return
    if a != b or type(a) is not type(b):
        out.append(DiffEntry(path=path or "(data)", recorded=a, new=b))


# ---------------------------------------------------------------------------------------
# Re-issuing


def _token_in(response: Any) -> str | None:
    data = _json_data(response)
    tok = data.get("session_token") if isinstance(data, dict) else None
    return tok if isinstance(tok, str) else None


class Replayer:
    """Re-issues recorded provider calls on a relay (see module docstring)."""

    def __init__(
        self,
        relay: RelayApi,
        *,
        confirm: Confirm | None = None,
        new_request_ids: bool = False,
        read_only_tools: Iterable[str] = (),
        timeout_ms: int = 30_000,
        ignore_keys: Iterable[str] = VOLATILE_KEYS,
        clock_ms: Callable[[], float] = lambda: time.time() * 1000.0,
    ) -> None:
        self.relay = relay
        self.confirm = confirm
        self.new_request_ids = new_request_ids
        self.read_only_tools = set(read_only_tools)
        self.timeout_ms = timeout_ms
        self.ignore_keys = frozenset(ignore_keys)
        self.clock_ms = clock_ms
        self._tokens: dict[str, str] = {}
        self._ids: dict[str, str] = {}

    def prepare(self, ex: Exchange) -> Bundle | None:
        """The extras to send for a recorded exchange (tokens, deadlines, ids updated)."""
        if ex.request is None:
            return None
        extras = from_jsonable(ex.request)
        if not isinstance(extras, Bundle):
            raise ValueError(f"recorded request of {ex.id} is not a Bundle")
        token = extras.get("session_token")
        if isinstance(token, str) and token in self._tokens:
            extras["session_token"] = self._tokens[token]
        deadline = extras.get("deadline_at_ms")
        if isinstance(deadline, Long):
            budget = int(deadline) - int(ex.started_ms)
            budget = budget if 0 < budget <= 3_600_000 else DEFAULT_BUDGET_MS
            extras["deadline_at_ms"] = Long(int(self.clock_ms()) + budget)
        rid = extras.get("request_id")
        if self.new_request_ids and isinstance(rid, str):
            extras["request_id"] = self._ids.setdefault(rid, str(uuid.uuid4()))
        return extras

    async def _confirmed(self, ex: Exchange) -> bool:
        if self.confirm is None:
            return False
        answer = self.confirm(ex)
        if inspect.isawaitable(answer):
            answer = await answer
        return bool(answer)

    async def replay_one(self, ex: Exchange) -> ReplayResult:
        kind = classify(ex, self.read_only_tools)
        base = {
            "exchange_id": ex.id,
            "method": ex.method,
            "target": ex.target,
            "tool": ex.tool,
            "kind": kind,
            "recorded": ex.response,
        }
        if kind == ReplayKind.SKIP:
            return ReplayResult(
                **base, action=ReplayAction.SKIPPED, reason=f"{ex.kind} exchanges are not re-issued"
            )
        if kind == ReplayKind.MUTATION and not await self._confirmed(ex):
            return ReplayResult(
                **base,
                action=ReplayAction.DECLINED,
                reason="mutations are only replayed after confirmation",
            )
        extras = self.prepare(ex)
        sent = to_jsonable(extras)
        try:
            reply = await self.relay.call(ex.target, ex.method, extras, timeout_ms=self.timeout_ms)
        except RelayError as exc:
            return ReplayResult(
                **base,
                action=ReplayAction.REISSUED,
                request=sent,
                error_code=exc.code,
                error_message=exc.message,
            )
        new = to_jsonable(reply)
        if ex.method == "negotiate":
            old_tok, new_tok = _token_in(ex.response), _token_in(new)
            if old_tok and new_tok:
                self._tokens[old_tok] = new_tok
        return ReplayResult(
            **base,
            action=ReplayAction.REISSUED,
            request=sent,
            new=new,
            diff=diff_responses(ex.response, new, self.ignore_keys),
        )

    async def replay(self, exchanges: Iterable[Exchange]) -> ReplayReport:
        report = ReplayReport()
        for ex in exchanges:
            report.results.append(await self.replay_one(ex))
        return report


async def replay_session(
    session: JournalContents,
    relay: RelayApi,
    *,
    confirm: Confirm | None = None,
    new_request_ids: bool = False,
    only: Iterable[str] | None = None,
) -> ReplayReport:
    """Replay a session's provider calls (or only the exchange ids in `only`)."""
    wanted = set(only) if only is not None else None
    exchanges = [e for e in session.exchanges if wanted is None or e.id in wanted]
    r = Replayer(
        relay,
        confirm=confirm,
        new_request_ids=new_request_ids,
        read_only_tools=read_only_tools_from(session.exchanges),
    )
    return await r.replay(exchanges)


# ---------------------------------------------------------------------------------------
# Replay as a virtual provider


def _match_key(method: str, request: Any) -> str:
    """Canonical form of a request without run-specific values."""
    plain: Any = None
    if isinstance(request, dict) and request.get("t") == "Bundle":
        plain = {k: v for k, v in (request.get("v") or {}).items() if k not in VOLATILE_KEYS}
    return json.dumps([method, plain], sort_keys=True, separators=(",", ":"))


class RecordedCall(BaseModel):
    method: str
    tool: str | None = None
    request: Any = None
    response: Any = None
    status: str = ""
    match_key: str = ""


class RecordedProvider(BaseModel):
    """A provider as recorded: what the virtual device needs to play it back."""

    authority: str
    package: str = ""
    package_record: Any = None  # the discover record (manifest declarations), if recorded
    descriptors: dict[str, Any] = Field(default_factory=dict)  # method → typed reply
    calls: list[RecordedCall] = Field(default_factory=list)

    def answer(self, method: str, extras: Bundle | None) -> Bundle | None:
        """The recorded reply for this call: exact request, else same tool, else method.

        Raises LookupError when nothing was recorded for `method`. The request id of the
        incoming call is echoed (providers echo it; the consumer checks).
        """
        key = _match_key(method, to_jsonable(extras))
        tool = extras.get("tool_name") if isinstance(extras, Bundle) else None
        same_method = [c for c in self.calls if c.method == method and c.response is not None]
        if not same_method:
            raise LookupError(f"no recorded {method} call for {self.authority}")
        chosen = next((c for c in reversed(same_method) if c.match_key == key), None)
        chosen = chosen or next((c for c in reversed(same_method) if tool and c.tool == tool), None)
        chosen = chosen or same_method[-1]
        reply = from_jsonable(chosen.response)
        if isinstance(reply, Bundle) and isinstance(extras, Bundle):
            rid = extras.get("request_id")
            if isinstance(rid, str) and "request_id" in reply:
                reply["request_id"] = rid
        return reply if isinstance(reply, Bundle) else None


def _package_record(session: JournalContents, package: str) -> Any:
    discovery = session.latest("discovery")
    items = discovery.get("packages") if isinstance(discovery, dict) else discovery
    for rec in items if isinstance(items, list) else []:
        if isinstance(rec, dict) and rec.get("package") == package:
            return rec
    return None


def recorded_providers(session: JournalContents) -> list[RecordedProvider]:
    """One `RecordedProvider` per CETP authority in the session, calls in recorded order."""
    providers: dict[str, RecordedProvider] = {}
    for ex in session.exchanges:
        if ex.kind != ExchangeKind.CETP or ex.status == ExchangeStatus.REFUSED:
            continue
        if ex.status in (ExchangeStatus.PENDING, ExchangeStatus.TRANSPORT_ERROR):
            continue
        p = providers.get(ex.target)
        if p is None:
            p = providers[ex.target] = RecordedProvider(
                authority=ex.target,
                package=ex.package,
                package_record=_package_record(session, ex.package),
            )
        p.calls.append(
            RecordedCall(
                method=ex.method,
                tool=ex.tool,
                request=ex.request,
                response=ex.response,
                status=str(ex.status),
                match_key=_match_key(ex.method, ex.request),
            )
        )
        if ex.method in READ_METHODS - {"get_operation"} and ex.status == ExchangeStatus.SUCCESS:
            p.descriptors[ex.method] = ex.response
    return list(providers.values())
