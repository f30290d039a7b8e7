"""A fresh virtual device per test, reached through the real relay protocol in-process.

The device runs the stock providers; only its confirmation lifetime is short (a device
option), so `confirmation.expired_token` waits 1.5 s instead of 5 minutes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from inspector.conformance.model import ConformanceSetup
from inspector.conformance.presets import PRICE_ALERTS_MUTATIONS, reference_setup
from inspector.virtual import VirtualDevice
from inspector.virtual.inprocess import connect_virtual_device

CONFIRMATION_TTL_MS = 1500


def full_setup(**over: Any) -> ConformanceSetup:
    """The reference preset with its mutations allowed (what a user ticks in the GUI)."""
    s = reference_setup("com.example.pricealerts", confirmation_ttl_ms=CONFIRMATION_TTL_MS)
    assert s is not None
    s.allow_mutations = list(PRICE_ALERTS_MUTATIONS)
    for k, v in over.items():
        setattr(s, k, v)
    return s


@pytest.fixture
async def device(tmp_path: Path) -> AsyncIterator[VirtualDevice]:
    dev = VirtualDevice(tmp_path / "state", confirmation_ttl_ms=CONFIRMATION_TTL_MS)
    yield dev
    await dev.aclose()


@pytest.fixture
async def client(device: VirtualDevice) -> AsyncIterator[Any]:
    c = await connect_virtual_device(device)
    yield c
    await c.close()
