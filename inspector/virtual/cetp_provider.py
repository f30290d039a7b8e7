"""A dual-stack CETP provider (v1 + v2) on the virtual device: the behaviour of the SDK's
`CetpV2ContentProvider` plus an app's durable mutation executor, written from the spec.

Subclasses declare tools (`tool_specs`) and implement them:
- `tool_<name>(call)` for effect=read tools (return a JSON value or a `JsonFile`);
- `tool_<name>(call, db)` for mutations, run inside ONE SQLite transaction together with
  the dedup record and stored outcome (spec §6, SDK §10);
- `async op_<name>(op)` for tools that run as background operations (spec §4.4).
Every protocol rule lives in small overridable methods, so a plugin can subclass a provider
and break or change exactly one behaviour (see docs/virtual-device.md).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import secrets
import sqlite3
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jsonschema
import referencing.exceptions
from pydantic import BaseModel, ConfigDict, Field

from inspector.protocol.bundle import Bundle, Int, IntArray, Long
from inspector.virtual.app import (
    CallContext,
    Caller,
    ConfirmationScreen,
    FileSource,
    PendingActivity,
    VirtualApp,
)
from inspector.virtual.cetp_wire import (
    CetpError,
    dumps,
    v1_error,
    v1_success,
    v2_error,
    v2_success,
)
from inspector.virtual.manifest import (
    ACCESS_TOOLS_DECL,
    PackageManifest,
    cetp_provider,
    cetp_service,
)
from inspector.virtual.store import Store, now_ms

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
OPTIONAL_CAPABILITIES = ("async_operations", "cancellation", "large_results")
V2_METHODS = (
    "negotiate",
    "get_provider_info",
    "list_tools",
    "execute_tool",
    "get_operation",
    "cancel_operation",
)
TERMINAL_STATES = ("succeeded", "failed", "cancelled")


class ToolSpec(BaseModel):
    """One tool as the provider declares it (spec §3.3/§3.4)."""

    model_config = ConfigDict(frozen=True)

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    scopes: tuple[str, ...] = ()
    annotations: dict[str, Any] = Field(default_factory=dict)
    in_v1: bool = False  # listed by the v1 list_tools (read-only tools only, spec §2.1)

    @property
    def effect(self) -> str:
        return str(self.annotations.get("effect", "read"))

    @property
    def is_read(self) -> bool:
        return self.effect == "read"


class Scope(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    title: str
    description: str
    access: str
    sensitivity: str


@dataclass
class Session:
    """What a session token is bound to (spec §2.2): UID, version, capabilities, expiry."""

    token: str
    uid: int
    version: int
    capabilities: frozenset[str]
    expires_ms: int
    limits: dict[str, int]

    def has(self, capability: str) -> bool:
        return capability in self.capabilities


@dataclass
class ToolCall:
    """One execute_tool call after envelope validation."""

    ctx: CallContext
    session: Session | None  # None for v1
    spec: ToolSpec
    args: Any
    args_text: str
    request_id: str
    deadline_at_ms: int | None

    @property
    def caller(self) -> Caller:
        return self.ctx.caller

    @property
    def args_sha256(self) -> str:
        return hashlib.sha256(self.args_text.encode("utf-8")).hexdigest()


@dataclass
class JsonFile:
    """A result produced as a file (too big to build in memory)."""

    source: FileSource
    media_type: str = "application/json"


class OperationCancelled(Exception):
    """Raised by `Operation.checkpoint()` when cancellation was requested before commit."""


@dataclass
class Operation:
    """A running background operation as the tool code sees it (durable progress)."""

    provider: CetpProvider
    operation_id: str
    uid: int
    request_id: str
    tool: str
    args: Any
    progress_current: int = 0
    progress_total: int = 0
    _committed: bool = field(default=False)

    def progress(self, current: int, total: int, message: str = "") -> None:
        self.progress_current, self.progress_total = current, total
        self.provider.store.run(
            "UPDATE operations SET state='running', progress_current=?, progress_total=?,"
            " progress_message=?, updated_ms=? WHERE operation_id=?",
            current,
            total,
            message,
            now_ms(),
            self.operation_id,
        )

    def checkpoint(self) -> None:
        """A cancellation point before the commit (cooperative cancellation, §4.4)."""
        row = self.provider.store.one(
            "SELECT cancel_requested FROM operations WHERE operation_id=?", self.operation_id
        )
        if row is not None and row["cancel_requested"]:
            raise OperationCancelled

    def commit(self, mutate: Callable[[sqlite3.Connection], Any], *, final: bool = True) -> Any:
        """Run the business mutation and store the result, atomically: the commit point.

        From here on a cancel answers CONFLICT. With `final=False` the operation stays
        `running` (post-commit work such as notifications) and is marked succeeded when the
        tool code returns — or, after a restart, without re-running anything."""
        self.checkpoint()
        with self.provider.store.tx() as db:
            result = mutate(db)
            self.provider.validate_output(self.provider.spec(self.tool), result)
            envelope = {"kind": "inline", "value": result}
            db.execute(
                "UPDATE operations SET state=?, committed=1, result_json=?,"
                " updated_ms=? WHERE operation_id=?",
                ("succeeded" if final else "running", dumps(envelope), now_ms(), self.operation_id),
            )
            self.provider.record_execution(db, self.uid, self.request_id, self.tool)
        self._committed = True
        return result

    def succeed(self) -> None:
        self.provider.store.run(
            "UPDATE operations SET state='succeeded', updated_ms=? WHERE operation_id=?"
            " AND committed=1",
            now_ms(),
            self.operation_id,
        )


AUDIT_DEFAULT_LIMIT = 50
AUDIT_MAX_LIMIT = 500


def audit_tool(scope: str, name: str = "list_executions") -> ToolSpec:
    """A read tool over the provider's audit log (one row per business side effect).

    Without it nothing outside can see whether a background mutation ran once or twice
    (`sync_watchlist` rewrites the same watchlist); with it a conformance observer counts
    executions (`count` grows by one per effect). Implemented by
    `CetpProvider.tool_list_executions`."""
    return ToolSpec(
        name=name,
        title="List executions",
        description=(
            "The audit log of your actions in this app: one entry per change a tool made "
            "(request id, tool, time), newest first, with the total count"
        ),
        input_schema={
            "type": "object",
            "properties": {
                "tool": {"type": "string", "pattern": "^[a-z][a-z0-9_]{0,63}$"},
                "limit": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": AUDIT_MAX_LIMIT,
                    "default": AUDIT_DEFAULT_LIMIT,
                },
            },
            "additionalProperties": False,
        },
        output_schema={
            "type": "object",
            "properties": {
                "count": {"type": "integer", "minimum": 0},
                "executions": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "request_id": {"type": "string"},
                            "tool": {"type": "string"},
                            "at_ms": {"type": "integer"},
                        },
                        "required": ["request_id", "tool", "at_ms"],
                    },
                },
            },
            "required": ["count", "executions"],
        },
        scopes=(scope,),
        annotations={
            "effect": "read",
            "risk": "low",
            "destructive": False,
            "idempotent": True,
            "open_world": False,
            "confirmation": "never",
            "execution": "sync",
        },
    )


def _uuid_ok(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def _iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class CetpProvider(VirtualApp):
    """Base class of the CETP providers on the virtual device (dual-stack by default)."""

    PROVIDER_NAME = "Example App"
    DESCRIPTION = "A CETP provider"
    MANIFEST_VERSIONS: str | None = "1,2"  # com.clawseed.tools.versions; None = v1 only
    NEGOTIABLE_VERSIONS: tuple[int, ...] = (2,)
    CAPABILITIES: tuple[str, ...] = OPTIONAL_CAPABILITIES
    LIMITS: dict[str, int] = {
        "max_request_bytes": 65536,
        "max_inline_result_bytes": 262144,
        "max_concurrent_requests": 4,
        "idempotency_window_seconds": 86400,
    }
    SESSION_TTL_MS = 3_600_000
    CONFIRMATION_TTL_MS = 300_000
    GRANT_SCOPES: tuple[str, ...] = ()  # scopes a user must grant before use (AUTH_REQUIRED)
    GRANT_TTL_MS = 3_600_000
    POLL_AFTER_MS = 250
    EXTRA_SCHEMA = ""

    def __init__(
        self,
        package: str | None = None,
        label: str | None = None,
        *,
        confirmation_ttl_ms: int | None = None,
    ) -> None:
        super().__init__(package, label)
        if confirmation_ttl_ms is not None:
            self.confirmation_ttl_ms = confirmation_ttl_ms
        self.sessions: dict[str, Session] = {}
        self.store: Store = None  # type: ignore[assignment]  # opened in on_install
        self._locks: dict[tuple[int, str], asyncio.Lock] = {}
        self._inflight: dict[str, int] = {}
        self._op_tasks: dict[str, asyncio.Task[Any]] = {}
        self._validators: dict[int, Any] = {}
        self._valid_docs: set[tuple[str, str, str]] = set()

    @property
    def confirmation_ttl_ms(self) -> int:
        """How long a confirmation (and its resume_token) stays valid. A setting rather than
        a constant so a test or a conformance run can use a short lifetime without
        subclassing (`VirtualDevice(confirmation_ttl_ms=…)` sets it on every provider)."""
        return int(self.CONFIRMATION_TTL_MS)

    @confirmation_ttl_ms.setter
    def confirmation_ttl_ms(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"confirmation_ttl_ms must be a positive int, got {value!r}")
        self.CONFIRMATION_TTL_MS = value

    # --- identity & declarations ----------------------------------------------------------------
    @property
    def provider_id(self) -> str:
        return self.package

    @property
    def authority(self) -> str:
        return f"{self.package}.clawseed.tools"

    def build_manifest(self) -> PackageManifest:
        return PackageManifest(
            package=self.package,
            label=self.label,
            uid=self.uid,
            launch_activity=".MainActivity",
            services=(cetp_service(self.authority, self.MANIFEST_VERSIONS),),
            providers=(cetp_provider(self.authority),),
            permissions=(ACCESS_TOOLS_DECL,),
        )

    def scopes(self) -> list[Scope]:
        return []

    def tool_specs(self) -> list[ToolSpec]:
        return []

    def spec(self, name: str) -> ToolSpec:
        for s in self.tool_specs():
            if s.name == name:
                return s
        raise CetpError("TOOL_NOT_FOUND", f"no tool named {name!r}")

    # --- process --------------------------------------------------------------------------------
    def on_install(self) -> None:
        assert self.state_dir is not None
        self.store = Store(self.state_dir / "state.sqlite3", self.EXTRA_SCHEMA)

    def on_process_start(self) -> None:
        # A fresh process resumes durable background work that had not reached a terminal
        # state (spec §4.4: restart loses nothing and never executes twice).
        for row in self.store.all(
            "SELECT operation_id FROM operations WHERE state IN ('queued','running')"
        ):
            self._start_operation(row["operation_id"])

    def on_process_death(self) -> None:
        self.sessions.clear()  # tokens become invalid → NEGOTIATION_REQUIRED
        self._locks.clear()
        self._inflight.clear()
        self._op_tasks.clear()

    def close(self) -> None:
        super().close()
        if self.store is not None:
            self.store.close()

    # --- entry point ----------------------------------------------------------------------------
    async def call(
        self, ctx: CallContext, authority: str, method: str, arg: str | None, extras: Bundle | None
    ) -> Bundle | None:
        extras = extras if extras is not None else Bundle()
        if method == "negotiate":
            return self.handle_negotiate(ctx, extras)
        if extras.get("protocol_version") is None:
            return await self.handle_v1(ctx, method, extras)
        request_id = extras.get("request_id")
        rid = request_id if isinstance(request_id, str) else None
        try:
            if method not in V2_METHODS:
                return self.unknown_method_reply(method, rid)
            session = self.check_envelope(ctx, extras)
            token = session.token
            if self._inflight.get(token, 0) >= session.limits["max_concurrent_requests"]:
                raise CetpError(
                    "RATE_LIMITED",
                    "too many concurrent requests in this session",
                    retry_after_ms=200,
                )
            self._inflight[token] = self._inflight.get(token, 0) + 1
            try:
                return await self.dispatch_v2(ctx, session, method, extras, rid)
            finally:
                self._inflight[token] = max(0, self._inflight.get(token, 1) - 1)
        except CetpError as err:
            return v2_error(err, rid)

    async def dispatch_v2(
        self, ctx: CallContext, session: Session, method: str, extras: Bundle, rid: str | None
    ) -> Bundle:
        assert rid is not None
        if method == "get_provider_info":
            return v2_success(self.provider_info(), rid)
        if method == "list_tools":
            return v2_success(self.tool_list(session), rid)
        if method == "execute_tool":
            return await self.execute_tool(ctx, session, extras, rid)
        if method == "get_operation":
            return self.get_operation(ctx, session, extras, rid)
        if method == "cancel_operation":
            return self.cancel_operation(ctx, session, extras, rid)
        raise CetpError("INVALID_REQUEST", f"{method} needs no session")  # negotiate

    def unknown_method_reply(self, method: str, rid: str | None) -> Bundle:
        return v2_error(
            CetpError("METHOD_NOT_FOUND", f"method {method[:64]!r} does not exist"), rid
        )

    # --- negotiation (§2.2) ---------------------------------------------------------------------
    def handle_negotiate(self, ctx: CallContext, extras: Bundle) -> Bundle:
        try:
            versions = extras.get("consumer_versions")
            if not isinstance(versions, IntArray):
                raise CetpError("INVALID_REQUEST", "consumer_versions (int[]) is required")
            caps_text = extras.get("consumer_capabilities")
            if not isinstance(caps_text, str):
                raise CetpError(
                    "INVALID_REQUEST", "consumer_capabilities (JSON string array) is required"
                )
            try:
                caps = json.loads(caps_text)
            except json.JSONDecodeError as exc:
                raise CetpError(
                    "INVALID_REQUEST", f"consumer_capabilities is not JSON: {exc.msg}"
                ) from None
            if not isinstance(caps, list) or not all(isinstance(c, str) for c in caps):
                raise CetpError("INVALID_REQUEST", "consumer_capabilities must be a string array")
            common = [v for v in versions if v in self.NEGOTIABLE_VERSIONS]
            if not common:
                raise CetpError(
                    "UNSUPPORTED_VERSION",
                    f"no common protocol version (provider negotiates "
                    f"{list(self.NEGOTIABLE_VERSIONS)})",
                    details={"supported_versions": list(self.NEGOTIABLE_VERSIONS)},
                )
            selected = max(common)
            granted = self.negotiated_capabilities(caps)
            session = self.new_session(ctx.caller.uid, selected, granted)
            data = dumps(self.negotiate_data(session))
            return Bundle(status="success", protocol_version=Int(selected), data=data)
        except CetpError as err:
            rid = extras.get("request_id")
            return v2_error(err, rid if isinstance(rid, str) else None)

    def negotiated_capabilities(self, requested: list[str]) -> list[str]:
        """Only optional capabilities both sides support (§2.2)."""
        return [c for c in self.CAPABILITIES if c in requested]

    def new_token(self) -> str:
        """Opaque and unpredictable, ≤ 256 bytes; its bindings live provider-side."""
        return secrets.token_urlsafe(32)

    def new_session(self, uid: int, version: int, capabilities: list[str]) -> Session:
        token = self.new_token()
        s = Session(
            token=token,
            uid=uid,
            version=version,
            capabilities=frozenset(capabilities),
            expires_ms=now_ms() + self.SESSION_TTL_MS,
            limits=dict(self.LIMITS),
        )
        self.sessions[token] = s
        return s

    def negotiate_data(self, session: Session) -> dict[str, Any]:
        return {
            "selected_version": session.version,
            "provider_id": self.provider_id,
            "provider_name": self.PROVIDER_NAME,
            "session_token": session.token,
            "expires_at": _iso(session.expires_ms),
            "capabilities": [c for c in self.CAPABILITIES if c in session.capabilities],
            "limits": session.limits,
        }

    # --- common envelope (§4.1) -----------------------------------------------------------------
    def check_envelope(self, ctx: CallContext, extras: Bundle) -> Session:
        pv = extras.get("protocol_version")
        if not isinstance(pv, Int) or pv != 2:
            raise CetpError("INVALID_REQUEST", f"protocol_version must be Int 2, got {pv!r:.40}")
        rid = extras.get("request_id")
        if not isinstance(rid, str) or not _uuid_ok(rid):
            raise CetpError("INVALID_REQUEST", "request_id must be a UUID string")
        deadline = extras.get("deadline_at_ms")
        if not isinstance(deadline, Long):
            raise CetpError("INVALID_REQUEST", "deadline_at_ms (Long epoch ms) is required")
        token = extras.get("session_token")
        if not isinstance(token, str):
            raise CetpError("NEGOTIATION_REQUIRED", "no session_token: call negotiate first")
        session = self.sessions.get(token)
        if session is None:
            raise CetpError(
                "NEGOTIATION_REQUIRED", "unknown or lost session (provider restarted?): negotiate"
            )
        if session.expires_ms <= now_ms():
            self.sessions.pop(token, None)
            raise CetpError("NEGOTIATION_REQUIRED", "the session expired: negotiate again")
        if session.uid != ctx.caller.uid:
            raise CetpError("INVALID_REQUEST", "this session token was issued to another caller")
        return session

    def check_deadline(self, deadline_at_ms: int | None) -> None:
        """Checked before any business side effect (§4.1)."""
        if deadline_at_ms is not None and deadline_at_ms <= now_ms():
            raise CetpError(
                "DEADLINE_EXCEEDED",
                "the deadline passed before execution started; nothing was changed",
            )

    # --- descriptors (§3) -----------------------------------------------------------------------
    def provider_info(self) -> dict[str, Any]:
        return {
            "provider_id": self.provider_id,
            "provider_name": self.PROVIDER_NAME,
            "description": self.DESCRIPTION,
            "schema_dialect": SCHEMA_DIALECT,
            "scopes": [s.model_dump() for s in self.scopes()],
        }

    def tool_descriptor(self, spec: ToolSpec, session: Session) -> dict[str, Any]:
        ann = dict(spec.annotations)
        if ann.get("execution") == "sync_or_async" and not session.has("async_operations"):
            ann["execution"] = "sync"  # §3.4: only valid when async_operations was negotiated
        return {
            "name": spec.name,
            "title": spec.title,
            "description": spec.description,
            "input_schema": spec.input_schema,
            "output_schema": spec.output_schema,
            "scopes": list(spec.scopes),
            "annotations": ann,
        }

    def visible_tools(self, session: Session) -> list[ToolSpec]:
        return self.tool_specs()

    def tool_list(self, session: Session) -> dict[str, Any]:
        tools = [self.tool_descriptor(s, session) for s in self.visible_tools(session)]
        return {"revision": self.revision(tools), "tools": tools}

    def revision(self, tools: list[dict[str, Any]]) -> str:
        """Changes whenever the tool set, a schema or security semantics change (§3.3)."""
        return "tools-" + hashlib.sha256(dumps(tools).encode()).hexdigest()[:12]

    # --- execute_tool (§4) ----------------------------------------------------------------------
    async def execute_tool(
        self, ctx: CallContext, session: Session, extras: Bundle, rid: str
    ) -> Bundle:
        name = extras.get("tool_name")
        if not isinstance(name, str):
            raise CetpError("INVALID_REQUEST", "tool_name (String) is required")
        specs = {s.name: s for s in self.visible_tools(session)}
        spec = specs.get(name)
        if spec is None:
            raise CetpError("TOOL_NOT_FOUND", f"no tool named {name[:64]!r} for this caller")
        args_text = extras.get("args")
        if not isinstance(args_text, str):
            raise CetpError("INVALID_REQUEST", "args (JSON String) is required")
        self.check_request_size(session, args_text)
        args = self.parse_args(spec, args_text)
        deadline = int(extras["deadline_at_ms"])
        call = ToolCall(ctx, session, spec, args, args_text, rid, deadline)
        resume = extras.get("resume_token")
        # extras "confirmed" is deliberately never read: a consumer cannot confirm (§4.3).
        self.authorize(call)
        if spec.is_read:
            self.check_deadline(deadline)
            return await self.finish_read(call, self.run_read(call))
        key = (ctx.caller.uid, rid)
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:  # concurrent same-id arrivals: one executor (§6)
            stored = self.lookup_dedup(call)
            if stored is not None:
                return stored
            missing = self.missing_scopes(call)
            if missing or (isinstance(resume, str) and self.resume_kind(resume) == "auth"):
                # scope grant first (AUTH_REQUIRED); its token is spent once granted
                if not isinstance(resume, str) or self.consume_resume_token(call, resume, "auth"):
                    screen = self.describe_grant(call, missing)
                    return self.require_confirmation(call, screen, "auth", missing)
                resume = None
            screen = self.confirmation_screen(call)
            if screen is not None:
                if not isinstance(resume, str) or self.consume_resume_token(call, resume):
                    return self.require_confirmation(call, screen)
            elif isinstance(resume, str):
                raise CetpError("INVALID_REQUEST", "this call needs no resume_token")
            self.check_deadline(deadline)
            if self.runs_as_operation(spec):
                return await self.start_operation(call)
            return self.run_mutation(call)

    def check_request_size(self, session: Session, args_text: str) -> None:
        """The limit this provider advertised (§2.2, §4.1) is the limit it keeps."""
        if len(args_text.encode("utf-8")) > session.limits["max_request_bytes"]:
            raise CetpError(
                "INVALID_REQUEST",
                f"args exceed max_request_bytes ({session.limits['max_request_bytes']})",
            )

    def inline_limit(self, session: Session) -> int:
        """Above this many bytes a result is never inlined (§4.5)."""
        return int(session.limits["max_inline_result_bytes"])

    def parse_args(self, spec: ToolSpec, args_text: str) -> Any:
        try:
            args = json.loads(args_text)
        except json.JSONDecodeError as exc:
            raise CetpError("INVALID_ARGS", f"args is not valid JSON: {exc.msg}") from None
        if (spec.name, "in", args_text) in self._valid_docs:
            return args
        validator = self.validator(spec.input_schema)
        try:
            errors = sorted(validator.iter_errors(args), key=lambda e: [str(p) for p in e.path])
        except (jsonschema.exceptions.SchemaError, referencing.exceptions.Unresolvable):
            raise CetpError("INTERNAL_ERROR", "the tool's input schema cannot be used") from None
        if errors:
            e = errors[0]
            where = "/".join(str(p) for p in e.path) or "(root)"
            raise CetpError(
                "INVALID_ARGS",
                f"args do not match the input schema at {where}: {e.message[:200]}",
                details={"path": where, "errors": len(errors)},
            )
        self._remember_valid((spec.name, "in", args_text))
        return args

    def validator(self, schema: dict[str, Any]) -> jsonschema.protocols.Validator:
        """Compiled validators are cached per schema object (schemas are immutable here)."""
        v = self._validators.get(id(schema))
        if v is None or v.schema is not schema:
            v = jsonschema.Draft202012Validator(schema)
            self._validators[id(schema)] = v
        return v

    def _remember_valid(self, key: tuple[str, str, str]) -> None:
        """Verdicts are memoised per exact document text: the same bytes always validate
        the same way against the same tool, and small calls stay cheap."""
        if len(self._valid_docs) >= 4096:
            self._valid_docs.clear()
        self._valid_docs.add(key)

    def authorize(self, call: ToolCall) -> None:
        """Scope check on every execution (§3.4, §7.2). Reads needing a user grant are
        refused outright (PERMISSION_DENIED); mutations ask for the grant (AUTH_REQUIRED)."""
        if call.spec.is_read and self.missing_scopes(call):
            raise CetpError("PERMISSION_DENIED", "a required scope was not granted to you")

    def missing_scopes(self, call: ToolCall) -> list[str]:
        """Scopes of `GRANT_SCOPES` the caller UID holds no live grant for."""
        need = [s for s in call.spec.scopes if s in self.GRANT_SCOPES]
        if not need:
            return []
        held = {
            r["scope"]
            for r in self.store.all(
                "SELECT scope FROM grants WHERE uid=? AND expires_ms>?", call.caller.uid, now_ms()
            )
        }
        return [s for s in need if s not in held]

    def describe_grant(self, call: ToolCall, scopes: list[str]) -> ConfirmationScreen:
        catalog = {s.name: s for s in self.scopes()}
        return ConfirmationScreen(
            title="Allow access: "
            + ", ".join(catalog[s].title if s in catalog else s for s in scopes),
            target=self.PROVIDER_NAME,
            action=f"grant {', '.join(scopes)} to UID {call.caller.uid} ({call.caller.package})",
            parameters={"scopes": ",".join(scopes), "tool": call.spec.name},
            consequences="The caller may use these scopes until the grant expires "
            f"({self.GRANT_TTL_MS // 60000} min).",
        )

    def validate_output(self, spec: ToolSpec, value: Any, value_json: str | None = None) -> None:
        """The provider MUST validate its output against output_schema (§4.2)."""
        key = (spec.name, "out", dumps(value) if value_json is None else value_json)
        if key in self._valid_docs:
            return
        if not self.validator(spec.output_schema).is_valid(value):
            raise CetpError("INTERNAL_ERROR", "the provider produced an invalid result")
        self._remember_valid(key)

    def run_read(self, call: ToolCall) -> Any:
        return getattr(self, f"tool_{call.spec.name}")(call)

    async def finish_read(self, call: ToolCall, value: Any) -> Bundle:
        session = call.session
        assert session is not None
        limit = self.inline_limit(session)
        if isinstance(value, JsonFile):
            if value.source.size <= limit:
                value = json.loads(await self.read_small(value.source))
            else:
                return self.file_result(call, value)
        value_json = dumps(value)
        self.validate_output(call.spec, value, value_json)
        encoded = '{"kind":"inline","value":' + value_json + "}"
        if len(encoded.encode("utf-8")) > limit:
            return self.file_result(call, JsonFile(FileSource.from_bytes(value_json.encode())))
        return Bundle(
            status="success", protocol_version=Int(2), data=encoded, request_id=call.request_id
        )

    @staticmethod
    async def read_small(source: FileSource) -> bytes:
        out = bytearray()
        async for c in source.read(65536):
            out.extend(c)
        return bytes(out)

    def file_result(self, call: ToolCall, result: JsonFile) -> Bundle:
        session = call.session
        assert session is not None
        if not session.has("large_results"):
            raise CetpError(
                "RESULT_TOO_LARGE",
                f"the result ({result.source.size} bytes) exceeds max_inline_result_bytes and "
                "large_results was not negotiated",
            )
        handle = call.ctx.file_descriptor(result.source)
        b = v2_success(
            {
                "kind": "file",
                "media_type": result.media_type,
                "size_bytes": result.source.size,
                "sha256": result.source.sha256,
            },
            call.request_id,
        )
        b["result_fd"] = handle
        return b

    # --- dedup (§6) -----------------------------------------------------------------------------
    def lookup_dedup(self, call: ToolCall) -> Bundle | None:
        row = self.store.one(
            "SELECT * FROM dedup WHERE uid=? AND provider_id=? AND request_id=?",
            call.caller.uid,
            self.provider_id,
            call.request_id,
        )
        if row is None:
            return None
        if row["tool"] != call.spec.name or row["args_sha256"] != call.args_sha256:
            raise CetpError(
                "INVALID_REQUEST",
                "this request_id was already used with a different tool or arguments; "
                "use a new request_id for a new execution",
            )
        if row["operation_id"] is not None:
            op = self.store.one(
                "SELECT * FROM operations WHERE operation_id=?", row["operation_id"]
            )
            assert op is not None
            return self.accepted_or_result(call, op)
        return self.outcome_reply(json.loads(row["outcome_json"]), call.request_id)

    def outcome_reply(self, outcome: dict[str, Any], rid: str) -> Bundle:
        if outcome["status"] == "success":
            return v2_success(outcome["data"], rid)
        e = outcome["error"]
        return v2_error(
            CetpError(e["error_code"], e["error_message"], retryable=e["retryable"]), rid
        )

    def store_outcome(
        self, db: sqlite3.Connection, call: ToolCall, outcome: dict[str, Any]
    ) -> None:
        db.execute(
            "INSERT INTO dedup(uid, provider_id, request_id, tool, args_sha256, outcome_json,"
            " created_ms) VALUES (?,?,?,?,?,?,?)",
            (
                call.caller.uid,
                self.provider_id,
                call.request_id,
                call.spec.name,
                call.args_sha256,
                dumps(outcome),
                now_ms(),
            ),
        )

    def record_execution(self, db: sqlite3.Connection, uid: int, rid: str, tool: str) -> None:
        db.execute(
            "INSERT INTO executions(uid, request_id, tool, at_ms) VALUES (?,?,?,?)",
            (uid, rid, tool, now_ms()),
        )

    def execution_count(self, request_id: str | None = None) -> int:
        """How many business side effects happened (for a request id) — tests use this to
        prove nothing executed twice."""
        if request_id is None:
            row = self.store.one("SELECT COUNT(*) AS n FROM executions")
        else:
            row = self.store.one(
                "SELECT COUNT(*) AS n FROM executions WHERE request_id=?", request_id
            )
        return int(row["n"]) if row else 0

    def tool_list_executions(self, call: ToolCall) -> dict[str, Any]:
        """The audit read tool (see `audit_tool`): this caller's side effects, newest first.

        `count` is the total, so an observer keeps seeing each new execution even when the
        list is cut at `limit`; only the caller's own rows are shown (§7.2)."""
        where, params = "uid=?", [call.caller.uid]
        if call.args.get("tool"):
            where, params = where + " AND tool=?", [*params, call.args["tool"]]
        count = self.store.one(f"SELECT COUNT(*) AS n FROM executions WHERE {where}", *params)
        limit = int(call.args.get("limit", AUDIT_DEFAULT_LIMIT))
        rows = self.store.all(
            f"SELECT request_id, tool, at_ms FROM executions WHERE {where}"
            " ORDER BY seq DESC LIMIT ?",
            *params,
            limit,
        )
        return {
            "count": int(count["n"]) if count else 0,
            "executions": [
                {"request_id": r["request_id"], "tool": r["tool"], "at_ms": r["at_ms"]}
                for r in rows
            ],
        }

    def run_mutation(self, call: ToolCall) -> Bundle:
        """Business mutation + dedup record + stored outcome in one transaction."""
        fn = getattr(self, f"tool_{call.spec.name}")
        try:
            with self.store.tx() as db:
                db.execute("SAVEPOINT tool")
                try:
                    value = fn(call, db)
                    self.validate_output(call.spec, value)
                    data = {"kind": "inline", "value": value}
                    outcome: dict[str, Any] = {"status": "success", "data": data}
                    self.record_execution(db, call.caller.uid, call.request_id, call.spec.name)
                    db.execute("RELEASE tool")
                except CetpError as err:
                    # a business refusal is a terminal outcome too: replayed, never re-run;
                    # whatever the tool wrote before refusing is rolled back
                    db.execute("ROLLBACK TO tool")
                    db.execute("RELEASE tool")
                    outcome = {"status": "error", "error": err.as_json()}
                self.store_outcome(db, call, outcome)
        except sqlite3.IntegrityError:
            stored = self.lookup_dedup(call)
            assert stored is not None
            return stored
        call.ctx.fault_after_commit()
        return self.outcome_reply(outcome, call.request_id)

    # --- confirmation (§4.3) --------------------------------------------------------------------
    def confirmation_screen(self, call: ToolCall) -> ConfirmationScreen | None:
        """The screen to show, or None when this call needs no confirmation. `always`
        tools always confirm; `provider_policy` tools decide in `needs_confirmation`."""
        policy = call.spec.annotations.get("confirmation", "never")
        if policy == "always" or (policy == "provider_policy" and self.needs_confirmation(call)):
            return self.describe_confirmation(call)
        return None

    def needs_confirmation(self, call: ToolCall) -> bool:
        return False

    def describe_confirmation(self, call: ToolCall) -> ConfirmationScreen:
        params = {k: str(v)[:200] for k, v in (call.args or {}).items()}
        return ConfirmationScreen(
            title=call.spec.title,
            target=self.PROVIDER_NAME,
            action=call.spec.name,
            parameters=params,
            consequences=call.spec.description,
        )

    def require_confirmation(
        self,
        call: ToolCall,
        screen: ConfirmationScreen,
        kind: str = "confirm",
        scopes: list[str] | None = None,
    ) -> Bundle:
        """USER_ACTION_REQUIRED (or AUTH_REQUIRED for a scope grant) with an immutable
        PendingIntent to the provider's screen and a resume_token (§4.3)."""
        row = self.store.one(
            "SELECT * FROM confirmations WHERE uid=? AND request_id=? AND state='pending'"
            " AND expires_ms>? AND kind=?",
            call.caller.uid,
            call.request_id,
            now_ms(),
            kind,
        )
        if row is None or row["args_sha256"] != call.args_sha256 or row["tool"] != call.spec.name:
            cid = "conf_" + secrets.token_hex(8)
            token = secrets.token_urlsafe(32)
            with self.store.tx() as db:
                db.execute(
                    "INSERT INTO confirmations VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        cid,
                        token,
                        call.caller.uid,
                        call.request_id,
                        call.spec.name,
                        call.args_sha256,
                        screen.model_dump_json(),
                        "pending",
                        now_ms() + self.confirmation_ttl_ms,
                        kind,
                        ",".join(scopes or ()),
                    ),
                )
        else:
            cid, token = row["confirmation_id"], row["resume_token"]
        handle = call.ctx.pending_intent(self.confirmation_activity(cid, screen))
        if kind == "auth":
            err = CetpError(
                "AUTH_REQUIRED",
                "this tool needs a scope you have not granted; grant it in the provider's screen",
                extra=Bundle(resolution=handle, resume_token=token),
            )
        else:
            err = CetpError(
                "USER_ACTION_REQUIRED",
                "this call needs your confirmation in the provider's screen",
                extra=Bundle(resolution=handle, resume_token=token),
            )
        return v2_error(err, call.request_id)

    def confirmation_activity(self, cid: str, screen: ConfirmationScreen) -> PendingActivity:
        async def on_result(approved: bool) -> tuple[int, Bundle | None]:
            with self.store.tx() as db:
                changed = db.execute(
                    "UPDATE confirmations SET state=? WHERE confirmation_id=? AND state='pending'"
                    " AND expires_ms>?",
                    ("approved" if approved else "denied", cid, now_ms()),
                ).rowcount
                row = db.execute(
                    "SELECT uid, kind, scopes FROM confirmations WHERE confirmation_id=?", (cid,)
                ).fetchone()
                if approved and changed and row["kind"] == "auth":
                    expires = now_ms() + self.GRANT_TTL_MS
                    db.executemany(
                        "INSERT OR REPLACE INTO grants VALUES (?,?,?)",
                        [(row["uid"], s, expires) for s in row["scopes"].split(",") if s],
                    )
            return (-1 if approved and changed else 0), None

        return PendingActivity(
            package=self.package,
            component=f"{self.package}.ConfirmActivity",
            screen=screen,
            on_result=on_result,
        )

    def resume_kind(self, token: str) -> str | None:
        row = self.store.one("SELECT kind FROM confirmations WHERE resume_token=?", token)
        return None if row is None else str(row["kind"])

    def consume_resume_token(self, call: ToolCall, token: str, kind: str = "confirm") -> bool:
        """Single-use, bound to caller, tool, request id, args bytes and expiry (§4.3).

        Returns True while the confirmation is still unanswered (ask again); raises
        USER_CANCELLED on denial; returns False once approved (token now used)."""
        row = self.store.one("SELECT * FROM confirmations WHERE resume_token=?", token)
        if row is None or row["uid"] != call.caller.uid:
            raise CetpError("INVALID_REQUEST", "unknown resume_token")
        if row["state"] == "used":
            raise CetpError("INVALID_REQUEST", "this resume_token was already used")
        if row["kind"] != kind:
            raise CetpError("INVALID_REQUEST", "this resume_token answers another question")
        if row["request_id"] != call.request_id or row["tool"] != call.spec.name:
            raise CetpError("INVALID_REQUEST", "the resume_token belongs to another request")
        if row["args_sha256"] != call.args_sha256:
            raise CetpError(
                "INVALID_REQUEST", "the arguments changed since confirmation; confirm again"
            )
        if row["expires_ms"] <= now_ms():
            raise CetpError("INVALID_REQUEST", "the resume_token expired; start a new execution")
        if row["state"] == "pending":
            return True
        self.store.run(
            "UPDATE confirmations SET state='used' WHERE confirmation_id=?",
            row["confirmation_id"],
        )
        if row["state"] == "denied":
            err = CetpError("USER_CANCELLED", "you declined this action in the provider")
            with self.store.tx() as db:
                self.store_outcome(db, call, {"status": "error", "error": err.as_json()})
            raise err
        return False

    # --- async operations (§4.4) ----------------------------------------------------------------
    def runs_as_operation(self, spec: ToolSpec) -> bool:
        return hasattr(self, f"op_{spec.name}")

    async def start_operation(self, call: ToolCall) -> Bundle:
        op_id = "op_" + secrets.token_hex(8)
        t = now_ms()
        try:
            with self.store.tx() as db:
                db.execute(
                    "INSERT INTO operations(operation_id, uid, request_id, tool, args_json,"
                    " state, created_ms, updated_ms) VALUES (?,?,?,?,?,?,?,?)",
                    (
                        op_id,
                        call.caller.uid,
                        call.request_id,
                        call.spec.name,
                        call.args_text,
                        "queued",
                        t,
                        t,
                    ),
                )
                db.execute(
                    "INSERT INTO dedup(uid, provider_id, request_id, tool, args_sha256,"
                    " operation_id, created_ms) VALUES (?,?,?,?,?,?,?)",
                    (
                        call.caller.uid,
                        self.provider_id,
                        call.request_id,
                        call.spec.name,
                        call.args_sha256,
                        op_id,
                        t,
                    ),
                )
        except sqlite3.IntegrityError:
            stored = self.lookup_dedup(call)
            assert stored is not None
            return stored
        task = self._start_operation(op_id)
        assert call.session is not None
        if not call.session.has("async_operations"):
            # not negotiated: the consumer waits for the synchronous outcome (§3.4)
            await asyncio.shield(task)
        op = self.store.one("SELECT * FROM operations WHERE operation_id=?", op_id)
        assert op is not None
        return self.accepted_or_result(call, op)

    def accepted_or_result(self, call: ToolCall, op: sqlite3.Row) -> Bundle:
        assert call.session is not None
        if call.session.has("async_operations"):
            return v2_success(
                {"operation_id": op["operation_id"], "poll_after_ms": self.POLL_AFTER_MS},
                call.request_id,
                status="accepted",
            )
        if op["state"] == "succeeded":
            return v2_success(json.loads(op["result_json"]), call.request_id)
        if op["state"] in ("failed", "cancelled"):
            e = json.loads(op["error_json"])
            return v2_error(
                CetpError(e["error_code"], e["error_message"], retryable=e["retryable"]),
                call.request_id,
            )
        raise CetpError(
            "UNAVAILABLE",
            "the execution is still running; retry with the same request_id",
            retry_after_ms=self.POLL_AFTER_MS,
        )

    def _start_operation(self, op_id: str) -> asyncio.Task[Any]:
        existing = self._op_tasks.get(op_id)
        if existing is not None and not existing.done():
            return existing
        task = self.spawn(self._run_operation(op_id), f"operation-{op_id}")
        self._op_tasks[op_id] = task
        return task

    async def _run_operation(self, op_id: str) -> None:
        row = self.store.one("SELECT * FROM operations WHERE operation_id=?", op_id)
        if row is None or row["state"] in TERMINAL_STATES:
            return
        op = Operation(
            provider=self,
            operation_id=op_id,
            uid=row["uid"],
            request_id=row["request_id"],
            tool=row["tool"],
            args=json.loads(row["args_json"]),
            progress_current=row["progress_current"],
            progress_total=row["progress_total"],
        )
        if row["committed"]:
            op.succeed()  # died after its commit point: the effect is in, nothing re-runs
            return
        self.store.run(
            "UPDATE operations SET state='running', updated_ms=? WHERE operation_id=?",
            now_ms(),
            op_id,
        )
        try:
            await getattr(self, f"op_{row['tool']}")(op)
            if not op._committed:
                raise CetpError("INTERNAL_ERROR", "the operation ended without a result")
            op.succeed()
        except OperationCancelled:
            err = CetpError("CANCELLED", "the operation was cancelled before it took effect")
            self._finish_operation(op_id, "cancelled", err)
        except CetpError as err:
            self._finish_operation(op_id, "failed", err)

    def _finish_operation(self, op_id: str, state: str, err: CetpError) -> None:
        self.store.run(
            "UPDATE operations SET state=?, error_json=?, updated_ms=? WHERE operation_id=?"
            " AND committed=0",
            state,
            dumps(err.as_json()),
            now_ms(),
            op_id,
        )

    def _operation_for(self, ctx: CallContext, extras: Bundle, rid: str) -> sqlite3.Row:
        op_id = extras.get("operation_id")
        if not isinstance(op_id, str):
            raise CetpError("INVALID_REQUEST", "operation_id (String) is required")
        row = self.store.one("SELECT * FROM operations WHERE operation_id=?", op_id)
        # bound to the calling UID and the creating request id (§4.1, §4.4)
        if row is None or row["uid"] != ctx.caller.uid or row["request_id"] != rid:
            raise CetpError(
                "INVALID_REQUEST",
                "no such operation for this caller and request_id (use the request_id of the "
                "execute_tool call that created it)",
            )
        return row

    def get_operation(self, ctx: CallContext, session: Session, extras: Bundle, rid: str) -> Bundle:
        if not session.has("async_operations"):
            raise CetpError("UNSUPPORTED_CAPABILITY", "async_operations was not negotiated")
        row = self._operation_for(ctx, extras, rid)
        return v2_success(self.operation_state(row), rid)

    def operation_state(self, row: sqlite3.Row) -> dict[str, Any]:
        state = row["state"]
        out: dict[str, Any] = {"operation_id": row["operation_id"], "state": state}
        if row["progress_total"]:
            out["progress"] = {
                "current": row["progress_current"],
                "total": row["progress_total"],
                "message": row["progress_message"],
            }
        if state not in TERMINAL_STATES:
            out["poll_after_ms"] = self.POLL_AFTER_MS
        elif state == "succeeded":
            out["result"] = json.loads(row["result_json"])
        else:
            out["error"] = json.loads(row["error_json"])
        return out

    def cancel_operation(
        self, ctx: CallContext, session: Session, extras: Bundle, rid: str
    ) -> Bundle:
        if not session.has("cancellation"):
            raise CetpError("UNSUPPORTED_CAPABILITY", "cancellation was not negotiated")
        row = self._operation_for(ctx, extras, rid)
        if row["committed"] or row["state"] in ("succeeded", "failed"):
            raise CetpError(
                "CONFLICT",
                f"the operation is {row['state']} and its effect is final; it cannot be cancelled",
            )
        self.store.run(
            "UPDATE operations SET cancel_requested=1, updated_ms=? WHERE operation_id=?",
            now_ms(),
            row["operation_id"],
        )
        return v2_success(
            {"operation_id": row["operation_id"], "state": "cancellation_requested"}, rid
        )

    # --- v1 (reference notes) -------------------------------------------------------------------
    def v1_tools(self) -> list[ToolSpec]:
        """A dual-stack provider lists only read-only tools to v1 (§2.1)."""
        return [s for s in self.tool_specs() if s.in_v1 and s.is_read]

    def v1_provider_info(self) -> dict[str, Any]:
        return {
            "provider_name": self.PROVIDER_NAME,
            "description": self.DESCRIPTION,
            "scopes": [{"name": s.name, "description": s.description} for s in self.scopes()],
        }

    async def handle_v1(self, ctx: CallContext, method: str, extras: Bundle) -> Bundle:
        if method == "list_tools":
            return v1_success(
                {
                    "tools": [
                        {"name": s.name, "description": s.description, "parameters": s.input_schema}
                        for s in self.v1_tools()
                    ]
                }
            )
        if method == "get_provider_info":
            return v1_success(self.v1_provider_info())
        if method != "execute_tool":
            return v1_error("TOOL_NOT_FOUND", f"unknown method {method[:64]!r}")
        name = extras.get("tool_name")
        if not isinstance(name, str) or not name:
            return v1_error("INVALID_ARGS", "tool_name is required")
        spec = next((s for s in self.v1_tools() if s.name == name), None)
        if spec is None:
            return v1_error("TOOL_NOT_FOUND", f"no tool named {name[:64]!r}")
        args_text = extras.get("args")
        args_text = args_text if isinstance(args_text, str) else "{}"
        rid = extras.get("request_id")
        try:
            args = self.parse_args(spec, args_text)
            rid_text = rid if isinstance(rid, str) else ""
            call = ToolCall(ctx, None, spec, args, args_text, rid_text, None)
            value = self.run_read(call)
            if isinstance(value, JsonFile):
                if value.source.size > self.LIMITS["max_inline_result_bytes"]:
                    raise CetpError("INTERNAL_ERROR", "the result is too large for CETP v1")
                return v1_success((await self.read_small(value.source)).decode("utf-8"))
            return v1_success(value)
        except CetpError as err:
            return v1_error(err.code, err.message)
