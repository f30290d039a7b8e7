"""Rules checked on every mutating tool the user allowed, not only the `mutation`
scenario's: an author who wires deduplication (§6) or the deadline check (§4.1) into the
one tool they tested and forgets the next passes every check built on that one scenario.

`dedup.every_mutating_tool`:

Each allowed side-effecting tool (except the `mutation` scenario's own, which
idempotency.* judges with its observer) is called with valid arguments under request_id R,
then again with R (the same terminal outcome — the same operation for an accepted one),
then with R and other valid arguments (INVALID_REQUEST). Judged from the replies alone, so
no observer is needed; a tool the suite cannot call (no valid arguments, an error reply) is
named with the reason and the check needs setup. A tool that asks for confirmation or a
scope grant is approved in the provider's screen and resumed first (when the relay can
answer it, as for the confirmation checks); the replay must then return the confirmed
outcome without asking again.

`deadline.every_mutating_tool`: each of those tools is sent with a deadline_at_ms a minute
in the past; success (for an accepted one: the operation polled to success) means the
business side effect ran. Any error, including a request for confirmation, passes.
"""

from __future__ import annotations

from typing import Any

from inspector.conformance import argsgen
from inspector.conformance.checks_effects import RESOLUTION_CODES
from inspector.conformance.context import (
    NeedsSetup,
    NotApplicable,
    RunContext,
    Verdict,
    failed,
    passed,
    signature,
)
from inspector.conformance.model import Category, PlannedCall
from inspector.conformance.registry import PlanDecision, check
from inspector.protocol import cetp

#: scenarios whose arguments are valid, known to run without confirmation for the caller
_ARG_SOURCES = ("async_call", "ungranted")


def _tools(ctx: RunContext) -> list[str]:
    """The allowed, listed, side-effecting tools other than the `mutation` scenario's."""
    own = ctx.setup.mutation.tool if ctx.setup.mutation is not None else None
    out = []
    for name in ctx.setup.allow_mutations:
        t = ctx.tool(name)
        if t is None or name == own or not t.annotations.side_effecting:
            continue
        if ctx.safety_problem(name) is None:
            out.append(name)
    return out


def _args(ctx: RunContext, tool: str) -> Any | None:
    if tool in ctx.setup.tool_args:
        return ctx.setup.tool_args[tool]
    for name in _ARG_SOURCES:
        sc = getattr(ctx.setup, name)
        if sc is not None and sc.tool == tool:
            return sc.args
    t = ctx.tool(tool)
    return argsgen.valid_args(t.input_schema) if t is not None else None


_DEDUP_STEPS = ("request_id R", "again with R (replay)", "R with other arguments")


def _plan(ctx: RunContext, steps: tuple[str, ...] = _DEDUP_STEPS) -> PlanDecision:
    tools = _tools(ctx)
    if not tools:
        return PlanDecision("not_applicable", "no allowed side-effecting tool besides the "
                            "`mutation` scenario's (its own checks judge that one)")
    return PlanDecision("run", "", tuple(
        PlannedCall(method="execute_tool", tool=t, note=note, mutating=True)
        for t in tools for note in steps))


async def _one(ctx: RunContext, tool: str) -> tuple[str, str, dict[str, Any]]:
    """(verdict, why, evidence) for one tool: verdict is pass, fail, confirmed or setup."""
    args = _args(ctx, tool)
    if args is None:
        return "setup", f"no valid arguments can be derived; set tool_args.{tool}", {}
    rid = cetp.new_request_id()
    r1 = await ctx.execute(tool, args, request_id=rid)
    first = signature(r1)
    ev: dict[str, Any] = {"args": args, "first": first}
    err = r1.reply.error if r1.reply is not None else None
    if err is not None and err.error_code in RESOLUTION_CODES:
        # confirm (or grant) it in the provider's screen, then resume: the replay below
        # must return that confirmed outcome without asking again
        if ctx.confirmation_problem() is not None or err.resolution is None \
                or not err.resume_token:
            return "confirmed", f"asks for confirmation ({err.error_code})", ev
        done = await ctx.launch(err.resolution, approve=True)
        ev["approved"] = done.ok
        r1 = await ctx.execute(tool, args, request_id=rid, resume_token=err.resume_token)
        ev["resumed"] = signature(r1)
    s1 = await ctx.settle(r1, rid)
    ev["outcome"] = s1
    if s1["kind"] not in ("success", "file"):
        return "setup", (f"did not succeed with {cetp.args_json(args)} ({s1}); set "
                         f"tool_args.{tool} to arguments that run"), ev
    r2 = await ctx.execute(tool, args, request_id=rid)
    again = signature(r2)
    ev["replay"] = again
    if first["kind"] == "accepted" and again["kind"] == "accepted" \
            and again.get("operation_id") != first.get("operation_id"):
        return "fail", (f"the replay started another operation ({again.get('operation_id')}, "
                        f"the first was {first.get('operation_id')})"), ev
    s2 = await ctx.settle(r2, rid)
    ev["replay_outcome"] = s2
    if s2 != s1:
        return "fail", f"the replay returned {s2}, the first call {s1}", ev
    t = ctx.tool(tool)
    alt = argsgen.alt_args(t.input_schema, args) if t is not None else None
    if alt is not None:
        r3 = await ctx.execute(tool, alt, request_id=rid)
        s3 = await ctx.settle(r3, rid)
        ev.update(alt_args=alt, other_args=s3)
        if s3.get("code") != "INVALID_REQUEST":
            return "fail", (f"request_id R with other arguments answered {s3}, not "
                            "INVALID_REQUEST"), ev
    return "pass", "same outcome on replay" + (", INVALID_REQUEST for other arguments"
                                                if alt is not None else ""), ev


@check("dedup.every_mutating_tool", "every allowed mutating tool deduplicates by request_id",
       "§6", "MUST", Category.ENFORCEMENT, plan=_plan)
async def every_mutating_tool(ctx: RunContext) -> Verdict:
    """Every allowed side-effecting tool besides the `mutation` scenario's: a replay with
    the same request_id returns the same terminal outcome (the same operation), and the
    same request_id with other valid arguments is INVALID_REQUEST. Tools that ask for
    confirmation are approved and resumed first (or, when nothing can answer the screen, left
    to the confirmation checks); tools it cannot call need setup."""
    tools = _tools(ctx)
    if not tools:
        raise NotApplicable("no allowed side-effecting tool besides the `mutation` "
                            "scenario's (idempotency.* judges that one)")
    results = {t: await _one(ctx, t) for t in tools}
    # a tool may need state another one creates (share_watchlist needs a synced watchlist):
    # one more try for the tools that answered CONFLICT, after the others ran
    for t in [t for t, (v, _, e) in results.items()
              if v == "setup" and e.get("outcome", {}).get("code") == "CONFLICT"]:
        results[t] = await _one(ctx, t)
    ev = {t: {"verdict": v, "why": why, **e} for t, (v, why, e) in results.items()}
    bad = {t: why for t, (v, why, _) in results.items() if v == "fail"}
    if bad:
        return failed("no deduplication by request_id: " + "; ".join(
            f"{t}: {why}" for t, why in bad.items())
            + " — keep a durable record per (caller, request_id) for every tool with "
            "effect != read, binding the tool and an args digest", tools=ev)
    setup = {t: why for t, (v, why, _) in results.items() if v == "setup"}
    if setup:
        raise NeedsSetup("could not call " + "; ".join(f"{t}: {why}"
                                                       for t, why in setup.items()))
    judged = [t for t, (v, _, _) in results.items() if v == "pass"]
    left = [t for t, (v, _, _) in results.items() if v == "confirmed"]
    if not judged:
        raise NotApplicable(f"every other allowed tool asks for confirmation ({left}); the "
                            "confirmation checks cover it")
    return passed(f"deduplicated: {', '.join(judged)}"
                  + (f" (asks for confirmation, left to confirmation.*: {', '.join(left)})"
                     if left else ""), tools=ev)


@check("deadline.every_mutating_tool", "an expired deadline is refused by every mutating tool",
       "§4.1", "MUST", Category.ENFORCEMENT,
       plan=lambda ctx: _plan(ctx, ("deadline_at_ms 60 s in the past",)))
async def deadline_every_tool(ctx: RunContext) -> Verdict:
    """Every allowed side-effecting tool besides the `mutation` scenario's (which
    deadline.expired_not_executed judges with its observer) is sent with an expired
    deadline: it must not succeed (DEADLINE_EXCEEDED; for an accepted call, the operation
    must not end in succeeded)."""
    tools = _tools(ctx)
    if not tools:
        raise NotApplicable("no allowed side-effecting tool besides the `mutation` "
                            "scenario's (deadline.expired_not_executed judges that one)")
    ev: dict[str, Any] = {}
    setup: dict[str, str] = {}
    for tool in tools:
        args = _args(ctx, tool)
        if args is None:
            setup[tool] = f"no valid arguments can be derived; set tool_args.{tool}"
            continue
        rid = cetp.new_request_id()
        deadline = ctx.clock.now_ms() - 60_000
        r = await ctx.execute(tool, args, request_id=rid, deadline_at_ms=deadline)
        ev[tool] = {"args": args, "deadline_at_ms": deadline, "reply": signature(r),
                    "outcome": await ctx.settle(r, rid)}
    ran = [t for t, e in ev.items() if e["outcome"]["kind"] in ("success", "file")]
    if ran:
        return failed(f"{', '.join(ran)} executed although deadline_at_ms had passed: check "
                      "the deadline before starting any business side effect, in every "
                      "tool and before starting a background operation (DEADLINE_EXCEEDED)",
                      tools=ev)
    if setup:
        raise NeedsSetup("could not call " + "; ".join(f"{t}: {w}" for t, w in setup.items()))
    return passed("refused: " + ", ".join(f"{t} ({e['outcome'].get('code')})"
                                          for t, e in ev.items()), tools=ev)
