"""Data model of the conformance suite: setup, plan, results, report.

Everything here is a pydantic model so the JSON report is `report.model_dump(mode="json")`
and its schema is `ConformanceReport.model_json_schema()` (`docs/conformance.md` describes
it; `report.REPORT_SCHEMA_VERSION` versions it).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from inspector.protocol.exchange import Finding

REPORT_SCHEMA_VERSION = 1

Level = Literal["MUST", "SHOULD", "INFO"]


class Outcome(StrEnum):
    PASS = "pass"
    FAIL = "fail"  # a MUST is broken
    WARNING = "warning"  # a SHOULD (or INFO) is not met
    NOT_APPLICABLE = "not_applicable"  # the provider has nothing this check applies to
    NEEDS_SETUP = "needs_setup"  # the check needs something from the user (see `message`)
    ERROR = "error"  # the check could not complete (device/relay failure, inspector bug)
    SKIPPED = "skipped"  # deselected by the user (--select / --skip)

    @property
    def ok(self) -> bool:
        return self in (Outcome.PASS, Outcome.NOT_APPLICABLE, Outcome.SKIPPED)


class Category(StrEnum):
    DISCOVERY = "discovery"
    NEGOTIATION = "negotiation"
    DESCRIPTORS = "descriptors"
    ERRORS = "errors"
    IDEMPOTENCY = "idempotency"
    CONFIRMATION = "confirmation"
    ASYNC = "async"
    LARGE_RESULTS = "large_results"
    UNTRUSTED = "untrusted"
    V1 = "v1"
    CALLERS = "callers"
    ENFORCEMENT = "enforcement"  # deadlines, scopes, read tools, what was advertised
    EXTENSION = "extension"  # AndyClaw extensions (inspector.conformance.extensions)


# --------------------------------------------------------------------------------------
# setup: what the user tells the suite
# --------------------------------------------------------------------------------------


class ToolCall(BaseModel):
    """A tool and its arguments (a JSON value, normally an object)."""

    tool: str
    args: Any = Field(default_factory=dict)


class Observer(BaseModel):
    """A *read* tool whose output reveals the effect of a mutation (e.g. `list_alerts`).

    The suite calls it before and after a mutating call: an effect must change its output
    once, and a replay, a retry or a denied confirmation must not change it again. Without
    an observer the checks whose claim is about effects report `needs_setup`.
    """

    tool: str
    args: Any = Field(default_factory=dict)
    #: top-level keys of the observer's output to ignore when comparing (e.g. timestamps)
    ignore_keys: list[str] = Field(default_factory=list)


class Scenario(ToolCall):
    """A call used by a group of checks, with the observer that reveals its effect."""

    observer: Observer | None = None


ConfirmationMode = Literal["auto", "human", "none"]


class ConformanceSetup(BaseModel):
    """What the suite may do and the calls it needs (JSON-loadable, `--setup FILE`).

    Safety: a tool that is not `effect=read` (or is destructive or high-risk) is invoked
    only when named in `allow_mutations`, whatever the scenarios say.
    """

    model_config = ConfigDict(extra="forbid")

    allow_mutations: list[str] = Field(default_factory=list)
    #: valid arguments per tool, for reads probed by the suite (default: generated from
    #: the input schema when possible)
    tool_args: dict[str, Any] = Field(default_factory=dict)
    #: a mutation that runs synchronously without confirmation (idempotency checks)
    mutation: Scenario | None = None
    #: other schema-valid arguments for the same tool (the "same id, different args" check;
    #: default: derived from `mutation.args`)
    mutation_alt_args: Any = None
    #: a call the provider answers with AUTH_REQUIRED / USER_ACTION_REQUIRED
    confirmation: Scenario | None = None
    #: other schema-valid arguments for the confirmation tool (args-binding check)
    confirmation_alt_args: Any = None
    #: a call the provider answers with `accepted` and that runs long enough to cancel
    async_call: Scenario | None = None
    #: a read whose result exceeds max_inline_result_bytes (large-result checks); when its
    #: tool takes an integer size argument (`bytes`, `size`, `size_bytes`) the suite also
    #: sweeps the boundaries with it (`large.size_sweep`)
    large_result: ToolCall | None = None
    #: a call needing a scope a fresh app has not been granted (`scopes.enforced`: the
    #: second caller makes it and must get AUTH_REQUIRED / PERMISSION_DENIED, no effect)
    ungranted: Scenario | None = None
    #: how confirmations are answered: "auto" through the relay (virtual device), "human"
    #: by a person on the phone (the front end prompts), "none" (checks need setup)
    confirmations: ConfirmationMode = "auto"
    #: wait this long (≤ 120 s) to test that an expired resume_token is refused
    resume_token_ttl_ms: int | None = None
    #: force-stop the provider app for the restart-recovery check
    allow_restart: bool = True
    #: bound on waiting for an operation to finish
    poll_timeout_ms: int = 60_000
    #: same-request_id calls fired at once in the concurrency check
    concurrent_calls: int = 3


# --------------------------------------------------------------------------------------
# plan
# --------------------------------------------------------------------------------------


class PlannedCall(BaseModel):
    method: str
    tool: str | None = None
    note: str = ""
    mutating: bool = False


PlanStatus = Literal["run", "needs_setup", "not_applicable", "skipped"]


class PlanItem(BaseModel):
    check_id: str
    title: str
    section: str
    level: Level
    category: Category
    status: PlanStatus
    reason: str = ""
    calls: list[PlannedCall] = Field(default_factory=list)


class Plan(BaseModel):
    """What the suite will do, shown before it runs (GUI dialog, `--plan` in the CLI)."""

    provider: str
    authority: str | None = None
    stack: str = ""
    prelude: list[PlannedCall] = Field(default_factory=list)
    items: list[PlanItem] = Field(default_factory=list)
    mutating_tools: list[str] = Field(default_factory=list)  # tools it will invoke that mutate
    warnings: list[str] = Field(default_factory=list)

    def item(self, check_id: str) -> PlanItem | None:
        return next((i for i in self.items if i.check_id == check_id), None)

    def text(self) -> str:
        lines = [f"Conformance plan for {self.provider}"
                 + (f" ({self.authority}, {self.stack})" if self.authority else "")]
        if self.prelude:
            lines.append("  first, read-only: " + ", ".join(
                c.method + (f" {c.tool}" if c.tool else "") for c in self.prelude))
        for it in self.items:
            mark = {"run": "RUN ", "needs_setup": "SETUP", "not_applicable": "N/A ",
                    "skipped": "SKIP"}[it.status]
            lines.append(f"  [{mark}] {it.check_id} ({it.level} {it.section})"
                         + (f" — {it.reason}" if it.reason else ""))
            for c in it.calls:
                flag = " [MUTATES]" if c.mutating else ""
                lines.append(f"         · {c.method}" + (f" {c.tool}" if c.tool else "")
                             + (f": {c.note}" if c.note else "") + flag)
        if self.mutating_tools:
            lines.append("  mutating tools it will invoke: " + ", ".join(self.mutating_tools))
        for w in self.warnings:
            lines.append(f"  note: {w}")
        return "\n".join(lines)


# --------------------------------------------------------------------------------------
# results
# --------------------------------------------------------------------------------------


class Evidence(BaseModel):
    """What a check saw: the exchanges it made or read, and the values it judged."""

    exchange_ids: list[str] = Field(default_factory=list)
    observed: dict[str, Any] = Field(default_factory=dict)
    findings: list[Finding] = Field(default_factory=list)


class RequirementRef(BaseModel):
    """A spec statement a check tests (inspector.conformance.requirements)."""

    id: str
    section: str
    keyword: str
    quote: str


class CheckResult(BaseModel):
    check_id: str
    title: str
    section: str
    level: Level
    category: Category
    outcome: Outcome
    message: str = ""
    evidence: Evidence = Field(default_factory=Evidence)
    duration_ms: float = 0.0
    #: the statements of the spec this check tests, quoted (the requirement matrix)
    requirements: list[RequirementRef] = Field(default_factory=list)
    #: for a failure: the call that shows it (method, tool, args as JSON) and its reply
    sent: Any = None
    received: Any = None
    #: the failing check this failure most likely follows from (inspector.conformance.causes)
    caused_by: str | None = None

    @property
    def spec_reference(self) -> str:
        return self.section


class Summary(BaseModel):
    total: int = 0
    counts: dict[str, int] = Field(default_factory=dict)  # outcome → number
    must_failed: list[str] = Field(default_factory=list)
    must_not_passed: list[str] = Field(default_factory=list)  # fail, error or needs_setup
    warnings: list[str] = Field(default_factory=list)
    #: failed MUST checks that are not a consequence of another failure
    root_failures: list[str] = Field(default_factory=list)
    #: cause → the failures grouped under it
    consequences: dict[str, list[str]] = Field(default_factory=dict)


class TargetInfo(BaseModel):
    package: str
    authority: str | None = None
    service: str | None = None
    stack: str = ""
    versions: list[int] = Field(default_factory=list)
    provider_id: str | None = None
    provider_name: str | None = None
    device: str = ""


class ConformanceReport(BaseModel):
    """The JSON report (`docs/conformance.md` documents every field)."""

    schema_version: int = REPORT_SCHEMA_VERSION
    tool: str = "cetp-inspector"
    tool_version: str = ""
    started_ms: float = 0.0
    finished_ms: float = 0.0
    target: TargetInfo
    setup: ConformanceSetup = Field(default_factory=ConformanceSetup)
    plan: Plan | None = None
    results: list[CheckResult] = Field(default_factory=list)
    #: the exchanges the failing results point at (request, reply, decoded data; long
    #: strings shortened), so evidence ids resolve without the session's traffic log
    exchanges: list[dict[str, Any]] = Field(default_factory=list)
    summary: Summary = Field(default_factory=Summary)
    #: every MUST check passed or did not apply
    passed: bool = False

    def result(self, check_id: str) -> CheckResult | None:
        return next((r for r in self.results if r.check_id == check_id), None)

    def by_outcome(self, *outcomes: Outcome) -> list[CheckResult]:
        return [r for r in self.results if r.outcome in outcomes]

    @property
    def exit_code(self) -> int:
        """0 only when every MUST check passed (or did not apply), else 1."""
        return 0 if self.passed else 1

    def finalize(self) -> None:
        counts: dict[str, int] = {}
        for r in self.results:
            counts[r.outcome.value] = counts.get(r.outcome.value, 0) + 1
        must = [r for r in self.results if r.level == "MUST"]
        self.summary = Summary(
            total=len(self.results),
            counts=counts,
            must_failed=[r.check_id for r in must if r.outcome == Outcome.FAIL],
            must_not_passed=[r.check_id for r in must if not r.outcome.ok],
            warnings=[r.check_id for r in self.results if r.outcome == Outcome.WARNING],
            root_failures=[r.check_id for r in must if r.outcome == Outcome.FAIL
                           and not r.caused_by],
            consequences=_grouped(self.results),
        )
        self.passed = not self.summary.must_not_passed

    def text(self) -> str:
        """A human summary (CLI default output)."""
        lines = [f"Conformance of {self.target.package}"
                 + (f" ({self.target.authority})" if self.target.authority else "")]
        order = [Outcome.FAIL, Outcome.ERROR, Outcome.NEEDS_SETUP, Outcome.WARNING,
                 Outcome.PASS, Outcome.NOT_APPLICABLE, Outcome.SKIPPED]
        for o in order:
            for r in self.by_outcome(o):
                if r.caused_by:
                    continue  # listed under its cause
                lines.extend(_describe(r))
                for c in self.results:
                    if c.caused_by == r.check_id:
                        lines.extend("      " + x for x in _describe(c))
        c = self.summary.counts
        lines.append("  " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
        lines.append("  RESULT: " + self.verdict())
        return "\n".join(lines)

    def verdict(self) -> str:
        """The one-line verdict (CLI and GUI): what failed first, then what needs setup —
        "0 failed, 2 need setup (…)" for a provider nothing was found wrong with."""
        if self.passed:
            return "every MUST passed"
        must = [r for r in self.results if r.level == "MUST"]
        failed_ = [r.check_id for r in must if r.outcome == Outcome.FAIL and not r.caused_by]
        grouped = [r.check_id for r in must if r.outcome == Outcome.FAIL and r.caused_by]
        errors = [r.check_id for r in must if r.outcome == Outcome.ERROR]
        setup = [r.check_id for r in must if r.outcome == Outcome.NEEDS_SETUP]
        parts = [f"{len(failed_)} failed" + (f" ({', '.join(failed_[:8])}"
                                              + (", …)" if len(failed_) > 8 else ")")
                                              if failed_ else "")]
        if grouped:
            parts.append(f"{len(grouped)} more grouped under them as consequences")
        if errors:
            parts.append(f"{len(errors)} could not complete ({', '.join(errors[:5])})")
        if setup:
            parts.append(f"{len(setup)} need setup ({', '.join(setup[:8])}"
                         + (", …)" if len(setup) > 8 else ")"))
        return ", ".join(parts)


def _grouped(results: list[CheckResult]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for r in results:
        if r.caused_by:
            out.setdefault(r.caused_by, []).append(r.check_id)
    return out


def _json(value: Any, limit: int = 600) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= limit else text[:limit] + "…"


def _describe(r: CheckResult) -> list[str]:
    """A result as text lines: outcome, message, and for a failure what was sent, what came
    back and the rule."""
    o = r.outcome
    lines = [f"  {o.value.upper():14} {r.check_id} [{r.level} {r.section}]"
             + (f": {r.message}" if r.message and o != Outcome.PASS else "")]
    if o in (Outcome.FAIL, Outcome.WARNING, Outcome.ERROR):
        if r.sent is not None:
            lines.append(f"      sent: {_json(r.sent)}")
        if r.received is not None:
            lines.append(f"      got:  {_json(r.received)}")
        for q in r.requirements[:2]:
            lines.append(f"      rule: {q.id} {q.section} {q.keyword}: \u201c{q.quote}\u201d")
    return lines
