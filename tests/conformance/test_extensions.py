"""Extension conformance: the stock extensions pass; each planted extension fault fails
exactly its check; the extension matrix names a check for its MUSTs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from inspector.conformance.extensions import (
    EXT_CHECKS,
    EXT_REQUIREMENTS,
    ext_coverage,
    run_extension_conformance,
)
from inspector.conformance.model import Outcome
from inspector.virtual import VirtualDevice
from inspector.virtual.faultplugins.extensions import PLANTED_EXT
from inspector.virtual.inprocess import connect_virtual_device

STOCK = {"unit_converter": ["convert_length"], "dice": ["roll_dice"], "hello_world": ["greet"],
         "flashlight": ["toggle_flashlight"]}
BAD = (Outcome.FAIL, Outcome.WARNING, Outcome.ERROR)


@pytest.fixture
async def dev(tmp_path: Path) -> AsyncIterator[VirtualDevice]:
    d = VirtualDevice(tmp_path / "state")
    yield d
    await d.aclose()


async def _run(d: VirtualDevice, ext: str, calls: list[str]) -> dict[str, Any]:
    c = await connect_virtual_device(d)
    try:
        rep = await run_extension_conformance(c, ext, allow_calls=calls, timeout_ms=500)
    finally:
        await c.close()
    return {r.check_id: r for r in rep.results}


@pytest.mark.parametrize("ext", sorted(STOCK))
async def test_stock_extensions_pass(dev: VirtualDevice, ext: str) -> None:
    got = await _run(dev, ext, STOCK[ext])
    assert set(got) == set(EXT_CHECKS)
    assert {c: r.message for c, r in got.items() if r.outcome in BAD} == {}


@pytest.mark.parametrize("fault_id", sorted(PLANTED_EXT))
async def test_each_extension_fault_is_caught(dev: VirtualDevice, tmp_path: Path,
                                              fault_id: str) -> None:
    p = PLANTED_EXT[fault_id]
    path = tmp_path / f"{fault_id}.py"  # installed through the plugin API
    path.write_text("from inspector.virtual.faultplugins.extensions import PLANTED_EXT\n\n\n"
                    f"def register(device):\n    device.install(PLANTED_EXT[{fault_id!r}].cls())\n",
                    encoding="utf-8")
    assert dev.load_plugin(path, notify=False) == [p.package]
    got = await _run(dev, p.cls.EXTENSION_ID, list(p.calls))
    bad = {c for c, r in got.items() if r.outcome in BAD}
    assert bad == {p.check}, {c: got[c].message for c in bad}
    r = got[p.check]
    assert r.requirements and r.requirements[0].id == p.requirement
    # its fault-free variant (the stock extension it copies) passes that check
    base = await _run(dev, p.base.EXTENSION_ID, STOCK[p.base.EXTENSION_ID])
    assert base[p.check].outcome not in BAD


def test_extension_matrix() -> None:
    checked, musts = ext_coverage()
    assert checked / musts >= 0.8
    for r in EXT_REQUIREMENTS:
        assert bool(r.checks) != bool(r.unobservable), r.id
        assert set(r.checks) <= set(EXT_CHECKS), r.id
    faulted = {p.check for p in PLANTED_EXT.values()}
    # the virtual device signs every app: that check has no planted fault
    # (docs/conformance.md says so)
    assert set(EXT_CHECKS) - faulted == {"ext.signed"}
