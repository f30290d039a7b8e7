"""The broadcast op of the Java relay core: per-call reply actions, include_stopped, and a
timeout that says why (FakePlatform knows no stopped state, so `target_stopped` is absent)."""

from __future__ import annotations

import pytest

from inspector.protocol.bundle import Bundle
from inspector.relay.client import RelayClient
from tests.relay_apk.host_jvm import HostRelayProcess as HostRelay

pytestmark = pytest.mark.java

EXT = "com.example.fakeextension"
BROADCAST = "org.ethereumphone.andyclaw.EXTENSION_BROADCAST"
BASE = EXT + ".andyclaw.EXTENSION_RESPONSE"


async def test_each_broadcast_listens_on_its_own_unguessable_action(host_relay: HostRelay) -> None:
    client = await RelayClient.open_tcp(host_relay.host, host_relay.port, host_relay.token)
    try:
        a = await client.broadcast(EXT, BROADCAST, Bundle(function="greet"), BASE, 2000)
        b = await client.broadcast(EXT, BROADCAST, Bundle(function="greet"), BASE, 2000)
        assert not a.timed_out and a.reply is not None
        assert a.reply_action and b.reply_action and a.reply_action != b.reply_action
        assert a.reply_action.startswith(BASE + ".r") and len(a.reply_action) == len(BASE) + 34
        assert a.detail is None
    finally:
        await client.close()


async def test_a_timeout_carries_an_explanation_and_include_stopped_is_passed(
    host_relay: HostRelay,
) -> None:
    client = await RelayClient.open_tcp(host_relay.host, host_relay.port, host_relay.token)
    try:
        r = await client.broadcast("com.example.nobody", BROADCAST, Bundle(), BASE, 300,
                                   include_stopped=True)
        assert r.timed_out and r.reply is None
        assert r.target_stopped is None  # the host platform cannot tell
        assert r.detail is not None and "no reply within 300 ms" in r.detail
    finally:
        await client.close()
