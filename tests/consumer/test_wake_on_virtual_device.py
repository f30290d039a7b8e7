"""`EngineOptions.wake_and_retry` against a cold provider on the virtual device, through a
real relay socket: the ClawSeed recovery (acquire, then launch) recorded step by step."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from inspector.consumer.calls import WAKE_FAILED_HINT, WAKE_OFF_HINT
from inspector.consumer.clock import SystemClock
from inspector.consumer.engine import ProviderSession
from inspector.consumer.execution import ExecState
from inspector.consumer.options import EngineOptions
from inspector.protocol.exchange import Exchange, ExchangeKind, ExchangeStatus
from inspector.relay.client import RelayClient
from inspector.relay.server import RelayServer
from inspector.virtual.device import VirtualDevice

PRICE = "com.example.pricealerts"
PRICE_AUTH = "com.example.pricealerts.clawseed.tools"
UNKNOWN = f"provider rejected the call: Unknown authority {PRICE_AUTH}"


class RecordingClock(SystemClock):
    """The real clock (the provider checks deadlines against it), with waits recorded."""

    def __init__(self) -> None:
        self.sleeps: list[int] = []

    async def sleep_ms(self, ms: int) -> None:
        self.sleeps.append(ms)
        await super().sleep_ms(ms)


@dataclass
class Rig:
    device: VirtualDevice
    client: RelayClient
    clock: RecordingClock

    def session(self, wake: bool) -> ProviderSession:
        opts = EngineOptions(wake_and_retry=wake, wake_delay_ms=5)
        return ProviderSession(self.client, PRICE_AUTH, package=PRICE, clock=self.clock,
                               options=opts)


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    device = VirtualDevice(tmp_path / "state")
    token = secrets.token_hex(8)
    sock = str(tmp_path / "relay.sock")
    handle = await RelayServer(device, token).serve_unix(sock)
    client = await RelayClient.open_unix(sock, token)
    try:
        yield Rig(device, client, RecordingClock())
    finally:
        await client.close()
        handle.close()
        await handle.wait_closed()
        await device.aclose()


def steps(ps: ProviderSession) -> list[tuple[str, str, str | None]]:
    """(method, status, wake mode or request_id) of every recorded exchange, in order."""
    out = []
    for x in ps.recorder.exchanges:
        extra = x.request["mode"] if x.method == "wake_provider" else x.request_id
        out.append((x.method, x.status.value, extra))
    return out


def wakes(ps: ProviderSession) -> list[Exchange]:
    return [x for x in ps.recorder.exchanges if x.kind == ExchangeKind.RELAY]


async def alert_count(ps: ProviderSession) -> int:
    ex = await ps.execute_tool("list_alerts", {})
    assert ex.state == ExecState.SUCCEEDED, ex.message
    return len(ex.value["alerts"] if isinstance(ex.value, dict) else ex.value)


async def test_without_wake_the_failure_says_what_to_try(rig: Rig) -> None:
    assert await rig.client.fault("cold_start", package=PRICE)
    ps = rig.session(wake=False)
    ex = await ps.execute_tool("create_alert", {"symbol": "ACME", "price": 100})
    assert ex.state == ExecState.TRANSPORT_FAILED
    assert UNKNOWN in ex.message and "never reached the provider" in ex.message
    (neg,) = ps.recorder.exchanges
    assert neg.method == "negotiate" and neg.status == ExchangeStatus.TRANSPORT_ERROR
    assert neg.error_code == "NOT_FOUND" and neg.error_message == UNKNOWN
    assert neg.notes == [WAKE_OFF_HINT] and "--wake" in WAKE_OFF_HINT
    assert wakes(ps) == [] and rig.clock.sleeps == []


async def test_a_cold_execute_names_the_wake_option(rig: Rig) -> None:
    ps = rig.session(wake=False)
    await ps.negotiate()
    await ps.list_tools()
    assert await rig.client.fault("cold_start", package=PRICE)
    ex = await ps.execute_tool("create_alert", {"symbol": "ACME", "price": 100})
    assert ex.state == ExecState.FAILED
    assert ex.message.startswith(f"NOT_FOUND: {UNKNOWN}.") and "wake_and_retry" in ex.message


async def test_acquire_wakes_and_the_negotiation_is_retried(rig: Rig) -> None:
    assert await rig.client.fault("cold_start", package=PRICE)
    ps = rig.session(wake=True)
    ex = await ps.execute_tool("create_alert", {"symbol": "ACME", "price": 100})
    assert ex.state == ExecState.SUCCEEDED, ex.message
    assert steps(ps)[:3] == [
        ("negotiate", "transport_error", None),
        ("wake_provider", "success", "acquire"),
        ("negotiate", "success", None),
    ]
    first, wake, retry = ps.recorder.exchanges[:3]
    assert wake.parent_id == first.id and retry.parent_id == first.id
    assert retry.notes == ["retried after wake_provider(acquire)"]
    assert "process started" in wake.decoded["detail"]
    assert rig.clock.sleeps[:1] == [5]
    assert await alert_count(ps) == 1


async def test_a_cold_execute_is_retried_with_the_same_request_id(rig: Rig) -> None:
    ps = rig.session(wake=True)
    await ps.negotiate()
    await ps.list_tools()  # so the next call on this session is execute_tool itself
    before = len(ps.recorder.exchanges)
    assert await rig.client.fault("cold_start", package=PRICE, mode="launch")
    ex = await ps.execute_tool("create_alert", {"symbol": "ACME", "price": 100})
    assert ex.state == ExecState.SUCCEEDED, ex.message
    rid = ex.request_id
    got = steps(ps)[before:]
    # the process restart lost the session token: the engine re-negotiates, then re-sends
    # the SAME request_id, so the provider's dedup guards the mutation
    assert got[:3] == [
        ("execute_tool", "transport_error", rid),
        ("wake_provider", "transport_error", "acquire"),
        ("wake_provider", "success", "launch"),
    ]
    execs = [s for s in got if s[0] == "execute_tool"]
    assert {s[2] for s in execs} == {rid} and execs[-1][1] == "success"
    acquire = wakes(ps)[0]
    assert acquire.error_code == "WAKE_FAILED"
    assert acquire.error_message == f"no provider with authority '{PRICE_AUTH}'"
    assert await alert_count(ps) == 1
    audit = await ps.execute_tool("list_executions", {})
    assert audit.state == ExecState.SUCCEEDED, audit.message
    assert [e["request_id"] for e in audit.value["executions"]].count(rid) == 1


async def test_a_provider_that_stays_unreachable_gets_a_clear_hint(rig: Rig) -> None:
    rig.device.uninstall(PRICE)  # neither acquire nor launch can wake what is not there
    ps = rig.session(wake=True)
    ex = await ps.execute_tool("create_alert", {"symbol": "ACME", "price": 100})
    assert ex.state == ExecState.TRANSPORT_FAILED
    assert [s[:2] for s in steps(ps)] == [
        ("negotiate", "transport_error"),
        ("wake_provider", "transport_error"),
        ("wake_provider", "transport_error"),
    ]
    assert [w.request["mode"] for w in wakes(ps)] == ["acquire", "launch"]
    assert ps.recorder.exchanges[0].notes[-1] == WAKE_FAILED_HINT
    assert rig.clock.sleeps == []  # no wake-up succeeded, so nothing was retried
