"""Checks that the provider *enforces* what it declares, on every tool the run may call:
deadlines before side effects (§4.1), scopes at every execution (§3.4, §7.2), read tools
that really only read (§3.4), no mutation through the v1 path (§2.1, §8), the advertised
request limit (§2.2), tokens nobody can guess (§2.2) and identity that survives a restart
(§3.1). Each is built so that one planted fault in an otherwise conforming provider fails
it (tests/conformance/test_fault_matrix.py)."""

from __future__ import annotations

import itertools
from typing import Any

from inspector.conformance import argsgen
from inspector.conformance.context import (
    NeedsSetup,
    NotApplicable,
    RunContext,
    Snapshot,
    Verdict,
    effect_vector,
    failed,
    not_applicable,
    passed,
    signature,
)
from inspector.conformance.model import Category, PlannedCall, Scenario
from inspector.conformance.registry import PlanDecision, check
from inspector.conformance.scenarios import planner, require, scenario_problem
from inspector.protocol import cetp
from inspector.protocol import rules as R

F, N, D, V1 = Category.ENFORCEMENT, Category.NEGOTIATION, Category.DESCRIPTORS, Category.V1
REFUSALS = ("AUTH_REQUIRED", "PERMISSION_DENIED")
MAX_READ_TOOLS = 12
TOKEN_SAMPLES = 4


def _delta(a: Snapshot | None, b: Snapshot | None) -> dict[str, float] | None:
    if a is None or b is None:
        return None
    return effect_vector(a.value, b.value)


# --------------------------------------------------------------------------------------
# deadlines (§4.1)
# --------------------------------------------------------------------------------------


@check("deadline.expired_not_executed", "an expired deadline_at_ms → no side effect",
       "§4.1", "MUST", F,
       plan=planner("mutation", lambda sc: [("observe", "before"),
                                            ("execute_tool", "deadline_at_ms 60 s in the "
                                             "past"),
                                            ("observe", "no effect")], observer=True))
async def expired_deadline(ctx: RunContext) -> Verdict:
    """The `mutation` scenario is sent with a deadline_at_ms one minute in the past: the
    provider must check the deadline before the side effect (DEADLINE_EXCEEDED) and the
    observer must not change."""
    sc = require(ctx, "mutation", observer=True)
    assert isinstance(sc, Scenario) and sc.observer is not None
    b0 = await ctx.observe(sc.observer)
    rid = cetp.new_request_id()
    deadline = ctx.clock.now_ms() - 60_000
    r = await ctx.execute(sc.tool, sc.args, request_id=rid, deadline_at_ms=deadline)
    sig = await ctx.settle(r, rid)
    b1 = await ctx.observe(sc.observer)
    d = _delta(b0, b1)
    obs = {"sent": {"tool": sc.tool, "args": sc.args, "deadline_at_ms": deadline},
           "reply": sig, "effect": d}
    if d:
        return failed("the deadline had passed before the call arrived, yet the observer "
                      f"changed by {d}: check deadline_at_ms before starting any business "
                      "side effect and answer DEADLINE_EXCEEDED", **obs)
    if sig["kind"] in ("success", "file"):
        return failed("the call with an expired deadline succeeded: the provider did not "
                      "check deadline_at_ms before executing (answer DEADLINE_EXCEEDED)", **obs)
    if sig["kind"] != "error":
        return failed(f"expected DEADLINE_EXCEEDED for an expired deadline, got {sig}", **obs)
    return passed(f"refused ({sig['code']}), no effect", **obs)


# --------------------------------------------------------------------------------------
# scopes (§3.4, §7.2)
# --------------------------------------------------------------------------------------


def _scope_plan(ctx: RunContext) -> PlanDecision:
    why = scenario_problem(ctx, "ungranted", observer=True) or ctx.second_caller_problem()
    if why is not None:
        return PlanDecision("needs_setup", why)
    sc = ctx.setup.ungranted
    assert sc is not None and sc.observer is not None
    return PlanDecision("run", "", (
        PlannedCall(method="execute_tool", tool=sc.observer.tool, note="caller B: before"),
        PlannedCall(method="execute_tool", tool=sc.tool, note="caller B, no grant",
                    mutating=ctx.is_mutating(sc.tool)),
        PlannedCall(method="execute_tool", tool=sc.observer.tool, note="caller B: after")))


@check("scopes.enforced", "a call without its scope is refused, never served", "§3.4", "MUST",
       F, plan=_scope_plan)
async def scopes_enforced(ctx: RunContext) -> Verdict:
    """A second app, which never listed tools and holds no grant, makes the `ungranted`
    call: the provider must check scopes at execution and answer AUTH_REQUIRED or
    PERMISSION_DENIED — no data, no effect."""
    sc = require(ctx, "ungranted", observer=True)
    assert isinstance(sc, Scenario) and sc.observer is not None
    other = await ctx.other_caller()
    b0 = await other.observe(sc.observer)
    rid = cetp.new_request_id()
    r = await other.execute(sc.tool, sc.args, request_id=rid)
    sig = await other.settle(r, rid)
    b1 = await other.observe(sc.observer)
    d = _delta(b0, b1)
    t = ctx.tool(sc.tool)
    obs = {"caller_uid": other.caller_uid(), "sent": {"tool": sc.tool, "args": sc.args},
           "scopes": list(t.scopes) if t is not None else None, "reply": sig, "effect": d}
    if sig["kind"] in ("success", "file", "accepted") or d:
        return failed(f"an app holding no grant for {obs['scopes']} got "
                      f"{sig['kind']}{' and an effect ' + str(d) if d else ''}: check the "
                      "tool's scopes on every execution and answer AUTH_REQUIRED or "
                      "PERMISSION_DENIED", **obs)
    if sig.get("code") not in REFUSALS:
        return failed(f"expected AUTH_REQUIRED or PERMISSION_DENIED for a call without its "
                      f"scope, got {sig}", **obs)
    return passed(f"refused with {sig['code']}, no effect", **obs)


# --------------------------------------------------------------------------------------
# read tools only read (§3.4)
# --------------------------------------------------------------------------------------


def _read_calls(ctx: RunContext) -> list[tuple[str, Any]]:
    """Every listed read tool the suite may call, with valid arguments."""
    out: list[tuple[str, Any]] = []
    for t in (ctx.tools.tools if ctx.tools else []):
        if t.annotations.side_effecting or not ctx.is_safe(t.name):
            continue
        args = ctx.setup.tool_args.get(t.name)
        if args is None:
            args = argsgen.valid_args(t.input_schema)
        if args is not None:
            out.append((t.name, args))
    return out[:MAX_READ_TOOLS]


def _reads_plan(ctx: RunContext) -> PlanDecision:
    calls = _read_calls(ctx)
    if not calls:
        return PlanDecision("not_applicable", "no read tool with usable arguments")
    return PlanDecision("run", "", tuple(
        PlannedCall(method="execute_tool", tool=n, note="three rounds") for n, _ in calls))


def _judge(before: Any, after: Any) -> dict[str, float]:
    """The part of an output's change a read can cause: collections that grew or shrank
    and numbers that moved (a changed text, e.g. a timestamp, is not judged)."""
    return {k: v for k, v in effect_vector(before, after).items()
            if k.startswith("len(") or v != 1}


@check("read.no_side_effect", "read tools do not change business state", "§3.4", "MUST", F,
       plan=_reads_plan)
async def reads_do_not_mutate(ctx: RunContext) -> Verdict:
    """Every read tool the suite may call is called in three rounds; every read tool's
    output (and the scenarios' observers) must be the same after a round of reads as
    before: a collection that grows or shrinks, or a number that keeps moving, between
    rounds of nothing but reads means a read tool changed business state."""
    calls = _read_calls(ctx)
    if not calls:
        return not_applicable("no read tool with usable arguments")

    async def round_() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, args in calls:
            r = await ctx.execute(name, args)
            sig = await ctx.settle(r, r.exchange.request_id or "")
            out[name] = sig.get("value") if sig["kind"] == "success" else sig
        return out

    rounds = [await round_() for _ in range(3)]
    moved: dict[str, Any] = {}
    for name, _ in calls:
        d1 = _judge(rounds[0][name], rounds[1][name])
        d2 = _judge(rounds[1][name], rounds[2][name])
        # a collection that changes size, or a number that moves the same way twice,
        # between rounds of reads (a random price moves both ways; a counter does not)
        lens = {k: v for k, v in d1.items() if k.startswith("len(")}
        nums = {k: v for k, v in d1.items() if not k.startswith("len(")
                and k in d2 and (v > 0) == (d2[k] > 0)}
        if lens or nums:
            moved[name] = {**lens, **nums}
    obs = {"tools": [n for n, _ in calls], "changed_between_rounds": moved,
           "args": {n: a for n, a in calls}}
    if moved:
        what = "; ".join(f"{n} changed by {v}" for n, v in moved.items())
        return failed(f"between rounds that called only read tools ({', '.join(obs['tools'])}"
                      f"), outputs changed: {what} — a tool annotated effect=read changes "
                      "business state; make it read-only or declare its real effect", **obs)
    return passed(f"{len(calls)} read tools, three rounds, no change", **obs)


# --------------------------------------------------------------------------------------
# no mutation through v1 (§2.1, §8)
# --------------------------------------------------------------------------------------


def _mutating_scenarios(ctx: RunContext) -> list[Scenario]:
    out: list[Scenario] = []
    for name in ("mutation", "confirmation", "async_call"):
        sc = getattr(ctx.setup, name)
        if (isinstance(sc, Scenario) and sc.observer is not None and ctx.is_mutating(sc.tool)
                and scenario_problem(ctx, name, observer=True) is None
                and sc.tool not in [s.tool for s in out]):
            out.append(sc)
    return out


def _v1_plan(ctx: RunContext) -> PlanDecision:
    if not ctx.decl.supports_v1 or not ctx.decl.supports_v2:
        return PlanDecision("not_applicable", "applies to providers serving v1 and v2")
    scs = _mutating_scenarios(ctx)
    if not scs:
        return PlanDecision("needs_setup", "needs an allowed mutating scenario with an "
                            "observer (`mutation`, `confirmation` or `async_call`)")
    return PlanDecision("run", "", tuple(
        PlannedCall(method="execute_tool (v1)", tool=s.tool, note="no protocol_version",
                    mutating=True) for s in scs))


@check("v1.no_mutation_via_v1", "side-effecting tools cannot be run through v1", "§8",
       "MUST", V1, plan=_v1_plan, needs_v2=False)
async def no_mutation_via_v1(ctx: RunContext) -> Verdict:
    """Each allowed side-effecting scenario tool is sent as a v1 execute_tool (no
    protocol_version, so no session, confirmation or dedup): a dual-stack provider must
    refuse it and the observer must not change."""
    if not ctx.decl.supports_v1 or not ctx.decl.supports_v2:
        return not_applicable("applies to providers serving v1 and v2")
    scs = _mutating_scenarios(ctx)
    if not scs:
        raise NeedsSetup("needs an allowed mutating scenario with an observer")
    results = []
    bad = []
    for sc in scs:
        assert sc.observer is not None
        b0 = await ctx.observe(sc.observer)
        extras = cetp.v1_execute_extras(sc.tool, sc.args, request_id=cetp.new_request_id())
        r = await ctx.raw(cetp.EXECUTE_TOOL, extras, v2=False, tool=sc.tool, check_echo=False)
        b1 = await ctx.observe(sc.observer)
        d = _delta(b0, b1)
        rep = r.reply
        got = ("transport " + r.transport.code if r.transport is not None else
               "no reply" if rep is None else
               f"error {rep.error.error_code}" if rep.error is not None else rep.status)
        results.append({"tool": sc.tool, "sent": {"tool_name": sc.tool, "args": sc.args},
                        "reply": got, "effect": d})
        if d or (rep is not None and rep.ok):
            bad.append(f"{sc.tool} ({got}{', effect ' + str(d) if d else ''})")
    if bad:
        return failed("side-effecting tools ran through the v1 execute_tool path, bypassing "
                      f"v2 confirmation and deduplication: {'; '.join(bad)} — serve only "
                      "read tools to v1 calls (no protocol_version)", calls=results)
    return passed(f"{len(results)} tool(s) refused over v1, no effect", calls=results)


@check("v1.side_effects_migrate", "v1-only tools with side effects should move to v2", "§8",
       "SHOULD", V1, phase=0, needs_v2=False)
async def v1_side_effects(ctx: RunContext) -> Verdict:
    """A provider serving v1 only should not offer tools that look side-effecting (by
    name or description): they belong in v2, with confirmation and deduplication."""
    if ctx.decl.stack != "v1_only":
        return not_applicable("applies to v1-only providers (dual-stack ones are judged "
                              "by v1.dual_stack_read_only)")
    if ctx.prelude.v1_tools is None:
        raise NotApplicable("the v1 list_tools failed (see v1.list_tools)")
    hits = {t.name: h for t in ctx.prelude.v1_tools.tools
            if (h := R.side_effect_hint(t.name, t.description or ""))}
    if hits:
        v = failed("v1 tools that look side-effecting: " + "; ".join(
            f"{n}: {h}" for n, h in hits.items()) + " — migrate them to v2", tools=hits)
        v.outcome = v.outcome.WARNING
        return v
    return passed(f"{len(ctx.prelude.v1_tools.tools)} v1 tools look read-only")


# --------------------------------------------------------------------------------------
# what was advertised: the request limit (§2.2)
# --------------------------------------------------------------------------------------

MAX_PROBE_REQUEST = 4 << 20


def _small_read(ctx: RunContext) -> tuple[str, Any] | None:
    calls = _read_calls(ctx)
    return calls[0] if calls else None


def _size_probe(ctx: RunContext) -> tuple[str, Any, str, int] | Verdict:
    """A read tool's valid arguments (name, args, their JSON) and the negotiated
    max_request_bytes for the request-size checks, or why they do not apply."""
    pick = _small_read(ctx)
    if pick is None or ctx.limits is None:
        return not_applicable("no read tool with usable arguments, or no negotiated limits")
    limit = ctx.limits.max_request_bytes
    if limit > MAX_PROBE_REQUEST:
        return not_applicable(f"max_request_bytes {limit} is above what the suite sends")
    name, args = pick
    return name, args, cetp.args_json(args), limit


@check("limits.request_size_enforced", "arguments above max_request_bytes are refused",
       "§2.2", "SHOULD", F,
       plan=lambda ctx: PlanDecision("run", "", (PlannedCall(
           method="execute_tool", note="valid arguments padded past max_request_bytes"),)))
async def request_size_enforced(ctx: RunContext) -> Verdict:
    """A read tool's valid arguments, padded with JSON whitespace to one byte past the
    negotiated max_request_bytes (same value, bigger request), should be refused: the
    provider keeps the limit it advertised."""
    probe = _size_probe(ctx)
    if isinstance(probe, Verdict):
        return probe
    name, args, text, limit = probe
    padded = text + " " * (limit + 1 - len(text.encode()))
    r = await ctx.v2(cetp.EXECUTE_TOOL, more={"tool_name": name, "args": padded}, tool=name)
    sig = signature(r)
    obs = {"tool": name, "args": args, "request_bytes": len(padded.encode()),
           "max_request_bytes": limit, "reply": sig}
    if sig["kind"] == "error":
        return passed(f"refused ({sig['code']})", **obs)
    v = failed(f"a {len(padded.encode())}-byte request (limit {limit}) was served "
               f"({sig['kind']}): refuse requests above the max_request_bytes you advertise "
               "(INVALID_REQUEST)", **obs)
    v.outcome = v.outcome.WARNING
    return v


@check("limits.request_size_honoured", "arguments of exactly max_request_bytes are served",
       "§2.2", "MUST", F,
       plan=lambda ctx: PlanDecision("run", "", (
           PlannedCall(method="execute_tool", note="a read tool's valid arguments"),
           PlannedCall(method="execute_tool", note="the same, padded to max_request_bytes"))))
async def request_size_honoured(ctx: RunContext) -> Verdict:
    """The advertised max_request_bytes is an allowance (§2.2, §4.1 counts the UTF-8 args):
    a read tool's valid arguments padded with JSON whitespace to exactly the limit must be
    answered like the same arguments unpadded. Catches a limit kept with `>=`, or measured
    on the whole request instead of the args."""
    probe = _size_probe(ctx)
    if isinstance(probe, Verdict):
        return probe
    name, args, text, limit = probe
    plain = signature(await ctx.v2(cetp.EXECUTE_TOOL, more={"tool_name": name, "args": text},
                                   tool=name))
    padded = text + " " * (limit - len(text.encode()))
    full = signature(await ctx.v2(cetp.EXECUTE_TOOL, more={"tool_name": name,
                                                           "args": padded}, tool=name))
    obs = {"tool": name, "args": args, "request_bytes": len(padded.encode()),
           "max_request_bytes": limit, "unpadded": plain, "padded": full}
    if plain["kind"] == "error":
        return not_applicable(f"{name} refused its arguments unpadded ({plain.get('code')}); "
                              "set tool_args for it", **obs)
    if full["kind"] == "error":
        return failed(f"arguments of exactly max_request_bytes ({limit} bytes, the limit you "
                      f"advertised) were refused ({full.get('code')}); the same arguments "
                      "unpadded were served: count only the UTF-8 bytes of args and refuse "
                      "only above the limit", **obs)
    return passed(f"a {limit}-byte request was served", **obs)


# --------------------------------------------------------------------------------------
# unpredictable session tokens (§2.2)
# --------------------------------------------------------------------------------------


def _core(a: str, b: str) -> tuple[str, str]:
    """What differs between two tokens once their common prefix and suffix are gone."""
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    j = 0
    while j < min(len(a), len(b)) - i and a[-1 - j] == b[-1 - j]:
        j += 1
    return a[i:len(a) - j], b[i:len(b) - j]


@check("negotiate.token_unpredictable", "session tokens cannot be guessed", "§2.2", "MUST", N,
       plan=lambda ctx: PlanDecision("run", "", tuple(
           PlannedCall(method="negotiate", note=f"{TOKEN_SAMPLES} times")
           for _ in range(1))))
async def token_unpredictable(ctx: RunContext) -> Verdict:
    """Four negotiations: each session_token must be at least 16 characters and any two
    must differ in more than a few characters (a counter or a timestamp with a fixed
    prefix can be guessed from the previous token)."""
    tokens: list[str] = []
    for _ in range(TOKEN_SAMPLES):
        r, res = await ctx.negotiate()
        if res is None:
            raise NotApplicable(f"negotiate failed ({signature(r)}); see negotiate.success")
        tokens.append(res.session_token)
    shown = [t[:40] for t in tokens]
    short = [t for t in tokens if len(t) < 16]
    if short:
        return failed(f"session tokens of {len(short[0])} characters are too short to be "
                      "unpredictable: use at least 128 random bits (e.g. 32 hex characters "
                      "from a CSPRNG)", tokens=shown)
    for a, b in itertools.pairwise(tokens):
        x, y = _core(a, b)
        if max(len(x), len(y)) <= 4:
            return failed(f"consecutive session tokens differ only in {x!r} → {y!r}: they "
                          "follow a sequence; generate them from a CSPRNG", tokens=shown)
    return passed(f"{len(tokens)} tokens, no shared sequence", tokens=shown)


# --------------------------------------------------------------------------------------
# stability across a restart (§3.1, §3.2)
# --------------------------------------------------------------------------------------


async def _identity(ctx: RunContext) -> dict[str, Any]:
    _, neg = await ctx.negotiate(ctx.prelude.requested_caps or None)
    info = await ctx.v2(cetp.GET_PROVIDER_INFO, renegotiate=False,
                        token=neg.session_token if neg else None)
    tools = await ctx.v2(cetp.LIST_TOOLS, renegotiate=False,
                         token=neg.session_token if neg else None)
    out: dict[str, Any] = {"negotiate.provider_id": neg.provider_id if neg else None}
    try:
        pi = cetp.parse_provider_info(info.reply.decoded) if info.reply else None
        out["provider_id"] = pi.provider_id if pi else None
        out["scopes"] = sorted(s.name for s in pi.scopes) if pi else None
    except cetp.ProtocolViolation:
        out["provider_id"] = out["scopes"] = None
    try:
        tl = cetp.parse_tool_list(tools.reply.decoded) if tools.reply else None
        out["tools"] = {t.name: f"{t.title}|{t.description}" for t in tl.tools} if tl else None
    except cetp.ProtocolViolation:
        out["tools"] = None
    return out


def _restart_plan(ctx: RunContext) -> PlanDecision:
    why = ctx.restart_problem()
    if why is not None:
        return PlanDecision("needs_setup", why)
    return PlanDecision("run", "", (
        PlannedCall(method="negotiate, get_provider_info, list_tools", note="before"),
        PlannedCall(method="force-stop", note="the provider app"),
        PlannedCall(method="negotiate, get_provider_info, list_tools", note="after")))


def _renamed(a: dict[str, str] | None, b: dict[str, str] | None) -> dict[str, str]:
    """Tools that came back under another name (same title and description). A tool that
    merely appears or disappears is a tool-set change (tools.revision_changes judges it)."""
    if not a or not b:
        return {}
    gone = {v: k for k, v in a.items() if k not in b}
    return {gone[v]: k for k, v in b.items() if k not in a and v in gone}


@check("provider.stable_across_restart", "identity, tool and scope names survive a restart",
       "§3.1", "MUST", D, plan=_restart_plan)
async def stable_across_restart(ctx: RunContext) -> Verdict:
    """provider_id, the tools and the scope names are read, the provider app is
    force-stopped, and they are read again: provider_id and scope names must be the same
    and no tool may come back under another name (routing uses (provider_id, tool_name),
    grants use scope names)."""
    why = ctx.restart_problem()
    if why is not None:
        raise NeedsSetup(why)
    before = await _identity(ctx)
    await ctx.restart_provider()
    after = await _identity(ctx)
    ctx.token = None  # the main session died with the process
    changed = {k: {"before": before[k], "after": after[k]} for k in before
               if k != "tools" and before[k] != after[k]}
    renamed = _renamed(before.get("tools"), after.get("tools"))
    if renamed:
        changed["tool names"] = {"before": list(renamed), "after": list(renamed.values())}
    obs = {"before": {**before, "tools": sorted(before.get("tools") or [])},
           "after": {**after, "tools": sorted(after.get("tools") or [])}}
    if changed:
        return failed("changed across a provider restart: " + "; ".join(
            f"{k} {v['before']} → {v['after']}" for k, v in changed.items())
            + " — keep provider_id, tool names and scope names stable", changed=changed, **obs)
    return passed("same identity, tools and scopes after a restart", **obs)


@check("negotiate.token_after_restart", "a session lost in a restart → NEGOTIATION_REQUIRED",
       "§2.2", "MUST", F, plan=_restart_plan)
async def token_after_restart(ctx: RunContext) -> Verdict:
    """A fresh session is used once, the provider app is force-stopped, and the same token
    is sent again: the session may have survived (success) or be gone — then the reply must
    be NEGOTIATION_REQUIRED, the one code that tells a consumer to negotiate again (§2.2
    allows tokens to die with the process; §5 makes that code retryable)."""
    why = ctx.restart_problem()
    if why is not None:
        raise NeedsSetup(why)
    r0, neg = await ctx.negotiate(ctx.prelude.requested_caps or None)
    if neg is None:
        raise NotApplicable(f"negotiate failed ({signature(r0)}); see negotiate.success")
    before = signature(await ctx.v2(cetp.LIST_TOOLS, token=neg.session_token,
                                    renegotiate=False))
    await ctx.restart_provider()
    ctx.token = None  # the main session died with the process
    after = signature(await ctx.v2(cetp.LIST_TOOLS, token=neg.session_token,
                                   renegotiate=False))
    obs = {"before_restart": before, "after_restart": after}
    if after["kind"] == "success" or after.get("code") == "NEGOTIATION_REQUIRED":
        return passed("the old token " + ("still works" if after["kind"] == "success" else
                                          "gets NEGOTIATION_REQUIRED"), **obs)
    return failed(f"after a provider restart the old session_token got {after}: answer "
                  "NEGOTIATION_REQUIRED for a session the process no longer knows, so the "
                  "consumer negotiates again instead of giving up or retrying forever", **obs)
