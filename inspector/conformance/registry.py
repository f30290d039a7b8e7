"""The check registry: every conformance check with its id, spec section and level.

A check is an async function taking the `RunContext` and returning a `Verdict`; an
optional planner says, before anything runs, whether it will run, needs setup or does not
apply, and which calls it will make. `CHECKS` keeps registration order; `phase` orders the
run: 0 judges what the read-only prelude fetched, 1 makes its own calls, 2 judges
everything the run observed (error envelopes, inline sizes, untrusted text).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from inspector.conformance.model import Category, Level, PlannedCall, PlanStatus

if TYPE_CHECKING:
    from inspector.conformance.context import RunContext, Verdict


@dataclass(frozen=True)
class PlanDecision:
    status: PlanStatus = "run"
    reason: str = ""
    calls: tuple[PlannedCall, ...] = ()


Runner = Callable[["RunContext"], Awaitable["Verdict"]]
Planner = Callable[["RunContext"], PlanDecision]


@dataclass(frozen=True)
class CheckDef:
    id: str
    title: str
    section: str
    level: Level
    category: Category
    run: Runner
    plan: Planner | None = None
    phase: int = 1
    needs_v2: bool = True
    rule_ids: tuple[str, ...] = ()  # the protocol rules it applies (inspector.protocol.rules)
    description: str = ""

    @property
    def doc(self) -> str:
        """What the check does (its docstring unless a description was given)."""
        return self.description or " ".join((self.run.__doc__ or "").split())


CHECKS: dict[str, CheckDef] = {}


def check(
    id: str,
    title: str,
    section: str,
    level: Level,
    category: Category,
    *,
    plan: Planner | None = None,
    phase: int = 1,
    needs_v2: bool = True,
    rule_ids: Iterable[str] = (),
    description: str = "",
) -> Callable[[Runner], Runner]:
    def deco(fn: Runner) -> Runner:
        if id in CHECKS:  # pragma: no cover - programming error
            raise ValueError(f"duplicate check id {id}")
        CHECKS[id] = CheckDef(id, title, section, level, category, fn, plan, phase, needs_v2,
                              tuple(rule_ids), description)
        return fn

    return deco


def _matches(check: CheckDef, patterns: Iterable[str]) -> bool:
    for p in patterns:
        if fnmatch.fnmatchcase(check.id, p) or check.category.value == p \
                or fnmatch.fnmatchcase(check.id, p + ".*"):
            return True
    return False


def selected(select: Iterable[str] | None, skip: Iterable[str] | None) -> dict[str, bool]:
    """check id → chosen, for `--select` / `--skip` patterns (ids, globs or categories)."""
    sel = [s for s in (select or []) if s]
    sk = [s for s in (skip or []) if s]
    out: dict[str, bool] = {}
    for cid, c in CHECKS.items():
        chosen = _matches(c, sel) if sel else True
        if sk and _matches(c, sk):
            chosen = False
        out[cid] = chosen
    return out


def unknown_patterns(patterns: Iterable[str] | None) -> list[str]:
    """Patterns that select no check (a typo in --select / --skip)."""
    return [p for p in (patterns or []) if p and not any(_matches(c, [p])
                                                         for c in CHECKS.values())]


def catalogue() -> list[dict[str, Any]]:
    """Every check as a plain dict (docs, `--list-checks`, the GUI)."""
    _load()
    return [{"id": c.id, "title": c.title, "section": c.section, "level": c.level,
             "category": c.category.value, "rules": list(c.rule_ids),
             "description": c.doc} for c in CHECKS.values()]


def _load() -> None:
    """Import the check modules (they register themselves)."""
    from inspector.conformance import (  # noqa: F401
        checks_async,
        checks_bounds,
        checks_callers,
        checks_calls,
        checks_effects,
        checks_enforcement,
        checks_every_tool,
        checks_ids,
        checks_static,
    )
