"""The requirement matrix: every normative statement of the CETP v2 spec that binds a
*provider*, with the check(s) that test it, or why nothing outside the provider can.

Why a data file: the docs' matrix (`docs/conformance.md`), the coverage figure
(`cetp-inspector conformance --coverage`) and the tests that keep matrix, check registry
and docs in step (`tests/conformance/test_requirements.py`) all read this one list.

`normative=True` marks a statement written with the spec's keywords (MUST, MUST NOT,
SHOULD, SHOULD NOT, §1 of the spec); `normative=False` marks a rule the spec states without
a keyword ("the Provider returns …", a lowercase "must", the §5 table) that a check
enforces anyway — listed so every check has a home, but not counted in the figure.
Sections and quotes are from `seeds/cetp-v2-spec.txt`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Keyword = Literal["MUST", "MUST NOT", "SHOULD", "SHOULD NOT"]


@dataclass(frozen=True)
class Requirement:
    id: str
    section: str
    keyword: Keyword
    quote: str
    #: the checks that fail (MUST) or warn (SHOULD) when the statement is broken
    checks: tuple[str, ...] = ()
    #: why no check can observe it from outside the provider ("" when checked)
    unobservable: str = ""
    #: the statement uses an RFC keyword (counted in the coverage figure)
    normative: bool = True
    #: what the checks do not reach (partial coverage), said plainly
    note: str = ""

    @property
    def is_must(self) -> bool:
        return self.keyword.startswith("MUST")


R = Requirement
PHONE = "only a real phone (or the provider's own tests) can tell"

REQUIREMENTS: tuple[Requirement, ...] = (
    # §2.1 manifest ---------------------------------------------------------------------
    R("P-001", "§2.1", "MUST", "A Provider supporting both v1 and v2 MUST keep the legacy "
      "version=1 field", ("discovery.versions_consistency",)),
    R("P-002", "§2.1", "MUST NOT", "A dual-stack Provider MUST NOT return side-effecting tools "
      "from its v1 list_tools call",
      ("v1.dual_stack_read_only", "v1.dual_stack_read_only_heuristic")),
    R("P-003", "§2.1", "MUST", "A v2-only Provider uses version=2 and versions=\"2\"",
      ("discovery.versions_consistency",), normative=False),
    R("P-004", "§2.1", "MUST", "the discovered Service and authority's ContentProvider belong "
      "to the same package (a Consumer MUST verify it)", ("discovery.same_package",),
      normative=False),
    R("P-005", "§2.1", "MUST", "the provider Service is declared android:exported=\"true\"",
      ("discovery.exported",), normative=False),
    # §2.2 negotiate --------------------------------------------------------------------
    R("P-006", "§2.2", "MUST", "session_token MUST be opaque and unpredictable",
      ("negotiate.token_unique", "negotiate.token_unpredictable")),
    R("P-007", "§2.2", "MUST", "session_token … with a maximum length of 256 bytes",
      ("negotiate.session_token",)),
    R("P-008", "§2.2", "MUST", "session_token MUST be bound to the calling UID",
      ("caller.session_token_bound",)),
    R("P-009", "§2.2", "MUST", "session_token MUST be bound to the … selected version, and "
      "capability set",
      ("large.too_large_without_capability", "annotations.async_needs_capability",
       "async.accepted"),
      note="judged through sessions negotiated without large_results / async_operations: "
      "their token must not unlock those capabilities"),
    R("P-010", "§2.2", "MUST", "session_token MUST accompany subsequent v2 calls, which return "
      "NEGOTIATION_REQUIRED when it is invalid",
      ("negotiate.token_required", "negotiate.token_after_restart")),
    R("P-011", "§2.2", "MUST NOT", "If no common version exists, the Provider returns "
      "UNSUPPORTED_VERSION. It MUST NOT silently interpret the request as another version.",
      ("negotiate.no_common_version",)),
    R("P-012", "§2.2", "MUST", "limits MUST satisfy max_request_bytes >= 65536, "
      "max_inline_result_bytes >= 262144, max_concurrent_requests >= 1, and "
      "idempotency_window_seconds >= 86400", ("negotiate.limits_minimums",)),
    R("P-013", "§2.2", "SHOULD", "Both sides SHOULD retain independent local resource limits",
      ("limits.request_size_enforced",),
      note="observed as: arguments above the advertised max_request_bytes are refused"),
    R("P-014", "§2.2", "MUST", "The Provider selects the highest common version",
      ("negotiate.highest_common_version",), normative=False),
    R("P-015", "§2.2", "MUST", "returns only optional capabilities supported by both sides",
      ("negotiate.capability_intersection",), normative=False),
    R("P-016", "§8", "MUST", "A Provider advertising v2 must negotiate successfully or be "
      "disabled", ("negotiate.success",), normative=False),
    # §2.3 core -------------------------------------------------------------------------
    R("P-017", "§2.3", "MUST", "Every v2 implementation MUST support tool annotations, output "
      "schemas, scoped authorization, structured errors, Provider resolutions, and idempotent "
      "mutation deduplication",
      ("descriptors.tool_list", "result.output_schema", "scopes.enforced", "errors.envelope",
       "confirmation.resolution", "idempotency.replay")),
    R("P-018", "§2.3", "MUST NOT", "A Provider MUST NOT change capability semantics during a "
      "negotiated session",
      unobservable="the suite cannot make a provider change its capabilities; within one run "
      "the session's capabilities are held constant by every check that reuses the token"),
    R("P-019", "§2.3", "SHOULD", "it SHOULD invalidate the old session_token and require a new "
      "negotiation when capabilities change",
      unobservable="needs a capability change inside the provider (an update or a setting) "
      "that nothing outside it can trigger; " + PHONE),
    R("P-020", "§2.3", "SHOULD", "Every v2 tool declares an output_schema (output schemas are "
      "core)", ("tool.output_schema",), normative=False),
    # §3.1 identity ---------------------------------------------------------------------
    R("P-021", "§3.1", "MUST", "provider_id MUST be stable",
      ("provider.id_stable", "provider.stable_across_restart")),
    R("P-022", "§3.1", "MUST", "A custom value MUST remain within that package's namespace",
      ("provider.id_namespace",)),
    R("P-023", "§3.1", "MUST", "Tool name MUST match [a-z][a-z0-9_]{0,63}",
      ("tool.name_pattern",)),
    R("P-024", "§3.1", "MUST", "Tool name MUST … remain stable and unique within one Provider",
      ("tool.name_unique", "provider.stable_across_restart")),
    # §3.2 get_provider_info ------------------------------------------------------------
    R("P-025", "§3.2", "MUST", "A v2 Provider MUST return stable identity, description, and a "
      "scope catalog", ("descriptors.provider_info", "provider.stable_across_restart")),
    R("P-026", "§3.2", "MUST", "A scope name MUST be stable and match [a-z][a-z0-9_.-]{0,127}",
      ("scope.name_pattern", "provider.stable_across_restart")),
    R("P-027", "§3.2", "MUST", "access is read or write; sensitivity is public, personal, "
      "financial, health, device, or other", ("descriptors.provider_info",), normative=False),
    R("P-028", "§3.2", "SHOULD", "scope names are unique in the catalog",
      ("scope.name_unique",), normative=False),
    R("P-029", "§3.2", "MUST NOT", "A schema MUST NOT reference network resources; $ref may "
      "resolve only to fragments within the same schema document", ("schema.no_remote_ref",)),
    R("P-030", "§3.2", "MUST", "schema_dialect applies to every input and output schema (valid "
      "schemas under the dialect, default Draft 2020-12)", ("schema.valid", "schema.dialect"),
      normative=False),
    R("P-031", "§3.2", "MUST", "Both sides MUST ignore unknown descriptor fields",
      unobservable="descriptors flow from provider to consumer: a provider never receives one, "
      "so there is nothing of its behaviour to observe"),
    R("P-032", "§3.2", "MUST NOT", "MUST NOT ignore a missing required field or an unknown "
      "security enum value",
      ("descriptors.tool_list", "descriptors.provider_info"),
      note="a provider's side of this rule: it must not emit such descriptors"),
    R("P-033", "§3.2", "MUST", "every scope a tool requires is in the provider's scope catalog",
      ("scope.declared",), normative=False),
    # §3.3 list_tools -------------------------------------------------------------------
    R("P-034", "§3.3", "MUST", "revision MUST change whenever the tool set, schema, or security "
      "semantics change", ("tools.revision_changes",)),
    # §3.4 annotations ------------------------------------------------------------------
    R("P-035", "§3.4", "MUST NOT", "A tool with effect=read MUST NOT mutate business state "
      "beyond logging, caching, and metering", ("read.no_side_effect",),
      note="judged on what every read tool shows before and after the others ran (and the "
      "scenarios' observers); a change no read tool shows stays invisible"),
    R("P-036", "§3.4", "MUST", "effect=delete, effect=transaction, destructive=true, or "
      "risk=high requires confirmation=always", ("annotations.confirmation_always",),
      normative=False),
    R("P-037", "§3.4", "MUST", "execution=sync_or_async is valid only when async_operations "
      "was negotiated", ("annotations.async_needs_capability",), normative=False),
    R("P-038", "§3.4", "MUST", "The Provider MUST validate them [annotations] again at "
      "execution time",
      ("confirmation.consumer_flag_ignored", "v1.no_mutation_via_v1",
       "large.too_large_without_capability"),
      note="judged where a declaration has a runtime consequence: confirmation demanded at "
      "execution, no mutation through v1, capabilities honoured per session"),
    R("P-039", "§3.4", "MUST", "When runtime risk exceeds the static declaration, the Provider "
      "MUST apply the stricter policy",
      unobservable="the runtime risk is the provider's business judgement (an amount, a "
      "recipient); the confirmation scenario tests one such call, but which calls are riskier "
      "than declared only the provider knows"),
    R("P-040", "§3.4", "MUST", "If any scope is missing, the Provider MUST return AUTH_REQUIRED "
      "or PERMISSION_DENIED", ("scopes.enforced",)),
    R("P-041", "§3.4", "MUST NOT", "it MUST NOT return degraded data as if it were complete",
      ("scopes.enforced",)),
    # §4 invocation ---------------------------------------------------------------------
    R("P-042", "§4", "MUST", "An unknown method MUST return METHOD_NOT_FOUND",
      ("errors.method_not_found",)),
    R("P-043", "§4", "MUST", "a dual-stack call without that field [protocol_version] is "
      "handled as v1", ("v1.list_tools", "v1.no_mutation_via_v1"), normative=False),
    R("P-044", "§5", "MUST", "TOOL_NOT_FOUND: tool does not exist or is hidden from this caller",
      ("errors.tool_not_found",), normative=False),
    R("P-045", "§4.1", "MUST", "request_id MUST equal the execution ID that created that "
      "operation (get_operation / cancel_operation)", ("async.request_id_bound",)),
    R("P-046", "§4.1", "MUST", "The Provider MUST check the deadline before starting a "
      "business side effect",
      ("deadline.expired_not_executed", "deadline.every_mutating_tool")),
    R("P-047", "§7.3", "MUST", "A Provider must likewise treat Agent-generated arguments as "
      "untrusted input (INVALID_ARGS for arguments the input schema rejects)",
      ("errors.invalid_args",), normative=False),
    # §4.2 ------------------------------------------------------------------------------
    R("P-048", "§4.2", "MUST", "The Provider MUST validate its output against output_schema",
      ("result.output_schema",)),
    # §4.3 confirmation -----------------------------------------------------------------
    R("P-049", "§4.3", "MUST", "the Bundle MUST contain resolution (explicit, immutable "
      "PendingIntent) and resume_token", ("confirmation.resolution",)),
    R("P-050", "§4.3", "MUST NOT", "The Provider MUST NOT produce the target business side "
      "effect before confirmation completes",
      ("confirmation.no_effect_before_approval", "confirmation.approve")),
    R("P-051", "§4.3", "MUST", "High-risk confirmation MUST occur in Provider UI; a "
      "Consumer-provided \"confirmed\" Boolean is invalid",
      ("confirmation.consumer_flag_ignored",)),
    R("P-052", "§4.3", "SHOULD", "A Provider confirmation Activity SHOULD finish after approval "
      "or denial",
      unobservable="the relay sees an Activity result, not why it came; an Activity that never "
      "finishes shows up as confirmation.approve timing out (an error), " + PHONE),
    R("P-053", "§4.3", "MUST", "resume_token MUST be single-use",
      ("confirmation.token_single_use",)),
    R("P-054", "§4.3", "MUST", "resume_token MUST be … bound to the original args bytes. "
      "Changed arguments MUST fail.", ("confirmation.token_bound_to_args",)),
    R("P-055", "§4.3", "MUST", "resume_token: opaque token bound to caller, tool, original "
      "arguments, request ID, and expiry",
      ("caller.resume_token_bound", "confirmation.expired_token", "confirmation.forged_token",
       "confirmation.token_single_use")),
    R("P-056", "§4.3", "MUST", "User denial returns USER_CANCELLED", ("confirmation.deny",),
      normative=False),
    R("P-057", "§4.3", "MUST", "v2 does not use v1's implicit authorize_intent action string",
      ("error.no_authorize_intent",), normative=False),
    # §4.4 async ------------------------------------------------------------------------
    R("P-058", "§4.4", "MUST", "operation_id MUST be bound to the calling UID and unavailable "
      "to other callers", ("caller.operation_bound",)),
    R("P-059", "§4.4", "MUST", "An operation MUST remain available until at least the end of "
      "the negotiated idempotency window", ("async.window",),
      note="a run cannot wait 86400 s: the check queries the finished operation and re-sends "
      "the execution within the run, after a provider restart when allowed"),
    R("P-060", "§4.4", "MUST", "Mutation deduplication records and operation state MUST be "
      "durable; Provider process restart MUST NOT cause duplicate execution",
      ("async.restart_recovery", "idempotency.retry_after_timeout")),
    R("P-061", "§4.4", "MUST NOT", "An already committed external transaction may return "
      "CONFLICT and MUST NOT claim cancellation succeeded",
      ("async.cancel_after_commit", "async.cancel")),
    R("P-062", "§4.4", "MUST", "execute_tool returns accepted with an operation_id only after "
      "async_operations was negotiated; get_operation reports queued, running, succeeded, "
      "failed or cancelled", ("async.accepted", "async.poll"), normative=False),
    R("P-063", "§4.4", "SHOULD", "progress is optional display data (current ≤ total, never "
      "backwards)", ("async.progress",), normative=False),
    # §4.5 large results ----------------------------------------------------------------
    R("P-064", "§4.5", "MUST NOT", "When inline JSON exceeds max_inline_result_bytes, the "
      "Provider MUST NOT continue placing it in the Bundle",
      ("result.inline_limit", "large.size_sweep")),
    R("P-065", "§4.5", "MUST", "After negotiating large_results, the success Bundle uses "
      "kind=file with size_bytes, lowercase sha256 and a read-only result_fd",
      ("large.file_result", "large.size_sweep", "result.file_needs_capability"),
      normative=False),
    R("P-066", "§4.5", "MUST", "Without large_results, the Provider returns RESULT_TOO_LARGE",
      ("large.too_large_without_capability",), normative=False),
    # §5 errors -------------------------------------------------------------------------
    R("P-067", "§5", "MUST", "An error response MUST include status=\"error\", error_code, a "
      "safely displayable error_message, a Boolean retryable, and echoed protocol_version and "
      "request_id", ("errors.envelope", "reply.echo", "error.message_safe")),
    R("P-068", "§5", "MUST", "retryable as the error table says (e.g. NEGOTIATION_REQUIRED "
      "yes, INVALID_ARGS no)", ("error.retryable_matches",), normative=False),
    R("P-069", "§5", "SHOULD", "error codes come from the §5 table", ("error.known_code",),
      normative=False),
    # §6 idempotency --------------------------------------------------------------------
    R("P-070", "§6", "MUST", "Every tool with effect != read MUST deduplicate by request_id, "
      "regardless of its idempotent annotation",
      ("idempotency.replay", "idempotency.concurrent", "dedup.every_mutating_tool")),
    R("P-071", "§6", "MUST", "The deduplication key includes at least calling UID, provider_id, "
      "and request_id", ("caller.dedup_per_caller",), normative=False),
    R("P-072", "§6", "MUST", "Its record MUST bind tool name and a digest of the original "
      "arguments. Reusing the ID with different content returns INVALID_REQUEST.",
      ("idempotency.different_args", "dedup.every_mutating_tool")),
    R("P-073", "§6", "MUST", "The Provider MUST return the same terminal outcome during "
      "idempotency_window_seconds",
      ("idempotency.replay", "async.window", "idempotency.retry_after_timeout",
       "dedup.every_mutating_tool"),
      note="within the run (and across a provider restart), not over 86400 s"),
    R("P-074", "§6", "MUST", "Concurrent arrival of the same request permits only one executor",
      ("idempotency.concurrent",), normative=False),
    # §7.1 caller identity --------------------------------------------------------------
    R("P-075", "§7.1", "MUST", "The Provider MUST synchronously capture Binder.getCallingUid() "
      "at the ContentProvider.call() entry before switching execution contexts",
      ("caller.session_token_bound", "caller.operation_bound", "caller.dedup_per_caller"),
      note="seen through its consequences: calls from a second app are told apart"),
    R("P-076", "§7.1", "SHOULD", "Resolve every package for the UID instead of taking the first "
      "package",
      unobservable="needs two packages sharing one UID (android:sharedUserId, signed alike); "
      "the virtual device has none and " + PHONE),
    R("P-077", "§7.1", "SHOULD", "Verify current signing-certificate digests and … rotation "
      "history",
      unobservable="needs a caller whose certificate changes under the same package; " + PHONE),
    R("P-078", "§7.1", "SHOULD", "Bind grants to UID, package, certificate digest, scopes, and "
      "expiry",
      unobservable="grant expiry and certificate binding need time travel or a re-signed "
      "caller; the UID part is what caller.* checks see"),
    R("P-079", "§7.1", "SHOULD", "Deny or require reauthorization for shared UIDs, ambiguous "
      "package mappings, and signature changes",
      unobservable="needs shared-UID or re-signed callers; " + PHONE),
    # §7.2 least privilege --------------------------------------------------------------
    R("P-080", "§7.2", "SHOULD", "list_tools SHOULD return only tools discoverable by the "
      "caller",
      unobservable="which tools a caller may discover is the provider's policy; the suite "
      "cannot know what should have been hidden"),
    R("P-081", "§7.2", "MUST", "The Provider MUST check scopes for every execution and cannot "
      "rely on a previous list_tools result", ("scopes.enforced",)),
    R("P-082", "§7.2", "MUST", "A PendingIntent MUST explicitly target a Provider component and "
      "use the immutable flag", ("confirmation.resolution",)),
    R("P-083", "§7.2", "MUST", "High-risk UI MUST show the concrete target, action, critical "
      "parameters, and irreversible consequences",
      unobservable="what a screen shows is for a person to judge; the relay answers the "
      "screen but does not read it (" + PHONE + ")"),
    R("P-084", "§7.2", "SHOULD", "A Provider SHOULD record redacted audit events",
      unobservable="audit records are internal to the provider (the virtual device's "
      "list_executions is a test aid, not part of the protocol)"),
    # §7.3 / §8 -------------------------------------------------------------------------
    R("P-085", "§7.3", "SHOULD", "provider names, descriptions and errors are displayable: "
      "bounded, no control characters, no instructions aimed at an agent",
      ("text.length", "text.control_chars", "text.instructions"), normative=False),
    R("P-086", "§8", "SHOULD", "Existing side-effecting v1 extensions SHOULD migrate to v2",
      ("v1.side_effects_migrate",)),
    R("P-087", "§8", "MUST NOT", "Failed v2 negotiation, authorization, or security validation "
      "MUST NOT downgrade to v1 to bypass controls (expose mutations only through v2)",
      ("v1.no_mutation_via_v1",)),
    R("P-088", "§8", "SHOULD", "keep only read tools in v1 list; a dual-stack provider's v1 "
      "tools are the read-only subset of its v2 tools", ("v1.tools_subset",), normative=False),
    R("P-089", "§3.4", "SHOULD", "Annotations state destructive, open_world and execution "
      "explicitly", ("annotations.explicit",), normative=False),
    R("P-090", "§4.4", "SHOULD", "operation_id is unguessable (not a counter, a clock or the "
      "request_id): defence in depth behind its binding to the calling UID",
      ("async.operation_id_unpredictable",), normative=False),
    R("P-091", "§4.3", "SHOULD", "resume_token is opaque and unguessable (not a counter, a "
      "clock or the request_id): defence in depth behind its binding to caller and call",
      ("confirmation.resume_token_unpredictable",), normative=False),
    R("P-092", "§2.2", "MUST", "Negotiated values express protocol allowances: arguments "
      "whose UTF-8 encoding is within max_request_bytes are not refused as too large",
      ("limits.request_size_honoured",), normative=False),
)


def by_id() -> dict[str, Requirement]:
    return {r.id: r for r in REQUIREMENTS}


def requirements_for(check_id: str) -> list[Requirement]:
    """The requirements a check tests (the report quotes them)."""
    return [r for r in REQUIREMENTS if check_id in r.checks]


@dataclass(frozen=True)
class Coverage:
    musts: int
    musts_checked: int
    shoulds: int
    shoulds_checked: int
    shoulds_observable: int
    unobservable: tuple[str, ...]

    @property
    def must_percent(self) -> float:
        return 100.0 * self.musts_checked / self.musts if self.musts else 100.0

    def text(self) -> str:
        lines = [
            f"provider MUST / MUST NOT statements: {self.musts_checked}/{self.musts} have a "
            f"failing check ({self.must_percent:.1f} %)",
            f"provider SHOULD / SHOULD NOT statements: {self.shoulds_checked}/{self.shoulds} "
            f"have a warning check ({self.shoulds_observable} observable)",
            f"cannot be observed from outside the provider: {', '.join(self.unobservable)}",
            "(docs/conformance.md, 'Requirement matrix', says why for each)",
        ]
        return "\n".join(lines)


def coverage(levels: dict[str, str] | None = None) -> Coverage:
    """The figure `conformance --coverage` prints: keyword statements only; a MUST counts
    when one of its checks is a MUST check (it fails), a SHOULD when one warns."""
    if levels is None:
        from inspector.conformance.registry import CHECKS, _load

        _load()
        levels = {c.id: c.level for c in CHECKS.values()}
    musts = [r for r in REQUIREMENTS if r.normative and r.is_must]
    shoulds = [r for r in REQUIREMENTS if r.normative and not r.is_must]
    m_ok = [r for r in musts if any(levels.get(c) == "MUST" for c in r.checks)]
    s_ok = [r for r in shoulds if any(levels.get(c) in ("SHOULD", "MUST") for c in r.checks)]
    return Coverage(len(musts), len(m_ok), len(shoulds), len(s_ok),
                    len([r for r in shoulds if not r.unobservable]),
                    tuple(r.id for r in REQUIREMENTS if r.normative and r.unobservable))


def matrix_markdown() -> str:
    """The matrix as the Markdown table in docs/conformance.md (a test compares them)."""
    out = ["| id | § | keyword | statement | checks | not observable because |",
           "|---|---|---|---|---|---|"]
    for r in REQUIREMENTS:
        kw = r.keyword if r.normative else f"({r.keyword})"
        checks = ", ".join(f"`{c}`" for c in r.checks) or "—"
        why = r.unobservable or (f"partly: {r.note}" if r.note else "")
        out.append(f"| {r.id} | {r.section} | {kw} | {r.quote} | {checks} | {why} |")
    return "\n".join(out)


BEGIN = "<!-- requirement-matrix:begin (generated: python -m inspector.conformance.requirements "\
    "--write docs/conformance.md) -->"
END = "<!-- requirement-matrix:end -->"


def docs_section() -> str:
    """The generated part of docs/conformance.md: the coverage figure and the matrix."""
    return f"{BEGIN}\n\n```\n{coverage().text()}\n```\n\n{matrix_markdown()}\n\n{END}"


def write_docs(path: str) -> bool:
    """Replace the generated section of `path`; True when it changed."""
    from pathlib import Path

    p = Path(path)
    text = p.read_text(encoding="utf-8")
    start, end = text.index(BEGIN), text.index(END) + len(END)
    new = text[:start] + docs_section() + text[end:]
    if new != text:
        p.write_text(new, encoding="utf-8")
    return new != text


if __name__ == "__main__":  # pragma: no cover - docs maintenance
    import sys

    if len(sys.argv) == 3 and sys.argv[1] == "--write":
        print("updated" if write_docs(sys.argv[2]) else "unchanged")
    else:
        print(coverage().text())
