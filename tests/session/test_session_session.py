"""Session over the in-process virtual device (real protocol over a socketpair)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from inspector.consumer.engine import ProviderSession
from inspector.consumer.execution import ExecState
from inspector.consumer.v1 import V1ProviderSession
from inspector.protocol.exchange import Exchange, ExchangeKind, ExchangeStatus
from inspector.session.confirmations import ConfirmationRequest
from inspector.session.devices import VIRTUAL_SERIAL, DeviceManager, VirtualConfig
from inspector.session.errors import AmbiguousError, InspectorError, NotFoundError
from inspector.session.relay_link import LinkState
from inspector.session.session import Session
from inspector.tasks import Spawner

PRICE = "com.example.pricealerts"


async def wait_for(predicate, timeout: float = 5.0) -> None:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.01)


@pytest.fixture
async def manager(tmp_path: Path) -> AsyncIterator[DeviceManager]:
    m = DeviceManager(VirtualConfig(state_dir=str(tmp_path / "state")), use_adb=False)
    yield m
    await m.close()


@pytest.fixture
async def session(manager: DeviceManager) -> AsyncIterator[Session]:
    s = Session(VIRTUAL_SERIAL, manager.connector(VIRTUAL_SERIAL), spawner=Spawner())
    await s.open()
    yield s
    await s.close()
    await s.spawner.cancel_all()


async def test_open_discovers_providers_and_extensions(session: Session) -> None:
    assert session.state == LinkState.CONNECTED
    assert {d.package for d in session.providers} >= {PRICE, "com.example.finance"}
    assert {e.id for e in session.extensions} >= {"hello_world", "dice"}
    discover = [x for x in session.exchanges if x.method == "discover"]
    assert discover and discover[0].kind == ExchangeKind.RELAY
    assert discover[0].status == ExchangeStatus.SUCCESS


async def test_lookup_by_package_authority_and_provider_id(session: Session) -> None:
    decl = session.find_provider(PRICE)
    assert session.find_provider(f"{PRICE}.clawseed.tools") is decl
    ps = session.provider_session(decl)
    assert isinstance(ps, ProviderSession)
    await ps.negotiate()
    assert session.find_provider(ps.session.result.provider_id) is decl  # type: ignore[union-attr]
    with pytest.raises(AmbiguousError):
        session.find_provider("com.example.badprovider")
    with pytest.raises(NotFoundError) as err:
        session.find_extension("nope")
    assert "hello_world" in err.value.hint
    assert session.find_extension("org.ethereumphone.extensionexample").id == "hello_world"


async def test_provider_sessions_are_shared_and_v1_on_request(session: Session) -> None:
    decl = session.find_provider(PRICE)
    v2 = session.provider_session(decl)
    assert session.provider_session(decl) is v2
    v1 = session.provider_session(decl, v1=True)
    assert isinstance(v1, V1ProviderSession) and v1 is not v2
    finance = session.provider_session(session.find_provider("com.example.finance"))
    assert isinstance(finance, V1ProviderSession)
    v2_only = decl.model_copy(update={"versions": (2,), "authority": "x.v2only"})
    with pytest.raises(InspectorError) as err:
        session.provider_session(v2_only, v1=True)
    assert err.value.code == "NO_V1"


async def test_exchange_listeners_see_every_call(session: Session) -> None:
    seen: list[tuple[str, str]] = []

    def listen(x: Exchange) -> None:
        seen.append((x.method, x.status.value))

    session.add_exchange_listener(listen)
    ps = session.provider_session(session.find_provider(PRICE))
    ex = await ps.execute_tool("get_quote", {"symbol": "ACME"})
    assert ex.state == ExecState.SUCCEEDED
    assert ("negotiate", "pending") in seen and ("negotiate", "success") in seen
    assert ("execute_tool", "success") in seen


async def test_confirmation_policy_answers_the_virtual_screen(session: Session) -> None:
    asked: list[ConfirmationRequest] = []

    async def policy(req: ConfirmationRequest) -> bool:
        asked.append(req)
        return True

    session.confirmation_policy = policy
    ps = session.provider_session(session.find_provider(PRICE))
    assert isinstance(ps, ProviderSession)
    created = await ps.execute_tool("create_alert", {"symbol": "ACME", "price": 101.25})
    alert = created.value["alert_id"]
    ex = await ps.execute_tool("delete_alert", {"alert_id": alert})
    assert ex.state == ExecState.NEEDS_RESOLUTION
    ex = await ps.launch_resolution(ex)
    assert ex.state == ExecState.SUCCEEDED
    assert asked and alert in asked[0].target + str(asked[0].parameters)
    assert session.confirmations == [(asked[0], True)]


async def test_no_policy_denies(session: Session) -> None:
    ps = session.provider_session(session.find_provider(PRICE))
    assert isinstance(ps, ProviderSession)
    created = await ps.execute_tool("create_alert", {"symbol": "ACME", "price": 101.25})
    ex = await ps.execute_tool("delete_alert", {"alert_id": created.value["alert_id"]})
    ex = await ps.launch_resolution(ex)
    assert ex.state == ExecState.RESOLUTION_DECLINED
    assert session.confirmations[0][1] is False


async def test_package_removed_event_triggers_a_rescan(session: Session,
                                                       manager: DeviceManager) -> None:
    changes: list[int] = []
    session.add_discovery_listener(lambda d: changes.append(len(d.cetp)))
    manager.virtual.ensure_device().uninstall("com.example.finance")
    await wait_for(lambda: bool(changes))
    assert "com.example.finance" not in {d.package for d in session.providers}
    assert any(e.get("event") == "package_changed" for e in session.events)


async def test_reconnect_keeps_exchanges_and_operations(session: Session) -> None:
    states: list[LinkState] = []
    session.add_state_listener(lambda s, _d: states.append(s))
    ps = session.provider_session(session.find_provider(PRICE))
    assert isinstance(ps, ProviderSession)
    ex = await ps.execute_tool("sync_watchlist", {"symbols": ["ACME", "GLOBX"], "step_ms": 150})
    assert ex.state == ExecState.ACCEPTED
    before = len(session.exchanges)
    assert await session.relay.fault("drop_connection")
    quote = await ps.execute_tool("get_quote", {"symbol": "ACME"}, auto_retry=False)
    assert quote.state in (ExecState.FAILED, ExecState.OUTCOME_UNKNOWN)
    assert LinkState.DISCONNECTED in states
    # the next call reconnects by itself; the operation is still known and completes
    assert session.operations() == [(ps, ex)]
    assert session.find_operation(ex.operation_id or "") == (ps, ex)
    ex = await ps.wait_operation(ex)
    assert ex.state == ExecState.SUCCEEDED and ex.value["synced"] == 2
    assert session.link.connects == 2 and session.state == LinkState.CONNECTED
    assert len(session.exchanges) > before
    assert session.exchanges[0].method == "discover"  # nothing lost


async def test_explicit_reconnect(session: Session) -> None:
    await session.reconnect()
    assert session.link.connects == 2
    assert await session.relay.ping() > 0


async def test_adopt_operation_started_elsewhere(session: Session,
                                                 manager: DeviceManager) -> None:
    other = Session(VIRTUAL_SERIAL, manager.connector(VIRTUAL_SERIAL), spawner=Spawner())
    await other.open()
    ps = other.provider_session(other.find_provider(PRICE))
    assert isinstance(ps, ProviderSession)
    ex = await ps.execute_tool("sync_watchlist", {"symbols": ["ACME"], "step_ms": 50})
    await other.close()
    mine, adopted = session.adopt_operation(session.find_provider(PRICE), ex.operation_id or "",
                                            ex.request_id, "sync_watchlist")
    adopted = await mine.wait_operation(adopted)
    assert adopted.state == ExecState.SUCCEEDED and adopted.value["synced"] == 1


async def test_extension_host_is_kept_per_package(session: Session) -> None:
    decl = session.find_extension("hello_world")
    host = session.extension_host(decl)
    assert session.extension_host(decl) is host
    reply = await host.execute("greet", {"name": "Ada"})
    assert reply.ok and "Ada" in reply.decoded["greeting"]
    assert session.exchanges[-1].kind == ExchangeKind.EXTENSION


async def test_connect_failure_is_a_device_error() -> None:
    from inspector.relay.api import RelayError

    async def refuse() -> object:
        raise RelayError("AUTH_FAILED", "bad token")

    s = Session("x", refuse)  # type: ignore[arg-type]
    with pytest.raises(InspectorError) as err:
        await s.open()
    assert err.value.code == "AUTH_FAILED" and int(err.value.exit_code) == 3
    assert s.state == LinkState.DISCONNECTED


async def test_reply_lost_mid_mutation_is_retried_with_the_same_id(session: Session) -> None:
    """The connection drops after the provider committed; the engine re-sends with the
    same request_id over a new connection and the provider's dedup answers: one alert."""
    ps = session.provider_session(session.find_provider(PRICE))
    assert isinstance(ps, ProviderSession)
    await ps.negotiate()
    listed = await ps.execute_tool("list_alerts", {})
    before = {a["alert_id"] for a in listed.value["alerts"]}
    assert await session.relay.fault("drop_connection")
    ex = await ps.execute_tool("create_alert", {"symbol": "GLOBX", "price": 55.10})
    assert ex.state == ExecState.SUCCEEDED, ex.message
    assert [a.outcome.split(":")[0] for a in ex.attempts] == ["transport", "success"]
    after = await ps.execute_tool("list_alerts", {})
    assert len({a["alert_id"] for a in after.value["alerts"]} - before) == 1
    assert session.link.connects == 2
    rids = {session.recorder.by_id(x).request_id for x in ex.exchange_ids  # type: ignore[union-attr]
            if session.recorder.by_id(x).method == "execute_tool"}  # type: ignore[union-attr]
    assert rids == {ex.request_id}
