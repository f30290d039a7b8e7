"""A fresh virtual device per test, reached through the real relay protocol in-process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from inspector.conformance.model import Observer
from inspector.conformance.presets import PRICE_ALERTS_MUTATIONS, reference_setup
from inspector.virtual import VirtualDevice
from inspector.virtual.apps.pricealerts import PriceAlertsProvider
from inspector.virtual.cetp_provider import ToolCall, ToolSpec
from inspector.virtual.inprocess import connect_virtual_device

EXECUTIONS = ToolSpec(
    name="list_executions",
    title="List executions",
    description="The audit log: one entry per business side effect of this caller",
    input_schema={"type": "object", "properties": {}, "additionalProperties": False},
    output_schema={"type": "object", "properties": {"executions": {"type": "array"}},
                   "required": ["executions"]},
    scopes=("alerts.read",),
    annotations={"effect": "read", "risk": "low", "destructive": False, "idempotent": True,
                 "open_world": False, "confirmation": "never", "execution": "sync"},
)


class AuditedPriceAlerts(PriceAlertsProvider):
    """The conforming price-alert provider plus one read tool showing its audit log (§7.2),
    so the suite can observe each execution of the background `sync_watchlist`."""

    CONFIRMATION_TTL_MS = 1500  # so confirmation.expired_token waits 2 s, not 5 min

    def tool_specs(self) -> list[ToolSpec]:
        return [*super().tool_specs(), EXECUTIONS]

    def tool_list_executions(self, call: ToolCall) -> dict[str, Any]:
        rows = self.store.all("SELECT request_id, tool FROM executions WHERE uid=?"
                              " ORDER BY seq", call.caller.uid)
        return {"executions": [{"request_id": r["request_id"], "tool": r["tool"]}
                               for r in rows]}


def full_setup(**over: Any) -> Any:
    s = reference_setup("com.example.pricealerts")
    assert s is not None
    s.allow_mutations = list(PRICE_ALERTS_MUTATIONS)
    assert s.async_call is not None
    s.async_call.observer = Observer(tool="list_executions")
    s.resume_token_ttl_ms = AuditedPriceAlerts.CONFIRMATION_TTL_MS
    for k, v in over.items():
        setattr(s, k, v)
    return s


@pytest.fixture
async def device(tmp_path: Path) -> AsyncIterator[VirtualDevice]:
    dev = VirtualDevice(tmp_path / "state")
    yield dev
    await dev.aclose()


@pytest.fixture
async def client(device: VirtualDevice) -> AsyncIterator[Any]:
    c = await connect_virtual_device(device)
    yield c
    await c.close()
