"""CETP v1/v2 on the wire: constants, pydantic models, reply parsing and request builders.

Everything here is pure (no I/O). Parsing follows the spec's two rules (§3.2):

- tolerant: unknown fields anywhere in a descriptor or envelope are ignored;
- strict: a missing required field, a value of the wrong JSON or Bundle type, or an unknown
  *security* enum value (access, sensitivity, effect, risk, confirmation, execution) is a
  `ProtocolViolation` naming the field by its dotted path and the spec section.

Every parser either returns a model or raises `ProtocolViolation` — never anything else
(hypothesis tests in `tests/protocol/` hold us to that).
"""

from __future__ import annotations

import json
import math
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    model_validator,
)

from inspector.protocol.bundle import (
    Bundle,
    FileDescriptorHandle,
    Int,
    IntArray,
    Long,
    PendingIntentHandle,
    to_jsonable,
    type_name,
)

# --------------------------------------------------------------------------------------
# Constants
# --------------------------------------------------------------------------------------

#: Discovery intent action of a CETP provider's Service (v1 and v2, §2.1).
ACTION_TOOL_PROVIDER = "com.clawseed.action.TOOL_PROVIDER"
#: Service meta-data: the ContentProvider authority (String).
META_AUTHORITY = "com.clawseed.tools.authority"
#: Service meta-data: legacy single version (read with getInt, default 1).
META_VERSION = "com.clawseed.tools.version"
#: Service meta-data: comma-separated supported major versions, e.g. "1,2" (authoritative).
META_VERSIONS = "com.clawseed.tools.versions"
#: Discovery marker permission (protectionLevel normal; not an identity boundary, §7.1).
PERMISSION_ACCESS_TOOLS = "com.clawseed.permission.ACCESS_TOOLS"

# Methods (§4)
NEGOTIATE = "negotiate"
GET_PROVIDER_INFO = "get_provider_info"
LIST_TOOLS = "list_tools"
EXECUTE_TOOL = "execute_tool"
GET_OPERATION = "get_operation"
CANCEL_OPERATION = "cancel_operation"
CORE_METHODS = (NEGOTIATE, GET_PROVIDER_INFO, LIST_TOOLS, EXECUTE_TOOL)
V1_METHODS = (GET_PROVIDER_INFO, LIST_TOOLS, EXECUTE_TOOL)
ALL_METHODS = (*CORE_METHODS, GET_OPERATION, CANCEL_OPERATION)

# Optional capabilities (§2.3)
CAP_ASYNC = "async_operations"
CAP_CANCEL = "cancellation"
CAP_LARGE = "large_results"
KNOWN_CAPABILITIES = frozenset({CAP_ASYNC, CAP_CANCEL, CAP_LARGE})
#: Which capability a method needs (None = core).
METHOD_CAPABILITY: dict[str, str | None] = {
    NEGOTIATE: None,
    GET_PROVIDER_INFO: None,
    LIST_TOOLS: None,
    EXECUTE_TOOL: None,
    GET_OPERATION: CAP_ASYNC,
    CANCEL_OPERATION: CAP_CANCEL,
}

#: The protocol versions this inspector speaks, highest first.
SUPPORTED_VERSIONS = (2, 1)

#: JSON Schema Draft 2020-12, the v2 default dialect (§3.2).
DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"

#: Negotiated limits must be at least these (§2.2).
LIMIT_MINIMUMS: dict[str, int] = {
    "max_request_bytes": 65536,
    "max_inline_result_bytes": 262144,
    "max_concurrent_requests": 1,
    "idempotency_window_seconds": 86400,
}

#: session_token maximum length in UTF-8 bytes (§2.2).
MAX_SESSION_TOKEN_BYTES = 256

#: Tool name pattern (§3.1) and scope name pattern (§3.2), both matched in full.
TOOL_NAME_PATTERN = r"[a-z][a-z0-9_]{0,63}"
SCOPE_NAME_PATTERN = r"[a-z][a-z0-9_.-]{0,127}"

# Reply Bundle status values
STATUS_SUCCESS = "success"
STATUS_ACCEPTED = "accepted"
STATUS_ERROR = "error"
STATUSES = (STATUS_SUCCESS, STATUS_ACCEPTED, STATUS_ERROR)

SPEC = "CETP v2"


# --------------------------------------------------------------------------------------
# Violations
# --------------------------------------------------------------------------------------


class ProtocolViolation(Exception):
    """Something on the wire broke the protocol.

    `field` is a dotted path into what was parsed (`data.limits.max_request_bytes`,
    `tools[2].annotations.risk`, `retryable`), `message` says what is wrong in plain words,
    `section` names the spec section (`§2.2`), `spec` the document (`CETP v2`, `AndyClaw`).
    `errors` lists every (field, message) pair found, first one first.
    """

    def __init__(
        self,
        field: str,
        message: str,
        section: str = "",
        *,
        spec: str = SPEC,
        errors: Sequence[tuple[str, str]] | None = None,
    ) -> None:
        self.field = field
        self.message = message
        self.section = section
        self.spec = spec
        self.errors: list[tuple[str, str]] = list(errors) if errors else [(field, message)]
        super().__init__(self._render())

    def _render(self) -> str:
        head = f"{self.field}: {self.message}" if self.field else self.message
        if self.section:
            return f"{head} ({self.spec} {self.section})"
        return head

    def __str__(self) -> str:
        return self._render()

    def __reduce__(self) -> Any:  # picklable despite keyword arguments
        return (
            _rebuild_violation,
            (self.field, self.message, self.section, self.spec, self.errors),
        )

    def with_prefix(self, prefix: str) -> ProtocolViolation:
        """The same violation with `prefix` prepended to every field path."""
        return ProtocolViolation(
            _join(prefix, self.field),
            self.message,
            self.section,
            spec=self.spec,
            errors=[(_join(prefix, f), m) for f, m in self.errors],
        )


def _rebuild_violation(
    field: str, message: str, section: str, spec: str, errors: list[tuple[str, str]]
) -> ProtocolViolation:
    return ProtocolViolation(field, message, section, spec=spec, errors=errors)


def _join(prefix: str, path: str) -> str:
    if not prefix:
        return path
    if not path:
        return prefix
    if path.startswith("["):
        return prefix + path
    return f"{prefix}.{path}"


def json_type(value: Any) -> str:
    """The JSON type name of a decoded value ("object", "array", "string", …)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return type(value).__name__


SECURITY_ENUM_FIELDS = frozenset(
    {"access", "sensitivity", "effect", "risk", "confirmation", "execution"}
)

_TYPE_WORDS = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "float_type": "a number",
    "string_type": "a string",
    "bool_type": "a boolean",
    "list_type": "an array",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "dataclass_type": "an object",
    "is_instance_of": "a handle",
}


def _loc_path(loc: Sequence[Any]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            # pydantic adds union member / tag names to locations; keep only field names
            s = str(part)
            if s in {"inline", "file"} or s.startswith(("function-", "is-instance[")):
                continue
            if s in {"int", "float", "str", "bool", "none", "dict[str,any]", "list[any]"}:
                continue
            out = f"{out}.{s}" if out else s
    return out


def _error_message(err: Mapping[str, Any]) -> str:
    typ = err.get("type", "")
    loc = err.get("loc", ())
    last = next((str(p) for p in reversed(loc) if isinstance(p, str)), "")
    value = err.get("input")
    if typ == "missing":
        return "missing required field"
    if typ in {"enum", "literal_error"}:
        expected = (err.get("ctx") or {}).get("expected", "")
        kind = "unknown security enum value" if last in SECURITY_ENUM_FIELDS else "unknown value"
        return f"{kind} {_short(value)} (allowed: {expected})"
    if typ in {"union_tag_invalid"}:
        expected = (err.get("ctx") or {}).get("expected_tags", "")
        return f"unknown value {_short((err.get('ctx') or {}).get('tag'))} (allowed: {expected})"
    if typ == "union_tag_not_found":
        return "missing required field"
    if typ in _TYPE_WORDS:
        return f"expected {_TYPE_WORDS[typ]}, got {json_type(value)}"
    if typ == "greater_than_equal":
        return f"must be ≥ {(err.get('ctx') or {}).get('ge')}, got {_short(value)}"
    if typ == "greater_than":
        return f"must be > {(err.get('ctx') or {}).get('gt')}, got {_short(value)}"
    if typ == "string_pattern_mismatch" and last == "sha256":
        return f"must be 64 lowercase hex digits, got {_short(value)}"
    if typ == "string_pattern_mismatch":
        return f"{_short(value)} does not match {(err.get('ctx') or {}).get('pattern', '')}"
    if typ == "value_error":
        return str(err.get("msg", "")).removeprefix("Value error, ")
    return str(err.get("msg", typ))


def _short(value: Any, limit: int = 60) -> str:
    try:
        r = json.dumps(value, ensure_ascii=True)
    except (TypeError, ValueError):
        r = repr(value)
    return r if len(r) <= limit else r[: limit - 1] + "…"


def violation_from_validation(
    exc: ValidationError, prefix: str, section: str, *, spec: str = SPEC
) -> ProtocolViolation:
    """Turn a pydantic ValidationError into one readable ProtocolViolation."""
    pairs: list[tuple[str, str]] = []
    for err in exc.errors(include_url=False):
        path = _join(prefix, _loc_path(err.get("loc", ())))
        if err.get("type") in {"union_tag_invalid", "union_tag_not_found"}:
            path = _join(path, "kind")
        pair = (path, _error_message(err))
        if pair not in pairs:
            pairs.append(pair)
    if not pairs:  # pragma: no cover - pydantic always reports at least one error
        pairs.append((prefix, str(exc)))
    # missing fields and security enums first: they are the spec's headline rules
    pairs.sort(key=lambda p: 0 if "security enum" in p[1] or "missing" in p[1] else 1)
    f, m = pairs[0]
    return ProtocolViolation(f, m, section, spec=spec, errors=pairs)


# --------------------------------------------------------------------------------------
# Enums
# --------------------------------------------------------------------------------------


class ScopeAccess(StrEnum):
    READ = "read"
    WRITE = "write"


class ScopeSensitivity(StrEnum):
    PUBLIC = "public"
    PERSONAL = "personal"
    FINANCIAL = "financial"
    HEALTH = "health"
    DEVICE = "device"
    OTHER = "other"


class Effect(StrEnum):
    READ = "read"
    CREATE = "create"
    UPDATE = "update"
    DELETE = "delete"
    TRANSACTION = "transaction"


class Risk(StrEnum):
    LOW = "low"
    MODERATE = "moderate"
    HIGH = "high"


class Confirmation(StrEnum):
    NEVER = "never"
    PROVIDER_POLICY = "provider_policy"
    ALWAYS = "always"


class Execution(StrEnum):
    SYNC = "sync"
    SYNC_OR_ASYNC = "sync_or_async"


class OpState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"
    #: not a state of the operation: cancel_operation's acknowledgement (§4.4)
    CANCELLATION_REQUESTED = "cancellation_requested"


TERMINAL_STATES = frozenset({OpState.SUCCEEDED, OpState.FAILED, OpState.CANCELLED})


# --------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------

NonNegInt = Annotated[StrictInt, Field(ge=0)]
Number = StrictInt | StrictFloat
JsonObject = dict[str, Any]


class _Wire(BaseModel):
    """Base for wire models: unknown fields ignored (§3.2)."""

    model_config = ConfigDict(extra="ignore", arbitrary_types_allowed=True)


class Limits(_Wire):
    max_request_bytes: StrictInt
    max_inline_result_bytes: StrictInt
    max_concurrent_requests: StrictInt
    idempotency_window_seconds: StrictInt

    def below_minimum(self) -> dict[str, tuple[int, int]]:
        """{field: (value, minimum)} for each limit under the §2.2 minimum."""
        return {
            k: (getattr(self, k), m)
            for k, m in LIMIT_MINIMUMS.items()
            if getattr(self, k) < m
        }


class NegotiateResult(_Wire):
    selected_version: StrictInt
    session_token: StrictStr
    capabilities: list[StrictStr]
    limits: Limits
    provider_id: StrictStr = ""
    provider_name: StrictStr = ""
    expires_at: StrictStr | None = None

    def has(self, capability: str) -> bool:
        return capability in self.capabilities


class Scope(_Wire):
    name: StrictStr
    access: ScopeAccess
    sensitivity: ScopeSensitivity
    title: StrictStr = ""
    description: StrictStr = ""


class ProviderInfo(_Wire):
    """v2 get_provider_info (§3.2)."""

    provider_id: StrictStr
    description: StrictStr
    scopes: list[Scope]
    provider_name: StrictStr = ""
    schema_dialect: StrictStr = DRAFT_2020_12

    def scope(self, name: str) -> Scope | None:
        return next((s for s in self.scopes if s.name == name), None)


class V1Scope(_Wire):
    name: StrictStr
    description: StrictStr = ""


class V1ProviderInfo(_Wire):
    """v1 get_provider_info (optional method): `{provider_name, description, scopes}`."""

    provider_name: StrictStr = ""
    description: StrictStr = ""
    scopes: list[V1Scope] = Field(default_factory=list)


class Annotations(_Wire):
    """Tool annotations (§3.4).

    `effect`, `risk`, `idempotent` and `confirmation` are required. `destructive`,
    `open_world` (default false) and `execution` (default sync) may be absent — the SDK's
    own example omits them — and `defaulted` says which were, so rules can report it.
    """

    effect: Effect
    risk: Risk
    idempotent: StrictBool
    confirmation: Confirmation
    destructive: StrictBool = False
    open_world: StrictBool = False
    execution: Execution = Execution.SYNC

    @property
    def defaulted(self) -> frozenset[str]:
        return frozenset({"destructive", "open_world", "execution"} - self.model_fields_set)

    @property
    def side_effecting(self) -> bool:
        return self.effect != Effect.READ

    @property
    def needs_confirmation_always(self) -> bool:
        """§3.4: delete, transaction, destructive or high risk ⇒ confirmation=always."""
        return (
            self.effect in (Effect.DELETE, Effect.TRANSACTION)
            or self.destructive
            or self.risk == Risk.HIGH
        )

    @property
    def mutating_or_risky(self) -> bool:
        """True for anything the conformance suite must not call without permission."""
        return self.side_effecting or self.destructive or self.risk == Risk.HIGH


class ToolDescriptor(_Wire):
    name: StrictStr
    description: StrictStr
    input_schema: JsonObject
    annotations: Annotations
    title: StrictStr = ""
    output_schema: JsonObject | StrictBool | None = None
    scopes: list[StrictStr] = Field(default_factory=list)


class ToolList(_Wire):
    revision: StrictStr
    tools: list[ToolDescriptor]

    def tool(self, name: str) -> ToolDescriptor | None:
        return next((t for t in self.tools if t.name == name), None)


class V1Tool(_Wire):
    name: StrictStr
    description: StrictStr = ""
    parameters: JsonObject = Field(default_factory=dict)


class V1ToolList(_Wire):
    tools: list[V1Tool]

    def tool(self, name: str) -> V1Tool | None:
        return next((t for t in self.tools if t.name == name), None)


class InlineResult(_Wire):
    kind: Literal["inline"]
    value: Any


class FileResult(_Wire):
    kind: Literal["file"]
    media_type: StrictStr
    size_bytes: NonNegInt
    sha256: Annotated[StrictStr, Field(pattern=r"^[0-9a-f]{64}$")]


ResultEnvelope = Annotated[InlineResult | FileResult, Field(discriminator="kind")]


class Accepted(_Wire):
    operation_id: StrictStr
    poll_after_ms: NonNegInt | None = None


class Progress(_Wire):
    current: Number | None = None
    total: Number | None = None
    message: StrictStr | None = None

    @property
    def fraction(self) -> float | None:
        if self.current is None or not self.total:
            return None
        f = float(self.current) / float(self.total)
        return f if math.isfinite(f) else None


class ErrorInfo(_Wire):
    """A structured error (§5), from a reply Bundle or an operation's `error` object.

    `retryable` is None only for v1 errors (v1 has no such field). `resolution` is the
    PendingIntent handle of AUTH_REQUIRED / USER_ACTION_REQUIRED (§4.3); v1 providers use
    `resolution_hint` and the implicit `authorize_intent` action string instead.
    """

    error_code: StrictStr
    error_message: StrictStr = ""
    retryable: StrictBool | None = None
    retry_after_ms: StrictInt | None = None
    error_details: Any = None
    resolution: PendingIntentHandle | None = None
    resume_token: StrictStr | None = None
    resolution_hint: StrictStr | None = None
    authorize_intent: StrictStr | None = None


class OperationState(_Wire):
    """get_operation / cancel_operation data (§4.4)."""

    operation_id: StrictStr
    state: OpState
    progress: Progress | None = None
    poll_after_ms: NonNegInt | None = None
    result: ResultEnvelope | None = None
    error: ErrorInfo | None = None

    @model_validator(mode="after")
    def _terminal_payload(self) -> OperationState:
        if self.state == OpState.SUCCEEDED and self.result is None:
            raise ValueError("missing required field 'result' (state is succeeded)")
        if self.state == OpState.FAILED and self.error is None:
            raise ValueError("missing required field 'error' (state is failed)")
        return self

    @property
    def is_terminal(self) -> bool:
        return self.state in TERMINAL_STATES

    @property
    def is_cancel_ack(self) -> bool:
        return self.state == OpState.CANCELLATION_REQUESTED


# --------------------------------------------------------------------------------------
# Parsing decoded data
# --------------------------------------------------------------------------------------


def _validate(model: type[BaseModel], data: Any, prefix: str, section: str) -> Any:
    if not isinstance(data, Mapping):
        raise ProtocolViolation(prefix, f"expected a JSON object, got {json_type(data)}", section)
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        raise violation_from_validation(exc, prefix, section) from None
    except (RecursionError, ValueError, TypeError) as exc:
        raise ProtocolViolation(prefix, f"cannot be parsed: {exc}", section) from None


def decode_json(text: Any, field: str = "data", section: str = "§4.2") -> Any:
    """Decode a JSON text from the wire; non-JSON → ProtocolViolation naming `field`."""
    if not isinstance(text, str):
        raise ProtocolViolation(field, f"expected a JSON string, got {type_name(text)}", section)

    def _no_constants(c: str) -> Any:
        raise ValueError(f"{c} is not valid JSON")

    try:
        return json.loads(text, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        raise ProtocolViolation(field, f"not valid JSON ({exc.msg} at char {exc.pos})",
                                section) from None
    except (ValueError, RecursionError) as exc:
        raise ProtocolViolation(field, f"not valid JSON ({exc})", section) from None


def parse_negotiate(data: Any, prefix: str = "data") -> NegotiateResult:
    return _validate(NegotiateResult, data, prefix, "§2.2")


def parse_provider_info(
    data: Any, v2: bool = True, prefix: str = "data"
) -> ProviderInfo | V1ProviderInfo:
    if v2:
        return _validate(ProviderInfo, data, prefix, "§3.2")
    return _validate(V1ProviderInfo, data, prefix, "§3.2")


def parse_tool_list(data: Any, prefix: str = "data") -> ToolList:
    """Strict: the first bad tool rejects the list (use `parse_tool_list_lenient` to keep
    the good tools and report the bad ones)."""
    try:
        return _validate(ToolList, data, prefix, "§3.3")
    except ProtocolViolation as v:
        if ".annotations" in v.field:
            v.section = "§3.4"
            v.args = (str(v),)
        raise


def parse_tool_list_lenient(
    data: Any, prefix: str = "data"
) -> tuple[ToolList, list[ProtocolViolation]]:
    """Parse a v2 tool list keeping the valid tools; each invalid tool is one violation.

    The envelope itself (an object with a string `revision` and a `tools` array) must be
    valid, else ProtocolViolation is raised.
    """
    if not isinstance(data, Mapping):
        raise ProtocolViolation(prefix, f"expected a JSON object, got {json_type(data)}", "§3.3")
    tools = data.get("tools")
    if "revision" not in data:
        raise ProtocolViolation(_join(prefix, "revision"), "missing required field", "§3.3")
    if not isinstance(data.get("revision"), str):
        raise ProtocolViolation(
            _join(prefix, "revision"),
            f"expected a string, got {json_type(data.get('revision'))}", "§3.3")
    if "tools" not in data:
        raise ProtocolViolation(_join(prefix, "tools"), "missing required field", "§3.3")
    if not isinstance(tools, list):
        raise ProtocolViolation(
            _join(prefix, "tools"), f"expected an array, got {json_type(tools)}", "§3.3")
    good: list[ToolDescriptor] = []
    bad: list[ProtocolViolation] = []
    for i, t in enumerate(tools):
        p = f"{_join(prefix, 'tools')}[{i}]"
        try:
            tool = _validate(ToolDescriptor, t, p, "§3.3")
        except ProtocolViolation as v:
            if ".annotations" in v.field:
                v = ProtocolViolation(v.field, v.message, "§3.4", errors=v.errors)
            bad.append(v)
        else:
            good.append(tool)
    return ToolList(revision=data["revision"], tools=good), bad


def parse_v1_tool_list(data: Any, prefix: str = "data") -> V1ToolList:
    return _validate(V1ToolList, data, prefix, "§8")


def parse_result_envelope(data: Any, prefix: str = "data") -> InlineResult | FileResult:
    if not isinstance(data, Mapping):
        raise ProtocolViolation(prefix, f"expected a JSON object, got {json_type(data)}", "§4.2")
    kind = data.get("kind")
    if "kind" not in data:
        raise ProtocolViolation(_join(prefix, "kind"), "missing required field", "§4.2")
    if kind == "inline":
        return _validate(InlineResult, data, prefix, "§4.2")
    if kind == "file":
        return _validate(FileResult, data, prefix, "§4.5")
    raise ProtocolViolation(
        _join(prefix, "kind"), f"unknown result kind {_short(kind)} (allowed: 'inline', 'file')",
        "§4.2")


def parse_accepted(data: Any, prefix: str = "data") -> Accepted:
    return _validate(Accepted, data, prefix, "§4.4")


def parse_operation(data: Any, prefix: str = "data", *, v2: bool = True) -> OperationState:
    if isinstance(data, Mapping):
        for state, key in (("succeeded", "result"), ("failed", "error")):
            if data.get("state") == state and data.get(key) is None:
                raise ProtocolViolation(
                    _join(prefix, key), f"missing required field (state is {state})", "§4.4")
    op: OperationState = _validate(OperationState, data, prefix, "§4.4")
    if v2 and op.error is not None and op.error.retryable is None:
        raise ProtocolViolation(_join(prefix, "error.retryable"), "missing required field", "§5")
    return op


def parse_error_object(data: Any, prefix: str = "error", *, v2: bool = True) -> ErrorInfo:
    """An error as a JSON object (an operation's `error`)."""
    err: ErrorInfo = _validate(ErrorInfo, data, prefix, "§5")
    if v2 and err.retryable is None:
        raise ProtocolViolation(_join(prefix, "retryable"), "missing required field", "§5")
    return err


# --------------------------------------------------------------------------------------
# Reply Bundles
# --------------------------------------------------------------------------------------

_ABSENT: Any = object()


@dataclass
class Reply:
    """A decoded reply Bundle of `ContentResolver.call` (§4.2, §4.4, §5).

    `data` is the raw `data` String, `decoded` its JSON value (None when absent; check
    `has_data`). `problems` holds non-fatal deviations (a missing echo, a `long` where an
    `int` belongs) — fatal ones raise ProtocolViolation from `parse_reply` instead.
    """

    status: str
    bundle: Bundle
    protocol_version: int | None = None
    request_id: str | None = None
    data: str | None = None
    decoded: Any = None
    error: ErrorInfo | None = None
    result_fd: FileDescriptorHandle | None = None
    problems: list[ProtocolViolation] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == STATUS_SUCCESS

    @property
    def accepted(self) -> bool:
        return self.status == STATUS_ACCEPTED

    @property
    def is_error(self) -> bool:
        return self.status == STATUS_ERROR

    @property
    def has_data(self) -> bool:
        return self.data is not None

    @property
    def error_code(self) -> str | None:
        return self.error.error_code if self.error else None


def _get_typed(
    b: Mapping[str, Any], key: str, types: type | tuple[type, ...], want: str, section: str
) -> Any:
    v = b.get(key, _ABSENT)
    if v is _ABSENT or v is None:
        return None
    if not isinstance(v, types) or (isinstance(v, bool) and bool not in _as_tuple(types)):
        raise ProtocolViolation(key, f"expected {want}, got {type_name(v)}", section)
    return v


def _as_tuple(t: type | tuple[type, ...]) -> tuple[type, ...]:
    return t if isinstance(t, tuple) else (t,)


def _optional_number(b: Bundle, key: str, java: type, java_name: str, section: str,
                     problems: list[ProtocolViolation]) -> int | None:
    """An optional integer field: absent/null → None; not an integer → violation; an
    integer of the other Java width (int vs long) is accepted but noted in `problems`."""
    v = b.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise ProtocolViolation(key, f"expected {java_name}, got {type_name(v)}", section)
    if not isinstance(v, java):
        problems.append(ProtocolViolation(
            key, f"expected Bundle type {java_name}, got {type_name(v)}", section))
    return int(v)


def parse_reply(
    bundle: Bundle | None,
    *,
    v2: bool,
    request_id: str | None = None,
    method: str | None = None,
) -> Reply:
    """Decode a provider's reply Bundle.

    `v2` selects the v2 rules (structured errors need `retryable`, `accepted` allowed).
    `request_id`, when given, is what the request carried: the reply must echo it and
    `protocol_version` 2 (§4.2, §5); a wrong echo is fatal, a missing one a problem.
    Raises ProtocolViolation for a null Bundle, an unknown status, a missing or non-JSON
    `data`, and values of the wrong Bundle type.
    """
    if bundle is None:
        raise ProtocolViolation("reply", "the provider returned a null Bundle", "§4.2")
    if not isinstance(bundle, Mapping):
        raise ProtocolViolation("reply", f"expected a Bundle, got {type_name(bundle)}", "§4.2")
    b: Mapping[str, Any] = bundle
    problems: list[ProtocolViolation] = []

    if "status" not in b or b.get("status") is None:
        raise ProtocolViolation("status", "missing required field", "§4.2")
    status = b["status"]
    if not isinstance(status, str):
        raise ProtocolViolation("status", f"expected String, got {type_name(status)}", "§4.2")
    if status not in STATUSES:
        raise ProtocolViolation(
            "status", f"{_short(status)} is neither 'success', 'accepted' nor 'error'", "§4.2")
    if status == STATUS_ACCEPTED and not v2:
        raise ProtocolViolation("status", "'accepted' is not a v1 status", "§4.4")

    # echoed envelope fields
    protocol_version = _optional_number(b, "protocol_version", Int, "int", "§4.1", problems)
    if protocol_version is not None:
        if v2 and request_id is not None and protocol_version != 2:
            raise ProtocolViolation(
                "protocol_version",
                f"the provider answered protocol_version {protocol_version} to a v2 request "
                "(it must not silently interpret the request as another version)", "§2.2")
    elif v2 and request_id is not None:
        problems.append(ProtocolViolation(
            "protocol_version", "missing: a v2 reply must echo protocol_version 2", "§5"))

    rid = _get_typed(b, "request_id", str, "String", "§4.1")
    if v2 and request_id is not None:
        if rid is None:
            problems.append(ProtocolViolation(
                "request_id", "missing: a v2 reply must echo the request_id", "§5"))
        elif rid != request_id:
            raise ProtocolViolation(
                "request_id", f"echoed {_short(rid)}, but the request carried {_short(request_id)}",
                "§4.1")

    # data
    data = _get_typed(b, "data", str, "String (JSON text)", "§4.2")
    decoded: Any = None
    if data is not None:
        decoded = decode_json(data, "data", "§4.2")
    elif status in (STATUS_SUCCESS, STATUS_ACCEPTED):
        raise ProtocolViolation("data", f"missing required field in a {status} reply", "§4.2")

    fd = b.get("result_fd", _ABSENT)
    result_fd: FileDescriptorHandle | None = None
    if fd is not _ABSENT and fd is not None:
        if not isinstance(fd, FileDescriptorHandle):
            raise ProtocolViolation(
                "result_fd", f"expected ParcelFileDescriptor, got {type_name(fd)}", "§4.5")
        result_fd = fd

    error: ErrorInfo | None = None
    if status == STATUS_ERROR:
        error = _parse_error_bundle(b, v2=v2, problems=problems)

    return Reply(
        status=status,
        bundle=bundle if isinstance(bundle, Bundle) else Bundle(bundle),
        protocol_version=protocol_version,
        request_id=rid,
        data=data,
        decoded=decoded,
        error=error,
        result_fd=result_fd,
        problems=problems,
    )


def _parse_error_bundle(
    b: Mapping[str, Any], *, v2: bool, problems: list[ProtocolViolation]
) -> ErrorInfo:
    code = _get_typed(b, "error_code", str, "String", "§5")
    if code is None:
        raise ProtocolViolation("error_code", "missing required field in an error reply", "§5")
    message = _get_typed(b, "error_message", str, "String", "§5")
    if message is None:
        if v2:
            raise ProtocolViolation(
                "error_message", f"missing required field in an error reply ({code})", "§5")
        message = ""
    retryable_v = b.get("retryable", _ABSENT)
    retryable: bool | None = None
    if retryable_v is _ABSENT or retryable_v is None:
        if v2:
            raise ProtocolViolation(
                "retryable", f"missing required field in an error reply ({code})", "§5")
    elif not isinstance(retryable_v, bool):
        raise ProtocolViolation(
            "retryable", f"expected boolean, got {type_name(retryable_v)}", "§5")
    else:
        retryable = retryable_v
    retry_after_ms = _optional_number(b, "retry_after_ms", Long, "long", "§5", problems)
    if retry_after_ms is not None and retry_after_ms < 0:
        raise ProtocolViolation("retry_after_ms", f"must be ≥ 0, got {retry_after_ms}", "§5")
    details_v = b.get("error_details", _ABSENT)
    details: Any = None
    if details_v is not _ABSENT and details_v is not None:
        if isinstance(details_v, str):
            try:
                details = decode_json(details_v, "error_details", "§5")
            except ProtocolViolation as v:
                problems.append(v)
                details = details_v
        elif isinstance(details_v, Bundle):
            problems.append(ProtocolViolation(
                "error_details", "expected a JSON String, got Bundle", "§5"))
            details = to_jsonable(details_v)
        else:
            raise ProtocolViolation(
                "error_details", f"expected a JSON String, got {type_name(details_v)}", "§5")
    res = b.get("resolution", _ABSENT)
    resolution: PendingIntentHandle | None = None
    if res is not _ABSENT and res is not None:
        if not isinstance(res, PendingIntentHandle):
            raise ProtocolViolation(
                "resolution", f"expected PendingIntent, got {type_name(res)}", "§4.3")
        resolution = res
    return ErrorInfo(
        error_code=code,
        error_message=message,
        retryable=retryable,
        retry_after_ms=retry_after_ms,
        error_details=details,
        resolution=resolution,
        resume_token=_get_typed(b, "resume_token", str, "String", "§4.3"),
        resolution_hint=_get_typed(b, "resolution_hint", str, "String", "§8"),
        authorize_intent=_get_typed(b, "authorize_intent", str, "String", "§8"),
    )


# --------------------------------------------------------------------------------------
# Request builders
# --------------------------------------------------------------------------------------


def new_request_id() -> str:
    """A fresh UUID for one logical execution or one read (§4.1)."""
    return str(uuid.uuid4())


def deadline_in(ms: int, now_ms: int | None = None) -> Long:
    """`deadline_at_ms` for a deadline `ms` from now (Unix epoch milliseconds, Long)."""
    base = int(time.time() * 1000) if now_ms is None else now_ms
    return Long(base + ms)


def args_json(args: Any) -> str:
    """Tool arguments as the JSON String carried in `args` (a str is passed through)."""
    if isinstance(args, str):
        return args
    return json.dumps(args, ensure_ascii=False, separators=(",", ":"))


def negotiate_extras(
    versions: Iterable[int] = SUPPORTED_VERSIONS, capabilities: Iterable[str] = ()
) -> Bundle:
    """negotiate request (§2.2): `consumer_versions` int[] descending, capabilities JSON."""
    return Bundle(
        consumer_versions=IntArray(sorted({int(v) for v in versions}, reverse=True)),
        consumer_capabilities=json.dumps(list(capabilities)),
    )


def v2_extras(
    session_token: str, request_id: str, deadline_at_ms: int, **more: Any
) -> Bundle:
    """Common v2 request fields (§4.1) plus `more` (already typed Bundle values)."""
    b = Bundle(
        protocol_version=Int(2),
        session_token=session_token,
        request_id=request_id,
        deadline_at_ms=Long(deadline_at_ms),
    )
    for k, v in more.items():
        if v is not None:
            b[k] = v
    return b


def execute_extras(
    session_token: str,
    request_id: str,
    deadline_at_ms: int,
    tool_name: str,
    args: Any,
    resume_token: str | None = None,
    **more: Any,
) -> Bundle:
    """v2 execute_tool request (§4.1): tool_name, args JSON String, optional resume_token."""
    return v2_extras(
        session_token, request_id, deadline_at_ms,
        tool_name=tool_name, args=args_json(args), resume_token=resume_token, **more,
    )


def operation_extras(
    session_token: str, request_id: str, deadline_at_ms: int, operation_id: str
) -> Bundle:
    """get_operation / cancel_operation request: request_id is the creating execution's."""
    return v2_extras(session_token, request_id, deadline_at_ms, operation_id=operation_id)


def v1_execute_extras(tool_name: str, args: Any, request_id: str | None = None) -> Bundle:
    """v1 execute_tool request: tool_name, args JSON String, optional request_id."""
    b = Bundle(tool_name=tool_name, args=args_json(args))
    if request_id is not None:
        b["request_id"] = request_id
    return b


def parse_versions(value: Any) -> tuple[int, ...] | None:
    """Parse a `versions` meta-data value ("1,2", Int 2, …) into distinct ints, highest
    first; None when it cannot be parsed."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return (int(value),) if value > 0 else None
    if isinstance(value, float):
        return (int(value),) if value.is_integer() and value > 0 else None
    if not isinstance(value, str):
        return None
    out: list[int] = []
    for part in value.split(","):
        p = part.strip()
        if not p.isascii() or not p.isdigit():
            return None
        n = int(p)
        if n <= 0:
            return None
        if n not in out:
            out.append(n)
    if not out:
        return None
    return tuple(sorted(out, reverse=True))


def select_version(consumer: Iterable[int], provider: Iterable[int]) -> int | None:
    """The highest common version, None when there is none (§2.2)."""
    common = set(consumer) & set(provider)
    return max(common) if common else None
