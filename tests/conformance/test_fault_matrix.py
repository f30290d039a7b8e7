"""Every check has a planted fault it catches: each fault plugin (the stock price-alert
provider with one behaviour broken, installed through the plugin API) fails exactly the
checks it is built to break among the checks it is run against, and its fault-free
variant passes them all.

To keep the run short each fault runs only its own selection (`Planted.select`: its
category, usually); the stock provider's full run is tests/conformance/test_conforming.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.conformance import Outcome, run_conformance
from inspector.conformance.registry import CHECKS, _load
from inspector.conformance.requirements import by_id
from inspector.virtual import VirtualDevice
from inspector.virtual.callers import second_caller_connector
from inspector.virtual.faultplugins import PLANTED, load_all, plugin_source

from .conftest import CONFIRMATION_TTL_MS, full_setup

load_all()
NOT_PASSING = (Outcome.FAIL, Outcome.WARNING, Outcome.ERROR)


async def _run(device: VirtualDevice, client, tmp_path: Path, fault_id: str, broken: bool
               ) -> dict[str, tuple[str, str]]:
    path = tmp_path / f"{fault_id}_{'broken' if broken else 'fixed'}.py"
    path.write_text(plugin_source(fault_id, broken=broken,
                                  confirmation_ttl_ms=CONFIRMATION_TTL_MS), encoding="utf-8")
    [package] = device.load_plugin(path, notify=False)
    f = PLANTED[fault_id]
    report = await run_conformance(client, package, setup=full_setup(), select=list(f.select),
                                   second_caller=second_caller_connector(device))
    return {r.check_id: (r.outcome.value, r.message) for r in report.results
            if r.outcome in NOT_PASSING or r.outcome == Outcome.NEEDS_SETUP}


@pytest.mark.parametrize("fault_id", sorted(PLANTED))
async def test_the_suite_catches_the_fault(device: VirtualDevice, client, tmp_path: Path,
                                           fault_id: str) -> None:
    f = PLANTED[fault_id]
    got = await _run(device, client, tmp_path, fault_id, broken=True)
    caught = {c for c, (o, _) in got.items() if o != "needs_setup"}
    assert caught == set(f.checks), got
    for cid in f.checks:  # a MUST fails, a SHOULD / INFO warns
        want = "fail" if CHECKS[cid].level == "MUST" else "warning"
        assert got[cid][0] == want, (cid, got[cid])
    assert [c for c, (o, _) in got.items() if o == "needs_setup"] == [], got


@pytest.mark.parametrize("fault_id", sorted(PLANTED))
async def test_the_fault_free_variant_passes(device: VirtualDevice, client, tmp_path: Path,
                                             fault_id: str) -> None:
    assert await _run(device, client, tmp_path, fault_id, broken=False) == {}


def test_every_check_has_a_fault_and_every_fault_a_requirement() -> None:
    _load()
    covered = set().union(*(f.checks for f in PLANTED.values()))
    assert sorted(set(CHECKS) - covered) == []
    reqs = by_id()
    for f in PLANTED.values():
        r = reqs[f.requirement]
        # the requirement the fault breaks is tested by (one of) the checks that catch it
        assert set(r.checks) & f.checks, (f.id, f.requirement)
        assert len(f.checks) == 1 or f.why, f"{f.id}: say why several checks fail"
