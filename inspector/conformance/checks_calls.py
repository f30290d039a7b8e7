"""Checks that make their own read-only calls (negotiation variants, error probes) and the
checks that judge everything the run observed (phase 2: envelopes, untrusted text …)."""

from __future__ import annotations

import itertools
import secrets
from typing import Any

from inspector.conformance import argsgen
from inspector.conformance.context import (
    NeedsSetup,
    NotApplicable,
    RunContext,
    Verdict,
    failed,
    from_findings,
    not_applicable,
    passed,
    signature,
)
from inspector.conformance.model import Category, PlannedCall
from inspector.conformance.registry import PlanDecision, check
from inspector.consumer.calls import CallResult
from inspector.protocol import cetp
from inspector.protocol import rules as R
from inspector.protocol import schema as schemas
from inspector.protocol.bundle import Bundle, Int, Long
from inspector.protocol.cetp import CAP_ASYNC, CAP_LARGE, KNOWN_CAPABILITIES
from inspector.protocol.exchange import Finding

N, S, E, U = Category.NEGOTIATION, Category.DESCRIPTORS, Category.ERRORS, Category.UNTRUSTED
PROBE_TOOL = "cetp_inspector_no_such_tool"
PROBE_METHOD = "cetp_inspector_no_such_method"
UNKNOWN_CAP = "x_cetp_inspector_probe"
MAX_PROBED_TOOLS = 8


def _calls(*items: tuple[str, str | None, str]) -> PlanDecision:
    return PlanDecision("run", "", tuple(PlannedCall(method=m, tool=t, note=n)
                                         for m, t, n in items))


def _code(r: CallResult) -> str | None:
    sig = signature(r)
    return sig.get("code") if sig["kind"] == "error" else None


def _describe(r: CallResult) -> str:
    sig = signature(r)
    if sig["kind"] == "error":
        return f"error {sig['code']}"
    if sig["kind"] == "success":
        return "success"
    return str(sig)


# --------------------------------------------------------------------------------------
# negotiation variants
# --------------------------------------------------------------------------------------


@check("negotiate.no_common_version", "no common version → UNSUPPORTED_VERSION", "§2.2",
       "MUST", N, plan=lambda ctx: _calls(("negotiate", None, "consumer_versions [99]")))
async def no_common_version(ctx: RunContext) -> Verdict:
    """negotiate offering only version 99 must fail with UNSUPPORTED_VERSION; the provider
    must not silently interpret the request as another version."""
    r, res = await ctx.negotiate(versions=(99,))
    code = _code(r)
    if code == "UNSUPPORTED_VERSION":
        return passed("UNSUPPORTED_VERSION", reply=_describe(r))
    if res is not None or (r.reply is not None and r.reply.ok):
        sel = res.selected_version if res is not None else "?"
        return failed(f"negotiate succeeded (selected_version {sel}) although the consumer "
                      "offered only version 99: the provider silently interpreted it as "
                      "another version", reply=_describe(r))
    return failed(f"expected UNSUPPORTED_VERSION, got {_describe(r)}", reply=_describe(r))


@check("negotiate.capability_intersection", R.RULES["negotiate.capability_intersection"].title,
       "§2.2", "MUST", N, rule_ids=("negotiate.capability_intersection",),
       plan=lambda ctx: _calls(("negotiate", None, "asking for no optional capability"),
                               ("negotiate", None, f"asking only for unknown {UNKNOWN_CAP}")))
async def capability_intersection(ctx: RunContext) -> Verdict:
    """Three negotiations (every known capability, none, an unknown one): each reply lists
    only known capabilities the consumer asked for."""
    fs: list[Finding] = []
    seen: dict[str, list[str]] = {}
    if ctx.prelude.negotiation is not None:
        fs += R.check_capabilities(ctx.prelude.negotiation.capabilities,
                                   ctx.prelude.requested_caps)
        seen["all"] = list(ctx.prelude.negotiation.capabilities)
    for label, caps in (("none", ()), ("unknown", (UNKNOWN_CAP,))):
        r, res = await ctx.negotiate(caps=caps)
        if res is None:
            return failed(f"negotiate asking for {label!s} capabilities failed: "
                          f"{_describe(r)}")
        fs += [f.model_copy(update={"path": f"[{label}] {f.path}"})
               for f in R.check_capabilities(res.capabilities, caps)]
        seen[label] = list(res.capabilities)
    v = from_findings(fs)
    v.observed = {"returned": seen}
    return v


@check("negotiate.token_unique", "each negotiation issues a new session token", "§2.2",
       "MUST", N, plan=lambda ctx: _calls(("negotiate", None, "a second session")))
async def token_unique(ctx: RunContext) -> Verdict:
    """Tokens must be unpredictable: two negotiations must not return the same token."""
    first = ctx.prelude.negotiation
    if first is None:
        raise NotApplicable("negotiate failed (see negotiate.success)")
    r, res = await ctx.negotiate(ctx.prelude.requested_caps)
    if res is None:
        return failed(f"the second negotiate failed: {_describe(r)}")
    if res.session_token == first.session_token:
        return failed("two negotiations returned the same session_token",
                      token_bytes=len(first.session_token.encode()))
    return passed("distinct tokens")


@check("negotiate.token_required", "missing or garbage session_token → NEGOTIATION_REQUIRED",
       "§2.2", "MUST", N,
       plan=lambda ctx: _calls(("list_tools", None, "without session_token"),
                               ("list_tools", None, "with a made-up session_token")))
async def token_required(ctx: RunContext) -> Verdict:
    """Every v2 call needs the negotiated token: a call without it or with a made-up one
    answers NEGOTIATION_REQUIRED (never data)."""
    rid = cetp.new_request_id()
    no_token = Bundle(protocol_version=Int(2), request_id=rid,
                      deadline_at_ms=Long(ctx.deadline()))
    r1 = await ctx.raw(cetp.LIST_TOOLS, no_token, request_id=rid)
    r2 = await ctx.v2(cetp.LIST_TOOLS, token="cetp-inspector-" + secrets.token_hex(16),
                      renegotiate=False)
    got = {"missing": _describe(r1), "garbage": _describe(r2)}
    bad = [k for k, r in (("missing", r1), ("garbage", r2))
           if _code(r) != "NEGOTIATION_REQUIRED"]
    if bad:
        return failed("; ".join(f"{k} token answered {got[k]}" for k in bad)
                      + " (expected NEGOTIATION_REQUIRED)", replies=got)
    return passed("NEGOTIATION_REQUIRED for both", replies=got)


@check("annotations.async_needs_capability", R.RULES["annotations.async_needs_capability"].title,
       "§3.4", "MUST", S, rule_ids=("annotations.async_needs_capability",),
       plan=lambda ctx: _calls(("negotiate", None, "without async_operations"),
                               ("list_tools", None, "in that session")))
async def async_needs_capability(ctx: RunContext) -> Verdict:
    """execution=sync_or_async only when async_operations was negotiated: judged in the
    main session and in one negotiated without async_operations."""
    fs: list[Finding] = []
    if ctx.prelude.tools is not None:
        fs += R.check_annotations(ctx.prelude.tools, ctx.capabilities)
    caps = tuple(c for c in sorted(KNOWN_CAPABILITIES) if c != CAP_ASYNC)
    r, res = await ctx.negotiate(caps=caps)
    if res is None:
        return failed(f"negotiate without async_operations failed: {_describe(r)}")
    lr = await ctx.v2(cetp.LIST_TOOLS, token=res.session_token, renegotiate=False)
    if lr.reply is None or not lr.reply.ok:
        return failed(f"list_tools in a session without async_operations: {_describe(lr)}")
    try:
        tools, _ = cetp.parse_tool_list_lenient(lr.reply.decoded)
    except cetp.ProtocolViolation as v:
        return failed(f"list_tools without async_operations: {v}")
    granted = set(res.capabilities) & set(caps)
    fs += [f.model_copy(update={"path": "[no async] " + f.path})
           for f in R.check_annotations(tools, granted)]
    return from_findings(fs, rule_ids=["annotations.async_needs_capability"],
                         none_message="no tool declares execution=sync_or_async")


@check("tools.revision_changes", R.RULES["tools.revision_changes"].title, "§3.3", "MUST", S,
       rule_ids=("tools.revision_changes",),
       plan=lambda ctx: _calls(("negotiate", None, "two new sessions"),
                               ("list_tools", None, "once per session")))
async def revision_changes(ctx: RunContext) -> Verdict:
    """The tool list is read in three sessions; whenever the tools differ, the revision
    must differ too."""
    if ctx.prelude.tools is None:
        raise NotApplicable("list_tools failed (see descriptors.tool_list)")
    lists = [ctx.prelude.tools]
    for _ in range(2):
        r, res = await ctx.negotiate(ctx.prelude.requested_caps)
        if res is None:
            return failed(f"negotiate failed: {_describe(r)}")
        lr = await ctx.v2(cetp.LIST_TOOLS, token=res.session_token, renegotiate=False)
        if lr.reply is None or not lr.reply.ok:
            return failed(f"list_tools failed: {_describe(lr)}")
        try:
            tl, _ = cetp.parse_tool_list_lenient(lr.reply.decoded)
        except cetp.ProtocolViolation as v:
            return failed(f"list_tools: {v}")
        lists.append(tl)
    fs: list[Finding] = []
    for a, b in itertools.pairwise(lists):
        fs += R.check_revision(a, b)
    v = from_findings(fs)
    v.observed = {"revisions": [t.revision for t in lists],
                  "tool_counts": [len(t.tools) for t in lists]}
    return v


# --------------------------------------------------------------------------------------
# error probes
# --------------------------------------------------------------------------------------


@check("errors.method_not_found", "an unknown method answers METHOD_NOT_FOUND", "§4", "MUST",
       E, plan=lambda ctx: _calls((PROBE_METHOD, None, "a method that does not exist")))
async def method_not_found(ctx: RunContext) -> Verdict:
    """A v2 call of a method that does not exist must return METHOD_NOT_FOUND."""
    r = await ctx.v2(PROBE_METHOD)
    if _code(r) == "METHOD_NOT_FOUND":
        return passed("METHOD_NOT_FOUND")
    return failed(f"expected METHOD_NOT_FOUND, got {_describe(r)}", reply=_describe(r))


@check("errors.tool_not_found", "an unknown tool answers TOOL_NOT_FOUND", "§5", "MUST", E,
       plan=lambda ctx: _calls(("execute_tool", PROBE_TOOL, "a tool that does not exist")))
async def tool_not_found(ctx: RunContext) -> Verdict:
    """execute_tool of a tool that does not exist must return TOOL_NOT_FOUND."""
    if ctx.tool(PROBE_TOOL) is not None:  # pragma: no cover - absurd provider
        raise NotApplicable(f"the provider really has a tool named {PROBE_TOOL}")
    r = await ctx.execute(PROBE_TOOL, {}, safety=False)
    if _code(r) == "TOOL_NOT_FOUND":
        return passed("TOOL_NOT_FOUND")
    return failed(f"expected TOOL_NOT_FOUND, got {_describe(r)}", reply=_describe(r))


def _probe_tools(ctx: RunContext) -> list[cetp.ToolDescriptor]:
    if ctx.tools is None:
        return []
    return [t for t in ctx.tools.tools if ctx.is_safe(t.name)][:MAX_PROBED_TOOLS]


def _plan_invalid_args(ctx: RunContext) -> PlanDecision:
    calls = []
    for t in _probe_tools(ctx):
        inv = argsgen.invalid_args(t.input_schema, ctx.setup.tool_args.get(t.name))
        if inv is not None:
            calls.append(PlannedCall(method="execute_tool", tool=t.name,
                                     note=f"invalid arguments: {inv[1]}"))
    if not calls:
        return PlanDecision("needs_setup", "no read tool whose schema yields invalid "
                            "arguments (give valid tool_args, or allow a tool)")
    return PlanDecision("run", "", tuple(calls))


@check("errors.invalid_args", "arguments violating the input schema → INVALID_ARGS", "§5",
       "MUST", E, plan=_plan_invalid_args)
async def invalid_args(ctx: RunContext) -> Verdict:
    """Each read tool (and each allowed tool) is called once with arguments its own
    input_schema rejects; the provider must answer INVALID_ARGS."""
    tried: dict[str, str] = {}
    bad: list[str] = []
    for t in _probe_tools(ctx):
        inv = argsgen.invalid_args(t.input_schema, ctx.setup.tool_args.get(t.name))
        if inv is None:
            continue
        args, how = inv
        r = await ctx.execute(t.name, args)
        got = _describe(r)
        tried[t.name] = f"{how}: {got}"
        if _code(r) != "INVALID_ARGS":
            bad.append(f"{t.name} ({how}) answered {got}")
    if not tried:
        raise NeedsSetup("no read tool whose schema yields invalid arguments")
    if bad:
        return failed("; ".join(bad), probes=tried)
    return passed(f"INVALID_ARGS from {len(tried)} tool(s)", probes=tried)


def _read_args(ctx: RunContext, t: cetp.ToolDescriptor) -> tuple[Any, str] | None:
    if t.name in ctx.setup.tool_args:
        return ctx.setup.tool_args[t.name], "arguments from the setup"
    return argsgen.probe_args(t.input_schema)


def _plan_output(ctx: RunContext) -> PlanDecision:
    calls = []
    for t in _probe_tools(ctx):
        got = _read_args(ctx, t)
        if got is not None:
            calls.append(PlannedCall(method="execute_tool", tool=t.name,
                                     note=f"{got[1]} {cetp.args_json(got[0])[:80]}"))
    return PlanDecision("run", "", tuple(calls))


@check("result.output_schema", "results match the tool's output_schema", "§4.2", "MUST",
       E, plan=_plan_output, phase=2)
async def output_schema(ctx: RunContext) -> Verdict:
    """Read tools are called with valid arguments (from the setup, or derived from the
    schema); every inline result the run saw must match its tool's output_schema."""
    skipped: list[str] = []
    for t in _probe_tools(ctx):
        got = _read_args(ctx, t)
        if got is None:
            skipped.append(t.name)
            continue
        r = await ctx.execute(t.name, got[0])
        if r.reply is not None and r.reply.accepted:
            await ctx.settle(r, r.exchange.request_id or "")
    fs: list[Finding] = []
    for xid, tool, value, _data in ctx.inline_successes:
        td = ctx.tool(tool) if tool else None
        if td is None or td.output_schema is None:
            continue
        errs = schemas.validate(value, td.output_schema)
        fs.append(Finding(rule_id="result.output_schema", section="§4.2", level="MUST",
                          ok=not errs, path=f"{tool} ({xid[:8]})",
                          message="matches output_schema" if not errs else
                          "; ".join(f"{p or '/'}: {m}" for p, m in errs[:3])))
    v = from_findings(fs, none_message="no inline result with an output_schema was seen")
    if skipped:
        v.observed["not_probed"] = skipped
    return v


# --------------------------------------------------------------------------------------
# judged over everything observed (phase 2)
# --------------------------------------------------------------------------------------


def _v2_replies(ctx: RunContext) -> list[tuple[str, str, cetp.Reply]]:
    return [(x, m, r) for x, m, r in ctx.replies if m != cetp.NEGOTIATE]


@check("errors.envelope", "every reply is a well-formed envelope", "§5", "MUST", E, phase=2)
async def envelope(ctx: RunContext) -> Verdict:
    """Every reply of the run parsed: status success/accepted/error, JSON data, and errors
    with error_code, error_message and a Boolean retryable (no malformed replies)."""
    bad = [(x, m, v) for x, m, v in ctx.violations]
    seen = len(ctx.replies) + len(bad)
    if bad:
        msg = "; ".join(f"{m}: {v}" for _, m, v in bad[:5])
        v = failed(msg, malformed=len(bad), replies=seen)
        v.exchange_ids = [x for x, _, _ in bad]
        return v
    if not seen:
        return not_applicable("no reply was observed")
    return passed(f"{seen} replies well-formed")


@check("reply.echo", R.RULES["reply.echo"].title, "§5", "MUST", E, phase=2,
       rule_ids=("reply.echo",))
async def echo(ctx: RunContext) -> Verdict:
    """Every v2 reply (other than negotiate) echoes protocol_version 2 as an int and the
    request_id."""
    fs: list[Finding] = []
    ids = []
    for xid, m, rep in _v2_replies(ctx):
        f = R.check_reply_echo(rep, "")
        bad = [x for x in f if not x.ok]
        if bad:
            ids.append(xid)
            fs += [x.model_copy(update={"path": f"{m} {x.path}"}) for x in bad]
    if not fs and _v2_replies(ctx):
        fs = [R.RULES["reply.echo"].ok(f"{len(_v2_replies(ctx))} replies echo correctly")]
    v = from_findings(fs, none_message="no v2 reply was observed")
    v.exchange_ids = ids
    return v


def _error_rule(rid: str) -> None:
    r = R.RULES[rid]

    @check(rid, r.title, r.section, r.level, E, phase=2, rule_ids=(rid,))
    async def _run(ctx: RunContext) -> Verdict:
        fs: list[Finding] = []
        ids: list[str] = []
        for xid, m, rep in _v2_replies(ctx):
            if rep.error is None:
                continue
            got = [f for f in R.check_error(rep) if f.rule_id == rid]
            if any(not f.ok for f in got):
                ids.append(xid)
            fs += [f.model_copy(update={"path": f"{m} {rep.error.error_code}"}) for f in got]
        v = from_findings(fs, none_message="no error reply was observed")
        v.exchange_ids = ids
        return v

    _run.__doc__ = (f"{r.title[:1].upper()}{r.title[1:]}; judged on every error reply the run "
                    "observed.")


for _rid in ("error.known_code", "error.retryable_matches", "error.message_safe",
             "error.no_authorize_intent"):
    _error_rule(_rid)


@check("result.inline_limit", R.RULES["result.inline_limit"].title, "§4.5", "MUST",
       Category.LARGE_RESULTS, phase=2, rule_ids=("result.inline_limit",))
async def inline_limit(ctx: RunContext) -> Verdict:
    """Every inline result of the run fits the negotiated max_inline_result_bytes."""
    if ctx.limits is None:
        raise NotApplicable("no negotiated limits")
    fs: list[Finding] = []
    ids: list[str] = []
    for xid, _tool, _value, data in ctx.inline_successes:
        got = R.check_inline_size(data, ctx.limits)
        if any(not f.ok for f in got):
            ids.append(xid)
        fs += got
    v = from_findings(fs, none_message="no inline result was observed")
    v.exchange_ids = ids
    if ctx.inline_successes:
        v.observed["largest_inline_bytes"] = max(len(d.encode()) for *_, d in
                                                 ctx.inline_successes)
    return v


@check("result.file_needs_capability", R.RULES["result.file_needs_capability"].title, "§4.5",
       "MUST", Category.LARGE_RESULTS, phase=2, rule_ids=("result.file_needs_capability",))
async def file_needs_capability(ctx: RunContext) -> Verdict:
    """File results arrived only in sessions that negotiated large_results."""
    fs: list[Finding] = []
    for _xid, env, caps in ctx.files_with_caps:
        fs += R.check_result_kind(env, caps)
    return from_findings(fs, none_message="no file result was observed")


def _text_rule(rid: str) -> None:
    r = R.RULES[rid]

    @check(rid, r.title, r.section, r.level, U, phase=2, rule_ids=(rid,), needs_v2=False)
    async def _run(ctx: RunContext) -> Verdict:
        items = R.descriptor_texts(ctx.prelude.info, ctx.prelude.tools)
        if ctx.prelude.v1_tools is not None:
            items += [(f"v1.{p}", k, t) for p, k, t in
                      R.descriptor_texts(None, ctx.prelude.v1_tools)]
        seen: set[str] = set()
        for _xid, m, rep in ctx.replies:
            if rep.error is not None and rep.error.error_message not in seen:
                seen.add(rep.error.error_message)
                items.append((f"{m} {rep.error.error_code}.error_message", "error_message",
                              rep.error.error_message))
        return from_findings([f for f in R.check_texts(items) if f.rule_id == rid],
                             none_message="no provider text was observed")

    _run.__doc__ = (f"{r.title[:1].upper()}{r.title[1:]}; judged on provider names, "
                    "descriptions, scopes (v2 and v1) and every error message the run observed.")


for _rid in ("text.length", "text.control_chars", "text.instructions"):
    _text_rule(_rid)

_ = CAP_LARGE
