"""Replay a recorded session: re-issue it against a device, or serve it as a virtual provider.

Re-running follows the spec's rules on side effects (CETP v2 §4): reads are re-issued;
mutations only after an explicit confirmation per exchange; request ids are kept (so a
provider that deduplicates answers with the recorded outcome) unless the user asks for new
ones — the inspector never invents new ids to guess an outcome. Stale values that would
make every call fail are refreshed: the session token from a replayed `negotiate` replaces
the recorded one, and `deadline_at_ms` is moved to now plus the original budget.
The result is a side-by-side diff of recorded vs new responses.

AndyClaw extension calls (exchange kind `extension`) are re-issued through the bridge they
were recorded on (service transact, provider call, broadcast, activity). Extension
functions carry no read/mutation annotation, so every function call is a mutation: re-run
only after confirmation. Reading the manifest (the raw resource, GET_MANIFEST) is a read.
Extension result strings are diffed as JSON when both sides parse, else as text.

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

from inspector.protocol import andyclaw as ac
from inspector.protocol.bundle import Bundle, Long, from_jsonable, to_jsonable
from inspector.protocol.cetp import ProtocolViolation
from inspector.protocol.exchange import Exchange, ExchangeKind, ExchangeStatus
from inspector.protocol.logs import LogLine
from inspector.relay.api import RelayApi, RelayError
from inspector.session.journal import JournalContents

READ_METHODS = frozenset({"negotiate", "get_provider_info", "list_tools", "get_operation"})
MUTATION_METHODS = frozenset({"execute_tool", "cancel_operation"})
VOLATILE_KEYS = frozenset({"session_token", "expires_at", "deadline_at_ms", "request_id"})
"""Keys that differ between runs by design; ignored by the diff and by response matching."""
DEFAULT_BUDGET_MS = 30_000
EXTENSION_CALL_METHODS = frozenset(b.value for b in ac.Bridge)
"""Extension exchange methods that run a function (the bridge name): always mutations."""
EXTENSION_READ_METHODS = frozenset({"read_resource", "service:GET_MANIFEST"})

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
    recorded_logs: list[LogLine] = Field(default_factory=list)  # issue 16: shown beside it

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
    if ex.status == ExchangeStatus.REFUSED:
        return ReplayKind.SKIP
    if ex.kind == ExchangeKind.EXTENSION:
        if ex.method in EXTENSION_READ_METHODS:
            return ReplayKind.READ
        return ReplayKind.MUTATION if ex.method in EXTENSION_CALL_METHODS else ReplayKind.SKIP
    if ex.kind != ExchangeKind.CETP:
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


def _parse_any(s: Any) -> tuple[bool, Any]:
    if not isinstance(s, str):
        return False, None
    try:
        return True, json.loads(s)
    except (ValueError, RecursionError):
        return False, None


def diff_text_replies(recorded: Any, new: Any, ignore_keys: Iterable[str] = VOLATILE_KEYS
                      ) -> list[DiffEntry]:
    """Differences between two plain replies (extension result strings, or plain JSON):
    strings that parse as JSON are compared as JSON, anything else as text."""
    ok_a, ja = _parse_any(recorded)
    ok_b, jb = _parse_any(new)
    a = ja if ok_a else recorded
    b = jb if ok_b else new
    out: list[DiffEntry] = []
    if (ok_a or not isinstance(recorded, str)) and (ok_b or not isinstance(new, str)):
        _diff_json(a, b, "", frozenset(ignore_keys), out)
    elif recorded != new:
        out.append(DiffEntry(path="(reply)", recorded=recorded, new=new))
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
            "recorded_logs": list(ex.logs),
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
        if ex.kind == ExchangeKind.EXTENSION:
            return await self._replay_extension(ex, base)
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

    async def _replay_extension(self, ex: Exchange, base: dict[str, Any]) -> ReplayResult:
        """Re-issue one AndyClaw exchange through the bridge it was recorded on."""
        try:
            sent, recorded, new, err = await self._issue_extension(ex)
        except RelayError as exc:
            return ReplayResult(**base, action=ReplayAction.REISSUED,
                                request=ex.request, error_code=exc.code,
                                error_message=exc.message)
        except (ValueError, TypeError, KeyError) as exc:
            return ReplayResult(**base, action=ReplayAction.SKIPPED,
                                reason=f"the recorded {ex.method} request cannot be re-sent: "
                                f"{exc}")
        code, message = err if err is not None else (None, None)
        if ex.method in ("provider", "broadcast"):
            diff = _diff_typed_or_none(recorded, new, self.ignore_keys)
        else:
            diff = diff_text_replies(recorded, new, self.ignore_keys)
        if isinstance(recorded, str) or isinstance(new, str):  # shown like a typed String
            recorded, new = _typed_text(recorded), _typed_text(new)
        return ReplayResult(**{**base, "recorded": recorded}, action=ReplayAction.REISSUED,
                            request=sent, new=new, error_code=code, error_message=message,
                            diff=diff)

    async def _issue_extension(
        self, ex: Exchange
    ) -> tuple[Any, Any, Any, tuple[str, str] | None]:
        """(request sent, recorded reply, new reply, (error code, message) or None)."""
        package = ex.package
        req = ex.request
        if not package:
            raise ValueError("the exchange names no package")
        if ex.method in ("service", "service:GET_MANIFEST"):
            if not isinstance(req, dict):
                raise ValueError("no recorded transaction")
            code = int(req.get("code") or ac.TRANSACTION_EXECUTE)
            strings = [s if isinstance(s, str) else None for s in req.get("strings") or []]
            action = str(req.get("action") or ac.ACTION_EXTENSION_SERVICE)
            descriptor = str(req.get("descriptor") or ac.DESCRIPTOR)
            tr = await self.relay.bind_transact(package, action, descriptor, code, strings,
                                                self.timeout_ms)
            err = None
            if tr.exception is not None:
                err = ("EXCEPTION", f"{tr.exception.get('class')}: "
                       f"{tr.exception.get('message')}")
            return req, ex.response, tr.reply, err
        if ex.method == "read_resource":
            if not isinstance(req, dict):
                raise ValueError("no recorded resource request")
            res = await self.relay.read_resource(package, int(req["resource_id"]),
                                                 int(req.get("max_bytes") or 1024 * 1024))
            try:
                functions: Any = [f.model_dump() for f in ac.parse_manifest_array(res.data)]
            except ProtocolViolation as v:
                return req, ex.decoded, None, ("MALFORMED_MANIFEST", str(v))
            return req, ex.decoded, functions, None
        extras = from_jsonable(req) if req is not None else None
        if not isinstance(extras, Bundle):
            raise ValueError("the recorded extras are not a Bundle")
        sent = to_jsonable(extras)
        if ex.method == "provider":
            reply = await self.relay.call(ac.host_authority(package), ac.PROVIDER_METHOD_EXECUTE,
                                          extras, timeout_ms=self.timeout_ms)
            return sent, ex.response, to_jsonable(reply) if reply is not None else None, None
        if ex.method == "broadcast":
            br = await self.relay.broadcast(package, ac.ACTION_EXTENSION_BROADCAST, extras,
                                            ac.response_action(package), self.timeout_ms)
            new = to_jsonable(br.reply) if br.reply is not None else None
            err = ("TIMEOUT", "no reply broadcast arrived in time") if br.timed_out else None
            return sent, ex.response, new, err
        st = await self.relay.start_activity(package, ac.ACTION_EXTENSION_ACTION, extras)
        decoded = ex.decoded if isinstance(ex.decoded, dict) else {}
        recorded = {"launched": decoded.get("launched"), "component": decoded.get("component")}
        new_act = {"launched": st.launched, "component": st.component}
        err = None if st.launched else ("NOT_LAUNCHED", "no activity was launched")
        return sent, recorded, new_act, err

    async def replay(self, exchanges: Iterable[Exchange]) -> ReplayReport:
        report = ReplayReport()
        for ex in exchanges:
            report.results.append(await self.replay_one(ex))
        return report


def _typed_text(value: Any) -> Any:
    """A result string in the typed-JSON form of a String (how replies are displayed)."""
    return {"t": "String", "v": value} if isinstance(value, str) else value


def _diff_typed_or_none(recorded: Any, new: Any, ignore: Iterable[str]) -> list[DiffEntry]:
    if recorded is None or new is None:
        return [] if recorded == new else [DiffEntry(path="(reply)", recorded=recorded, new=new)]
    return diff_responses(recorded, new, ignore)


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
    logs: list[LogLine] = Field(default_factory=list)  # what the provider logged (issue 16)


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
                logs=list(ex.logs),
            )
        )
        if ex.method in READ_METHODS - {"get_operation"} and ex.status == ExchangeStatus.SUCCESS:
            p.descriptors[ex.method] = ex.response
    return list(providers.values())


# ---------------------------------------------------------------------------------------
# Recorded AndyClaw extensions


class RecordedExtensionCall(BaseModel):
    """One recorded function call through a bridge, as the virtual device plays it back."""

    bridge: str  # service | provider | broadcast | activity
    function: str
    params: Any = None  # the params JSON parsed (the raw text when it does not parse)
    response: Any = None  # service: result string; provider/broadcast: typed JSON; activity: None
    decoded: Any = None  # the ExtensionReply as recorded
    status: str = ""


class RecordedExtension(BaseModel):
    """An AndyClaw extension as recorded: package record, manifests and function calls."""

    package: str
    extension_id: str = ""
    package_record: Any = None
    manifest_resource_id: int | None = None
    manifest_functions: list[Any] | None = None  # the raw resource as parsed, if read
    service_manifest: str | None = None  # the GET_MANIFEST reply string, if recorded
    calls: list[RecordedExtensionCall] = Field(default_factory=list)


def params_value(params: Any) -> Any:
    """Params text → its JSON value (the text itself when it does not parse)."""
    ok, value = _parse_any(params)
    return value if ok else params


def extension_call(ex: Exchange) -> RecordedExtensionCall | None:
    """The bridge, function and params of a recorded extension call (None if not one)."""
    if ex.kind != ExchangeKind.EXTENSION:
        return None
    function: Any = None
    params: Any = None
    if ex.method == "service":
        strings = ex.request.get("strings") if isinstance(ex.request, dict) else None
        if isinstance(strings, list) and strings:
            function = strings[0]
            params = strings[1] if len(strings) > 1 else None
    else:
        try:
            extras = from_jsonable(ex.request) if ex.request is not None else None
        except (TypeError, ValueError, KeyError):
            extras = None
        if isinstance(extras, Bundle):
            function, params = extras.get(ac.EXTRA_FUNCTION), extras.get(ac.EXTRA_PARAMS)
    if not isinstance(function, str):
        return None
    return RecordedExtensionCall(
        bridge=ex.method, function=function, params=params_value(params),
        response=ex.response, decoded=ex.decoded, status=str(ex.status))


def recorded_extensions(session: JournalContents) -> list[RecordedExtension]:
    """One `RecordedExtension` per package with recorded extension exchanges."""
    found: dict[str, RecordedExtension] = {}
    for ex in session.exchanges:
        if ex.kind != ExchangeKind.EXTENSION or not ex.package:
            continue
        if ex.status in (ExchangeStatus.REFUSED, ExchangeStatus.PENDING):
            continue
        if ex.status == ExchangeStatus.TRANSPORT_ERROR and not isinstance(ex.decoded, dict):
            continue  # the relay failed: nothing the extension did (a timeout is kept)
        rec = found.get(ex.package)
        if rec is None:
            rec = found[ex.package] = RecordedExtension(
                package=ex.package, extension_id=ex.target,
                package_record=_package_record(session, ex.package))
        if ex.method == "read_resource" and isinstance(ex.request, dict):
            rid = ex.request.get("resource_id")
            rec.manifest_resource_id = rid if isinstance(rid, int) else None
            if ex.status == ExchangeStatus.SUCCESS and isinstance(ex.decoded, list):
                rec.manifest_functions = ex.decoded
        elif ex.method == "service:GET_MANIFEST":
            if isinstance(ex.response, str):
                rec.service_manifest = ex.response
        elif ex.method in EXTENSION_CALL_METHODS:
            call = extension_call(ex)
            if call is not None:
                rec.calls.append(call)
    return list(found.values())
