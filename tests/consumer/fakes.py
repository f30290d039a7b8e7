"""In-memory fakes for the consumer engine: a `RelayApi` hosting fake providers.

`FakeRelay` implements every `RelayApi` op the engine uses. It hosts:
- `FakeV2Provider`: a CETP v2 provider built from the spec's own JSON examples, correct by
  default, with knobs to misbehave on purpose (wrong limits, bad tokens, unknown
  capabilities, revision changes, scripted errors, lost replies, digest/size mismatches,
  huge streams, CONFLICT on cancel …);
- `FakeV1Provider`: the v1 finance tutorial provider (real-implementations.md);
- `FakeExtension`: the AndyClaw hello-world extension on all four bridges.
Reply Bundles are built here by hand, exactly as an Android provider would put them.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.consumer.clock import FakeClock
from inspector.protocol.bundle import (
    Bundle,
    BundleArray,
    FileDescriptorHandle,
    Int,
    Long,
    PendingIntentHandle,
    StringArray,
)
from inspector.relay.api import (
    IPC_FAILED,
    NOT_FOUND,
    TOO_LARGE,
    ActivityResult,
    ActivityStart,
    BroadcastReply,
    HelloInfo,
    RelayError,
    ResourceData,
    StreamEnd,
    TransactReply,
    WakeResult,
)

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text()


# ----------------------------------------------------------------------------- replies


def v2_success(request_id: str | None, data: Any, **extra: Any) -> Bundle:
    b = Bundle(status="success", protocol_version=Int(2), data=json.dumps(data))
    if request_id is not None:
        b["request_id"] = request_id
    b.update(extra)
    return b


def v2_accepted(request_id: str, operation_id: str, poll_after_ms: int) -> Bundle:
    return Bundle(status="accepted", protocol_version=Int(2), request_id=request_id,
                  data=json.dumps({"operation_id": operation_id, "poll_after_ms": poll_after_ms}))


def v2_error(request_id: str | None, code: str, message: str, retryable: bool,
             retry_after_ms: int | None = None, **extra: Any) -> Bundle:
    b = Bundle(status="error", protocol_version=Int(2), error_code=code,
               error_message=message, retryable=retryable)
    if request_id is not None:
        b["request_id"] = request_id
    if retry_after_ms is not None:
        b["retry_after_ms"] = Long(retry_after_ms)
    b.update(extra)
    return b


def v1_success(data: Any) -> Bundle:
    return Bundle(status="success", data=json.dumps(data))


def v1_error(code: str, message: str, **extra: Any) -> Bundle:
    b = Bundle(status="error", error_code=code, error_message=message)
    b.update(extra)
    return b


# ----------------------------------------------------------------------------- files

ChunkSource = Callable[[], Iterator[bytes]]


@dataclass
class FakeFile:
    source: ChunkSource
    closed: bool = False


def bytes_source(data: bytes, chunk: int = 65536) -> ChunkSource:
    def gen() -> Iterator[bytes]:
        for i in range(0, len(data), chunk):
            yield data[i : i + chunk]

    return gen


def repeated_source(block: bytes, count: int) -> ChunkSource:
    """`count` copies of `block`, generated lazily (a huge file without the memory)."""

    def gen() -> Iterator[bytes]:
        for _ in range(count):
            yield block

    return gen


# ----------------------------------------------------------------------------- v2 provider

V2_AUTHORITY = "com.example.app.clawseed.tools"
V2_PACKAGE = "com.example.app"


def _tool(name: str, effect: str, *, risk: str = "low", confirmation: str = "never",
          execution: str = "sync", destructive: bool = False, idempotent: bool = True,
          input_props: dict[str, Any] | None = None, required: list[str] | None = None,
          output_schema: dict[str, Any] | None = None, scopes: list[str] | None = None
          ) -> dict[str, Any]:
    return {
        "name": name,
        "title": name.replace("_", " ").capitalize(),
        "description": f"Fake tool {name}",
        "input_schema": {"type": "object", "properties": input_props or {},
                         "required": required or [], "additionalProperties": False},
        "output_schema": output_schema or {"type": "object"},
        "scopes": scopes or ["alerts.read"],
        "annotations": {"effect": effect, "risk": risk, "destructive": destructive,
                        "idempotent": idempotent, "open_world": False,
                        "confirmation": confirmation, "execution": execution},
    }


def default_v2_tools() -> list[dict[str, Any]]:
    tools = list(fixture("spec_list_tools.json")["tools"])  # create_alert, from the spec
    tools.append(_tool("get_quote", "read", input_props={"symbol": {"type": "string"}},
                       required=["symbol"],
                       output_schema={"type": "object", "required": ["price"],
                                      "properties": {"price": {"type": "number"}}}))
    tools.append(_tool("delete_alert", "delete", risk="high", confirmation="always",
                       destructive=True, idempotent=True, scopes=["alerts.write"],
                       input_props={"alert_id": {"type": "string"}}, required=["alert_id"],
                       output_schema={"type": "object", "required": ["deleted"],
                                      "properties": {"deleted": {"type": "boolean"}}}))
    tools.append(_tool("sync_portfolio", "update", execution="sync_or_async",
                       scopes=["alerts.write"], idempotent=False,
                       output_schema={"type": "object", "required": ["synced"],
                                      "properties": {"synced": {"type": "integer"}}}))
    tools.append(_tool("export_history", "read",
                       output_schema={"type": "object", "required": ["rows"],
                                      "properties": {"rows": {"type": "array"}}}))
    return tools


def default_provider_info() -> dict[str, Any]:
    """The spec's get_provider_info example plus the read scope the extra tools use."""
    info = fixture("spec_provider_info.json")
    info["scopes"].append({"name": "alerts.read", "title": "Read alerts",
                           "description": "Read alerts and quotes", "access": "read",
                           "sensitivity": "financial"})
    return info


@dataclass
class Confirmation:
    request_id: str
    tool: str
    args: str
    decision: bool | None = None
    used: bool = False


@dataclass
class Operation:
    op_id: str
    request_id: str
    tool: str
    polls_left: int
    cancel_requested: bool = False
    state: str = "queued"


@dataclass
class FakeV2Provider:
    """A CETP v2 provider; correct unless a knob says otherwise."""

    relay: FakeRelay
    clock: FakeClock
    authority: str = V2_AUTHORITY
    package: str = V2_PACKAGE
    versions: tuple[int, ...] = (2,)
    capabilities: tuple[str, ...] = ("async_operations", "cancellation", "large_results")
    limits: dict[str, int] = field(default_factory=lambda: dict(
        fixture("spec_negotiate.json")["limits"]))
    revision: str = "tools-42"
    tools: list[dict[str, Any]] = field(default_factory=default_v2_tools)
    provider_info: dict[str, Any] = field(default_factory=lambda: default_provider_info())
    # --- misbehaviour knobs ---
    negotiate_error: str | None = None  # e.g. "UNSUPPORTED_VERSION"
    negotiate_override: dict[str, Any] = field(default_factory=dict)  # merged into data
    extra_capabilities: tuple[str, ...] = ()  # returned even when not requested
    token_factory: Callable[[int], str] | None = None
    execute_errors: list[dict[str, Any]] = field(default_factory=list)  # consumed in order
    lose_replies: int = 0  # commit the effect, then the reply is lost (relay TIMEOUT)
    bad_output: bool = False  # inline value violating output_schema
    echo_wrong_request_id: bool = False
    force_async: bool = False  # return `accepted` even when async was not negotiated
    op_polls: int = 2
    op_poll_after_ms: int = 500
    op_fail: bool = False
    conflict_on_cancel: bool = False
    ack_cancel_but_complete: bool = False
    file_data: bytes = b""
    file_source: ChunkSource | None = None  # overrides file_data (lazy/huge streams)
    file_declared: dict[str, Any] = field(default_factory=dict)  # overrides envelope fields
    # --- observable state ---
    received: list[tuple[str, Bundle | None]] = field(default_factory=list)
    effects: list[tuple[str, str]] = field(default_factory=list)  # (request_id, tool)
    sessions: dict[str, frozenset[str]] = field(default_factory=dict)  # token → caps
    outcomes: dict[str, tuple[str, str, Bundle]] = field(default_factory=dict)
    confirmations: dict[str, Confirmation] = field(default_factory=dict)
    operations: dict[str, Operation] = field(default_factory=dict)
    _seq: Iterator[int] = field(default_factory=itertools.count)

    def __post_init__(self) -> None:
        if not self.file_data and self.file_source is None:
            rows = [{"n": i, "memo": "x" * 40} for i in range(20_000)]
            self.file_data = json.dumps({"rows": rows}).encode()

    # --- controls for tests
    def restart(self) -> None:
        """Process restart: sessions are lost, durable state (dedup, ops) survives."""
        self.sessions.clear()

    def set_tools(self, tools: list[dict[str, Any]], revision: str) -> None:
        self.tools, self.revision = tools, revision
        self.sessions.clear()  # SHOULD invalidate old tokens when semantics change

    def calls(self, method: str) -> list[Bundle | None]:
        return [e for m, e in self.received if m == method]

    # --- dispatch
    def call(self, method: str, extras: Bundle | None, arg: str | None) -> Bundle | None:
        self.received.append((method, extras))
        if method == "negotiate":
            return self._negotiate(extras or Bundle())
        if method not in {"get_provider_info", "list_tools", "execute_tool",
                          "get_operation", "cancel_operation"}:
            return v2_error(None, "METHOD_NOT_FOUND", f"no method {method}", False)
        ex = extras or Bundle()
        if ex.get("protocol_version") != 2 or not isinstance(ex.get("protocol_version"), Int):
            return v2_error(None, "UNSUPPORTED_VERSION", "this provider speaks v2 only", False)
        rid = ex.get("request_id")
        token = ex.get("session_token")
        if token not in self.sessions:
            return v2_error(rid, "NEGOTIATION_REQUIRED", "negotiate first", True)
        if not isinstance(rid, str) or not isinstance(ex.get("deadline_at_ms"), Long):
            return v2_error(rid, "INVALID_REQUEST", "request_id/deadline_at_ms missing", False)
        caps = self.sessions[token]
        if method == "get_provider_info":
            return v2_success(rid, self.provider_info)
        if method == "list_tools":
            return v2_success(rid, {"revision": self.revision, "tools": self.tools})
        if ex["deadline_at_ms"] < self.clock.now_ms():
            return v2_error(rid, "DEADLINE_EXCEEDED", "deadline passed", False)
        if method == "execute_tool":
            return self._execute(ex, rid, caps)
        if method == "get_operation":
            if "async_operations" not in caps:
                return v2_error(rid, "UNSUPPORTED_CAPABILITY", "async not negotiated", False)
            return self._get_operation(ex, rid)
        if "cancellation" not in caps:
            return v2_error(rid, "UNSUPPORTED_CAPABILITY", "cancellation not negotiated", False)
        return self._cancel(ex, rid)

    def _negotiate(self, ex: Bundle) -> Bundle:
        if self.negotiate_error:
            return v2_error(None, self.negotiate_error, "negotiation refused", False)
        versions = list(ex.get("consumer_versions") or [])
        common = sorted(set(versions) & set(self.versions), reverse=True)
        if not common:
            return v2_error(None, "UNSUPPORTED_VERSION", "no common version", False)
        asked = set(json.loads(ex.get("consumer_capabilities") or "[]"))
        caps = [c for c in self.capabilities if c in asked] + list(self.extra_capabilities)
        n = next(self._seq)
        token = self.token_factory(n) if self.token_factory else uuid.uuid4().hex
        self.sessions[token] = frozenset(caps)
        data: dict[str, Any] = {
            "selected_version": common[0], "provider_id": self.package,
            "provider_name": "Example App", "session_token": token,
            "expires_at": "2026-09-02T12:00:00Z", "capabilities": caps,
            "limits": dict(self.limits),
        }
        data.update(self.negotiate_override)
        return v2_success(None, data)

    def _execute(self, ex: Bundle, rid: str, caps: frozenset[str]) -> Bundle:
        tool_name = ex.get("tool_name")
        args = ex.get("args")
        tool = next((t for t in self.tools if t["name"] == tool_name), None)
        if tool is None:
            return v2_error(rid, "TOOL_NOT_FOUND", f"no tool {tool_name}", False)
        if not isinstance(args, str):
            return v2_error(rid, "INVALID_ARGS", "args must be a JSON string", False)
        if len(args.encode()) > self.limits["max_request_bytes"]:
            return v2_error(rid, "INVALID_REQUEST", "args exceed max_request_bytes", False)
        prior = self.outcomes.get(rid)
        if prior is not None:
            if prior[:2] != (tool_name, args):
                return v2_error(rid, "INVALID_REQUEST", "request_id reused with other args",
                                False)
            return prior[2]
        if self.execute_errors:
            spec = self.execute_errors.pop(0)
            return v2_error(rid, spec["code"], spec.get("message", spec["code"]),
                            spec.get("retryable", False), spec.get("retry_after_ms"))
        ann = tool["annotations"]
        if ann["confirmation"] == "always":
            token = ex.get("resume_token")
            if token is None:
                return self._needs_confirmation(rid, tool_name, args)
            conf = self.confirmations.get(token)
            if conf is None or conf.used or conf.request_id != rid:
                return v2_error(rid, "INVALID_REQUEST", "unknown or used resume_token", False)
            if conf.args != args or conf.tool != tool_name:
                return v2_error(rid, "INVALID_REQUEST", "arguments changed since confirmation",
                                False)
            conf.used = True
            if conf.decision is not True:
                return self._commit(rid, tool_name, args, v2_error(
                    rid, "USER_CANCELLED", "the user declined", False), effect=False)
        reply = self._run(rid, tool, args, caps)
        return self._commit(rid, tool_name, args, reply, effect=reply["status"] == "success")

    def _commit(self, rid: str, tool: str, args: str, reply: Bundle, effect: bool) -> Bundle:
        self.outcomes[rid] = (tool, args, reply)
        if effect:
            self.effects.append((rid, tool))
        if self.lose_replies > 0:
            self.lose_replies -= 1
            raise RelayError("TIMEOUT", "the provider did not answer in time")
        return reply

    def _needs_confirmation(self, rid: str, tool: str, args: str) -> Bundle:
        token = f"resume-{uuid.uuid4().hex}"
        conf = Confirmation(rid, tool, args)
        self.confirmations[token] = conf
        handle = self.relay.register_pending_intent(self.package, conf)
        return v2_error(rid, "USER_ACTION_REQUIRED", "confirm the deletion", False,
                        resolution=handle, resume_token=token)

    def _run(self, rid: str, tool: dict[str, Any], args: str, caps: frozenset[str]) -> Bundle:
        name = tool["name"]
        reply_rid = "wrong-" + rid if self.echo_wrong_request_id else rid
        if name == "sync_portfolio" and ("async_operations" in caps or self.force_async):
            op = Operation(f"op_{next(self._seq)}", rid, name, self.op_polls)
            self.operations[op.op_id] = op
            return v2_accepted(reply_rid, op.op_id, self.op_poll_after_ms)
        if name == "export_history":
            return self._file_result(reply_rid, caps)
        value: Any = {"ok": True}
        if name == "create_alert":
            value = {"alert_id": f"alert_{rid[:8]}"}
        elif name == "get_quote":
            value = {"price": "not-a-number"} if self.bad_output else {"price": 101.5}
        elif name == "delete_alert":
            value = {"deleted": True}
        elif name == "sync_portfolio":
            value = {"synced": 3}
        return v2_success(reply_rid, {"kind": "inline", "value": value})

    def _file_result(self, rid: str, caps: frozenset[str]) -> Bundle:
        if "large_results" not in caps:
            return v2_error(rid, "RESULT_TOO_LARGE", "large results not negotiated", False)
        if self.file_source is None:
            data = self.file_data
            size, digest = len(data), hashlib.sha256(data).hexdigest()
            source = bytes_source(data)
        else:
            source = self.file_source
            h, size = hashlib.sha256(), 0
            for chunk in source():
                h.update(chunk)
                size += len(chunk)
            digest = h.hexdigest()
        envelope = {"kind": "file", "media_type": "application/json",
                    "size_bytes": size, "sha256": digest}
        envelope.update(self.file_declared)
        handle = self.relay.register_file(source, size)
        return v2_success(rid, envelope, result_fd=handle)

    def _get_operation(self, ex: Bundle, rid: str) -> Bundle:
        op = self.operations.get(ex.get("operation_id", ""))
        if op is None:
            return v2_error(rid, "INVALID_REQUEST", "unknown operation_id", False)
        if op.request_id != rid:
            return v2_error(rid, "INVALID_REQUEST", "request_id must be the execution id", False)
        data: dict[str, Any] = {"operation_id": op.op_id}
        if op.state not in {"succeeded", "failed", "cancelled"}:
            if op.cancel_requested and not self.ack_cancel_but_complete:
                op.state = "cancelled"
            elif op.polls_left > 0:
                op.polls_left -= 1
                done = self.op_polls - op.polls_left
                op.state = "running"
                data["progress"] = {"current": done, "total": self.op_polls + 1,
                                    "message": "Synchronizing"}
                data["poll_after_ms"] = self.op_poll_after_ms
            else:
                op.state = "failed" if self.op_fail else "succeeded"
                if op.state == "succeeded":
                    self.effects.append((rid, op.tool))
        data["state"] = op.state
        if op.state == "succeeded":
            data["result"] = {"kind": "inline", "value": {"synced": 3}}
        elif op.state == "failed":
            data["error"] = {"error_code": "UNAVAILABLE", "error_message": "backend down",
                             "retryable": False}
        return v2_success(rid, data)

    def _cancel(self, ex: Bundle, rid: str) -> Bundle:
        op = self.operations.get(ex.get("operation_id", ""))
        if op is None or op.request_id != rid:
            return v2_error(rid, "INVALID_REQUEST", "unknown operation for this request", False)
        if self.conflict_on_cancel:
            op.polls_left = 0
            return v2_error(rid, "CONFLICT", "already committed; cannot cancel", False)
        op.cancel_requested = True
        return v2_success(rid, {"operation_id": op.op_id, "state": "cancellation_requested"})


# ----------------------------------------------------------------------------- v1 provider

V1_AUTHORITY = "com.example.finance.clawseed.tools"
V1_PACKAGE = "com.example.finance"


@dataclass
class FakeV1Provider:
    """The ClawSeed tutorial finance provider (v1, read-only)."""

    authority: str = V1_AUTHORITY
    package: str = V1_PACKAGE
    auth_required: bool = False
    received: list[tuple[str, Bundle | None]] = field(default_factory=list)

    def call(self, method: str, extras: Bundle | None, arg: str | None) -> Bundle | None:
        self.received.append((method, extras))
        if method == "list_tools":
            return v1_success(fixture("cetp-v1-finance.list_tools.json"))
        if method == "get_provider_info":
            return v1_success(fixture("cetp-v1-finance.get_provider_info.json"))
        if method != "execute_tool":
            return v1_error("TOOL_NOT_FOUND", f"Unknown method: {method}")
        ex = extras or Bundle()
        tool = ex.get("tool_name")
        if not tool:
            return v1_error("INVALID_ARGS", "tool_name is required")
        if self.auth_required:
            return v1_error("AUTH_REQUIRED", "Please sign in to MyFinance",
                            resolution_hint="Open MyFinance and sign in",
                            authorize_intent="com.example.finance.AUTHORIZE")
        args = json.loads(ex.get("args") or "{}")
        if tool == "get_portfolio_holdings":
            return v1_success({"holdings": [{"symbol": "AAPL", "quantity": 10,
                                             "cost_basis": 150.0, "current_price": 190.0}]})
        if tool == "get_transactions":
            if "start_date" not in args:
                return v1_error("INVALID_ARGS", "start_date is required")
            return v1_success({"transactions": [], "start_date": args["start_date"]})
        return v1_error("TOOL_NOT_FOUND", f"Unknown tool: {tool}")


# ----------------------------------------------------------------------------- AndyClaw

EXT_PACKAGE = "org.ethereumphone.extensionexample"
EXT_DESCRIPTOR = "org.ethereumphone.andyclaw.IExtension"


@dataclass
class FakeExtension:
    """The AndyClaw hello-world extension, reachable over every bridge."""

    package: str = EXT_PACKAGE
    manifest_array: str = field(
        default_factory=lambda: fixture_text("andyclaw-hello-world.extension_manifest.json"))
    service_manifest: str = field(
        default_factory=lambda: fixture_text("andyclaw-hello-world.service_get_manifest.json"))
    broadcast_times_out: bool = False
    bridges: tuple[str, ...] = ("service", "provider", "broadcast", "activity")
    uid: int = 10200
    cert_sha256: tuple[str, ...] = ("c0ffee" * 10 + "beef",)
    manifest_resource_id: int = 0x7F0F0000
    received: list[tuple[str, str, str]] = field(default_factory=list)  # bridge, fn, params

    def record(self) -> Bundle:
        """The relay's `discover` record of this package (relay-protocol §4.1)."""
        def comp(name: str, action: str) -> Bundle:
            return Bundle(name=name, exported=True, enabled=True,
                          actions=StringArray([action]), meta_data=Bundle())
        services = [comp(".ExtensionService", "org.ethereumphone.andyclaw.EXTENSION_SERVICE")]
        receivers = [comp(".ExtensionReceiver",
                          "org.ethereumphone.andyclaw.EXTENSION_BROADCAST")]
        activities = [comp(".ExtensionActivity", "org.ethereumphone.andyclaw.EXTENSION_ACTION")]
        providers = [Bundle(name=".ExtensionProvider", exported=True, enabled=True,
                            authority=f"{self.package}.andyclaw.extension",
                            init_order=Int(0))]
        return Bundle(
            package=self.package, label="Hello World Extension", uid=Int(self.uid),
            version_code=Long(1), cert_sha256=StringArray(self.cert_sha256),
            app_meta_data=Bundle({
                "org.ethereumphone.andyclaw.EXTENSION": True,
                "org.ethereumphone.andyclaw.EXTENSION_ID": "hello_world",
                "org.ethereumphone.andyclaw.EXTENSION_NAME": "Hello World Extension",
                "org.ethereumphone.andyclaw.EXTENSION_MANIFEST": Int(self.manifest_resource_id),
            }),
            services=BundleArray(services if "service" in self.bridges else []),
            providers=BundleArray(providers if "provider" in self.bridges else []),
            receivers=BundleArray(receivers if "broadcast" in self.bridges else []),
            activities=BundleArray(activities if "activity" in self.bridges else []),
            permissions=BundleArray([]),
        )

    def execute(self, function: str, params: str) -> str:
        if function != "greet":
            return json.dumps({"error": f"Unknown function: {function}"})
        name = json.loads(params or "{}").get("name", "")
        return json.dumps({"greeting": f"Hello, {name}! Welcome to AndyClaw extensions."})


# ----------------------------------------------------------------------------- relay


@dataclass
class PendingIntentRecord:
    package: str
    confirmation: Confirmation


class FakeRelay:
    """An in-memory `RelayApi`: providers, handles, PendingIntents, wake-up, extensions."""

    def __init__(self, clock: FakeClock | None = None) -> None:
        self.clock = clock or FakeClock()
        self.providers: dict[str, Any] = {}
        self.extensions: dict[str, FakeExtension] = {}
        self.files: dict[str, FakeFile] = {}
        self.pending: dict[str, PendingIntentRecord] = {}
        self.user_response = "approve"  # approve | deny | deny_ok | back
        self.asleep: dict[str, str] = {}  # authority → mode that wakes it ("acquire"/"launch")
        self.wake_calls: list[tuple[str, str, str]] = []
        self.launches: list[str] = []
        self.closed_handles: list[str] = []
        self.read_limits: list[int] = []
        self.end_override: StreamEnd | None = None  # a relay lying in its END frame
        self.pending_flags: int | None = None  # PendingIntent flags override (e.g. mutable)
        self.ops: list[str] = []
        # relay failures injected before the provider sees a call: (method, relay code),
        # consumed in order when a call of that method comes (a cable pull, a dead binder)
        self.fail_calls: list[tuple[str, str]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._ids = itertools.count(1)

    # --- hosting
    def add_v2(self, **kw: Any) -> FakeV2Provider:
        p = FakeV2Provider(relay=self, clock=self.clock, **kw)
        self.providers[p.authority] = p
        return p

    def add_v1(self, **kw: Any) -> FakeV1Provider:
        p = FakeV1Provider(**kw)
        self.providers[p.authority] = p
        return p

    def add_extension(self, **kw: Any) -> FakeExtension:
        e = FakeExtension(**kw)
        self.extensions[e.package] = e
        return e

    def register_file(self, source: ChunkSource, size: int) -> FileDescriptorHandle:
        hid = f"fd-{next(self._ids)}"
        self.files[hid] = FakeFile(source)
        return FileDescriptorHandle(hid, size)

    def register_pending_intent(self, package: str, conf: Confirmation) -> PendingIntentHandle:
        hid = f"pi-{next(self._ids)}"
        self.pending[hid] = PendingIntentRecord(package, conf)
        flags = (PendingIntentHandle.IMMUTABLE_KNOWN | PendingIntentHandle.IMMUTABLE
                 | PendingIntentHandle.KIND_KNOWN | PendingIntentHandle.ACTIVITY)
        if self.pending_flags is not None:
            flags = self.pending_flags
        return PendingIntentHandle(hid, package, flags)

    # --- RelayApi
    @property
    def hello_info(self) -> HelloInfo:
        return HelloInfo(1, 1, "fake", ("call", "read_file"), "org.cetp.inspector.relay",
                         10123, ("ab" * 32,), {"serial": "fake"})

    async def ping(self) -> int:
        return self.clock.now_ms()

    async def discover(self, package: str | None = None) -> list[Bundle]:
        return [e.record() for e in self.extensions.values()
                if package is None or e.package == package]

    async def call(self, authority: str, method: str, extras: Bundle | None, *,
                   arg: str | None = None, timeout_ms: int = 30_000) -> Bundle | None:
        self.ops.append(f"call:{authority}:{method}")
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0)  # let concurrent callers interleave, as a real relay would
            if self.fail_calls and self.fail_calls[0][0] == method:
                code = self.fail_calls.pop(0)[1]
                raise RelayError(code, f"injected {code} on {method}")
            return self._call(authority, method, extras, arg)
        finally:
            self.in_flight -= 1

    def _call(self, authority: str, method: str, extras: Bundle | None,
              arg: str | None) -> Bundle | None:
        if authority in self.asleep:
            raise RelayError(NOT_FOUND, f"Unknown authority {authority}")
        if authority.endswith(".andyclaw.extension"):
            ext = self.extensions.get(authority.removesuffix(".andyclaw.extension"))
            if ext is None:
                raise RelayError(NOT_FOUND, f"Unknown authority {authority}")
            fn, params = (extras or Bundle()).get("function", ""), (extras or {}).get("params")
            ext.received.append(("provider", fn, params or ""))
            return Bundle(result=ext.execute(fn, params or "{}"))
        provider = self.providers.get(authority)
        if provider is None:
            raise RelayError(NOT_FOUND, f"Unknown authority {authority}")
        return provider.call(method, extras, arg)

    async def read_file(self, handle: str, max_bytes: int,
                        chunk_size: int | None = None) -> AsyncIterator[bytes | StreamEnd]:
        self.read_limits.append(max_bytes)
        f = self.files.get(handle)
        if f is None or f.closed:
            raise RelayError(NOT_FOUND, f"no handle {handle}")
        h, sent = hashlib.sha256(), 0
        for chunk in f.source():
            if sent + len(chunk) > max_bytes:
                raise RelayError(TOO_LARGE, f"stream exceeds max_bytes={max_bytes}")
            h.update(chunk)
            sent += len(chunk)
            yield chunk
        yield self.end_override or StreamEnd(sent, h.hexdigest())

    async def close_handle(self, handle: str) -> bool:
        self.closed_handles.append(handle)
        f = self.files.get(handle)
        if f is None or f.closed:
            return False
        f.closed = True
        return True

    async def launch_pending_intent(self, handle: str,
                                    timeout_ms: int = 120_000) -> ActivityResult:
        self.launches.append(handle)
        rec = self.pending.get(handle)
        if rec is None:
            raise RelayError(NOT_FOUND, f"no PendingIntent {handle}")
        if self.user_response == "approve":
            rec.confirmation.decision = True
            return ActivityResult(-1, None)
        if self.user_response in ("deny", "deny_ok"):
            rec.confirmation.decision = False
            return ActivityResult(-1 if self.user_response == "deny_ok" else 0, None)
        return ActivityResult(0, None)  # back: nothing decided

    async def bind_transact(self, package: str, action: str, descriptor: str, code: int,
                            strings: list[str], timeout_ms: int = 30_000) -> TransactReply:
        self.ops.append(f"bind:{package}:{code}")
        ext = self.extensions.get(package)
        if ext is None:
            raise RelayError(IPC_FAILED, f"bindService failed for {package}")
        if descriptor != EXT_DESCRIPTOR:
            return TransactReply(Bundle({"class": "java.lang.SecurityException",
                                         "message": "Binder invocation to an incorrect "
                                         "interface"}), None)
        if code == 1:
            return TransactReply(None, ext.service_manifest)
        if code == 2:
            ext.received.append(("service", strings[0], strings[1]))
            return TransactReply(None, ext.execute(strings[0], strings[1]))
        return TransactReply(None, None)

    async def broadcast(self, package: str, action: str, extras: Bundle, reply_action: str,
                        timeout_ms: int = 30_000) -> BroadcastReply:
        ext = self.extensions[package]
        ext.received.append(("broadcast", extras.get("function", ""), extras.get("params", "")))
        if ext.broadcast_times_out:
            return BroadcastReply(None, True)
        return BroadcastReply(Bundle(result=ext.execute(extras["function"], extras["params"])),
                              False)

    async def start_activity(self, package: str, action: str, extras: Bundle) -> ActivityStart:
        ext = self.extensions[package]
        ext.received.append(("activity", extras.get("function", ""), extras.get("params", "")))
        return ActivityStart(True, f"{package}/.ExtensionActivity")

    async def read_resource(self, package: str, resource_id: int,
                            max_bytes: int) -> ResourceData:
        ext = self.extensions.get(package)
        if ext is None or resource_id != ext.manifest_resource_id:
            raise RelayError(NOT_FOUND, f"no resource {resource_id:#x} in {package}")
        return ResourceData(ext.manifest_array.encode()[:max_bytes], "raw/extension_manifest")

    async def wake_provider(self, authority: str, package: str, mode: str) -> WakeResult:
        self.wake_calls.append((authority, package, mode))
        need = self.asleep.get(authority)
        if need is None:
            return WakeResult(True, "already running")
        if need == mode or (need == "acquire" and mode == "launch"):
            del self.asleep[authority]
            return WakeResult(True, f"woken by {mode}")
        return WakeResult(False, f"{mode} did not start the provider")

    async def force_stop(self, package: str) -> bool:
        return True

    async def answer_confirmation(self, confirmation_id: str, approve: bool) -> bool:
        return False

    async def fault(self, kind: str, **args: object) -> bool:
        return False

    def add_event_handler(self, handler: Callable[[Bundle], None]) -> None:
        pass

    async def close(self) -> None:
        pass
