"""Plan and run the conformance suite against one CETP provider.

    report = await run_conformance(session_or_relay, "com.example.pricealerts",
                                   setup=ConformanceSetup(...), allow_mutations=["create_alert"])

`plan_conformance` makes only the read-only prelude calls and says, per check, whether it
will run (and which calls it will make, mutating ones flagged), needs setup, or does not
apply; `run_conformance` shows nothing itself: pass a plan you showed the user, or let it
plan first. Checks run one after another; each result carries the ids of the exchanges it
made (the traffic log shows them).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from inspector.conformance import causes, evidence, registry
from inspector.conformance.context import (
    HumanPrompt,
    NeedsSetup,
    NotApplicable,
    RestartHook,
    RunContext,
    SecondCaller,
    Verdict,
)
from inspector.conformance.model import (
    CheckResult,
    ConformanceReport,
    ConformanceSetup,
    Evidence,
    Outcome,
    Plan,
    PlanItem,
    PlannedCall,
    TargetInfo,
)
from inspector.consumer.options import EngineOptions
from inspector.consumer.recorder import Recorder
from inspector.protocol import cetp
from inspector.protocol.cetp import KNOWN_CAPABILITIES, ProtocolViolation
from inspector.protocol.discovery import CetpDeclaration, Discovery, discover
from inspector.protocol.exchange import Exchange
from inspector.relay.api import RelayApi, RelayError


class ConformanceError(Exception):
    """The suite cannot start (unknown provider, bad setup); the message says why."""


@dataclass
class ProgressEvent:
    """Live progress for front ends: `kind` is plan | start | result | done."""

    kind: str
    index: int = 0
    total: int = 0
    check_id: str = ""
    result: CheckResult | None = None
    plan: Plan | None = None


ProgressCallback = Callable[[ProgressEvent], None]


def _version() -> str:
    try:
        return metadata.version("cetp-inspector")
    except metadata.PackageNotFoundError:  # pragma: no cover - not installed
        return "0"


def _is_session(obj: Any) -> bool:
    return all(hasattr(obj, a) for a in ("relay", "recorder", "ensure_discovery"))


_Resolved = tuple[RelayApi, Any, Recorder | None, Discovery | None, EngineOptions | None]


async def _resolve(target: Any, provider: CetpDeclaration | str) -> _Resolved:
    if _is_session(target):
        disc = None
        try:
            disc = await target.ensure_discovery()
        except Exception:  # discovery problems surface below
            disc = getattr(target, "discovery", None)
        return target.relay, target, target.recorder, disc, getattr(target, "options", None)
    relay: RelayApi = target
    disc = None
    try:  # also for a given declaration: the discovery checks look at the whole package
        disc = discover(await relay.discover())
    except RelayError as exc:
        if isinstance(provider, str):
            raise ConformanceError(f"cannot list the device's packages: {exc}") from exc
    return relay, None, None, disc, None


def _pick(provider: CetpDeclaration | str, disc: Discovery | None
          ) -> tuple[CetpDeclaration, list[CetpDeclaration]]:
    if isinstance(provider, CetpDeclaration):
        decl = provider
    else:
        if disc is None:
            raise ConformanceError(f"cannot find provider {provider!r}: no discovery")
        found = [d for d in disc.cetp
                 if provider in (d.package, d.authority, d.key)]
        if not found:
            raise ConformanceError(f"no CETP provider matches {provider!r}")
        own = [d for d in found if d.same_package]
        decl = (own or found)[0]
    decls = [decl]
    if disc is not None:
        decls = [d for d in disc.cetp if d.package == decl.package] or [decl]
        if decl not in decls:
            decls.insert(0, decl)
    return decl, decls


def _setup(setup: ConformanceSetup | dict[str, Any] | None,
           allow_mutations: bool | Iterable[str] | None) -> ConformanceSetup:
    if isinstance(setup, dict):
        setup = ConformanceSetup.model_validate(setup)
    s = setup.model_copy(deep=True) if setup is not None else ConformanceSetup()
    if allow_mutations is True:
        raise ConformanceError("allow_mutations needs the tool names (--allow-mutations "
                               "TOOL,...): the suite never mutates without a per-tool "
                               "permission")
    if allow_mutations:
        names = [allow_mutations] if isinstance(allow_mutations, str) else list(allow_mutations)
        s.allow_mutations = sorted(set(s.allow_mutations) | {n for n in names if n})
    return s


async def _prelude(ctx: RunContext) -> None:
    p = ctx.prelude
    if ctx.decl.supports_v2:
        caps = tuple(sorted(KNOWN_CAPABILITIES))
        p.requested_caps = caps
        r, res = await ctx.negotiate(caps)
        p.negotiate = r
        if res is None:
            if r.transport is not None:
                p.negotiate_error = f"{r.transport.code}: {r.transport.message}"
            elif r.violation is not None:
                p.negotiate_error = str(r.violation)
            elif r.reply is not None and r.reply.error is not None:
                p.negotiate_error = (f"{r.reply.error.error_code}: "
                                     f"{r.reply.error.error_message}")
            else:
                try:
                    cetp.parse_negotiate(r.reply.decoded if r.reply else None)
                except ProtocolViolation as v:
                    p.negotiate_error = str(v)
        else:
            p.negotiation = res
            ctx.negotiation = res
            ctx.token = res.session_token
            ir = await ctx.v2(cetp.GET_PROVIDER_INFO)
            p.info_call = ir
            if ir.reply is not None and ir.reply.ok:
                try:
                    info = cetp.parse_provider_info(ir.reply.decoded, True)
                    assert isinstance(info, cetp.ProviderInfo)
                    p.info = info
                except ProtocolViolation as v:
                    p.info_error = str(v)
            else:
                p.info_error = _failure(ir)
            tr = await ctx.v2(cetp.LIST_TOOLS)
            p.tools_call = tr
            if tr.reply is not None and tr.reply.ok:
                try:
                    p.tools, p.tool_violations = cetp.parse_tool_list_lenient(tr.reply.decoded)
                except ProtocolViolation as v:
                    p.tools_error = str(v)
            else:
                p.tools_error = _failure(tr)
    if ctx.decl.supports_v1:
        vr = await ctx.raw(cetp.LIST_TOOLS, None, v2=False)
        p.v1_call = vr
        if vr.reply is not None and vr.reply.ok:
            try:
                p.v1_tools = cetp.parse_v1_tool_list(vr.reply.decoded)
            except ProtocolViolation as v:
                p.v1_error = str(v)
        else:
            p.v1_error = _failure(vr)


def _failure(r: Any) -> str:
    if r.transport is not None:
        return f"{r.transport.code}: {r.transport.message}"
    if r.violation is not None:
        return str(r.violation)
    if r.reply is not None and r.reply.error is not None:
        return f"{r.reply.error.error_code}: {r.reply.error.error_message}"
    return "no reply"


def _prelude_calls(decl: CetpDeclaration) -> list[PlannedCall]:
    calls = []
    if decl.supports_v2:
        calls += [PlannedCall(method="negotiate", note="every known capability"),
                  PlannedCall(method="get_provider_info"), PlannedCall(method="list_tools")]
    if decl.supports_v1:
        calls.append(PlannedCall(method="list_tools", note="v1 (no protocol_version)"))
    return calls


def _make_plan(ctx: RunContext, chosen: dict[str, bool]) -> Plan:
    plan = Plan(provider=ctx.package, authority=ctx.decl.authority, stack=ctx.decl.stack,
                prelude=_prelude_calls(ctx.decl))
    mutating: set[str] = set()
    for c in _ordered():
        item = PlanItem(check_id=c.id, title=c.title, section=c.section, level=c.level,
                        category=c.category, status="run")
        if not chosen.get(c.id, True):
            item.status, item.reason = "skipped", "deselected"
        elif c.needs_v2 and not ctx.decl.supports_v2:
            item.status, item.reason = "not_applicable", "the provider does not declare v2"
        elif c.needs_v2 and ctx.prelude.negotiation is None and c.phase > 0:
            item.status, item.reason = "not_applicable", "negotiate failed"
        elif c.plan is not None:
            d = c.plan(ctx)
            item.status, item.reason, item.calls = d.status, d.reason, list(d.calls)
        if item.status == "run":
            mutating |= {x.tool for x in item.calls if x.mutating and x.tool}
        plan.items.append(item)
    plan.mutating_tools = sorted(mutating)
    if not ctx.setup.allow_mutations:
        plan.warnings.append("no tool is allowed to mutate: checks that need a mutation "
                             "report needs_setup (allow tools by name to run them)")
    return plan


def _ordered() -> list[registry.CheckDef]:
    registry._load()
    return sorted(registry.CHECKS.values(), key=lambda c: c.phase)


async def _build(target: Any, provider: CetpDeclaration | str, setup: Any,
                 allow_mutations: Any, restart: RestartHook | None,
                 human_prompt: HumanPrompt | None, options: EngineOptions | None,
                 recorder: Recorder | None,
                 second_caller: SecondCaller | None = None) -> RunContext:
    relay, session, srec, disc, sopts = await _resolve(target, provider)
    decl, decls = _pick(provider, disc)
    if not decl.authority:
        raise ConformanceError(f"{decl.package} declares no authority; nothing to call")
    reconnects = session is not None
    return RunContext(relay, decl, decls=decls, discovery=disc,
                      setup=_setup(setup, allow_mutations),
                      recorder=recorder or srec or Recorder(),
                      options=options or sopts or EngineOptions(), session=session,
                      restart=restart, human_prompt=human_prompt, reconnects=reconnects,
                      second_caller=second_caller)


async def plan_conformance(
    target: Any,
    provider: CetpDeclaration | str,
    *,
    setup: ConformanceSetup | dict[str, Any] | None = None,
    allow_mutations: Iterable[str] | None = None,
    select: Iterable[str] | None = None,
    skip: Iterable[str] | None = None,
    options: EngineOptions | None = None,
    recorder: Recorder | None = None,
    second_caller: SecondCaller | None = None,
) -> Plan:
    """The plan (read-only prelude calls only): what will run, what needs setup, which
    calls each check makes, which mutating tools it will invoke."""
    ctx = await _build(target, provider, setup, allow_mutations, None, None, options,
                       recorder, second_caller)
    await _prelude(ctx)
    return _make_plan(ctx, registry.selected(select, skip))


async def run_conformance(
    target: Any,
    provider: CetpDeclaration | str,
    *,
    setup: ConformanceSetup | dict[str, Any] | None = None,
    allow_mutations: Iterable[str] | None = None,
    select: Iterable[str] | None = None,
    skip: Iterable[str] | None = None,
    progress: ProgressCallback | None = None,
    restart: RestartHook | None = None,
    human_prompt: HumanPrompt | None = None,
    options: EngineOptions | None = None,
    recorder: Recorder | None = None,
    approve_plan: Callable[[Plan], Any] | None = None,
    second_caller: SecondCaller | None = None,
) -> ConformanceReport:
    """Run the suite against `provider` (a CetpDeclaration, package name or authority).

    `target` is an `inspector.session.session.Session` (its relay, recorder and traffic
    log are used, and its confirmation policy is taken over while the suite runs) or a
    bare `RelayApi`. `allow_mutations` names the tools that may be invoked although they
    are not plain reads. `approve_plan(plan)` is called with the plan before any check
    runs; return False (or raise) to stop. Unknown --select/--skip patterns raise
    ConformanceError. `second_caller()` opens a relay connection that reaches the provider
    as another app (`inspector.virtual.callers.second_caller_connector`); without it the
    caller-binding checks report needs_setup.
    """
    bad = registry.unknown_patterns(list(select or []) + list(skip or []))
    if bad:
        registry._load()
        bad = registry.unknown_patterns(list(select or []) + list(skip or []))
    if bad:
        raise ConformanceError(f"no check matches {', '.join(map(repr, bad))}")
    ctx = await _build(target, provider, setup, allow_mutations, restart, human_prompt,
                       options, recorder, second_caller)
    report = ConformanceReport(tool_version=_version(), started_ms=time.time() * 1000,
                               target=_target(ctx), setup=ctx.setup)
    session = ctx.session
    saved_policy = getattr(session, "confirmation_policy", None) if session else None
    if session is not None and hasattr(session, "confirmation_policy"):
        session.confirmation_policy = ctx.session_policy
    try:
        await _prelude(ctx)
        report.target = _target(ctx)
        chosen = registry.selected(select, skip)
        plan = _make_plan(ctx, chosen)
        report.plan = plan
        if progress is not None:
            progress(ProgressEvent("plan", total=len(plan.items), plan=plan))
        if approve_plan is not None:
            ok = approve_plan(plan)
            if hasattr(ok, "__await__"):
                ok = await ok
            if ok is False:
                raise ConformanceError("the plan was not approved")
        checks = _ordered()
        for i, c in enumerate(checks):
            item = plan.item(c.id)
            if progress is not None:
                progress(ProgressEvent("start", i, len(checks), c.id))
            res = await _run_one(ctx, c, item)
            report.results.append(res)
            if progress is not None:
                progress(ProgressEvent("result", i, len(checks), c.id, res))
    finally:
        if session is not None and hasattr(session, "confirmation_policy"):
            session.confirmation_policy = saved_policy
        ctx.detach()
        await ctx.close_other()
    report.finished_ms = time.time() * 1000
    causes.group(report.results)
    evidence.annotate(report, list(ctx.recorder.exchanges))
    report.finalize()
    if progress is not None:
        progress(ProgressEvent("done", len(report.results), len(report.results)))
    return report


def _target(ctx: RunContext) -> TargetInfo:
    info = ctx.prelude.info
    return TargetInfo(package=ctx.package, authority=ctx.decl.authority,
                      service=ctx.decl.service, stack=ctx.decl.stack,
                      versions=list(ctx.decl.versions),
                      provider_id=info.provider_id if info else None,
                      provider_name=info.provider_name if info else None,
                      device=getattr(ctx.recorder, "device", "") or "")


async def _run_one(ctx: RunContext, c: registry.CheckDef, item: PlanItem | None) -> CheckResult:
    base = dict(check_id=c.id, title=c.title, section=c.section, level=c.level,
                category=c.category)
    if item is not None and item.status != "run":
        outcome = {"skipped": Outcome.SKIPPED, "needs_setup": Outcome.NEEDS_SETUP,
                   "not_applicable": Outcome.NOT_APPLICABLE}[item.status]
        return CheckResult(**base, outcome=outcome, message=item.reason)
    made: list[str] = []

    def listen(x: Exchange) -> None:
        if x.id not in made:
            made.append(x.id)

    remove = ctx.recorder.add_listener(listen)
    t0 = time.perf_counter()
    try:
        v = await c.run(ctx)
    except NeedsSetup as exc:
        v = Verdict(Outcome.NEEDS_SETUP, str(exc))
    except NotApplicable as exc:
        v = Verdict(Outcome.NOT_APPLICABLE, str(exc))
    except RelayError as exc:
        v = Verdict(Outcome.ERROR, f"relay failure: {exc.code}: {exc.message}")
    except Exception as exc:  # one broken check must not stop the suite
        v = Verdict(Outcome.ERROR, f"{type(exc).__name__}: {exc}")
    finally:
        remove()
    ids = list(dict.fromkeys([*v.exchange_ids, *made]))
    if c.phase == 0:
        ids = list(dict.fromkeys([*ctx.prelude.exchange_ids(), *ids]))
    return CheckResult(**base, outcome=v.outcome, message=v.message,
                       evidence=Evidence(exchange_ids=ids, observed=_jsonable(v.observed),
                                         findings=v.findings),
                       duration_ms=(time.perf_counter() - t0) * 1000)


def _jsonable(value: Any) -> Any:
    import json

    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return json.loads(json.dumps(value, default=str))
