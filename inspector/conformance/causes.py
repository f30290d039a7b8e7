"""One fault, one failure: failures that follow from another failure are grouped under it.

A provider that, say, files a draft before asking for confirmation breaks one rule, but
every later confirmation check then sees an effect it should not. Reporting six failures
sends the author hunting for six bugs; the report names the cause and lists the others as
its likely consequences ("fix this first"). The table below says which check's failure
explains which others; it is deliberately narrow (a chain the checks really share), and a
consequence keeps its own outcome and evidence — only its message and `caused_by` say why.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable

from inspector.conformance.model import CheckResult, Outcome

#: cause → the checks whose failure it explains (globs), most fundamental causes first
EXPLAINS: dict[str, tuple[str, ...]] = {
    # nothing v2 works without a session
    "negotiate.success": ("*",),
    # a reply the inspector cannot parse fails whatever check made it (see `_malformed`)
    "errors.envelope": (),
    # an accepted reply the suite cannot follow spoils every later look at the operation
    "async.accepted": ("async.*", "caller.operation_bound"),
    # an effect before approval shows up in every confirmation check that watches effects
    "confirmation.no_effect_before_approval": ("confirmation.*", "caller.resume_token_bound"),
    # a cancel that rewrites a finished operation changes what later queries see
    "async.cancel_after_commit": ("async.window", "async.restart_recovery"),
    "async.window": ("async.restart_recovery",),
    # the same file result is verified again by the sweep
    "large.file_result": ("large.size_sweep",),
    # the sweep's over-sized inline reply is also judged with every inline reply of the run
    "large.size_sweep": ("result.inline_limit",),
    "large.too_large_without_capability": ("result.file_needs_capability",),
    # a provider that checks no deadline, or keeps no dedup record, fails the same rule
    # again on every other tool
    "deadline.expired_not_executed": ("deadline.every_mutating_tool",),
    "idempotency.replay": ("dedup.every_mutating_tool",),
    # a session lost in a restart answered with another code than NEGOTIATION_REQUIRED
    # leaves every check that restarts the provider without a way back
    "negotiate.token_after_restart": ("provider.stable_across_restart", "async.restart_recovery",
                                      "async.window", "idempotency.retry_after_timeout"),
    # a repeated token is also a predictable one
    "negotiate.token_unique": ("negotiate.token_unpredictable",),
}

BROKEN = (Outcome.FAIL, Outcome.ERROR)


def _malformed(r: CheckResult) -> bool:
    """The check failed because a reply broke the envelope (errors.envelope's subject)."""
    return '"kind": "malformed"' in r.message or "'kind': 'malformed'" in r.message


def _matches(check_id: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(check_id, p) for p in patterns)


def group(results: list[CheckResult]) -> dict[str, list[str]]:
    """Mark consequences in place (`caused_by`, message prefix); returns cause → ids."""
    by_id = {r.check_id: r for r in results}
    out: dict[str, list[str]] = {}
    for cause, patterns in EXPLAINS.items():
        root = by_id.get(cause)
        if root is None or root.outcome not in BROKEN or root.caused_by:
            continue
        for r in results:
            if r is root or r.caused_by or r.outcome not in BROKEN:
                continue
            if _matches(r.check_id, patterns) or (cause == "errors.envelope" and _malformed(r)):
                r.caused_by = cause
                r.message = (f"probably a consequence of {cause} failing (fix that first): "
                             + r.message)
                out.setdefault(cause, []).append(r.check_id)
    return out
