"""Operation ids (§4.4) and resume tokens (§4.3) nobody can guess.

Why SHOULD, not MUST: the spec makes unpredictability a MUST only for the session_token
(§2.2, `negotiate.token_unpredictable`). For an operation_id it requires binding to the
calling UID (`caller.operation_bound`) and for a resume_token binding to caller, tool,
arguments, request id and expiry (`caller.resume_token_bound`, the confirmation checks);
its own example is `op_123`. A sequential or derivable id is therefore a defence-in-depth
weakness — one binding bug away from another app reading or resuming the call — reported
as a warning so a conforming provider never fails on it.

The checks reuse every id and token the run already saw (the async and confirmation checks
make several) and top up to `SAMPLES` with calls of their own: the confirmation scenario
without resuming (no effect, §4.3) and the async scenario polled to its end.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterable

from inspector.conformance.checks_async import _start
from inspector.conformance.checks_effects import RESOLUTION_CODES
from inspector.conformance.checks_enforcement import _core
from inspector.conformance.context import NeedsSetup, RunContext, Verdict, passed
from inspector.conformance.model import Category, Outcome
from inspector.conformance.registry import check
from inspector.conformance.scenarios import planner, require
from inspector.protocol import cetp
from inspector.protocol.cetp import CAP_ASYNC, ProtocolViolation

SAMPLES = 3
MIN_VARYING = 12  # characters that must vary between samples (~48+ bits even in hex)
MIN_RID = 8  # a request id this long found inside a value means it was derived from it


def predictability_problem(samples: list[tuple[str, str]]) -> str | None:
    """Why these (value, request_id) samples, in the order they were issued, look
    guessable — or None. Judged: a value built from its request_id, fewer than
    `MIN_VARYING` characters that vary across samples, consecutive values that differ in
    at most four characters or as numbers by little (a counter or a clock)."""
    for value, rid in samples:
        if len(rid) >= MIN_RID and (rid in value or rid.replace("-", "") in value):
            return (f"{value[:60]!r} contains its request_id {rid!r}: the consumer chose "
                    "that id and anyone who sees the call knows it")
    values = [v for v, _ in samples]
    if len(set(values)) < len(values):
        return f"the same value was issued for different request ids: {values[:4]}"
    prefix = _common_prefix(values)
    varying = min(len(v) - len(prefix) for v in values)
    if varying < MIN_VARYING:
        return (f"only {varying} characters vary after the common prefix {prefix!r} "
                f"({values[:4]}): too few to be unguessable")
    for a, b in itertools.pairwise(values):
        x, y = _core(a, b)
        if max(len(x), len(y)) <= 4:
            return f"consecutive values differ only in {x!r} → {y!r}: a sequence"
        near = _numeric_distance(x, y)
        if near is not None and near < 16 ** (max(len(x), len(y)) / 2):
            return (f"consecutive values differ by {near} as numbers ({x!r} → {y!r}): a "
                    "counter or a clock")
    return None


def _common_prefix(values: Iterable[str]) -> str:
    vs = list(values)
    if not vs:
        return ""
    a, b = min(vs), max(vs)
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    return a[:i]


def _numeric_distance(x: str, y: str) -> int | None:
    try:
        return abs(int(x, 16) - int(y, 16)) if x and y else None
    except ValueError:
        return None


def _advice(what: str, issued: str) -> str:
    return (f"; generate each {what} from a CSPRNG (e.g. {issued}) — the spec requires it "
            "only to be bound to the caller, so this is a warning, not a failure")


def _warn(message: str, **observed: object) -> Verdict:
    return Verdict(Outcome.WARNING, message, dict(observed))


# --------------------------------------------------------------------------------------
# operation ids (§4.4)
# --------------------------------------------------------------------------------------


def _seen_operations(ctx: RunContext) -> list[tuple[str, str]]:
    out: dict[str, str] = {}
    for _xid, method, reply in ctx.replies:
        if method != cetp.EXECUTE_TOOL or not reply.accepted:
            continue
        try:
            op = cetp.parse_accepted(reply.decoded).operation_id
        except ProtocolViolation:
            continue
        out.setdefault(op, reply.request_id or "")
    return list(out.items())


@check("async.operation_id_unpredictable", "operation ids cannot be guessed", "§4.4",
       "SHOULD", Category.ASYNC,
       plan=planner("async_call", lambda sc: [("execute_tool", f"up to {SAMPLES} operations, "
                                               "unless the run already started them"),
                                              ("get_operation", "each to its end")],
                    capability=CAP_ASYNC))
async def operation_id_unpredictable(ctx: RunContext) -> Verdict:
    """Operation ids seen in the run (at least three; the async scenario is started and
    polled to its end for the rest) must not be a sequence, a clock, or built from the
    request_id."""
    sc = require(ctx, "async_call", capability=CAP_ASYNC)
    samples = _seen_operations(ctx)
    started: list[tuple[str, str]] = []
    while len(samples) < SAMPLES:
        rid, op, _r = await _start(ctx, sc)
        started.append((op, rid))
        samples = [*samples, (op, rid)]
    await asyncio.gather(*(ctx.poll(op, rid) for op, rid in started))
    shown = [v[:60] for v, _ in samples]
    why = predictability_problem(samples)
    if why is not None:
        return _warn("guessable operation ids: " + why
                     + _advice("operation_id", "\"op_\" + 16 random bytes in hex"),
                     operation_ids=shown)
    return passed(f"{len(samples)} operation ids, no sequence", operation_ids=shown)


# --------------------------------------------------------------------------------------
# resume tokens (§4.3)
# --------------------------------------------------------------------------------------


def _seen_resume_tokens(ctx: RunContext) -> list[tuple[str, str]]:
    out: dict[str, str] = {}
    for _xid, method, reply in ctx.replies:
        err = reply.error
        if method == cetp.EXECUTE_TOOL and err is not None and err.resume_token \
                and err.error_code in RESOLUTION_CODES:
            out.setdefault(err.resume_token, reply.request_id or "")
    return list(out.items())


@check("confirmation.resume_token_unpredictable", "resume tokens cannot be guessed", "§4.3",
       "SHOULD", Category.CONFIRMATION,
       plan=planner("confirmation", lambda sc: [("execute_tool", f"up to {SAMPLES} times, "
                                                 "new request ids, never resumed")]))
async def resume_token_unpredictable(ctx: RunContext) -> Verdict:
    """Resume tokens seen in the run (at least three; the confirmation scenario is sent with
    new request ids and never resumed, so nothing happens) must not be a sequence, a clock,
    or built from the request_id."""
    sc = require(ctx, "confirmation")
    samples = _seen_resume_tokens(ctx)
    while len(samples) < SAMPLES:
        rid = cetp.new_request_id()
        r = await ctx.execute(sc.tool, sc.args, request_id=rid)
        err = r.reply.error if r.reply is not None else None
        if err is None or not err.resume_token:
            raise NeedsSetup("the `confirmation` call did not answer with a resume_token "
                             f"(it answered {r.reply.status if r.reply else 'nothing'}); "
                             "choose a call the provider confirms")
        samples = [*samples, (err.resume_token, rid)]
    shown = [v[:60] for v, _ in samples]
    why = predictability_problem(samples)
    if why is not None:
        return _warn("guessable resume tokens: " + why
                     + _advice("resume_token", "32 random bytes, base64url"),
                     resume_tokens=shown)
    return passed(f"{len(samples)} resume tokens, no sequence", resume_tokens=shown)
