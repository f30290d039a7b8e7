"""AndyClaw extensions on the wire: discovery keys, the four bridges, manifests, replies.

Sources: the AndyClaw extension guide (`seeds/andyclaw-extension-guide.txt`) and what the
real host app does (`reference/real-implementations.md`). Where the real apps disagree
with the guide (the bound service's GET_MANIFEST returns an object while the raw resource
is an array), the parsers accept what real apps send and say which form it was, so rules
can flag the drift.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError

from inspector.protocol.bundle import Bundle, type_name
from inspector.protocol.cetp import ProtocolViolation, json_type, violation_from_validation

SPEC = "AndyClaw"

# Application meta-data (guide §2)
META_EXTENSION = "org.ethereumphone.andyclaw.EXTENSION"
META_EXTENSION_ID = "org.ethereumphone.andyclaw.EXTENSION_ID"
META_EXTENSION_NAME = "org.ethereumphone.andyclaw.EXTENSION_NAME"
META_EXTENSION_MANIFEST = "org.ethereumphone.andyclaw.EXTENSION_MANIFEST"
META_KEYS = (META_EXTENSION, META_EXTENSION_ID, META_EXTENSION_NAME, META_EXTENSION_MANIFEST)

# Bridge actions (guide §4)
ACTION_EXTENSION_SERVICE = "org.ethereumphone.andyclaw.EXTENSION_SERVICE"
ACTION_EXTENSION_BROADCAST = "org.ethereumphone.andyclaw.EXTENSION_BROADCAST"
ACTION_EXTENSION_ACTION = "org.ethereumphone.andyclaw.EXTENSION_ACTION"
#: A content-provider bridge is any provider whose authority ends with this.
AUTHORITY_SUFFIX = ".andyclaw.extension"

# Bound service wire protocol
DESCRIPTOR = "org.ethereumphone.andyclaw.IExtension"
TRANSACTION_GET_MANIFEST = 1
TRANSACTION_EXECUTE = 2

# Content provider / broadcast / activity extras
PROVIDER_METHOD_EXECUTE = "execute"
EXTRA_FUNCTION = "function"
EXTRA_PARAMS = "params"
EXTRA_RESPONSE_ACTION = "response_action"
REPLY_RESULT = "result"
REPLY_ERROR = "error"
RESPONSE_ACTION_SUFFIX = ".andyclaw.EXTENSION_RESPONSE"

#: The host's default execution timeout.
DEFAULT_TIMEOUT_MS = 30_000


def response_action(package: str) -> str:
    """The reply action the host listens on: `<package>.andyclaw.EXTENSION_RESPONSE`."""
    return package + RESPONSE_ACTION_SUFFIX


def host_authority(package: str) -> str:
    """The authority the host calls: built from the package, not the declared authority."""
    return package + AUTHORITY_SUFFIX


def default_extension_id(package: str) -> str:
    return f"apk:{package}"


class Bridge(StrEnum):
    SERVICE = "service"
    PROVIDER = "provider"
    BROADCAST = "broadcast"
    ACTIVITY = "activity"

    @property
    def priority(self) -> int:
        """1 is best: service > provider > broadcast > activity."""
        return _PRIORITY[self]

    @property
    def action(self) -> str | None:
        """The intent action of the bridge (None for the provider bridge)."""
        return BRIDGE_ACTIONS.get(self)

    @property
    def returns_result(self) -> bool:
        return self != Bridge.ACTIVITY


_PRIORITY = {Bridge.SERVICE: 1, Bridge.PROVIDER: 2, Bridge.BROADCAST: 3, Bridge.ACTIVITY: 4}
BRIDGE_ACTIONS: dict[Bridge, str] = {
    Bridge.SERVICE: ACTION_EXTENSION_SERVICE,
    Bridge.BROADCAST: ACTION_EXTENSION_BROADCAST,
    Bridge.ACTIVITY: ACTION_EXTENSION_ACTION,
}
BRIDGES_BY_PRIORITY = tuple(sorted(Bridge, key=lambda b: b.priority))


def best_bridge(bridges: Any) -> Bridge | None:
    """The highest-priority bridge among `bridges`."""
    present = [Bridge(b) for b in bridges]
    return min(present, key=lambda b: b.priority) if present else None


class ExtensionFunction(BaseModel):
    """One function of an extension manifest (guide §3)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    name: StrictStr
    description: StrictStr
    inputSchema: dict[str, Any]
    requiresApproval: StrictBool = False
    requiredPermissions: list[StrictStr] = Field(default_factory=list)


ManifestForm = Literal["array", "object"]


class ServiceManifest(BaseModel):
    """A manifest as returned by GET_MANIFEST: object `{description, tools}` or an array."""

    form: ManifestForm
    description: str | None = None
    functions: list[ExtensionFunction]

    def names(self) -> list[str]:
        return [f.name for f in self.functions]


def _text(data: str | bytes, field: str) -> str:
    if isinstance(data, bytes | bytearray):
        try:
            return bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolViolation(field, f"not valid UTF-8 ({exc.reason} at byte {exc.start})",
                                    "§3", spec=SPEC) from None
    if not isinstance(data, str):
        raise ProtocolViolation(field, f"expected JSON text, got {type_name(data)}", "§3",
                                spec=SPEC)
    return data


def _load(text: str, field: str) -> Any:
    def _no_constants(c: str) -> Any:
        raise ValueError(f"{c} is not valid JSON")

    try:
        return json.loads(text, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        raise ProtocolViolation(field, f"not valid JSON ({exc.msg} at char {exc.pos})", "§3",
                                spec=SPEC) from None
    except (ValueError, RecursionError) as exc:
        raise ProtocolViolation(field, f"not valid JSON ({exc})", "§3", spec=SPEC) from None


def _functions(items: Any, prefix: str) -> list[ExtensionFunction]:
    if not isinstance(items, list):
        raise ProtocolViolation(prefix, f"expected an array, got {json_type(items)}", "§3",
                                spec=SPEC)
    out: list[ExtensionFunction] = []
    for i, item in enumerate(items):
        p = f"{prefix}[{i}]"
        if not isinstance(item, Mapping):
            raise ProtocolViolation(p, f"expected an object, got {json_type(item)}", "§3",
                                    spec=SPEC)
        try:
            out.append(ExtensionFunction.model_validate(dict(item)))
        except ValidationError as exc:
            raise violation_from_validation(exc, p, "§3", spec=SPEC) from None
        except (RecursionError, ValueError, TypeError) as exc:
            raise ProtocolViolation(p, f"cannot be parsed: {exc}", "§3", spec=SPEC) from None
    return out


def parse_manifest_array(text: str | bytes, field: str = "manifest") -> list[ExtensionFunction]:
    """The raw `@raw/extension_manifest` resource: a JSON array of functions.

    The real host silently yields an empty list on a parse failure; we say why instead.
    """
    data = _load(_text(text, field), field)
    return _functions(data, field)


def parse_service_manifest(text: str | bytes, field: str = "manifest") -> ServiceManifest:
    """What GET_MANIFEST returns: the object form `{description, tools: [...]}` that real
    extensions send, or the array form the guide documents. `form` says which it was."""
    data = _load(_text(text, field), field)
    if isinstance(data, list):
        return ServiceManifest(form="array", functions=_functions(data, field))
    if isinstance(data, Mapping):
        desc = data.get("description")
        if desc is not None and not isinstance(desc, str):
            raise ProtocolViolation(f"{field}.description",
                                    f"expected a string, got {json_type(desc)}", "§4A", spec=SPEC)
        if "tools" not in data:
            raise ProtocolViolation(f"{field}.tools", "missing required field", "§4A", spec=SPEC)
        return ServiceManifest(form="object", description=desc,
                               functions=_functions(data["tools"], f"{field}.tools"))
    raise ProtocolViolation(field, f"expected an array or an object, got {json_type(data)}",
                            "§4A", spec=SPEC)


# --------------------------------------------------------------------------------------
# Requests
# --------------------------------------------------------------------------------------


def params_json(params: Any) -> str:
    if isinstance(params, str):
        return params
    return json.dumps(params, ensure_ascii=False, separators=(",", ":"))


def provider_extras(function: str, params: Any) -> Bundle:
    """Content-provider bridge: `call(authority, "execute", null, extras)`."""
    return Bundle({EXTRA_FUNCTION: function, EXTRA_PARAMS: params_json(params)})


def broadcast_extras(function: str, params: Any, reply_action: str | None = None) -> Bundle:
    """Broadcast bridge extras (the relay's `broadcast` op adds `response_action` itself)."""
    b = Bundle({EXTRA_FUNCTION: function, EXTRA_PARAMS: params_json(params)})
    if reply_action is not None:
        b[EXTRA_RESPONSE_ACTION] = reply_action
    return b


def activity_extras(function: str, params: Any) -> Bundle:
    return Bundle({EXTRA_FUNCTION: function, EXTRA_PARAMS: params_json(params)})


def execute_strings(function: str, params: Any) -> list[str]:
    """Bound-service EXECUTE (code 2) strings after the interface token."""
    return [function, params_json(params)]


# --------------------------------------------------------------------------------------
# Replies
# --------------------------------------------------------------------------------------

ReplyOutcome = Literal["result", "error", "launched", "not_launched", "exception", "timeout",
                       "empty"]


class ExtensionReply(BaseModel):
    """The outcome of one execution through a bridge.

    `result` is the free-form result string (passed through as-is by the host), `decoded`
    its JSON value when it parses (`result_is_json`). `in_band_error` holds the message of
    a `{"error": ...}` object inside a *successful* reply (the reference extension answers
    unknown functions that way). `problems` lists wire deviations worth showing.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    bridge: Bridge
    outcome: ReplyOutcome
    result: str | None = None
    error: str | None = None
    launched: bool | None = None
    component: str | None = None
    exception_class: str | None = None
    exception_message: str | None = None
    decoded: Any = None
    result_is_json: bool = False
    in_band_error: str | None = None
    problems: list[str] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.outcome in ("result", "launched") and self.in_band_error is None


def _with_result(reply: ExtensionReply) -> ExtensionReply:
    if reply.result is None:
        return reply
    try:
        reply.decoded = json.loads(reply.result)
        reply.result_is_json = True
    except (ValueError, RecursionError):
        reply.problems.append("result is not JSON (the host passes it through as text)")
        return reply
    if isinstance(reply.decoded, dict) and isinstance(reply.decoded.get("error"), str):
        reply.in_band_error = reply.decoded["error"]
    return reply


def _bundle_str(b: Mapping[str, Any], key: str, problems: list[str]) -> str | None:
    v = b.get(key)
    if v is None:
        return None
    if isinstance(v, str):
        return v
    problems.append(f"{key}: expected String, got {type_name(v)} (the host reads getString)")
    return None


def reply_from_transact(exception: Mapping[str, Any] | None, reply: str | None) -> ExtensionReply:
    """Bound service EXECUTE: `readException()` then `readString()`."""
    if exception is not None:
        return ExtensionReply(
            bridge=Bridge.SERVICE, outcome="exception",
            exception_class=str(exception.get("class") or ""),
            exception_message=None if exception.get("message") is None
            else str(exception.get("message")),
        )
    if reply is None:
        return ExtensionReply(bridge=Bridge.SERVICE, outcome="empty",
                              problems=["the service wrote no result string (null)"])
    return _with_result(ExtensionReply(bridge=Bridge.SERVICE, outcome="result", result=reply))


def _result_or_error(bridge: Bridge, b: Mapping[str, Any] | None) -> ExtensionReply:
    if b is None:
        return ExtensionReply(bridge=bridge, outcome="empty",
                              problems=["the reply Bundle is null"])
    problems: list[str] = []
    result = _bundle_str(b, REPLY_RESULT, problems)
    error = _bundle_str(b, REPLY_ERROR, problems)
    if result is not None and error is not None:
        problems.append("the reply carries both 'result' and 'error'; the host reads 'result'")
    if result is not None:
        r = ExtensionReply(bridge=bridge, outcome="result", result=result, error=error,
                           problems=problems)
        return _with_result(r)
    if error is not None:
        return ExtensionReply(bridge=bridge, outcome="error", error=error, problems=problems)
    problems.append("the reply has neither 'result' nor 'error'")
    return ExtensionReply(bridge=bridge, outcome="empty", problems=problems)


def reply_from_provider(bundle: Mapping[str, Any] | None) -> ExtensionReply:
    """Content-provider bridge: reply Bundle with `result` or `error` (Strings)."""
    return _result_or_error(Bridge.PROVIDER, bundle)


def reply_from_broadcast(bundle: Mapping[str, Any] | None, timed_out: bool,
                         response_action: str | None = None, timeout_ms: int | None = None,
                         *, target_stopped: bool | None = None) -> ExtensionReply:
    """Broadcast bridge: the reply broadcast's extras, or a timeout — with its likely cause:
    a target in the stopped state never gets the broadcast (`target_stopped`, reported by
    the relay); otherwise the receiver got the request but never answered on the
    `response_action` it was given (it ignores the extra, answers on a fixed action, or
    does not answer)."""
    if timed_out:
        waited = f" within {timeout_ms / 1000:g} s" if timeout_ms else ""
        where = f" on {response_action}" if response_action else ""
        if target_stopped:
            return ExtensionReply(bridge=Bridge.BROADCAST, outcome="timeout", problems=[
                f"no reply broadcast arrived{where}{waited}: the extension is in the stopped "
                "state (installed and never launched, or force-stopped) and Android delivers "
                "no broadcast to it — the real host would time out too. Launch the app once "
                "(or force delivery with include-stopped) and retry"])
        return ExtensionReply(bridge=Bridge.BROADCAST, outcome="timeout", problems=[
            f"no reply broadcast arrived{where}{waited}. Likely cause: the extension's "
            "receiver ignores the request's response_action extra (it must send its "
            "result or error with Intent(response_action), the action the host listens "
            "on) or never replies; retrying the same call will time out again"])
    return _result_or_error(Bridge.BROADCAST, bundle)


def reply_from_activity(launched: bool, component: str | None = None) -> ExtensionReply:
    """Activity bridge: fire-and-forget; success means "launched", there is no result."""
    return ExtensionReply(bridge=Bridge.ACTIVITY,
                          outcome="launched" if launched else "not_launched",
                          launched=launched, component=component)
