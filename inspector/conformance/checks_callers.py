"""Caller binding (§2.2, §4.3, §4.4, §6, §7.1): what one app obtained must stay that app's.

These checks open a second relay connection that reaches the provider as *another app*
(`RunContext.other_caller`, from the connector the runner was given; the virtual device
has one, a phone has a single relay app so they report needs_setup there). Caller B is
handed caller A's session token, operation, resume token and request_id; the provider
must refuse the first three and treat the last as a new execution.
"""

from __future__ import annotations

from typing import Any

from inspector.conformance.checks_async import _start
from inspector.conformance.checks_effects import RESOLUTION_CODES, _delta, _first_mutation
from inspector.conformance.context import (
    NeedsSetup,
    RunContext,
    Snapshot,
    Verdict,
    failed,
    op_reply_problem,
    op_signature,
    passed,
    signature,
)
from inspector.conformance.model import Category, PlannedCall, Scenario
from inspector.conformance.registry import PlanDecision, check
from inspector.conformance.scenarios import require, scenario, scenario_problem
from inspector.protocol import cetp
from inspector.protocol.cetp import CAP_ASYNC

B = Category.CALLERS
#: what another caller presenting a session token may get (§2.2)
TOKEN_REFUSALS = ("NEGOTIATION_REQUIRED", "INVALID_REQUEST")


def _plan(name: str | None, steps: list[tuple[str, str]], *, observer: bool = False,
          capability: str | None = None):  # type: ignore[no-untyped-def]
    """needs_setup without a second caller or the scenario; else the calls (B = other app)."""

    def plan(ctx: RunContext) -> PlanDecision:
        why = ctx.second_caller_problem()
        if why is None and name is not None:
            why = scenario_problem(ctx, name, observer=observer, capability=capability)
        if why is not None:
            return PlanDecision("needs_setup", why)
        sc = scenario(ctx, name) if name is not None else None
        calls = []
        for method, note in steps:
            tool = sc.tool if sc is not None and method == "execute_tool" else None
            calls.append(PlannedCall(method=method, tool=tool, note=note,
                                     mutating=tool is not None and ctx.is_mutating(tool)))
        return PlanDecision("run", "", tuple(calls))

    return plan


async def _identities(ctx: RunContext) -> tuple[RunContext, dict[str, Any]]:
    other = await ctx.other_caller()
    return other, {"caller_uid": ctx.caller_uid(), "other_caller_uid": other.caller_uid()}


async def _observe_both(ctx: RunContext, other: RunContext, sc: Scenario
                        ) -> tuple[Snapshot | None, Snapshot | None]:
    """The observer as seen by each caller (providers often scope data by caller)."""
    if sc.observer is None:
        return None, None
    return await ctx.observe(sc.observer), await other.observe(sc.observer)


@check("caller.session_token_bound", "another caller cannot use a session token", "§2.2",
       "MUST", B,
       plan=_plan(None, [("negotiate", "caller A (this run's session)"),
                         ("list_tools", "caller B (another app) with A's session_token")]))
async def session_token_bound(ctx: RunContext) -> Verdict:
    """session_token is bound to the calling UID: another app presenting it gets
    NEGOTIATION_REQUIRED or INVALID_REQUEST, never the session (list_tools is read-only)."""
    token = await ctx.ensure_token()
    other, who = await _identities(ctx)
    r = await other.v2(cetp.LIST_TOOLS, token=token)
    if r.transport is not None:
        raise NeedsSetup(f"caller B's call failed at the relay ({r.transport.code}: "
                         f"{r.transport.message})")
    err = r.reply.error if r.reply is not None else None
    got: dict[str, Any] = ({"kind": "error", "code": err.error_code} if err is not None else
                           {"kind": "success" if r.reply is not None and r.reply.ok
                            else "malformed"})
    obs = {**who, "other_caller_got": got}
    if err is not None and err.error_code in TOKEN_REFUSALS:
        return passed(f"caller B was refused with {err.error_code}", **obs)
    if got["kind"] == "success":
        return failed("the provider served list_tools to another app presenting caller A's "
                      "session_token: the session is not bound to the calling UID", **obs)
    return failed(f"another caller presenting A's session_token got {got}; the spec allows "
                  f"only {' or '.join(TOKEN_REFUSALS)}", **obs)


@check("caller.operation_bound", "another caller cannot read or cancel an operation",
       "§4.4", "MUST", B,
       plan=_plan("async_call", [("execute_tool", "caller A starts the operation"),
                                 ("get_operation", "caller B, A's operation_id + request_id"),
                                 ("cancel_operation", "caller B, same ids"),
                                 ("get_operation", "caller A polls to the end")],
                  capability=CAP_ASYNC))
async def operation_bound(ctx: RunContext) -> Verdict:
    """operation_id is bound to the calling UID: another app asking for (or cancelling) A's
    operation, even with the right request_id, gets an error and A's operation runs on."""
    sc = require(ctx, "async_call", capability=CAP_ASYNC)
    other, who = await _identities(ctx)
    rid, op_id, _ = await _start(ctx, sc)
    rg, state = await other.get_operation(op_id, rid)
    rc, cancelled = await other.cancel_operation(op_id, rid)
    op, _, _ = await ctx.poll(op_id, rid)
    final = op_signature(op) if op is not None else {"kind": "unfinished"}
    obs = {**who, "operation_id": op_id, "other_get": op_reply_problem(rg),
           "other_cancel": op_reply_problem(rc), "first_caller_final": final}
    if state is not None:
        return failed(f"get_operation by another app returned caller A's operation "
                      f"(state {state.state.value}): operation_id is not bound to the caller",
                      **obs)
    if cancelled is not None or final.get("kind") == "cancelled":
        return failed("another app cancelled caller A's operation", **obs)
    for what, r in (("get_operation", rg), ("cancel_operation", rc)):
        if signature(r)["kind"] != "error":
            return failed(f"{what} by another app did not return an error "
                          f"({op_reply_problem(r)})",
                          **obs)
    return passed("caller B got errors for A's operation; A's operation ran to its end",
                  **obs)


@check("caller.resume_token_bound", "another caller cannot use a resume_token", "§4.3",
       "MUST", B,
       plan=_plan("confirmation", [("execute_tool", "caller A triggers the confirmation"),
                                   ("launch_pending_intent", "approve"),
                                   ("observe", "A's and B's observer, before"),
                                   ("execute_tool", "caller B: same request_id, args and "
                                                    "A's resume_token"),
                                   ("observe", "A's and B's observer, after")],
                  observer=True))
async def resume_token_bound(ctx: RunContext) -> Verdict:
    """resume_token is bound to the caller: another app presenting A's approved token (same
    request_id and args) must get an error and cause no effect, for A or for itself."""
    sc = require(ctx, "confirmation", observer=True)
    other, who = await _identities(ctx)
    rid = cetp.new_request_id()
    r = await ctx.execute(sc.tool, sc.args, request_id=rid)
    err = r.reply.error if r.reply is not None else None
    if err is None or err.error_code not in RESOLUTION_CODES:
        raise NeedsSetup(f"the `confirmation` call did not ask for confirmation ({signature(r)})")
    if err.resolution is None or err.resume_token is None:
        raise NeedsSetup("the provider gave no resolution/resume_token to continue with")
    await ctx.launch(err.resolution, approve=True)
    a0, b0 = await _observe_both(ctx, other, sc)
    r2 = await other.execute(sc.tool, sc.args, request_id=rid, resume_token=err.resume_token)
    s2 = signature(r2)
    a1, b1 = await _observe_both(ctx, other, sc)
    da, db = _delta(a0, a1), _delta(b0, b1)
    obs = {**who, "other_caller_got": s2, "effect_for_a": da, "effect_for_b": db}
    if s2["kind"] in ("success", "file", "accepted"):
        return failed(f"another app's call with caller A's resume_token was executed "
                      f"({s2['kind']}): the token is not bound to the caller", **obs)
    if da or db:
        return failed("another app's call with A's resume_token changed the observer's "
                      "output", **obs)
    if s2["kind"] != "error":
        return failed(f"another app's call with A's resume_token got {s2}", **obs)
    return passed(f"caller B was refused ({s2['code']}) and nothing changed", **obs)


@check("caller.dedup_per_caller", "the same request_id from another caller is a new execution",
       "§6", "MUST", B,
       plan=_plan("mutation", [("observe", "A's and B's observer, before"),
                               ("execute_tool", "caller A, request_id R"),
                               ("execute_tool", "caller B, same tool, args and R"),
                               ("observe", "A's and B's observer, after")], observer=True))
async def dedup_per_caller(ctx: RunContext) -> Verdict:
    """The dedup key includes the calling UID: another app's call with the same request_id
    and args runs as its own execution (its effect shows), never returning caller A's
    stored result."""
    sc = require(ctx, "mutation", observer=True)
    other, who = await _identities(ctx)
    rid = cetp.new_request_id()
    s1 = await _first_mutation(ctx, sc, rid)
    a0, b0 = await _observe_both(ctx, other, sc)
    r2 = await other.execute(sc.tool, sc.args, request_id=rid)
    s2 = await other.settle(r2, rid)
    a1, b1 = await _observe_both(ctx, other, sc)
    da, db = _delta(a0, a1), _delta(b0, b1)
    obs = {**who, "first": s1, "other_caller_got": s2, "effect_for_a": da,
           "effect_for_b": db}
    if s2["kind"] == "error" and s2.get("code") in RESOLUTION_CODES:
        raise NeedsSetup(f"the `mutation` call asks another app for confirmation "
                         f"({s2['code']}); choose one any caller may run without it")
    if da or db:
        return passed("caller B's call with the same request_id ran as its own execution",
                      **obs)
    if s2 == s1:
        return failed("caller B got caller A's stored result for the same request_id and no "
                      "effect: the dedup key does not include the calling UID", **obs)
    return failed(f"caller B's call with A's request_id did not execute (it got {s2}): "
                  "the dedup key does not include the calling UID", **obs)
