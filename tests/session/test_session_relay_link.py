"""RelayLink: forwards to the current client, reconnects after a disconnect."""

from __future__ import annotations

import asyncio

import pytest

from inspector.protocol.bundle import Bundle
from inspector.relay.api import DISCONNECTED, HelloInfo, RelayError
from inspector.session.relay_link import LinkClosed, LinkState, RelayLink
from inspector.tasks import spawn


class FakeClient:
    def __init__(self, n: int) -> None:
        self.n = n
        self.handlers: list = []
        self.closed = False
        self.fail_next: str | None = None
        self.hello_info = HelloInfo(1, n, "t", (), "p", 2000, ())

    async def ping(self) -> int:
        if self.fail_next:
            code, self.fail_next = self.fail_next, None
            raise RelayError(code, "gone")
        return self.n

    async def call(self, authority, method, extras, *, arg=None, timeout_ms=30_000):
        return Bundle(status=f"{authority}/{method}/{self.n}")

    def add_event_handler(self, h) -> None:
        self.handlers.append(h)

    async def close(self) -> None:
        self.closed = True


async def test_reconnects_after_disconnect_and_keeps_handlers() -> None:
    made: list[FakeClient] = []

    async def connect() -> FakeClient:
        made.append(FakeClient(len(made) + 1))
        return made[-1]

    link = RelayLink(connect)
    states: list[LinkState] = []
    link.add_state_listener(lambda s, d: states.append(s))
    handler = lambda b: None  # noqa: E731
    link.add_event_handler(handler)
    assert await link.ping() == 1
    assert made[0].handlers == [handler]
    made[0].fail_next = DISCONNECTED
    with pytest.raises(RelayError):
        await link.ping()  # the failed call is not retried behind the engine's back
    assert not link.connected and made[0].closed
    assert await link.ping() == 2  # next call reconnects
    assert made[1].handlers == [handler]
    assert link.connects == 2
    assert states == [LinkState.CONNECTING, LinkState.CONNECTED, LinkState.DISCONNECTED,
                      LinkState.CONNECTING, LinkState.CONNECTED]
    assert (await link.call("a", "m", None))["status"] == "a/m/2"


async def test_other_errors_keep_the_connection() -> None:
    c = FakeClient(1)

    async def connect() -> FakeClient:
        return c

    link = RelayLink(connect)
    await link.ping()
    c.fail_next = "TIMEOUT"
    with pytest.raises(RelayError):
        await link.ping()
    assert link.connected and not c.closed


async def test_hello_before_connect_is_a_relay_error() -> None:
    async def connect() -> FakeClient:
        raise RelayError(DISCONNECTED, "no socket")

    link = RelayLink(connect)
    with pytest.raises(RelayError):
        _ = link.hello_info
    with pytest.raises(RelayError):
        await link.ping()
    assert link.state == LinkState.DISCONNECTED and link.last_error == "no socket"


async def test_idle_disconnect_is_seen_when_the_client_reports_it() -> None:
    class Closing(FakeClient):
        def add_close_handler(self, cb) -> None:  # type: ignore[no-untyped-def]
            self.on_close = cb

    made: list[Closing] = []

    async def connect() -> Closing:
        made.append(Closing(len(made) + 1))
        return made[-1]

    link = RelayLink(connect)
    details: list[str] = []
    link.add_state_listener(lambda s, d: details.append(f"{s}:{d}"))
    await link.ensure()
    made[0].on_close(RelayError(DISCONNECTED, "cable pulled"))
    assert link.state == LinkState.DISCONNECTED and not link.connected
    assert details[-1] == "disconnected:cable pulled"
    assert await link.ping() == 2


async def test_a_late_call_after_close_never_reconnects() -> None:
    made: list[FakeClient] = []

    async def connect() -> FakeClient:
        made.append(FakeClient(len(made) + 1))
        return made[-1]

    link = RelayLink(connect)
    assert await link.ping() == 1
    await link.close()
    assert made[0].closed and link.closed and link.state == LinkState.CLOSED
    with pytest.raises(LinkClosed) as info:
        await link.ping()
    assert info.value.code == DISCONNECTED and "closed" in info.value.message
    with pytest.raises(LinkClosed):
        await link.ensure()
    with pytest.raises(LinkClosed):
        await link.reconnect()
    with pytest.raises(LinkClosed):
        async for _ in link.read_file("h", 10):
            pass
    assert len(made) == 1 and link.connects == 1
    await link.close()  # idempotent
    assert link.state == LinkState.CLOSED


async def test_close_while_connecting_discards_the_new_client() -> None:
    made: list[FakeClient] = []
    gate = asyncio.Event()

    async def connect() -> FakeClient:
        await gate.wait()
        made.append(FakeClient(len(made) + 1))
        return made[-1]

    link = RelayLink(connect)
    pending = spawn(link.ping(), "late ping")
    await asyncio.sleep(0)
    assert link.state == LinkState.CONNECTING
    await link.close()
    gate.set()
    with pytest.raises(LinkClosed):
        await pending
    assert made[0].closed and not link.connected and link.state == LinkState.CLOSED


async def test_engine_renegotiates_through_a_reconnect() -> None:
    """A negotiate lost to a cable pull: the link reconnects, the engine re-sends it once."""
    from inspector.consumer.clock import FakeClock
    from inspector.consumer.engine import ProviderSession
    from inspector.consumer.execution import ExecState
    from tests.consumer.fakes import FakeRelay

    clock = FakeClock()
    first, second = FakeRelay(clock), FakeRelay(clock)
    first.add_v2()
    provider = second.add_v2()
    first.fail_calls = [("negotiate", DISCONNECTED)]
    clients = [first, second]

    async def connect() -> FakeRelay:
        return clients.pop(0)

    link = RelayLink(connect)
    ps = ProviderSession(link, provider.authority, package=provider.package, clock=clock)
    ex = await ps.execute_tool("get_quote", {"symbol": "ACME"})
    assert ex.state == ExecState.SUCCEEDED, ex.message
    assert link.connects == 2 and len(provider.calls("negotiate")) == 1
