"""Asynchronous operations (§4.4) and large results (§4.5)."""

from __future__ import annotations

from typing import Any

from inspector.conformance.context import (
    NeedsSetup,
    NotApplicable,
    RunContext,
    Verdict,
    effect_vector,
    failed,
    from_findings,
    not_applicable,
    op_reply_problem,
    op_signature,
    passed,
    signature,
)
from inspector.conformance.model import Category, Outcome, Scenario
from inspector.conformance.registry import check
from inspector.conformance.scenarios import planner, require
from inspector.consumer.large_results import effective_read_limit, read_and_verify
from inspector.protocol import cetp
from inspector.protocol import rules as R
from inspector.protocol import schema as schemas
from inspector.protocol.cetp import CAP_ASYNC, CAP_CANCEL, CAP_LARGE, KNOWN_CAPABILITIES

A, L = Category.ASYNC, Category.LARGE_RESULTS


def _accepted(r: Any) -> str | None:
    s = signature(r)
    return s.get("operation_id") if s["kind"] == "accepted" else None


async def _start(ctx: RunContext, sc: Scenario, rid: str | None = None
                 ) -> tuple[str, str, Any]:
    """Start the async scenario; NeedsSetup unless it is accepted."""
    rid = rid or cetp.new_request_id()
    r = await ctx.execute(sc.tool, sc.args, request_id=rid)
    op = _accepted(r)
    if op is None:
        raise NeedsSetup(f"the `async_call` was not accepted as a background operation "
                         f"(it answered {signature(r)}); choose arguments that run long")
    return rid, op, r


def _aplan(steps: list[tuple[str, str]], **kw: Any):  # type: ignore[no-untyped-def]
    return planner("async_call", lambda sc: steps, capability=CAP_ASYNC, **kw)


@check("async.accepted", "execute_tool may return accepted with an operation_id", "§4.4",
       "MUST", A, rule_ids=("execute.accepted_needs_capability",),
       plan=_aplan([("execute_tool", "returns accepted")]))
async def accepted(ctx: RunContext) -> Verdict:
    """The async scenario is answered with status=accepted, an operation_id and (optionally)
    poll_after_ms — only after async_operations was negotiated, only for sync_or_async
    tools."""
    sc = require(ctx, "async_call", capability=CAP_ASYNC)
    b0 = await ctx.observe(sc.observer) if sc.observer else None
    rid, op, r = await _start(ctx, sc)
    # the later async checks follow this operation even when its reply is malformed, so
    # its effect is never mistaken for a second execution's
    ctx.async_run = {"rid": rid, "op": op, "before": b0}
    try:
        acc = cetp.parse_accepted(r.reply.decoded)
    except cetp.ProtocolViolation as v:
        return failed(f"accepted reply: {v}")
    v = from_findings(R.check_accepted(ctx.tool(sc.tool), ctx.capabilities))
    v.observed = {"operation_id": op, "poll_after_ms": acc.poll_after_ms}
    return v


async def _polled(ctx: RunContext, sc: Scenario) -> dict[str, Any]:
    if ctx.async_run is None:
        b0 = await ctx.observe(sc.observer) if sc.observer else None
        rid, op, _ = await _start(ctx, sc)
        ctx.async_run = {"rid": rid, "op": op, "before": b0}
    run = ctx.async_run
    if "final" not in run:
        bad: list[str] = []

        def seen(state: cetp.OperationState, r: Any) -> None:
            if state.operation_id != run["op"]:
                bad.append(f"get_operation answered for {state.operation_id}")

        final, states, last = await ctx.poll(run["op"], run["rid"], on_state=seen)
        run.update(final=final, states=states, last=last, bad=bad)
        if sc.observer is not None and final is not None:
            after = await ctx.observe(sc.observer)
            run["after"] = after
            if run.get("before") is not None:
                run["effect"] = effect_vector(run["before"].value, after.value)
    return run


@check("async.poll", "get_operation reports valid states up to a terminal one", "§4.4",
       "MUST", A, plan=_aplan([("get_operation", "until a terminal state")]))
async def poll(ctx: RunContext) -> Verdict:
    """Polling (honouring poll_after_ms) shows queued/running and ends in succeeded (with a
    result matching output_schema), failed (with a §5 error) or cancelled."""
    sc = require(ctx, "async_call", capability=CAP_ASYNC)
    run = await _polled(ctx, sc)
    states = [s.state.value for s in run["states"]]
    obs: dict[str, Any] = {"states": states}
    if run["bad"]:
        return failed("; ".join(run["bad"]), **obs)
    final = run["final"]
    if final is None:
        last = run["last"]
        problem = op_reply_problem(last, run["states"])
        what = ("the operation did not reach a terminal state within poll_timeout_ms"
                if str(problem.get("kind", "")).startswith("still_")
                else "get_operation did not return a valid operation state")
        return failed(f"{what}: {problem}", **obs)
    if final.state == cetp.OpState.SUCCEEDED and isinstance(final.result, cetp.InlineResult):
        t = ctx.tool(sc.tool)
        if t is not None and t.output_schema is not None:
            errs = schemas.validate(final.result.value, t.output_schema)
            if errs:
                return failed("the operation's result does not match output_schema: "
                              + "; ".join(f"{p or '/'}: {m}" for p, m in errs[:3]), **obs)
    return passed(f"{' → '.join(dict.fromkeys(states))}", **obs)


@check("async.progress", "progress is consistent display data", "§4.4", "SHOULD", A,
       plan=_aplan([("get_operation", "(reuses async.poll)")]))
async def progress(ctx: RunContext) -> Verdict:
    """When present, progress has current ≤ total and current never goes backwards."""
    sc = require(ctx, "async_call", capability=CAP_ASYNC)
    run = await _polled(ctx, sc)
    ps = [s.progress for s in run["states"] if s.progress is not None]
    if not ps:
        return not_applicable("the provider reported no progress")
    problems = []
    last = None
    for p in ps:
        if p.current is not None and p.total is not None and p.current > p.total:
            problems.append(f"current {p.current} > total {p.total}")
        if p.current is not None and last is not None and p.current < last:
            problems.append(f"current went back from {last} to {p.current}")
        if p.current is not None:
            last = p.current
    obs = {"progress": [p.model_dump() for p in ps[:20]]}
    if problems:
        v = failed("; ".join(problems[:5]), **obs)
        v.outcome = Outcome.WARNING
        return v
    return passed(f"{len(ps)} progress reports", **obs)


@check("async.cancel", "cancel_operation acknowledges; only a queried state says cancelled",
       "§4.4", "MUST", A,
       plan=planner("async_call", lambda sc: [("execute_tool", "start another operation"),
                                              ("cancel_operation", "at once"),
                                              ("get_operation", "until a terminal state")],
                    capability=CAP_CANCEL))
async def cancel(ctx: RunContext) -> Verdict:
    """A successful cancel_operation returns state=cancellation_requested (or CONFLICT once
    committed); the terminal state is then queried: cancelled, or succeeded/failed after a
    CONFLICT — never "cancelled" claimed by the acknowledgement alone."""
    sc = require(ctx, "async_call", capability=CAP_ASYNC)
    if CAP_CANCEL not in ctx.capabilities:
        raise NotApplicable("cancellation was not negotiated")
    b0 = await ctx.observe(sc.observer) if sc.observer else None
    rid, op, _ = await _start(ctx, sc)
    r, ack = await ctx.cancel_operation(op, rid)
    final, _states, _last = await ctx.poll(op, rid)
    b1 = await ctx.observe(sc.observer) if sc.observer else None
    obs: dict[str, Any] = {"cancel_reply": op_reply_problem(r) if ack is None
                           else ack.state.value,
                           "final": final.state.value if final else None}
    if ack is None:
        code = signature(r).get("code")
        if code != "CONFLICT":
            return failed(f"cancel_operation answered {op_reply_problem(r)}", **obs)
        if final is not None and final.state == cetp.OpState.CANCELLED:
            return failed("CONFLICT, yet the operation ended cancelled", **obs)
    elif ack.state != cetp.OpState.CANCELLATION_REQUESTED:
        return failed(f"cancel_operation answered state={ack.state.value}; a successful "
                      "cancel only acknowledges (cancellation_requested)", **obs)
    if final is None:
        return failed("no terminal state after cancelling", **obs)
    if final.state == cetp.OpState.CANCELLED and b0 is not None and b1 is not None \
            and effect_vector(b0.value, b1.value):
        return failed("the operation ended cancelled but the observer changed", **obs)
    return passed(f"acknowledged, then {final.state.value}", **obs)


@check("async.cancel_after_commit", "cancel after completion → CONFLICT, never cancelled",
       "§4.4", "MUST", A,
       plan=planner("async_call", lambda sc: [("get_operation", "(the finished operation of "
                                                                "async.poll)"),
                                              ("cancel_operation", "after it succeeded")],
                    capability=CAP_CANCEL))
async def cancel_after_commit(ctx: RunContext) -> Verdict:
    """Cancelling an operation that already succeeded must not claim cancellation: CONFLICT
    (or an acknowledgement after which the state stays succeeded)."""
    sc = require(ctx, "async_call", capability=CAP_ASYNC)
    if CAP_CANCEL not in ctx.capabilities:
        raise NotApplicable("cancellation was not negotiated")
    run = await _polled(ctx, sc)
    final = run["final"]
    if final is None or final.state != cetp.OpState.SUCCEEDED:
        raise NeedsSetup("the async_call did not succeed, so there is no committed operation "
                         "to cancel")
    r, ack = await ctx.cancel_operation(run["op"], run["rid"])
    _r, after = await ctx.get_operation(run["op"], run["rid"])
    obs = {"cancel_reply": op_reply_problem(r) if ack is None else ack.state.value,
           "state_after": after.state.value if after else None}
    if ack is not None and ack.state == cetp.OpState.CANCELLED:
        return failed("cancel_operation claimed the finished operation was cancelled", **obs)
    if after is not None and after.state != cetp.OpState.SUCCEEDED:
        return failed(f"the succeeded operation changed to {after.state.value}", **obs)
    if ack is None and signature(r).get("code") != "CONFLICT":
        return failed(f"cancel_operation answered {op_reply_problem(r)}; expected CONFLICT",
                      **obs)
    return passed("CONFLICT" if ack is None else "acknowledged; the state stayed succeeded",
                  **obs)


@check("async.window", "a finished operation stays available; a retry returns it", "§4.4",
       "MUST", A,
       plan=planner("async_call", lambda sc: [("get_operation", "again after it ended"),
                                              ("execute_tool", "same request_id again")],
                    capability=CAP_ASYNC))
async def window(ctx: RunContext) -> Verdict:
    """Within the idempotency window the terminal state is still queryable, and re-sending
    the execution (same request_id) returns the same operation or its outcome."""
    sc = require(ctx, "async_call", capability=CAP_ASYNC)
    run = await _polled(ctx, sc)
    final = run["final"]
    if final is None:
        raise NeedsSetup("the operation never finished (see async.poll)")
    await ctx.clock.sleep_ms(1000)
    _r, again = await ctx.get_operation(run["op"], run["rid"])
    r2 = await ctx.execute(sc.tool, sc.args, request_id=run["rid"])
    s2 = await ctx.settle(r2, run["rid"])
    want = op_signature(final)
    obs = {"queried": again.state.value if again else op_reply_problem(_r), "retry": s2,
           "terminal": want}
    if again is None or again.state != final.state:
        return failed("the finished operation is no longer reported as "
                      f"{final.state.value}", **obs)
    if s2 != want:
        return failed(f"re-sending the execution returned {s2}, not its outcome {want}",
                      **obs)
    return passed("still available; the retry returned the same outcome", **obs)


def _restart_extra(ctx: RunContext) -> str | None:
    return ctx.restart_problem()


@check("async.restart_recovery", "after a provider restart the operation survives and "
       "nothing runs twice", "§4.4", "MUST", A,
       plan=planner("async_call", lambda sc: [("observe", "before"),
                                              ("execute_tool", "start an operation"),
                                              ("force_stop", "the provider app, mid-operation"),
                                              ("get_operation", "after re-negotiating"),
                                              ("execute_tool", "retry with the same id"),
                                              ("observe", "one effect")],
                    observer=True, capability=CAP_ASYNC, extra=_restart_extra))
async def restart_recovery(ctx: RunContext) -> Verdict:
    """Operation state and dedup records are durable: force-stop the provider app while the
    operation runs, then query and retry with the same request_id — the operation finishes
    (or fails) once, the observer shows one execution's effect."""
    sc = require(ctx, "async_call", capability=CAP_ASYNC, observer=True)
    why = ctx.restart_problem()
    if why is not None:
        raise NeedsSetup(why)
    run = await _polled(ctx, sc)  # calibrates one execution's effect
    single = run.get("effect")
    b0 = await ctx.observe(sc.observer)
    rid, op, _ = await _start(ctx, sc)
    _r, st = await ctx.get_operation(op, rid)
    if st is not None and st.is_terminal:
        raise NeedsSetup("the operation finished before the restart; use a longer call")
    await ctx.restart_provider()
    ctx.token = None  # the provider may have lost its sessions
    final, states, last = await ctx.poll(op, rid)
    r2 = await ctx.execute(sc.tool, sc.args, request_id=rid)
    s2 = await ctx.settle(r2, rid)
    b1 = await ctx.observe(sc.observer)
    d = effect_vector(b0.value, b1.value)
    obs = {"states": [s.state.value for s in states], "retry": s2, "effect": d,
           "single_effect": single}
    if final is None:
        return failed("after the restart the operation never reached a terminal state "
                      f"({op_reply_problem(last, states)})", **obs)
    if s2 != op_signature(final):
        return failed(f"the retry returned {s2}, the operation ended {op_signature(final)}",
                      **obs)
    if single is not None and final.state == cetp.OpState.SUCCEEDED and d != single:
        return failed(f"the observer changed by {d}; one execution changes it by {single}: "
                      "the operation ran twice", **obs)
    return passed(f"survived the restart ({final.state.value}), one effect", **obs)


# --------------------------------------------------------------------------------------
# large results (§4.5)
# --------------------------------------------------------------------------------------


def _lplan(steps: list[tuple[str, str]], capability: str | None = CAP_LARGE):  # type: ignore[no-untyped-def]
    return planner("large_result", lambda sc: steps, capability=capability)


@check("large.file_result", "large results arrive as a verified file", "§4.5", "MUST", L,
       plan=_lplan([("execute_tool", "a large read"), ("read_file", "stream and verify"),
                    ("close_handle", "")]))
async def file_result(ctx: RunContext) -> Verdict:
    """With large_results negotiated, a result above max_inline_result_bytes comes as
    kind=file with a result_fd whose size and SHA-256 match, and which matches
    output_schema; the descriptor is closed."""
    sc = require(ctx, "large_result", capability=CAP_LARGE)
    rid = cetp.new_request_id()
    r = await ctx.execute(sc.tool, sc.args, request_id=rid)
    if r.reply is not None and r.reply.accepted:
        raise NeedsSetup("the large read ran as an operation; the suite verifies direct "
                         "file results")
    sig = signature(r)
    limit = ctx.limits.max_inline_result_bytes if ctx.limits else None
    if sig["kind"] == "success":
        size = len((r.reply.data or "").encode()) if r.reply else 0
        if limit is not None and size > limit:
            return failed(f"a {size}-byte result was inlined above max_inline_result_bytes "
                          f"{limit}", inline_bytes=size)
        raise NeedsSetup(f"the result fitted inline ({size} bytes); choose a larger read")
    if sig["kind"] != "file":
        return failed(f"expected a file result, got {sig}")
    env = cetp.parse_result_envelope(r.reply.decoded)
    fd = r.reply.result_fd
    if fd is None:
        return failed("kind=file without a result_fd")
    t = ctx.tool(sc.tool)
    verdict = await read_and_verify(
        ctx.relay, fd.id, declared_size=env.size_bytes, declared_sha256=env.sha256,
        declared_media_type=env.media_type,
        output_schema=t.output_schema if t is not None and isinstance(t.output_schema, dict)
        else None,
        validate=lambda s, v: schemas.validate(v, s),
        read_limit=effective_read_limit(None, ctx.options.read_cap_bytes), fd_size=fd.size,
        keep_content=False)
    obs = {"size_bytes": env.size_bytes, "sha256": env.sha256,
           "checks": {c.name: c.status.value for c in verdict.checks}}
    if not verdict.ok:
        return failed("; ".join(f"{c.name}: {c.message}" for c in verdict.failed()), **obs)
    return passed(f"{env.size_bytes} bytes verified", **obs)


@check("large.too_large_without_capability", "without large_results → RESULT_TOO_LARGE",
       "§4.5", "MUST", L,
       plan=_lplan([("negotiate", "without large_results"),
                    ("execute_tool", "the large read in that session")], capability=None))
async def too_large_without_capability(ctx: RunContext) -> Verdict:
    """In a session without large_results, the large read must answer RESULT_TOO_LARGE —
    neither an oversized inline result nor an unnegotiated file result."""
    sc = require(ctx, "large_result")
    caps = tuple(c for c in sorted(KNOWN_CAPABILITIES) if c != CAP_LARGE)
    r0, res = await ctx.negotiate(caps=caps)
    if res is None:
        return failed(f"negotiate without large_results failed: {signature(r0)}")
    rid = cetp.new_request_id()
    r = await ctx.execute(sc.tool, sc.args, request_id=rid, token=res.session_token,
                          renegotiate=False)
    sig = await ctx.settle(r, rid)
    limit = res.limits.max_inline_result_bytes
    if sig.get("code") == "RESULT_TOO_LARGE":
        return passed("RESULT_TOO_LARGE")
    if sig["kind"] == "file":
        return failed("a file result although large_results was not negotiated", reply=sig)
    if sig["kind"] == "success":
        size = len((r.reply.data or "").encode()) if r.reply else 0
        if size > limit:
            return failed(f"a {size}-byte inline result above max_inline_result_bytes "
                          f"{limit}", inline_bytes=size)
        raise NeedsSetup(f"the result fitted inline ({size} bytes); choose a larger read")
    return failed(f"expected RESULT_TOO_LARGE, got {sig}", reply=sig)
