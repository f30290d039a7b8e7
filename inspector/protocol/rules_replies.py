"""Rules judged on replies: the echo, the error envelope and table, inline sizes, file and
accepted results (§4.4, §4.5, §5), and untrusted provider text (§7.3)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from inspector.protocol import errors as errtable
from inspector.protocol import text as txt
from inspector.protocol.cetp import (
    CAP_ASYNC,
    CAP_LARGE,
    Execution,
    FileResult,
    Limits,
    ProviderInfo,
    Reply,
    Scope,
    ToolDescriptor,
    ToolList,
    V1ProviderInfo,
    V1ToolList,
)
from inspector.protocol.exchange import Finding
from inspector.protocol.rules_base import _rule, _show

R_ECHO = _rule("reply.echo", "§5", "MUST",
               "v2 replies echo protocol_version (int 2) and the request_id")
R_ERR_KNOWN = _rule("error.known_code", "§5", "SHOULD", "error codes come from the §5 table")
R_ERR_RETRYABLE = _rule("error.retryable_matches", "§5", "MUST",
                        "retryable agrees with the error table")
R_ERR_SAFE = _rule("error.message_safe", "§5", "MUST",
                   "error messages are safely displayable: no stack traces or sensitive "
                   "details")
R_ERR_RESOLUTION = _rule("error.resolution_fields", "§4.3", "MUST",
                         "AUTH_REQUIRED / USER_ACTION_REQUIRED carry a PendingIntent "
                         "resolution and a resume_token")
R_ERR_IMMUTABLE = _rule("error.resolution_immutable", "§7.2", "MUST",
                        "the resolution PendingIntent is immutable and targets a Provider "
                        "activity")
R_ERR_NO_AUTHORIZE_INTENT = _rule("error.no_authorize_intent", "§4.3", "MUST",
                                  "v2 errors do not use v1's implicit authorize_intent")
R_INLINE_LIMIT = _rule("result.inline_limit", "§4.5", "MUST",
                       "inline results stay within max_inline_result_bytes")
R_FILE_CAP = _rule("result.file_needs_capability", "§4.5", "MUST",
                   "file results only after large_results was negotiated")
R_ACCEPTED_CAP = _rule("execute.accepted_needs_capability", "§4.4", "MUST",
                       "accepted (background operation) only after async_operations was "
                       "negotiated, and only for tools with execution=sync_or_async")
# --- untrusted text --------------------------------------------------------------------
R_TEXT_LIMITS = _rule("text.length", "§7.3", "SHOULD",
                      "names and descriptions stay within display length limits")
R_TEXT_CONTROL = _rule("text.control_chars", "§7.3", "SHOULD",
                       "names and descriptions contain no control or invisible formatting "
                       "characters")
R_TEXT_INSTRUCTIONS = _rule("text.instructions", "§7.3", "SHOULD",
                            "descriptions and errors do not contain instruction-like text "
                            "aimed at an agent")


# --------------------------------------------------------------------------------------
# replies and errors
# --------------------------------------------------------------------------------------


def check_reply_echo(reply: Reply, request_id: str) -> list[Finding]:
    """§5: a v2 reply echoes protocol_version 2 (as an int) and the request_id."""
    probs = [p for p in reply.problems if p.field in ("protocol_version", "request_id")]
    if not probs:
        return [R_ECHO.ok("protocol_version and request_id echoed", "reply")]
    return [R_ECHO.fail(p.message, p.field) for p in probs]


def check_error(reply_or_error: Reply | Any, *, v2: bool = True) -> list[Finding]:
    """Error-envelope rules for one error reply (or an ErrorInfo)."""
    err = reply_or_error.error if isinstance(reply_or_error, Reply) else reply_or_error
    if err is None:
        return []
    code = err.error_code
    out: list[Finding] = []
    known = errtable.is_known_code(code, v2=v2)
    out.append(R_ERR_KNOWN.finding(known, f"{_show(code)}" + ("" if known else
                                                              " is not in the error table"),
                                   "error_code"))
    if v2:
        want = errtable.expected_retryable(code)
        if want is not None and err.retryable is not None:
            out.append(R_ERR_RETRYABLE.finding(
                err.retryable == want,
                f"{code}: retryable={str(err.retryable).lower()}"
                + ("" if err.retryable == want else f", the table says {str(want).lower()}"),
                "retryable"))
    msg = err.error_message or ""
    bad = []
    if txt.stack_trace_like(msg):
        bad.append("a stack trace")
    secrets = txt.secret_like(msg)
    if secrets:
        bad.append(f"sensitive details ({secrets[0]})")
    out.append(R_ERR_SAFE.finding(not bad, f"{code}: " + ("message is safe to display" if not bad
                                                          else "message contains "
                                                          + " and ".join(bad)),
                                  "error_message"))
    if v2 and code in (errtable.AUTH_REQUIRED, errtable.USER_ACTION_REQUIRED):
        missing = [k for k, v in (("resolution", err.resolution),
                                  ("resume_token", err.resume_token)) if v is None]
        out.append(R_ERR_RESOLUTION.finding(
            not missing, f"{code}: " + ("resolution and resume_token present" if not missing
                                        else f"missing {', '.join(missing)}"), "resolution"))
        if err.resolution is not None:
            imm, act = err.resolution.immutable, err.resolution.targets_activity
            if imm is not None or act is not None:
                ok = imm is not False and act is not False
                why = []
                if imm is False:
                    why.append("is mutable")
                if act is False:
                    why.append("does not target an activity")
                out.append(R_ERR_IMMUTABLE.finding(
                    ok, "resolution PendingIntent " + (" and ".join(why) if why
                                                       else "is immutable"), "resolution"))
    if v2:
        out.append(R_ERR_NO_AUTHORIZE_INTENT.finding(
            err.authorize_intent is None,
            "no authorize_intent" if err.authorize_intent is None else
            f"v2 error carries v1's authorize_intent {_show(err.authorize_intent)}",
            "authorize_intent"))
    out += check_texts([("error_message", "error_message", msg)])
    return out


def check_inline_size(data_text: str, limits: Limits | None) -> list[Finding]:
    if limits is None:
        return []
    n = len(data_text.encode("utf-8"))
    m = limits.max_inline_result_bytes
    return [R_INLINE_LIMIT.finding(n <= m, f"inline data is {n} bytes (limit {m})", "data")]


def check_result_kind(result: Any, capabilities: Iterable[str]) -> list[Finding]:
    if not isinstance(result, FileResult):
        return []
    ok = CAP_LARGE in set(capabilities)
    return [R_FILE_CAP.finding(ok, "file result " + ("with large_results negotiated" if ok else
                                                      "although large_results was not "
                                                      "negotiated"), "data.kind")]


def check_accepted(tool: ToolDescriptor | None, capabilities: Iterable[str]) -> list[Finding]:
    """An `accepted` reply arrived for `tool`: was that allowed?"""
    caps = set(capabilities)
    why = []
    if CAP_ASYNC not in caps:
        why.append("async_operations was not negotiated")
    if tool is not None and tool.annotations.execution != Execution.SYNC_OR_ASYNC:
        why.append(f"{tool.name} declares execution={tool.annotations.execution.value}")
    return [R_ACCEPTED_CAP.finding(not why, "accepted " + ("as allowed" if not why else
                                                           "although " + " and ".join(why)),
                                   "status")]


# --------------------------------------------------------------------------------------
# untrusted text
# --------------------------------------------------------------------------------------


def check_texts(items: Iterable[tuple[str, str, str]]) -> list[Finding]:
    """(path, kind, text) items: length (by `text.LIMITS[kind]`), control characters and
    instruction-like phrases. Only problems and one ok per item for length are reported."""
    out: list[Finding] = []
    for path, kind, s in items:
        if not isinstance(s, str):
            continue
        limit = txt.LIMITS.get(kind, txt.LIMITS["description"])
        out.append(R_TEXT_LIMITS.finding(len(s) <= limit,
                                         f"{len(s)} characters" + ("" if len(s) <= limit
                                                                   else f" (limit {limit})"),
                                         path))
        allow_nl = kind in ("description", "error_message", "scope_description")
        bad = txt.control_chars(s, allow_newlines=allow_nl)
        out.append(R_TEXT_CONTROL.finding(
            not bad, "no control characters" if not bad else
            "contains " + ", ".join(f"U+{ord(c):04X}" for c in bad[:8]), path))
        hits = txt.instruction_like(s)
        out.append(R_TEXT_INSTRUCTIONS.finding(
            not hits, "no instruction-like text" if not hits else
            "instruction-like text: " + "; ".join(f"{h.label} ({h.excerpt!r})" for h in hits),
            path))
    return out


def descriptor_texts(info: ProviderInfo | V1ProviderInfo | None,
                     tools: ToolList | Sequence[ToolDescriptor] | V1ToolList | None
                     ) -> list[tuple[str, str, str]]:
    items: list[tuple[str, str, str]] = []
    if info is not None:
        items.append(("provider_name", "provider_name", info.provider_name))
        items.append(("description", "description", info.description))
        for i, s in enumerate(info.scopes):
            items.append((f"scopes[{i}].name", "name", s.name))
            items.append((f"scopes[{i}].description", "scope_description", s.description))
            if isinstance(s, Scope):
                items.append((f"scopes[{i}].title", "title", s.title))
    if tools is not None:
        seq = list(tools.tools) if isinstance(tools, ToolList | V1ToolList) else list(tools)
        for i, t in enumerate(seq):
            items.append((f"tools[{i}].name", "name", t.name))
            if isinstance(t, ToolDescriptor):
                items.append((f"tools[{i}].title", "title", t.title))
            items.append((f"tools[{i}].description", "description", t.description))
    return items
