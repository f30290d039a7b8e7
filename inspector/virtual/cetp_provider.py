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
import hashlib
import json
import secrets
from typing import Any

import jsonschema
import referencing.exceptions

from inspector.protocol.bundle import Bundle, Int, IntArray, Long
from inspector.virtual.app import (
    CallContext,
    ConfirmationScreen,
    FileSource,
    VirtualApp,
)
from inspector.virtual.cetp_confirm import ConfirmationMixin
from inspector.virtual.cetp_dedup import DedupMixin
from inspector.virtual.cetp_model import (  # noqa: F401 - re-exported for plugins
    AUDIT_DEFAULT_LIMIT,
    AUDIT_MAX_LIMIT,
    OPTIONAL_CAPABILITIES,
    SCHEMA_DIALECT,
    TERMINAL_STATES,
    V2_METHODS,
    JsonFile,
    Operation,
    OperationCancelled,
    Scope,
    Session,
    ToolCall,
    ToolSpec,
    _iso,
    _uuid_ok,
    audit_tool,
)
from inspector.virtual.cetp_operations import OperationsMixin
from inspector.virtual.cetp_v1 import V1Mixin
from inspector.virtual.cetp_wire import (
    CetpError,
    dumps,
    v2_error,
    v2_success,
)
from inspector.virtual.logcat import app_log
from inspector.virtual.manifest import (
    ACCESS_TOOLS_DECL,
    PackageManifest,
    cetp_provider,
    cetp_service,
)
from inspector.virtual.store import Store, now_ms


class CetpProvider(DedupMixin, ConfirmationMixin, OperationsMixin, V1Mixin, VirtualApp):
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
        app_log(self, "D", "CetpProvider", f"call {method[:64]} from uid {ctx.caller.uid}")
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
            app_log(self, "W", "CetpProvider", f"{method[:64]} failed: {err}"[:500])
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

