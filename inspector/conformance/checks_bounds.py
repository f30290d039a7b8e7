"""Boundary and binding checks on the scenarios: the large-result size sweep (§4.5: limit−1,
limit, limit+1 and past 1 MiB, not just the one size the user chose) and the operation's
binding to its creating request_id (§4.1)."""

from __future__ import annotations

from typing import Any

from inspector.conformance.checks_async import _start
from inspector.conformance.context import (
    NeedsSetup,
    RunContext,
    Verdict,
    failed,
    passed,
    signature,
)
from inspector.conformance.model import Category, ToolCall
from inspector.conformance.registry import PlanDecision, check
from inspector.conformance.scenarios import planner, require, scenario_problem
from inspector.consumer.large_results import effective_read_limit, read_and_verify
from inspector.protocol import cetp
from inspector.protocol import schema as schemas
from inspector.protocol.cetp import CAP_ASYNC, CAP_LARGE

A, L = Category.ASYNC, Category.LARGE_RESULTS
SIZE_ARGS = ("bytes", "size", "size_bytes")
MIB = 1 << 20


@check("async.request_id_bound", "get_operation needs the creating request_id", "§4.1",
       "MUST", A,
       plan=planner("async_call", lambda sc: [("execute_tool", "accepted, request_id R"),
                                              ("get_operation", "with another request_id"),
                                              ("get_operation", "with R, to the end")],
                    capability=CAP_ASYNC))
async def request_id_bound(ctx: RunContext) -> Verdict:
    """get_operation with the right operation_id but a request_id other than the execution
    that created it must be refused (request_id MUST equal the creating execution's ID);
    with the right one the operation is then followed to its end."""
    sc = require(ctx, "async_call", capability=CAP_ASYNC)
    rid, op, _ = await _start(ctx, sc)
    other = cetp.new_request_id()
    wrong, state = await ctx.get_operation(op, other)
    end, _, _ = await ctx.poll(op, rid)
    obs = {"operation_id": op, "request_id": rid, "sent_request_id": other,
           "reply": signature(wrong), "final": end.state.value if end else None}
    if state is not None or (wrong.reply is not None and wrong.reply.ok):
        return failed("get_operation answered for an operation_id sent with a request_id that "
                      "did not create it: bind operations to the creating request_id and "
                      "refuse others (INVALID_REQUEST)", **obs)
    return passed(f"refused ({signature(wrong).get('code')})", **obs)


# --------------------------------------------------------------------------------------
# the size sweep (§4.5)
# --------------------------------------------------------------------------------------


def _size_arg(ctx: RunContext, sc: ToolCall) -> str | None:
    """The scenario's integer size argument, when its tool has one."""
    t = ctx.tool(sc.tool)
    if t is None or not isinstance(t.input_schema, dict) or not isinstance(sc.args, dict):
        return None
    props = t.input_schema.get("properties") or {}
    for name in SIZE_ARGS:
        p = props.get(name)
        if isinstance(p, dict) and p.get("type") == "integer" and name in sc.args:
            return name
    return None


def sweep_sizes(limit: int) -> list[int]:
    """limit−1, limit, limit+1, and just below and above 1 MiB and 4 MiB."""
    out = [limit - 1, limit, limit + 1, MIB - 1, MIB + 1, 4 * MIB + 1]
    return sorted({s for s in out if s > 0})


def _sweep_problem(ctx: RunContext) -> str | None:
    why = scenario_problem(ctx, "large_result", capability=CAP_LARGE)
    if why is not None:
        return why
    sc = ctx.setup.large_result
    assert sc is not None
    if _size_arg(ctx, sc) is None:
        return (f"the large_result tool {sc.tool} takes no integer size argument "
                f"({', '.join(SIZE_ARGS)}) set in the scenario, so the boundaries cannot be "
                "probed")
    return None


def _sweep_plan(ctx: RunContext) -> PlanDecision:
    why = _sweep_problem(ctx)
    if why is not None:
        return PlanDecision("needs_setup", why)
    return planner("large_result", lambda sc: [
        ("execute_tool", "sizes limit−1, limit, limit+1, 1 MiB±1, 4 MiB+1"),
        ("read_file", "verify every file result")], capability=CAP_LARGE)(ctx)


def _bounded(ctx: RunContext, name: str, size: int) -> int | None:
    t = ctx.tool(ctx.setup.large_result.tool) if ctx.setup.large_result else None
    p = ((t.input_schema or {}).get("properties") or {}).get(name, {}) if t else {}
    lo, hi = p.get("minimum"), p.get("maximum")
    if (isinstance(lo, int) and size < lo) or (isinstance(hi, int) and size > hi):
        return None
    return size


async def _probe(ctx: RunContext, sc: ToolCall, name: str, size: int, limit: int,
                 schema: dict[str, Any] | None, *, verify: bool
                 ) -> tuple[dict[str, Any], str | None]:
    """One read at `size`: (what came back, a problem or None). File results are verified
    (size, SHA-256, output_schema) when `verify`, else just closed."""
    args = {**sc.args, name: size}
    r = await ctx.execute(sc.tool, args, request_id=cetp.new_request_id())
    sig = signature(r)
    row: dict[str, Any] = {"args": args, "reply": sig["kind"]}
    if sig["kind"] == "success":
        n = len((r.reply.data or "").encode()) if r.reply else 0
        row["inline_bytes"] = n
        if n > limit:
            return row, (f"{name}={size}: inlined {n} bytes, above max_inline_result_bytes "
                         f"{limit}")
        return row, None
    if sig["kind"] != "file":
        row["reply"] = sig
        return row, f"{name}={size}: expected an inline or file result, got {sig}"
    env = cetp.parse_result_envelope(r.reply.decoded)
    fd = r.reply.result_fd
    if fd is None:
        return row, f"{name}={size}: kind=file without a result_fd"
    if not verify:
        await ctx.relay.close_handle(fd.id)
        return row, None
    v = await read_and_verify(
        ctx.relay, fd.id, declared_size=env.size_bytes, declared_sha256=env.sha256,
        declared_media_type=env.media_type, output_schema=schema,
        validate=lambda s, x: schemas.validate(x, s),
        read_limit=effective_read_limit(None, ctx.options.read_cap_bytes),
        fd_size=fd.size, keep_content=False)
    row.update(size_bytes=env.size_bytes, sha256=env.sha256,
               checks={c.name: c.status.value for c in v.checks})
    if not v.ok:
        return row, f"{name}={size}: " + "; ".join(f"{c.name}: {c.message}" for c in v.failed())
    return row, None


MAX_SEARCH = 24


@check("large.size_sweep", "inline and file results at the size boundaries", "§4.5", "MUST",
       L, plan=_sweep_plan)
async def size_sweep(ctx: RunContext) -> Verdict:
    """When the `large_result` tool takes a size (`bytes`, `size`, `size_bytes`), the read
    is repeated at max_inline_result_bytes−1, the limit, the limit+1 and past 1 MiB and 4 MiB,
    and the size where the provider switches from inline to file is found by bisection
    (a size argument need not map 1:1 to inline bytes): every inline reply must fit the
    limit and every file result must have the declared size and SHA-256 and match
    output_schema."""
    why = _sweep_problem(ctx)
    if why is not None:
        raise NeedsSetup(why)
    sc = ctx.setup.large_result
    assert sc is not None and ctx.limits is not None
    name = _size_arg(ctx, sc)
    assert name is not None
    limit = ctx.limits.max_inline_result_bytes
    t = ctx.tool(sc.tool)
    schema = t.output_schema if t is not None and isinstance(t.output_schema, dict) else None
    rows: list[dict[str, Any]] = []
    bad: list[str] = []
    inline_at: list[int] = []
    file_at: list[int] = []
    for size in sweep_sizes(limit):
        if _bounded(ctx, name, size) is None:
            continue
        row, problem = await _probe(ctx, sc, name, size, limit, schema, verify=True)
        rows.append(row)
        (inline_at if row["reply"] == "success" else file_at).append(size)
        if problem:
            bad.append(problem)
    if not rows:
        raise NeedsSetup(f"the tool's {name} bounds exclude every boundary size")
    # bisect the switch from inline to file: the largest inline reply is the one nearest
    # the limit, where an off-by-envelope bug shows
    lo, hi = max(inline_at, default=None), min((f for f in file_at
                                               if f > max(inline_at, default=0)), default=None)
    boundary: dict[str, Any] = {}
    if lo is not None and hi is not None:
        steps = 0
        while hi - lo > 1 and steps < MAX_SEARCH:
            mid = (lo + hi) // 2
            row, problem = await _probe(ctx, sc, name, mid, limit, schema, verify=False)
            steps += 1
            if problem:
                bad.append(problem)
                rows.append(row)
                break
            if row["reply"] == "success":
                lo = mid
            else:
                hi = mid
        for size in (lo, hi):
            row, problem = await _probe(ctx, sc, name, size, limit, schema, verify=True)
            rows.append(row)
            if problem and problem not in bad:
                bad.append(problem)
        boundary = {"last_inline": lo, "first_file": hi, "bisection_steps": steps}
    obs = {"sweep": rows, "boundary": boundary, "max_inline_result_bytes": limit}
    if bad:
        return failed("at the size boundaries: " + "; ".join(bad[:4])
                      + " — inline only when the whole data Bundle value "
                      '({"kind":"inline","value":…}) fits max_inline_result_bytes, and declare '
                      "the exact size and SHA-256 of the bytes in the file", **obs)
    return passed(f"{len(rows)} sizes around {limit} and past 1 MiB verified"
                  + (f"; inline up to {name}={boundary['last_inline']}" if boundary else ""),
                  **obs)
