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
from typing import Any

from inspector.protocol import schema as schemas
from inspector.protocol.cetp import (
    CAP_ASYNC,
    DRAFT_2020_12,
    KNOWN_CAPABILITIES,
    LIMIT_MINIMUMS,
    MAX_SESSION_TOKEN_BYTES,
    SCOPE_NAME_PATTERN,
    TOOL_NAME_PATTERN,
    Annotations,
    Effect,
    Execution,
    Limits,
    NegotiateResult,
    ProviderInfo,
    ToolDescriptor,
    ToolList,
    V1ProviderInfo,
    V1Tool,
    V1ToolList,
)
from inspector.protocol.discovery import CetpDeclaration
from inspector.protocol.exchange import Finding
from inspector.protocol.rules_base import (  # noqa: F401 - re-exported
    ANDYCLAW,
    CETP,
    RULES,
    Level,
    Rule,
    _rule,
    _show,
)

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
# --- replies, errors, untrusted text (inspector.protocol.rules_replies; imported here so
# RULES keeps its order)
from inspector.protocol.rules_replies import (  # noqa: E402 - re-exported
    R_ACCEPTED_CAP,
    R_ECHO,
    R_ERR_IMMUTABLE,
    R_ERR_KNOWN,
    R_ERR_NO_AUTHORIZE_INTENT,
    R_ERR_RESOLUTION,
    R_ERR_RETRYABLE,
    R_ERR_SAFE,
    R_FILE_CAP,
    R_INLINE_LIMIT,
    R_TEXT_CONTROL,
    R_TEXT_INSTRUCTIONS,
    R_TEXT_LIMITS,
    check_accepted,
    check_error,
    check_inline_size,
    check_reply_echo,
    check_result_kind,
    check_texts,
    descriptor_texts,
)

_REPLY_RULES_END = len(RULES)  # keeps the two imports (and RULES' order) apart
# --- AndyClaw (inspector.protocol.rules_extension; imported here so RULES keeps its order)
from inspector.protocol.rules_extension import (  # noqa: E402 - re-exported
    R_EXT_AUTHORITY,
    R_EXT_BRIDGE,
    R_EXT_DRIFT,
    R_EXT_FORM,
    R_EXT_INPUT_SCHEMA,
    R_EXT_META,
    R_EXT_PERMS,
    R_EXT_SIGNED,
    R_EXT_UID,
    R_EXT_UNIQUE,
    check_extension_declaration,
    check_extension_security,
    check_function_names,
    check_input_schemas,
    check_manifest_drift,
)


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
# AndyClaw
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
    R_EXT_INPUT_SCHEMA.id: check_input_schemas,
    R_EXT_SIGNED.id: check_extension_security,
    R_EXT_UID.id: check_extension_security,
    R_EXT_PERMS.id: check_extension_security,
}
