"""Shared plumbing for checks that run the user's scenarios (mutation, confirmation,
async call, large result): whether they can run, and what they will call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspector.conformance.context import NeedsSetup, RunContext
from inspector.conformance.model import PlannedCall, Scenario, ToolCall
from inspector.conformance.registry import PlanDecision

HINTS = {
    "mutation": "set `mutation` to a call that changes state without confirmation (e.g. "
                "{\"tool\": \"create_alert\", \"args\": {...}}) with an `observer`",
    "confirmation": "set `confirmation` to a call the provider confirms in its own UI",
    "async_call": "set `async_call` to a call the provider answers with `accepted`",
    "large_result": "set `large_result` to a read whose result exceeds "
                    "max_inline_result_bytes",
    "ungranted": "set `ungranted` to a call needing a scope a fresh app holds no grant for "
                 "(e.g. a sharing tool), with an `observer`",
}


def scenario(ctx: RunContext, name: str) -> ToolCall | None:
    return getattr(ctx.setup, name)


def scenario_problem(ctx: RunContext, name: str, *, observer: bool = False,
                     capability: str | None = None) -> str | None:
    """Why the scenario cannot run, or None."""
    sc = scenario(ctx, name)
    if sc is None:
        return f"needs a `{name}` scenario: {HINTS[name]}"
    if ctx.tools is not None and ctx.tool(sc.tool) is None:
        return f"the `{name}` tool {sc.tool} is not in the provider's tool list"
    why = ctx.safety_problem(sc.tool)
    if why is not None:
        return why
    if capability is not None and ctx.negotiation is not None \
            and capability not in ctx.capabilities:
        return f"the provider did not negotiate {capability}"
    if observer:
        obs = sc.observer if isinstance(sc, Scenario) else None
        if obs is None:
            return (f"needs an observer for `{name}`: a read tool whose output reveals the "
                    "effect (the suite does not guess whether a mutation happened)")
        t = ctx.tool(obs.tool)
        if t is None or t.annotations.side_effecting:
            return f"the observer {obs.tool} must be a listed read tool"
    return None


def require(ctx: RunContext, name: str, *, observer: bool = False,
            capability: str | None = None) -> Any:
    why = scenario_problem(ctx, name, observer=observer, capability=capability)
    if why is not None:
        raise NeedsSetup(why)
    return scenario(ctx, name)


def planner(name: str, describe: Callable[[ToolCall], list[tuple[str, str]]], *,
            observer: bool = False, capability: str | None = None,
            extra: Callable[[RunContext], str | None] | None = None
            ) -> Callable[[RunContext], PlanDecision]:
    """A planner: needs_setup with the reason, or the calls it will make."""

    def plan(ctx: RunContext) -> PlanDecision:
        why = scenario_problem(ctx, name, observer=observer, capability=capability)
        if why is None and extra is not None:
            why = extra(ctx)
        if why is not None:
            return PlanDecision("needs_setup", why)
        sc = scenario(ctx, name)
        assert sc is not None
        calls = []
        obs = sc.observer if isinstance(sc, Scenario) else None
        for method, note in describe(sc):
            is_obs = obs is not None and method == "observe"
            tool = obs.tool if is_obs else (sc.tool if method == "execute_tool" else None)
            calls.append(PlannedCall(method="execute_tool" if is_obs else method, tool=tool,
                                     note=note, mutating=(method == "execute_tool"
                                                          and ctx.is_mutating(sc.tool))))
        return PlanDecision("run", "", tuple(calls))

    return plan
