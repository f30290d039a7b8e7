"""Every check has a planted fault it catches: each fault plugin (the stock price-alert
provider with one behaviour broken, installed through the plugin API) fails exactly the
checks it is built to break among the checks it is run against, and its fault-free
variant passes them all.

To keep the run short each fault runs only its own selection (`Planted.select`: its
category, usually); the stock provider's full run is tests/conformance/test_conforming.py.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from inspector.conformance import ConformanceSetup, Outcome, run_conformance
from inspector.conformance.registry import CHECKS, _load
from inspector.conformance.requirements import by_id
from inspector.virtual import VirtualDevice
from inspector.virtual.callers import second_caller_connector
from inspector.virtual.faultplugins import PLANTED, load_all, plugin_source

from .conftest import CONFIRMATION_TTL_MS, full_setup

load_all()
NOT_PASSING = (Outcome.FAIL, Outcome.WARNING, Outcome.ERROR)


def _setup() -> ConformanceSetup:
    """The reference setup, quicker: a shorter background operation and poll bound."""
    s = full_setup(poll_timeout_ms=3000)
    assert s.async_call is not None
    s.async_call = s.async_call.model_copy(update={"args": {**s.async_call.args,
                                                            "step_ms": 150}})
    return s


async def _run(device: VirtualDevice, client, tmp_path: Path, fault_id: str, broken: bool
               ) -> dict[str, tuple[str, str, str | None]]:
    path = tmp_path / f"{fault_id}_{'broken' if broken else 'fixed'}.py"
    path.write_text(plugin_source(fault_id, broken=broken,
                                  confirmation_ttl_ms=CONFIRMATION_TTL_MS), encoding="utf-8")
    [package] = device.load_plugin(path, notify=False)
    f = PLANTED[fault_id]
    report = await run_conformance(client, package, setup=_setup(), select=list(f.select),
                                   second_caller=second_caller_connector(device))
    return {r.check_id: (r.outcome.value, r.message, r.caused_by) for r in report.results
            if r.outcome in NOT_PASSING or r.outcome == Outcome.NEEDS_SETUP}


@pytest.mark.parametrize("fault_id", sorted(PLANTED))
async def test_the_fault_is_caught_and_its_fix_passes(device: VirtualDevice, client,
                                                      tmp_path: Path, fault_id: str) -> None:
    """Both variants run at once on one device (they are separate apps): the broken one
    fails exactly its checks, the fixed one passes every check of the selection."""
    f = PLANTED[fault_id]
    got, fixed = await asyncio.gather(_run(device, client, tmp_path, fault_id, broken=True),
                                      _run(device, client, tmp_path, fault_id, broken=False))
    assert fixed == {}
    # one fault, one failure: what else fails is grouped under it as a consequence
    roots = {c for c, (o, _, cause) in got.items() if o != "needs_setup" and not cause}
    assert roots == set(f.checks), got
    consequences = {c for c, (_, _, cause) in got.items() if cause}
    assert consequences == set(f.then), got
    for cid in consequences:
        _, msg, cause = got[cid]
        assert cause in f.checks and msg.startswith(f"probably a consequence of {cause}")
    for cid in f.checks:  # a MUST fails, a SHOULD / INFO warns
        want = "fail" if CHECKS[cid].level == "MUST" else "warning"
        assert got[cid][0] == want, (cid, got[cid])
    assert [c for c, (o, _, _) in got.items() if o == "needs_setup"] == [], got


def test_every_check_has_a_fault_and_every_fault_a_requirement() -> None:
    _load()
    covered = set().union(*(f.checks | f.then for f in PLANTED.values()))
    assert sorted(set(CHECKS) - covered) == []
    reqs = by_id()
    for f in PLANTED.values():
        r = reqs[f.requirement]
        # the requirement the fault breaks is tested by (one of) the checks that catch it
        assert set(r.checks) & f.checks, (f.id, f.requirement)
        assert len(f.checks) == 1 or f.why, f"{f.id}: say why several checks fail"
