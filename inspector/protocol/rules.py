"""Spec rules as checkable functions.

Every rule has an id, the spec section it enforces, a level (MUST / SHOULD / INFO) and a
one-line title; `RULES` is the registry the GUI badges, the conformance suite and the docs
list. A check function returns `Finding`s (`inspector.protocol.exchange.Finding`), one per
subject the rule applies to (a tool, a scope, a limit, a schema …): `ok=True` when that
subject conforms, `ok=False` with a message saying what is wrong. **No finding means the
rule did not apply** (e.g. no tool needs confirmation=always).

The checks here are pure: they judge parsed models (`inspector.protocol.cetp`,
`.andyclaw`, `.discovery`). Dynamic behaviour (does a replayed request execute twice?) is
judged by the conformance suite, which reuses these rules where a static check exists.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from inspector.protocol import errors as errtable
from inspector.protocol import schema as schemas
from inspector.protocol import text as txt
from inspector.protocol.andyclaw import ExtensionFunction, ServiceManifest
from inspector.protocol.cetp import (
    CAP_ASYNC,
    CAP_LARGE,
    DRAFT_2020_12,
    KNOWN_CAPABILITIES,
    LIMIT_MINIMUMS,
    MAX_SESSION_TOKEN_BYTES,
    SCOPE_NAME_PATTERN,
    TOOL_NAME_PATTERN,
    Annotations,
    Effect,
    Execution,
    FileResult,
    Limits,
    NegotiateResult,
    ProviderInfo,
    Reply,
    Scope,
    ToolDescriptor,
    ToolList,
    V1ProviderInfo,
    V1Tool,
    V1ToolList,
)
from inspector.protocol.discovery import CetpDeclaration, ExtensionDeclaration
from inspector.protocol.exchange import Finding

Level = Literal["MUST", "SHOULD", "INFO"]
CETP = "CETP v2"
ANDYCLAW = "AndyClaw"


@dataclass(frozen=True)
class Rule:
    id: str
    section: str
    level: Level
    title: str
    spec: str = CETP

    def finding(self, ok: bool, message: str, path: str = "") -> Finding:
        return Finding(rule_id=self.id, section=self.section, level=self.level, ok=ok,
                       message=message, path=path)

    def ok(self, message: str, path: str = "") -> Finding:
        return self.finding(True, message, path)

    def fail(self, message: str, path: str = "") -> Finding:
        return self.finding(False, message, path)

    @property
    def reference(self) -> str:
        return f"{self.spec} {self.section}"


RULES: dict[str, Rule] = {}


def _rule(id: str, section: str, level: Level, title: str, spec: str = CETP) -> Rule:
    if id in RULES:  # pragma: no cover - programming error
        raise ValueError(f"duplicate rule id {id}")
    r = Rule(id, section, level, title, spec)
    RULES[id] = r
    return r


# --- discovery -------------------------------------------------------------------------
R_VERSIONS = _rule("discovery.versions_consistency", "§2.1", "MUST",
                   "versions and the legacy version field agree (dual-stack keeps version=1, "
                   "v2-only uses version=2 and versions=\"2\")")
R_SAME_PACKAGE = _rule("discovery.same_package", "§2.1", "MUST",
                       "the discovered Service and the authority's ContentProvider belong to "
                       "the same package")
R_EXPORTED = _rule("discovery.exported", "§2.1", "MUST",
                   "the provider Service and ContentProvider are exported and enabled")
R_V1_READ_ONLY = _rule("v1.dual_stack_read_only", "§2.1", "MUST",
                       "a dual-stack provider's v1 list_tools has no side-effecting tool "
                       "(per its v2 annotations)")
R_V1_READ_ONLY_HEUR = _rule("v1.dual_stack_read_only_heuristic", "§2.1", "SHOULD",
                            "a dual-stack provider's v1 tools do not look side-effecting by "
                            "name or description")
R_V1_NO_V2_ONLY = _rule("v1.tools_subset", "§8", "SHOULD",
                        "a dual-stack provider's v1 tools are the read-only subset of its v2 "
                        "tools")
# --- negotiation -----------------------------------------------------------------------
R_SELECTED = _rule("negotiate.highest_common_version", "§2.2", "MUST",
                   "negotiate selects the highest version common to consumer and provider")
R_CAPS = _rule("negotiate.capability_intersection", "§2.2", "MUST",
               "negotiate returns only known optional capabilities the consumer asked for")
R_LIMITS = _rule("negotiate.limits_minimums", "§2.2", "MUST",
                 "negotiated limits meet the minimums (65536, 262144, 1, 86400)")
R_TOKEN = _rule("negotiate.session_token", "§2.2", "MUST",
                "session_token is non-empty and at most 256 bytes")
# --- identity and descriptors ----------------------------------------------------------
R_PROVIDER_ID = _rule("provider.id_namespace", "§3.1", "MUST",
                      "provider_id is the package name or within its namespace")
R_PROVIDER_ID_STABLE = _rule("provider.id_stable", "§3.1", "MUST",
                             "provider_id is the same in negotiate and get_provider_info")
R_TOOL_NAME = _rule("tool.name_pattern", "§3.1", "MUST",
                    f"tool names match {TOOL_NAME_PATTERN}")
R_TOOL_UNIQUE = _rule("tool.name_unique", "§3.1", "MUST",
                      "tool names are unique within the provider")
R_SCOPE_NAME = _rule("scope.name_pattern", "§3.2", "MUST",
                     f"scope names match {SCOPE_NAME_PATTERN}")
R_SCOPE_UNIQUE = _rule("scope.name_unique", "§3.2", "SHOULD",
                       "scope names are unique in the catalog")
R_SCOPE_DECLARED = _rule("scope.declared", "§3.2", "MUST",
                         "every scope a tool requires is in the provider's scope catalog")
R_CONFIRM = _rule("annotations.confirmation_always", "§3.4", "MUST",
                  "delete, transaction, destructive or high-risk tools use "
                  "confirmation=always")
R_ASYNC_EXEC = _rule("annotations.async_needs_capability", "§3.4", "MUST",
                     "execution=sync_or_async only when async_operations was negotiated")
R_ANN_DEFAULTS = _rule("annotations.explicit", "§3.4", "INFO",
                       "annotations state destructive, open_world and execution explicitly")
R_OUTPUT_SCHEMA = _rule("tool.output_schema", "§2.3", "SHOULD",
                        "every v2 tool declares an output_schema")
R_REVISION = _rule("tools.revision_changes", "§3.3", "MUST",
                   "revision changes whenever the tool set, schemas or security semantics "
                   "change")
# --- schemas ---------------------------------------------------------------------------
R_REMOTE_REF = _rule("schema.no_remote_ref", "§3.2", "MUST",
                     "schemas reference only fragments of the same document (no network or "
                     "other-document $ref)")
R_DIALECT = _rule("schema.dialect", "§3.2", "SHOULD",
                  "the schema dialect is a known JSON Schema dialect (default Draft 2020-12) "
                  "and schemas do not switch it")
R_SCHEMA_VALID = _rule("schema.valid", "§3.2", "MUST",
                       "input and output schemas are valid under their dialect")
# --- replies and errors ----------------------------------------------------------------
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
# --- AndyClaw --------------------------------------------------------------------------
R_EXT_META = _rule("extension.meta_data", "guide §2", "MUST",
                   "EXTENSION (boolean true), EXTENSION_ID, EXTENSION_NAME and "
                   "EXTENSION_MANIFEST are declared", ANDYCLAW)
R_EXT_BRIDGE = _rule("extension.bridge", "guide §4", "MUST",
                     "at least one exported, enabled bridge component", ANDYCLAW)
R_EXT_AUTHORITY = _rule("extension.provider_authority", "guide §4B", "MUST",
                        "the provider bridge's authority is <package>.andyclaw.extension "
                        "(the authority the host calls)", ANDYCLAW)
R_EXT_FORM = _rule("extension.manifest_form", "guide §4A", "SHOULD",
                   "GET_MANIFEST returns the same array form as the raw manifest", ANDYCLAW)
R_EXT_DRIFT = _rule("extension.manifest_drift", "guide §4A", "SHOULD",
                    "the raw manifest and the service's GET_MANIFEST list the same functions "
                    "with the same descriptions and schemas", ANDYCLAW)
R_EXT_UNIQUE = _rule("extension.function_unique", "guide §3", "MUST",
                     "function names are unique across all installed extensions", ANDYCLAW)
R_EXT_SIGNED = _rule("extension.signed", "security model", "MUST",
                     "the extension APK has signing certificates (and matches a pinned hash)",
                     ANDYCLAW)
R_EXT_UID = _rule("extension.uid_isolation", "security model", "MUST",
                  "the extension runs under its own UID (no shared user id with the host)",
                  ANDYCLAW)
R_EXT_PERMS = _rule("extension.required_permissions", "security model", "MUST",
                    "the host holds every permission in requiredPermissions", ANDYCLAW)


def rules_by_section() -> dict[str, list[Rule]]:
    out: dict[str, list[Rule]] = {}
    for r in RULES.values():
        out.setdefault(f"{r.spec} {r.section}", []).append(r)
    return out


def failures(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if not f.ok]


def must_failures(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if not f.ok and f.level == "MUST"]


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------

_TOOL_RE = re.compile(TOOL_NAME_PATTERN)
_SCOPE_RE = re.compile(SCOPE_NAME_PATTERN)


def tool_name_ok(name: str) -> bool:
    return _TOOL_RE.fullmatch(name) is not None


def scope_name_ok(name: str) -> bool:
    return _SCOPE_RE.fullmatch(name) is not None


def _tools(tools: ToolList | Sequence[ToolDescriptor]) -> list[ToolDescriptor]:
    return list(tools.tools) if isinstance(tools, ToolList) else list(tools)


def _show(value: Any, limit: int = 60) -> str:
    s = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return repr(txt.one_line(s, limit)) if isinstance(value, str) else txt.one_line(s, limit)


# --------------------------------------------------------------------------------------
# discovery
# --------------------------------------------------------------------------------------


def check_versions_declaration(decl: CetpDeclaration) -> list[Finding]:
    """§2.1 versions vs version; one finding for the declaration."""
    r = R_VERSIONS
    path = f"{decl.package}/{decl.service}"
    if decl.versions_raw is not None and decl.declared_versions is None:
        return [r.fail(f"versions = {decl.versions_raw!r} is not a comma-separated list of "
                       "major versions", path)]
    if decl.version_raw is not None and decl.version is None:
        return [r.fail(f"version = {decl.version_raw!r} is not an integer", path)]
    if decl.declared_versions is None:
        v = decl.version if decl.version is not None else 1
        how = "version" if decl.version is not None else "no version field (v1 default)"
        return [r.ok(f"only {how}: sole supported version {v}", path)]
    vs = set(decl.declared_versions)
    if decl.version is not None and decl.version not in vs:
        return [r.fail(f"legacy version={decl.version} is not among versions="
                       f"{decl.versions_raw!r}", path)]
    if {1, 2} <= vs:
        if decl.version != 1:
            got = "missing" if decl.version is None else f"version={decl.version}"
            return [r.fail(f"dual-stack provider (versions={decl.versions_raw!r}) must keep the "
                           f"legacy version=1 field for v1 consumers; it is {got}", path)]
        return [r.ok("dual-stack: versions lists 1 and 2, legacy version=1 kept", path)]
    if vs == {2}:
        if decl.version != 2:
            got = "missing (v1 consumers default to 1)" if decl.version is None \
                else f"version={decl.version}"
            return [r.fail(f"v2-only provider must use version=2; it is {got}", path)]
        return [r.ok("v2-only: version=2, versions=\"2\"", path)]
    return [r.ok(f"versions={decl.versions_raw!r}, version={decl.version_raw!r}", path)]


def check_same_package(decl: CetpDeclaration) -> list[Finding]:
    r = R_SAME_PACKAGE
    path = f"{decl.package}/{decl.service}"
    if not decl.authority:
        return [r.fail("the service declares no authority", path)]
    same = decl.same_package
    if same:
        return [r.ok(f"{decl.authority} is provided by {decl.package}", path)]
    if decl.authority_owner is None:
        return [r.fail(f"no installed package provides {decl.authority}; the service's package "
                       "cannot be verified", path)]
    return [r.fail(f"{decl.authority} is provided by {decl.authority_owner}, not by the "
                   f"service's package {decl.package}", path)]


def check_exported(decl: CetpDeclaration) -> list[Finding]:
    r = R_EXPORTED
    path = f"{decl.package}/{decl.service}"
    out = [r.finding(decl.exported and decl.enabled,
                     "service exported and enabled" if decl.exported and decl.enabled else
                     f"service {decl.service} is "
                     + ("not exported" if not decl.exported else "disabled"), path)]
    if decl.provider is not None:
        p = decl.provider
        out.append(r.finding(p.exported and p.enabled,
                             "provider exported and enabled" if p.exported and p.enabled else
                             f"provider {p.name} is "
                             + ("not exported" if not p.exported else "disabled"),
                             f"{decl.package}/{p.name}"))
    return out


_READ_VERBS = frozenset([
    "get", "list", "search", "find", "read", "fetch", "query", "lookup", "count", "check",
    "describe", "show", "view", "preview", "estimate", "calculate", "compute", "quote",
    "validate", "verify", "summarize", "summarise", "inspect", "browse",
])
_WRITE_VERBS = frozenset([
    "create", "add", "insert", "update", "set", "edit", "modify", "change", "patch", "put",
    "delete", "remove", "clear", "erase", "purge", "destroy", "drop", "send", "post",
    "transfer", "pay", "buy", "sell", "order", "trade", "cancel", "submit", "write", "save",
    "upload", "book", "reserve", "publish", "share", "move", "rename", "archive", "unarchive",
    "enable", "disable", "toggle", "start", "stop", "install", "uninstall", "approve",
    "reject", "execute", "place", "withdraw", "deposit", "mark", "reset", "register",
    "subscribe", "unsubscribe", "like", "unlike", "follow", "unfollow", "block", "unblock",
    "invite", "schedule", "reply", "forward", "call", "dial", "sms", "email", "mail",
    "message", "transact", "sign", "broadcast", "mint", "swap", "stake", "unstake", "lock",
    "unlock", "grant", "revoke", "import", "restore", "wipe", "refund", "charge",
])
_WRITE_DESC = re.compile(
    r"\b(creates?|adds?|inserts?|updates?|sets?|edits?|modif(?:y|ies)|changes?|deletes?|"
    r"removes?|clears?|erases?|sends?|posts?|transfers?|pays?|buys?|sells?|places?|submits?|"
    r"writes?|saves?|uploads?|books?|reserves?|publishes?|cancels?|executes?|withdraws?|"
    r"deposits?|marks?|resets?|schedules?|installs?|uninstalls?|moves?|renames?|archives?)\b",
    re.IGNORECASE)


def side_effect_hint(name: str, description: str = "") -> str | None:
    """Heuristic: why a tool looks side-effecting, or None when it looks read-only."""
    tokens = [t for t in re.split(r"[^a-z0-9]+", name.lower()) if t]
    if tokens and tokens[0] in _READ_VERBS:
        return None
    hit = next((t for t in tokens if t in _WRITE_VERBS), None)
    if hit:
        return f"its name contains {hit!r}"
    first = description.strip().split(".", 1)[0]
    m = _WRITE_DESC.match(first.strip())
    if m:
        return f"its description starts with {m.group(0)!r}"
    return None


def check_v1_read_only(
    v1_tools: V1ToolList | Sequence[V1Tool],
    v2_tools: ToolList | Sequence[ToolDescriptor] | None = None,
    decl: CetpDeclaration | None = None,
) -> list[Finding]:
    """§2.1: a dual-stack provider's v1 list has no side-effecting tool.

    Judged by the v2 annotations of the same-named tool (rule v1.dual_stack_read_only)
    and by name/description heuristics (v1.dual_stack_read_only_heuristic). Applies only
    to dual-stack providers when `decl` is given.
    """
    if decl is not None and decl.stack != "dual_stack":
        return []
    items = list(v1_tools.tools) if isinstance(v1_tools, V1ToolList) else list(v1_tools)
    by_name = {t.name: t for t in _tools(v2_tools)} if v2_tools is not None else {}
    out: list[Finding] = []
    for i, t in enumerate(items):
        path = f"v1.tools[{i}]"
        v2 = by_name.get(t.name)
        if v2_tools is not None:
            if v2 is None:
                out.append(R_V1_NO_V2_ONLY.fail(
                    f"v1 tool {t.name!r} has no v2 counterpart to judge its effect by", path))
            else:
                out.append(R_V1_NO_V2_ONLY.ok(f"v1 tool {t.name!r} is also a v2 tool", path))
                a = v2.annotations
                if a.side_effecting or a.destructive:
                    out.append(R_V1_READ_ONLY.fail(
                        f"v1 list_tools returns {t.name!r}, whose v2 annotations say "
                        f"effect={a.effect.value}" + (", destructive" if a.destructive else ""),
                        path))
                else:
                    out.append(R_V1_READ_ONLY.ok(f"{t.name!r} is effect=read in v2", path))
        hint = side_effect_hint(t.name, t.description)
        if hint is None:
            out.append(R_V1_READ_ONLY_HEUR.ok(f"{t.name!r} looks read-only", path))
        else:
            out.append(R_V1_READ_ONLY_HEUR.fail(
                f"v1 tool {t.name!r} looks side-effecting: {hint}", path))
    return out


# --------------------------------------------------------------------------------------
# negotiation
# --------------------------------------------------------------------------------------


def check_selected_version(
    selected: int, consumer_versions: Iterable[int], provider_versions: Iterable[int]
) -> list[Finding]:
    common = set(consumer_versions) & set(provider_versions)
    want = max(common) if common else None
    if want is None:
        return [R_SELECTED.fail(f"negotiate succeeded with version {selected} although no "
                                "common version exists (must answer UNSUPPORTED_VERSION)",
                                "data.selected_version")]
    if selected == want:
        return [R_SELECTED.ok(f"selected version {selected}", "data.selected_version")]
    return [R_SELECTED.fail(f"selected version {selected}, but the highest common version is "
                            f"{want}", "data.selected_version")]


def check_capabilities(returned: Sequence[str], requested: Iterable[str]) -> list[Finding]:
    req = set(requested)
    out: list[Finding] = []
    dup = [c for c, n in Counter(returned).items() if n > 1]
    for c in dup:
        out.append(R_CAPS.fail(f"capability {c!r} listed twice", "data.capabilities"))
    for i, c in enumerate(dict.fromkeys(returned)):
        path = f"data.capabilities[{i}]"
        if c not in KNOWN_CAPABILITIES:
            out.append(R_CAPS.fail(f"unknown capability {_show(c)}", path))
        elif c not in req:
            out.append(R_CAPS.fail(f"capability {c!r} was not requested by the consumer", path))
        else:
            out.append(R_CAPS.ok(f"{c} requested and granted", path))
    if not returned:
        out.append(R_CAPS.ok("no optional capability returned", "data.capabilities"))
    return out


def check_limits(limits: Limits) -> list[Finding]:
    out = []
    for k, m in LIMIT_MINIMUMS.items():
        v = getattr(limits, k)
        out.append(R_LIMITS.finding(v >= m, f"{k} = {v}" + ("" if v >= m else f" < {m}"),
                                    f"data.limits.{k}"))
    return out


def check_session_token(token: str) -> list[Finding]:
    n = len(token.encode("utf-8"))
    if n == 0:
        return [R_TOKEN.fail("session_token is empty", "data.session_token")]
    if n > MAX_SESSION_TOKEN_BYTES:
        return [R_TOKEN.fail(f"session_token is {n} bytes (max {MAX_SESSION_TOKEN_BYTES})",
                             "data.session_token")]
    return [R_TOKEN.ok(f"session_token is {n} bytes", "data.session_token")]


def check_negotiation(
    result: NegotiateResult,
    requested_capabilities: Iterable[str],
    consumer_versions: Iterable[int] = (2, 1),
    provider_versions: Iterable[int] | None = None,
) -> list[Finding]:
    out = check_capabilities(result.capabilities, requested_capabilities)
    out += check_limits(result.limits)
    out += check_session_token(result.session_token)
    if provider_versions is not None:
        out += check_selected_version(result.selected_version, consumer_versions,
                                      provider_versions)
    return out


# --------------------------------------------------------------------------------------
# identity and descriptors
# --------------------------------------------------------------------------------------


def check_provider_id(provider_id: str, package: str, path: str = "data.provider_id"
                      ) -> list[Finding]:
    if provider_id == package or provider_id.startswith(package + "."):
        return [R_PROVIDER_ID.ok(f"provider_id {provider_id!r} is within {package}", path)]
    return [R_PROVIDER_ID.fail(f"provider_id {_show(provider_id)} is outside the package "
                               f"namespace {package}", path)]


def check_provider_id_stable(negotiated_id: str, info_id: str) -> list[Finding]:
    if not negotiated_id:
        return []
    return [R_PROVIDER_ID_STABLE.finding(
        negotiated_id == info_id,
        f"provider_id {negotiated_id!r} in both" if negotiated_id == info_id else
        f"negotiate says {_show(negotiated_id)}, get_provider_info says {_show(info_id)}",
        "data.provider_id")]


def check_tool_names(tools: ToolList | Sequence[ToolDescriptor] | Sequence[str],
                     prefix: str = "tools") -> list[Finding]:
    out = []
    items = list(tools.tools) if isinstance(tools, ToolList) else list(tools)
    for i, t in enumerate(items):
        name = t if isinstance(t, str) else t.name
        path = f"{prefix}[{i}].name"
        if tool_name_ok(name):
            out.append(R_TOOL_NAME.ok(f"{name!r}", path))
        else:
            out.append(R_TOOL_NAME.fail(f"{_show(name)} does not match {TOOL_NAME_PATTERN}",
                                        path))
    return out


def check_tool_names_unique(tools: ToolList | Sequence[ToolDescriptor] | Sequence[str]
                            ) -> list[Finding]:
    items = list(tools.tools) if isinstance(tools, ToolList) else list(tools)
    names = [t if isinstance(t, str) else t.name for t in items]
    if not names:
        return []
    dups = [n for n, c in Counter(names).items() if c > 1]
    if not dups:
        return [R_TOOL_UNIQUE.ok(f"{len(names)} distinct tool names", "tools")]
    return [R_TOOL_UNIQUE.fail(f"tool name {_show(n)} appears {names.count(n)} times", "tools")
            for n in dups]


def check_scopes(info: ProviderInfo | V1ProviderInfo) -> list[Finding]:
    out = []
    names = [s.name for s in info.scopes]
    for i, n in enumerate(names):
        path = f"scopes[{i}].name"
        if scope_name_ok(n):
            out.append(R_SCOPE_NAME.ok(repr(n), path))
        else:
            out.append(R_SCOPE_NAME.fail(f"{_show(n)} does not match {SCOPE_NAME_PATTERN}", path))
    for n, c in Counter(names).items():
        if c > 1:
            out.append(R_SCOPE_UNIQUE.fail(f"scope {_show(n)} is declared {c} times", "scopes"))
    if names and len(set(names)) == len(names):
        out.append(R_SCOPE_UNIQUE.ok(f"{len(names)} distinct scopes", "scopes"))
    return out


def check_scope_references(info: ProviderInfo, tools: ToolList | Sequence[ToolDescriptor]
                           ) -> list[Finding]:
    declared = {s.name for s in info.scopes}
    out = []
    for i, t in enumerate(_tools(tools)):
        for j, s in enumerate(t.scopes):
            path = f"tools[{i}].scopes[{j}]"
            if s in declared:
                out.append(R_SCOPE_DECLARED.ok(f"{t.name}: {s!r} declared", path))
            else:
                out.append(R_SCOPE_DECLARED.fail(
                    f"tool {t.name!r} requires scope {_show(s)}, which get_provider_info does "
                    "not declare", path))
    return out


def annotation_problem(a: Annotations) -> str | None:
    """Why the annotations break §3.4's confirmation rule, or None."""
    if not a.needs_confirmation_always or a.confirmation.value == "always":
        return None
    why = []
    if a.effect in (Effect.DELETE, Effect.TRANSACTION):
        why.append(f"effect={a.effect.value}")
    if a.destructive:
        why.append("destructive=true")
    if a.risk.value == "high":
        why.append("risk=high")
    return f"{' and '.join(why)} requires confirmation=always, not {a.confirmation.value}"


def check_annotations(tools: ToolList | Sequence[ToolDescriptor],
                      capabilities: Iterable[str] | None = None) -> list[Finding]:
    """§3.4 confirmation rule; the async rule too when `capabilities` (negotiated) is given;
    INFO findings for annotations that relied on defaults."""
    caps = set(capabilities) if capabilities is not None else None
    out: list[Finding] = []
    for i, t in enumerate(_tools(tools)):
        a = t.annotations
        path = f"tools[{i}].annotations"
        if a.needs_confirmation_always:
            prob = annotation_problem(a)
            out.append(R_CONFIRM.finding(prob is None,
                                         f"{t.name}: " + (prob or "confirmation=always"),
                                         f"{path}.confirmation"))
        if caps is not None and a.execution == Execution.SYNC_OR_ASYNC:
            ok = CAP_ASYNC in caps
            out.append(R_ASYNC_EXEC.finding(
                ok, f"{t.name}: execution=sync_or_async "
                + ("with async_operations negotiated" if ok
                   else "but async_operations was not negotiated"), f"{path}.execution"))
        out.append(R_ANN_DEFAULTS.finding(
            not a.defaulted, f"{t.name}: " + (f"{', '.join(sorted(a.defaulted))} not stated "
                                              "(defaults assumed)" if a.defaulted
                                              else "all annotations stated"), path))
    return out


def check_output_schemas(tools: ToolList | Sequence[ToolDescriptor]) -> list[Finding]:
    out = []
    for i, t in enumerate(_tools(tools)):
        out.append(R_OUTPUT_SCHEMA.finding(t.output_schema is not None,
                                           f"{t.name}: " + ("output_schema declared"
                                                            if t.output_schema is not None
                                                            else "no output_schema"),
                                           f"tools[{i}].output_schema"))
    return out


def _tool_fingerprint(t: ToolDescriptor) -> str:
    return json.dumps(t.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)


def tool_list_diff(old: ToolList, new: ToolList) -> dict[str, list[str]]:
    """{'added': [...], 'removed': [...], 'changed': [...]} tool names."""
    o = {t.name: _tool_fingerprint(t) for t in old.tools}
    n = {t.name: _tool_fingerprint(t) for t in new.tools}
    return {
        "added": sorted(set(n) - set(o)),
        "removed": sorted(set(o) - set(n)),
        "changed": sorted(k for k in set(o) & set(n) if o[k] != n[k]),
    }


def check_revision(old: ToolList, new: ToolList) -> list[Finding]:
    """§3.3: the same revision must mean the same tools."""
    diff = tool_list_diff(old, new)
    changed = any(diff.values())
    if old.revision != new.revision:
        return [R_REVISION.ok(f"revision {old.revision!r} → {new.revision!r}", "revision")]
    if not changed:
        return [R_REVISION.ok(f"revision {new.revision!r} and the tools are unchanged",
                              "revision")]
    parts = [f"{k}: {', '.join(v)}" for k, v in diff.items() if v]
    return [R_REVISION.fail(f"the tools changed ({'; '.join(parts)}) but the revision stayed "
                            f"{new.revision!r}", "revision")]


# --------------------------------------------------------------------------------------
# schemas
# --------------------------------------------------------------------------------------


def tool_schemas(tools: ToolList | Sequence[ToolDescriptor]) -> list[tuple[str, Any]]:
    """(path, schema) for every input and output schema."""
    out: list[tuple[str, Any]] = []
    for i, t in enumerate(_tools(tools)):
        out.append((f"tools[{i}].input_schema", t.input_schema))
        if t.output_schema is not None:
            out.append((f"tools[{i}].output_schema", t.output_schema))
    return out


def check_schema_refs(items: Iterable[tuple[str, Any]]) -> list[Finding]:
    out = []
    for path, sch in items:
        refs = schemas.find_remote_refs(sch)
        if not refs:
            out.append(R_REMOTE_REF.ok("only fragment references", path))
        for ptr, ref in refs:
            out.append(R_REMOTE_REF.fail(f"$ref {_show(ref)} points outside the document",
                                         f"{path}{ptr.replace('/', '.') if ptr else ''}"))
    return out


def check_schemas_valid(items: Iterable[tuple[str, Any]], dialect: str | None = None
                        ) -> list[Finding]:
    out = []
    d = dialect if dialect and schemas.check_dialect(dialect).known else None
    for path, sch in items:
        errs = schemas.check_schema(sch, d)
        if not errs:
            out.append(R_SCHEMA_VALID.ok("valid schema", path))
        for ptr, msg in errs[:5]:
            out.append(R_SCHEMA_VALID.fail(f"invalid schema at {ptr or '/'}: {msg}", path))
    return out


def check_dialect(dialect: str | None, items: Iterable[tuple[str, Any]] = ()) -> list[Finding]:
    """The session dialect is known; no schema's `$schema` switches to another one."""
    out = []
    d = dialect or DRAFT_2020_12
    dc = schemas.check_dialect(d)
    out.append(R_DIALECT.finding(dc.known, dc.message, "schema_dialect"))
    for path, sch in items:
        if isinstance(sch, Mapping) and "$schema" in sch:
            s = sch["$schema"]
            sc = schemas.check_dialect(s)
            same = sc.known and dc.known and schemas._norm_dialect(str(s)) == \
                schemas._norm_dialect(d)
            out.append(R_DIALECT.finding(
                same, f"$schema {_show(s)}" + ("" if same else f" differs from the session "
                                                             f"dialect {d}"), f"{path}.$schema"))
    return out


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


# --------------------------------------------------------------------------------------
# AndyClaw
# --------------------------------------------------------------------------------------


def check_extension_declaration(ext: ExtensionDeclaration) -> list[Finding]:
    out = []
    missing = []
    if ext.flag_raw is not True:
        missing.append("EXTENSION (boolean true)")
    if not ext.id_declared:
        missing.append("EXTENSION_ID")
    if not ext.name_declared:
        missing.append("EXTENSION_NAME")
    if ext.manifest_resource_id is None:
        missing.append("EXTENSION_MANIFEST")
    out.append(R_EXT_META.finding(not missing, "meta-data complete" if not missing else
                                  "missing or wrong: " + ", ".join(missing), ext.package))
    usable = [b for b in ext.bridges if b.exported and b.enabled]
    if not ext.bridges:
        out.append(R_EXT_BRIDGE.fail("no bridge component", ext.package))
    elif ext.bridge is not None and not any(b.bridge == ext.bridge for b in usable):
        out.append(R_EXT_BRIDGE.fail(f"the chosen {ext.bridge.value} bridge is not exported "
                                     "and enabled", ext.package))
    else:
        out.append(R_EXT_BRIDGE.ok(f"{ext.bridge.value if ext.bridge else '?'} bridge",
                                   ext.package))
    prov = next((b for b in ext.bridges if b.bridge.value == "provider"), None)
    if prov is not None:
        ok = prov.authority == ext.host_authority
        out.append(R_EXT_AUTHORITY.finding(ok, f"authority {prov.authority}" + (
            "" if ok else f"; the host calls {ext.host_authority}"), ext.package))
    return out


def _fn_key(f: ExtensionFunction) -> str:
    return json.dumps({"d": f.description, "s": f.inputSchema, "a": f.requiresApproval,
                       "p": f.requiredPermissions}, sort_keys=True, ensure_ascii=False)


def check_manifest_drift(raw: Sequence[ExtensionFunction], service: ServiceManifest
                         ) -> list[Finding]:
    out = [R_EXT_FORM.finding(service.form == "array",
                              f"GET_MANIFEST returns the {service.form} form"
                              + ("" if service.form == "array" else
                                 " ({description, tools}) while the raw resource is an array"),
                              "manifest")]
    r = {f.name: f for f in raw}
    s = {f.name: f for f in service.functions}
    problems = []
    for n in sorted(set(r) - set(s)):
        problems.append(f"{n!r} only in the raw manifest")
    for n in sorted(set(s) - set(r)):
        problems.append(f"{n!r} only in GET_MANIFEST")
    for n in sorted(set(r) & set(s)):
        if _fn_key(r[n]) != _fn_key(s[n]):
            a, b = r[n], s[n]
            what = [k for k, x, y in (("description", a.description, b.description),
                                      ("inputSchema", a.inputSchema, b.inputSchema),
                                      ("requiresApproval", a.requiresApproval,
                                       b.requiresApproval),
                                      ("requiredPermissions", a.requiredPermissions,
                                       b.requiredPermissions)) if x != y]
            problems.append(f"{n!r} differs in {', '.join(what)}")
    if not problems:
        out.append(R_EXT_DRIFT.ok(f"{len(r)} functions agree", "manifest"))
    for p in problems:
        out.append(R_EXT_DRIFT.fail(p, "manifest"))
    return out


def check_function_names(functions_by_extension: Mapping[str, Sequence[ExtensionFunction]]
                         ) -> list[Finding]:
    """Function names unique within and across extensions (guide §3)."""
    owners: dict[str, list[str]] = {}
    for ext_id, fns in functions_by_extension.items():
        for f in fns:
            owners.setdefault(f.name, []).append(ext_id)
    out = []
    for name, exts in sorted(owners.items()):
        if len(exts) == 1:
            out.append(R_EXT_UNIQUE.ok(f"{name!r} ({exts[0]})", f"{exts[0]}:{name}"))
        else:
            where = ", ".join(sorted(set(exts)))
            out.append(R_EXT_UNIQUE.fail(f"function {_show(name)} is declared {len(exts)} times "
                                         f"({where})", f"{exts[0]}:{name}"))
    return out


def check_extension_security(
    ext: ExtensionDeclaration,
    *,
    host_uid: int | None = None,
    host_package: str | None = None,
    pinned_cert_sha256: str | None = None,
    functions: Sequence[ExtensionFunction] = (),
    host_granted: Iterable[str] | None = None,
) -> list[Finding]:
    """The host's three security checks, as far as the inputs allow."""
    out = []
    if not ext.cert_sha256:
        out.append(R_EXT_SIGNED.fail("no signing certificate reported", ext.package))
    elif pinned_cert_sha256 is not None:
        ok = pinned_cert_sha256.lower() in [c.lower() for c in ext.cert_sha256]
        out.append(R_EXT_SIGNED.finding(ok, "certificate matches the pinned hash" if ok else
                                        "no certificate matches the pinned signingCertHash",
                                        ext.package))
    else:
        out.append(R_EXT_SIGNED.ok(f"{len(ext.cert_sha256)} signing certificate(s)",
                                   ext.package))
    if host_uid is not None and ext.uid is not None:
        ok = ext.uid != host_uid
        out.append(R_EXT_UID.finding(ok, f"uid {ext.uid}" + ("" if ok else
                                                             f" is the host's uid {host_uid}"),
                                     ext.package))
    elif ext.shared_user_id:
        out.append(R_EXT_UID.fail(f"declares sharedUserId {ext.shared_user_id!r}",
                                  ext.package))
    if host_granted is not None:
        granted = set(host_granted)
        for f in functions:
            missing = [p for p in f.requiredPermissions if p not in granted]
            out.append(R_EXT_PERMS.finding(
                not missing, f"{f.name}: " + ("permissions granted" if not missing else
                                              "host lacks " + ", ".join(missing)),
                f"{ext.id}:{f.name}"))
    _ = host_package
    return out


# --------------------------------------------------------------------------------------
# aggregate
# --------------------------------------------------------------------------------------


def check_declaration(decl: CetpDeclaration) -> list[Finding]:
    return check_versions_declaration(decl) + check_same_package(decl) + check_exported(decl)


def check_descriptors(
    info: ProviderInfo | None,
    tools: ToolList | None,
    *,
    package: str | None = None,
    capabilities: Iterable[str] | None = None,
) -> list[Finding]:
    """Every static rule over a v2 provider's info and tool list."""
    out: list[Finding] = []
    if info is not None:
        if package:
            out += check_provider_id(info.provider_id, package)
        out += check_scopes(info)
    if tools is not None:
        out += check_tool_names(tools)
        out += check_tool_names_unique(tools)
        out += check_annotations(tools, capabilities)
        out += check_output_schemas(tools)
        sch = tool_schemas(tools)
        out += check_schema_refs(sch)
        dialect = info.schema_dialect if info is not None else DRAFT_2020_12
        out += check_dialect(dialect, sch)
        out += check_schemas_valid(sch, dialect)
        if info is not None:
            out += check_scope_references(info, tools)
    out += check_texts(descriptor_texts(info, tools))
    return out


CheckFn = Callable[..., list[Finding]]

#: rule id → the function that checks it (for docs and the conformance suite).
CHECKERS: dict[str, CheckFn] = {
    R_VERSIONS.id: check_versions_declaration,
    R_SAME_PACKAGE.id: check_same_package,
    R_EXPORTED.id: check_exported,
    R_V1_READ_ONLY.id: check_v1_read_only,
    R_V1_READ_ONLY_HEUR.id: check_v1_read_only,
    R_V1_NO_V2_ONLY.id: check_v1_read_only,
    R_SELECTED.id: check_selected_version,
    R_CAPS.id: check_capabilities,
    R_LIMITS.id: check_limits,
    R_TOKEN.id: check_session_token,
    R_PROVIDER_ID.id: check_provider_id,
    R_PROVIDER_ID_STABLE.id: check_provider_id_stable,
    R_TOOL_NAME.id: check_tool_names,
    R_TOOL_UNIQUE.id: check_tool_names_unique,
    R_SCOPE_NAME.id: check_scopes,
    R_SCOPE_UNIQUE.id: check_scopes,
    R_SCOPE_DECLARED.id: check_scope_references,
    R_CONFIRM.id: check_annotations,
    R_ASYNC_EXEC.id: check_annotations,
    R_ANN_DEFAULTS.id: check_annotations,
    R_OUTPUT_SCHEMA.id: check_output_schemas,
    R_REVISION.id: check_revision,
    R_REMOTE_REF.id: check_schema_refs,
    R_DIALECT.id: check_dialect,
    R_SCHEMA_VALID.id: check_schemas_valid,
    R_ECHO.id: check_reply_echo,
    R_ERR_KNOWN.id: check_error,
    R_ERR_RETRYABLE.id: check_error,
    R_ERR_SAFE.id: check_error,
    R_ERR_RESOLUTION.id: check_error,
    R_ERR_IMMUTABLE.id: check_error,
    R_ERR_NO_AUTHORIZE_INTENT.id: check_error,
    R_INLINE_LIMIT.id: check_inline_size,
    R_FILE_CAP.id: check_result_kind,
    R_ACCEPTED_CAP.id: check_accepted,
    R_TEXT_LIMITS.id: check_texts,
    R_TEXT_CONTROL.id: check_texts,
    R_TEXT_INSTRUCTIONS.id: check_texts,
    R_EXT_META.id: check_extension_declaration,
    R_EXT_BRIDGE.id: check_extension_declaration,
    R_EXT_AUTHORITY.id: check_extension_declaration,
    R_EXT_FORM.id: check_manifest_drift,
    R_EXT_DRIFT.id: check_manifest_drift,
    R_EXT_UNIQUE.id: check_function_names,
    R_EXT_SIGNED.id: check_extension_security,
    R_EXT_UID.id: check_extension_security,
    R_EXT_PERMS.id: check_extension_security,
}
