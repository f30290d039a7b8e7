"""Checks whose claims are about effects: idempotency (§6) and provider-side confirmation
(§4.3). They run the user's `mutation` and `confirmation` scenarios — only for tools the
user allowed — and judge effects through the scenario's observer (a read tool), never by
guessing."""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

from inspector.conformance import argsgen
from inspector.conformance.context import (
    NeedsSetup,
    RunContext,
    Snapshot,
    Verdict,
    effect_vector,
    failed,
    from_findings,
    passed,
    signature,
)
from inspector.conformance.model import Category, Scenario
from inspector.conformance.registry import check
from inspector.conformance.scenarios import planner, require
from inspector.consumer.calls import CallResult
from inspector.protocol import cetp
from inspector.protocol import rules as R
from inspector.protocol.exchange import Finding

IDEM, C = Category.IDEMPOTENCY, Category.CONFIRMATION
RESOLUTION_CODES = ("AUTH_REQUIRED", "USER_ACTION_REQUIRED")


def _desc(r: CallResult) -> str:
    s = signature(r)
    return f"error {s['code']}" if s["kind"] == "error" else s["kind"]


def _code(r: CallResult) -> str | None:
    s = signature(r)
    return s.get("code") if s["kind"] == "error" else None


async def _obs(ctx: RunContext, sc: Scenario) -> Snapshot | None:
    return await ctx.observe(sc.observer) if sc.observer is not None else None


def _delta(a: Snapshot | None, b: Snapshot | None) -> dict[str, float] | None:
    """The observer's change from a to b ({} = none; None without an observer)."""
    if a is None or b is None:
        return None
    return effect_vector(a.value, b.value)


async def _first_mutation(ctx: RunContext, sc: Scenario, rid: str, args: Any = None
                          ) -> dict[str, Any]:
    """Run the mutation once; NeedsSetup unless it succeeds (sync or via an operation)."""
    r = await ctx.execute(sc.tool, sc.args if args is None else args, request_id=rid)
    sig = await ctx.settle(r, rid)
    if sig["kind"] == "error" and sig["code"] in RESOLUTION_CODES:
        raise NeedsSetup(f"the `mutation` call asked for confirmation ({sig['code']}); "
                         "choose a call that runs without it")
    if sig["kind"] not in ("success", "file"):
        raise NeedsSetup(f"the `mutation` call did not succeed ({sig}); fix its arguments")
    return sig


def _need_change(d: dict[str, float] | None, what: str) -> None:
    if d is not None and not d:
        raise NeedsSetup(f"the observer's output did not change after {what}, so it cannot "
                         "reveal effects; choose an observer that shows this one")


# --------------------------------------------------------------------------------------
# idempotency (§6)
# --------------------------------------------------------------------------------------

_MUT = dict(observer=True)


@check("idempotency.replay", "same request_id and args → same outcome, no second effect",
       "§6", "MUST", IDEM,
       plan=planner("mutation", lambda sc: [("observe", "before"),
                                            ("execute_tool", "request_id R"),
                                            ("observe", "after"),
                                            ("execute_tool", "again with R (replay)"),
                                            ("observe", "after the replay")], **_MUT))
async def replay(ctx: RunContext) -> Verdict:
    """Every tool with effect != read deduplicates by request_id: a replay returns the same
    terminal outcome and the observer shows no second effect."""
    sc = require(ctx, "mutation", observer=True)
    b0 = await _obs(ctx, sc)
    rid = cetp.new_request_id()
    s1 = await _first_mutation(ctx, sc, rid)
    b1 = await _obs(ctx, sc)
    d1 = _delta(b0, b1)
    _need_change(d1, "the mutation")
    ctx.single_effect = d1
    r2 = await ctx.execute(sc.tool, sc.args, request_id=rid)
    s2 = await ctx.settle(r2, rid)
    b2 = await _obs(ctx, sc)
    d2 = _delta(b1, b2)
    obs = {"first": s1, "replay": s2, "effect_first": d1, "effect_replay": d2}
    if d2:
        return failed("the replay changed the observer's output again: the mutation ran "
                      "twice" + (" (and returned a different outcome)" if s2 != s1 else ""),
                      **obs)
    if s2 != s1:
        return failed(f"the replay with the same request_id returned a different outcome: "
                      f"{s2}, the first call {s1}", **obs)
    return passed("same outcome, one effect", **obs)


def _alt(ctx: RunContext, sc: Scenario, given: Any) -> Any:
    if given is not None:
        return given
    t = ctx.tool(sc.tool)
    alt = argsgen.alt_args(t.input_schema, sc.args) if t is not None else None
    if alt is None:
        raise NeedsSetup("cannot derive other valid arguments for the mutation; set "
                         "`mutation_alt_args`")
    return alt


@check("idempotency.different_args", "same request_id, different args → INVALID_REQUEST",
       "§6", "MUST", IDEM,
       plan=planner("mutation", lambda sc: [("observe", "before"),
                                            ("execute_tool", "request_id R"),
                                            ("observe", "after"),
                                            ("execute_tool", "R with different arguments"),
                                            ("observe", "no new effect")], **_MUT))
async def different_args(ctx: RunContext) -> Verdict:
    """Reusing a request_id with different arguments returns INVALID_REQUEST and has no
    effect (the dedup record binds the tool and an args digest)."""
    sc = require(ctx, "mutation", observer=True)
    alt = _alt(ctx, sc, ctx.setup.mutation_alt_args)
    rid = cetp.new_request_id()
    await _first_mutation(ctx, sc, rid)
    b1 = await _obs(ctx, sc)
    r2 = await ctx.execute(sc.tool, alt, request_id=rid)
    s2 = await ctx.settle(r2, rid)
    b2 = await _obs(ctx, sc)
    d = _delta(b1, b2)
    obs = {"reply": s2, "effect": d, "alt_args": alt}
    if s2.get("code") != "INVALID_REQUEST":
        return failed(f"expected INVALID_REQUEST for the reused request_id, got {s2}", **obs)
    if d:
        return failed("INVALID_REQUEST, but the observer changed: the call had an effect",
                      **obs)
    return passed("INVALID_REQUEST, no effect", **obs)


@check("idempotency.concurrent", "concurrent calls with one request_id → one executor", "§6",
       "MUST", IDEM,
       plan=planner("mutation", lambda sc: [("observe", "before"),
                                            ("execute_tool", "N calls at once, one request_id"),
                                            ("observe", "one effect")], **_MUT))
async def concurrent(ctx: RunContext) -> Verdict:
    """Concurrent arrival of the same request permits one executor: every call returns the
    same operation or terminal outcome, and the observer shows one effect."""
    sc = require(ctx, "mutation", observer=True)
    n = max(2, ctx.setup.concurrent_calls)
    b0 = await _obs(ctx, sc)
    rid = cetp.new_request_id()
    rs = await asyncio.gather(*(ctx.execute(sc.tool, sc.args, request_id=rid)
                                for _ in range(n)))
    sigs = []
    for r in rs:
        if _code(r) == "RATE_LIMITED":  # concurrency limit: retry the same execution
            wait = r.reply.error.retry_after_ms if r.reply and r.reply.error else None
            await ctx.clock.sleep_ms(min(wait or 200, 5000))
            r = await ctx.execute(sc.tool, sc.args, request_id=rid)
        sigs.append(await ctx.settle(r, rid))
    b1 = await _obs(ctx, sc)
    d = _delta(b0, b1)
    obs = {"calls": n, "outcomes": sigs, "effect": d, "single_effect": ctx.single_effect}
    if any(s != sigs[0] for s in sigs):
        return failed("the concurrent calls returned different outcomes: more than one "
                      "executor", **obs)
    if sigs[0]["kind"] not in ("success", "file"):
        raise NeedsSetup(f"the mutation did not succeed ({sigs[0]})")
    if d is not None and not d:
        raise NeedsSetup("the observer did not change; it cannot reveal effects")
    if ctx.single_effect is not None and d != ctx.single_effect:
        return failed(f"the observer changed by {d}, one execution changes it by "
                      f"{ctx.single_effect}: the mutation ran more than once", **obs)
    return passed(f"{n} calls, one outcome, one effect", **obs)


@check("idempotency.retry_after_timeout", "a retry after a lost reply has no second effect",
       "§4.1", "MUST", IDEM,
       plan=planner("mutation", lambda sc: [("observe", "before"),
                                            ("execute_tool", "request_id R; the reply is lost "
                                             "(timeout)"),
                                            ("execute_tool", "retry with R"),
                                            ("observe", "one effect")], **_MUT))
async def retry_after_timeout(ctx: RunContext) -> Verdict:
    """The first reply is lost after the provider acted (on the virtual device its process
    dies right after the commit; elsewhere a very short timeout); the retry with the same
    request_id returns the outcome and the observer shows one effect."""
    sc = require(ctx, "mutation", observer=True)
    b0 = await _obs(ctx, sc)
    rid = cetp.new_request_id()
    how, timeout, pause = "a 1 ms timeout", 1, 300
    if "fault" in ctx.relay_caps:
        try:  # the provider commits, then its process dies before the reply leaves
            await ctx.relay.fault("restart_process", package=ctx.package, when="after_commit")
            how, timeout, pause = "the provider process died right after committing", None, 0
        except Exception:
            try:
                if ctx.reconnects:  # the connection drops after the provider acted
                    await ctx.relay.fault("drop_connection")
                    how, timeout, pause = "the connection dropped after the provider acted", \
                        None, 0
            except Exception:  # fall back to the short timeout
                pass
    r1 = await ctx.execute(sc.tool, sc.args, request_id=rid, timeout_ms=timeout)
    lost = r1.transport is not None
    if lost and pause:
        await ctx.clock.sleep_ms(pause)
    r2 = await ctx.execute(sc.tool, sc.args, request_id=rid)
    s2 = await ctx.settle(r2, rid)
    b1 = await _obs(ctx, sc)
    r3 = await ctx.execute(sc.tool, sc.args, request_id=rid)
    s3 = await ctx.settle(r3, rid)
    b2 = await _obs(ctx, sc)
    d, d_again = _delta(b0, b1), _delta(b1, b2)
    obs = {"reply_lost": lost, "how": how, "first": signature(r1), "retry": s2,
           "again": s3, "effect": d, "effect_again": d_again,
           "single_effect": ctx.single_effect}
    if s2["kind"] not in ("success", "file"):
        return failed(f"the retry with the same request_id did not return the outcome: {s2}",
                      **obs)
    if s3 != s2 or d_again:
        return failed("a further retry changed the outcome or the observer", **obs)
    if ctx.single_effect is not None and d is not None and d != ctx.single_effect:
        return failed(f"the observer changed by {d}, one execution changes it by "
                      f"{ctx.single_effect}: the mutation ran twice", **obs)
    note = "" if lost else " (the reply was not lost; only the replay was checked)"
    return passed("one outcome, one effect" + note, **obs)


# --------------------------------------------------------------------------------------
# confirmation (§4.3)
# --------------------------------------------------------------------------------------


def _confirm_extra(ctx: RunContext) -> str | None:
    return ctx.confirmation_problem()


def _cplan(steps: list[tuple[str, str]], observer: bool = True):  # type: ignore[no-untyped-def]
    return planner("confirmation", lambda sc: steps, observer=observer, extra=_confirm_extra)


async def _trigger(ctx: RunContext, sc: Scenario, rid: str | None = None
                   ) -> tuple[str, CallResult, cetp.ErrorInfo]:
    rid = rid or cetp.new_request_id()
    r = await ctx.execute(sc.tool, sc.args, request_id=rid)
    err = r.reply.error if r.reply is not None else None
    if err is None or err.error_code not in RESOLUTION_CODES:
        raise NeedsSetup(f"the `confirmation` call did not ask for confirmation (it answered "
                         f"{_desc(r)}); choose a call the provider confirms")
    return rid, r, err


def _need_resolution(err: cetp.ErrorInfo) -> None:
    if err.resolution is None or err.resume_token is None:
        raise NeedsSetup("the provider gave no resolution/resume_token to continue with "
                         "(see confirmation.resolution)")


@check("confirmation.resolution", "confirmation replies carry an immutable PendingIntent and "
       "a resume_token", "§4.3", "MUST", C,
       rule_ids=("error.resolution_fields", "error.resolution_immutable"),
       plan=_cplan([("execute_tool", "triggers the confirmation")], observer=False))
async def resolution(ctx: RunContext) -> Verdict:
    """AUTH_REQUIRED / USER_ACTION_REQUIRED carries a PendingIntent created by the provider
    (immutable, targeting its activity) and a resume_token."""
    sc = require(ctx, "confirmation")
    _, r, err = await _trigger(ctx, sc)
    fs = [f for f in R.check_error(r.reply) if f.rule_id in ("error.resolution_fields",
                                                              "error.resolution_immutable")]
    if err.resolution is not None and err.resolution.creator_package:
        ok = err.resolution.creator_package == ctx.package
        fs.append(Finding(rule_id="error.resolution_immutable", section="§7.2", level="MUST",
                          ok=ok, path="resolution.creator_package",
                          message="created by the provider" if ok else
                          f"created by {err.resolution.creator_package}, not {ctx.package}"))
    v = from_findings(fs)
    v.observed = {"error_code": err.error_code,
                  "resolution_flags": err.resolution.flags if err.resolution else None,
                  "has_resume_token": err.resume_token is not None}
    return v


@check("confirmation.no_effect_before_approval", "no effect before the user approves", "§4.3",
       "MUST", C,
       plan=_cplan([("observe", "before"), ("execute_tool", "triggers the confirmation"),
                    ("execute_tool", "same request_id again, without resume_token"),
                    ("observe", "unchanged")]))
async def no_effect_before_approval(ctx: RunContext) -> Verdict:
    """After USER_ACTION_REQUIRED (and a repeat of the call) nothing changed yet."""
    sc = require(ctx, "confirmation", observer=True)
    b0 = await _obs(ctx, sc)
    rid, _r, _err = await _trigger(ctx, sc)
    r2 = await ctx.execute(sc.tool, sc.args, request_id=rid)
    b1 = await _obs(ctx, sc)
    d = _delta(b0, b1)
    obs = {"repeat": _desc(r2), "effect": d}
    if _code(r2) not in RESOLUTION_CODES:
        return failed(f"repeating the unconfirmed call answered {_desc(r2)} instead of "
                      "asking for confirmation again", **obs)
    if d:
        return failed("the observer changed before any approval", **obs)
    return passed("nothing changed before approval", **obs)


async def _approved(ctx: RunContext, sc: Scenario) -> dict[str, Any]:
    b0 = await _obs(ctx, sc)
    rid, _r, err = await _trigger(ctx, sc)
    _need_resolution(err)
    assert err.resolution is not None and err.resume_token is not None
    res = await ctx.launch(err.resolution, approve=True)
    r2 = await ctx.execute(sc.tool, sc.args, request_id=rid, resume_token=err.resume_token)
    s2 = await ctx.settle(r2, rid)
    b1 = await _obs(ctx, sc)
    return {"rid": rid, "token": err.resume_token, "activity_ok": res.ok, "outcome": s2,
            "before": b0, "after": b1, "effect": _delta(b0, b1)}


@check("confirmation.approve", "approve, then resume with the same request_id → success",
       "§4.3", "MUST", C,
       plan=_cplan([("observe", "before"), ("execute_tool", "triggers the confirmation"),
                    ("launch_pending_intent", "approve"),
                    ("execute_tool", "resume: same request_id + resume_token"),
                    ("observe", "one effect")]))
async def approve(ctx: RunContext) -> Verdict:
    """After approval in the provider's UI, resuming the same execution succeeds and the
    effect happens (once)."""
    sc = require(ctx, "confirmation", observer=True)
    a = await _approved(ctx, sc)
    ctx.approved = a
    obs = {"activity_ok": a["activity_ok"], "outcome": a["outcome"], "effect": a["effect"]}
    if not a["activity_ok"]:
        return failed("the provider's confirmation activity did not return RESULT_OK after "
                      "approval", **obs)
    if a["outcome"]["kind"] not in ("success", "file"):
        return failed(f"the resumed call did not succeed: {a['outcome']}", **obs)
    if a["effect"] is not None and not a["effect"]:
        if _reveals(ctx, sc):
            return failed("the resumed call answered success, but the observer, which showed "
                          f"this tool's effect ({ctx.single_effect}) in idempotency.replay, "
                          "did not change: the approved action was not carried out", **obs)
        raise NeedsSetup("the observer did not change after the approved call; choose one "
                         "that reveals this effect")
    return passed("resumed and succeeded", **obs)


def _reveals(ctx: RunContext, sc: Scenario) -> bool:
    """Whether this observer is known to show this tool's effect: the `mutation` scenario
    runs the same tool with the same observer and idempotency.replay saw it change."""
    m = ctx.setup.mutation
    return bool(ctx.single_effect) and m is not None and m.tool == sc.tool \
        and m.observer is not None and sc.observer is not None \
        and m.observer.model_dump() == sc.observer.model_dump()


@check("confirmation.token_single_use", "a used resume_token has no second effect", "§4.3",
       "MUST", C,
       plan=_cplan([("execute_tool", "resume again with the used token"),
                    ("execute_tool", "the used token with a new request_id"),
                    ("observe", "no second effect")]))
async def token_single_use(ctx: RunContext) -> Verdict:
    """Re-using the resume_token (same execution, or a new request_id) must not act again:
    the same execution may return its recorded outcome; a new request_id must be refused."""
    sc = require(ctx, "confirmation", observer=True)
    a = ctx.approved or await _approved(ctx, sc)
    if a["outcome"]["kind"] not in ("success", "file"):
        raise NeedsSetup("the approved execution did not succeed (see confirmation.approve)")
    r1 = await ctx.execute(sc.tool, sc.args, request_id=a["rid"], resume_token=a["token"])
    s1 = await ctx.settle(r1, a["rid"])
    rid2 = cetp.new_request_id()
    r2 = await ctx.execute(sc.tool, sc.args, request_id=rid2, resume_token=a["token"])
    s2 = await ctx.settle(r2, rid2)
    b2 = await _obs(ctx, sc)
    d = _delta(a["after"], b2)
    obs = {"same_execution": s1, "new_request_id": s2, "effect": d}
    if s1["kind"] in ("success", "file") and s1 != a["outcome"]:
        return failed("re-using the token returned a different success: it acted again",
                      **obs)
    if s2["kind"] in ("success", "file"):
        return failed("the used resume_token was accepted for a new request_id", **obs)
    if d:
        return failed("the observer changed: the used token caused a second effect", **obs)
    return passed("no second effect", **obs)


@check("confirmation.token_bound_to_args", "a resume with changed arguments is refused",
       "§4.3", "MUST", C,
       plan=_cplan([("observe", "before"), ("execute_tool", "triggers the confirmation"),
                    ("launch_pending_intent", "approve"),
                    ("execute_tool", "resume with different arguments"),
                    ("observe", "unchanged")]))
async def token_bound_to_args(ctx: RunContext) -> Verdict:
    """resume_token is bound to the original args bytes: changed arguments must fail and
    have no effect."""
    sc = require(ctx, "confirmation", observer=True)
    alt = _alt(ctx, sc, ctx.setup.confirmation_alt_args)
    b0 = await _obs(ctx, sc)
    rid, _r, err = await _trigger(ctx, sc)
    _need_resolution(err)
    assert err.resolution is not None
    await ctx.launch(err.resolution, approve=True)
    r2 = await ctx.execute(sc.tool, alt, request_id=rid, resume_token=err.resume_token)
    s2 = await ctx.settle(r2, rid)
    b1 = await _obs(ctx, sc)
    d = _delta(b0, b1)
    obs = {"reply": s2, "effect": d, "alt_args": alt}
    if s2["kind"] != "error":
        return failed(f"resuming with changed arguments answered {s2}", **obs)
    if d:
        return failed("the observer changed: the changed-args resume had an effect", **obs)
    return passed(f"refused ({s2.get('code')}), no effect", **obs)


@check("confirmation.deny", "denial → USER_CANCELLED, no effect", "§4.3", "MUST", C,
       plan=_cplan([("observe", "before"), ("execute_tool", "triggers the confirmation"),
                    ("launch_pending_intent", "deny"),
                    ("execute_tool", "resume: same request_id + resume_token"),
                    ("observe", "unchanged")]))
async def deny(ctx: RunContext) -> Verdict:
    """When the user denies, resuming returns USER_CANCELLED and nothing changes."""
    sc = require(ctx, "confirmation", observer=True)
    b0 = await _obs(ctx, sc)
    rid, _r, err = await _trigger(ctx, sc)
    _need_resolution(err)
    assert err.resolution is not None
    res = await ctx.launch(err.resolution, approve=False)
    r2 = await ctx.execute(sc.tool, sc.args, request_id=rid, resume_token=err.resume_token)
    s2 = await ctx.settle(r2, rid)
    b1 = await _obs(ctx, sc)
    d = _delta(b0, b1)
    obs = {"activity_result_code": res.result_code, "reply": s2, "effect": d}
    if s2.get("code") != "USER_CANCELLED":
        return failed(f"expected USER_CANCELLED after denial, got {s2}", **obs)
    if d:
        return failed("the observer changed although the user denied", **obs)
    return passed("USER_CANCELLED, no effect", **obs)


def _ttl_problem(ctx: RunContext) -> str | None:
    ttl = ctx.setup.resume_token_ttl_ms
    if ttl is None:
        return ("set `resume_token_ttl_ms` to the provider's confirmation lifetime (≤ 120 s) "
                "to test expiry")
    if ttl > 120_000:
        return "resume_token_ttl_ms is above 120 s; the suite does not wait that long"
    return ctx.confirmation_problem()


@check("confirmation.expired_token", "an expired resume_token is refused", "§4.3", "MUST", C,
       plan=planner("confirmation", lambda sc: [("execute_tool", "triggers the confirmation"),
                                                ("launch_pending_intent", "approve"),
                                                ("wait", "resume_token_ttl_ms"),
                                                ("execute_tool", "resume after expiry")],
                    observer=True, extra=_ttl_problem))
async def expired_token(ctx: RunContext) -> Verdict:
    """After the resume token's lifetime, resuming must fail and have no effect."""
    sc = require(ctx, "confirmation", observer=True)
    why = _ttl_problem(ctx)
    if why is not None:
        raise NeedsSetup(why)
    ttl = int(ctx.setup.resume_token_ttl_ms or 0)
    b0 = await _obs(ctx, sc)
    rid, _r, err = await _trigger(ctx, sc)
    _need_resolution(err)
    assert err.resolution is not None
    await ctx.launch(err.resolution, approve=True)
    await ctx.clock.sleep_ms(ttl + 500)
    r2 = await ctx.execute(sc.tool, sc.args, request_id=rid, resume_token=err.resume_token)
    s2 = await ctx.settle(r2, rid)
    b1 = await _obs(ctx, sc)
    d = _delta(b0, b1)
    obs = {"reply": s2, "effect": d, "waited_ms": ttl + 500}
    if s2["kind"] != "error":
        return failed(f"the expired token was accepted: {s2}", **obs)
    if d:
        return failed("the observer changed after an expired token", **obs)
    return passed(f"refused ({s2.get('code')})", **obs)


@check("confirmation.forged_token", "a made-up resume_token is refused", "§4.3", "MUST", C,
       plan=_cplan([("observe", "before"), ("execute_tool", "triggers the confirmation"),
                    ("execute_tool", "resume with a made-up token"), ("observe", "unchanged")]))
async def forged_token(ctx: RunContext) -> Verdict:
    """A resume_token the provider never issued must not complete the execution."""
    sc = require(ctx, "confirmation", observer=True)
    b0 = await _obs(ctx, sc)
    rid, _r, _err = await _trigger(ctx, sc)
    r2 = await ctx.execute(sc.tool, sc.args, request_id=rid,
                           resume_token="cetp-inspector-" + secrets.token_urlsafe(24))
    s2 = await ctx.settle(r2, rid)
    b1 = await _obs(ctx, sc)
    d = _delta(b0, b1)
    obs = {"reply": s2, "effect": d}
    if s2["kind"] in ("success", "file"):
        return failed("a made-up resume_token completed the execution", **obs)
    if d:
        return failed("the observer changed after a made-up token", **obs)
    return passed(f"refused ({s2.get('code', s2['kind'])})", **obs)


@check("confirmation.consumer_flag_ignored", "a consumer-supplied \"confirmed\" flag is "
       "ignored", "§4.3", "MUST", C,
       plan=_cplan([("observe", "before"),
                    ("execute_tool", "with extras confirmed=true"), ("observe", "unchanged")]))
async def consumer_flag_ignored(ctx: RunContext) -> Verdict:
    """High-risk confirmation happens in provider UI: extras `confirmed=true` (Boolean) must
    not skip it."""
    sc = require(ctx, "confirmation", observer=True)
    b0 = await _obs(ctx, sc)
    rid = cetp.new_request_id()
    r = await ctx.execute(sc.tool, sc.args, request_id=rid,
                          more={"confirmed": True, "user_confirmed": True})
    s = await ctx.settle(r, rid)
    b1 = await _obs(ctx, sc)
    d = _delta(b0, b1)
    obs = {"reply": s, "effect": d}
    if s.get("code") not in RESOLUTION_CODES:
        if s["kind"] in ("success", "file"):
            return failed("the call succeeded with confirmed=true and no provider "
                          "confirmation", **obs)
        raise NeedsSetup(f"the call answered {s}; it should ask for confirmation")
    if d:
        return failed("the observer changed", **obs)
    return passed("confirmation still required", **obs)
