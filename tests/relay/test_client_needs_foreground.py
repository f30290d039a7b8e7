"""NEEDS_FOREGROUND (docs/relay-protocol.md §6): the client brings the relay forward and
retries the activity-starting op exactly once; other ops and other errors are not retried."""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from typing import Any

import pytest

from inspector.device.relay_lifecycle import RelayLaunch
from inspector.device.relay_link import RelayLink
from inspector.protocol.bundle import Bundle
from inspector.relay.api import (
    NEEDS_FOREGROUND,
    HelloInfo,
    RelayError,
    ServerConnection,
)
from inspector.relay.client import RelayClient
from inspector.relay.server import connect_in_process
from tests.relay.fakes import TOKEN, FakeBackend


class InFrontBackend(FakeBackend):
    """Answers activity starts with NEEDS_FOREGROUND until `in_front` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.in_front = False
        self.seen: list[str] = []

    def hello_info(self, client: str) -> HelloInfo:
        info = super().hello_info(client)
        caps = (*info.capabilities, "start_activity", "wake_provider")
        return dataclasses.replace(info, capabilities=caps)

    async def handle(self, op: str, args: Bundle, conn: ServerConnection) -> object:
        if op in ("start_activity", "wake_provider"):
            self.seen.append(op)
            if not self.in_front:
                raise RelayError(NEEDS_FOREGROUND, "needs the relay screen in front")
            if op == "wake_provider":
                return Bundle(ok=True, detail="launched com.x/.Main")
            return Bundle(launched=True, component="com.x/com.x.A")
        return await super().handle(op, args, conn)


async def _client(backend: InFrontBackend) -> RelayClient:
    return await connect_in_process(backend, TOKEN)


async def test_start_activity_is_retried_once_after_bringing_the_relay_forward() -> None:
    backend = InFrontBackend()
    client = await _client(backend)
    calls: list[str] = []

    async def bring_forward() -> None:
        calls.append("am start")
        backend.in_front = True

    client.bring_forward = bring_forward
    try:
        start = await client.start_activity("com.x", "com.x.ACTION", Bundle())
        assert start.launched and calls == ["am start"]
        assert backend.seen == ["start_activity", "start_activity"]
        wake = await client.wake_provider("com.x.auth", "com.x", "launch")
        assert wake.ok and calls == ["am start"]  # in front now: no second bring-forward
    finally:
        await client.close()


async def test_a_relay_that_stays_behind_fails_after_one_retry() -> None:
    backend = InFrontBackend()
    client = await _client(backend)
    calls: list[str] = []

    async def bring_forward() -> None:
        calls.append("am start")  # the screen is locked: nothing changes

    client.bring_forward = bring_forward
    try:
        with pytest.raises(RelayError) as err:
            await client.wake_provider("com.x.auth", "com.x", "launch")
        assert err.value.code == NEEDS_FOREGROUND and "am start" in err.value.hint
        assert calls == ["am start"] and backend.seen == ["wake_provider", "wake_provider"]
    finally:
        await client.close()


async def test_without_a_bring_forward_hook_the_error_is_reported_as_is() -> None:
    backend = InFrontBackend()
    client = await _client(backend)
    try:
        with pytest.raises(RelayError) as err:
            await client.start_activity("com.x", "com.x.ACTION", Bundle())
        assert err.value.code == NEEDS_FOREGROUND and backend.seen == ["start_activity"]
    finally:
        await client.close()


@dataclass
class _Shell:
    output: str = "Status: ok"
    exit_code: int = 0


class _Devices:
    def __init__(self) -> None:
        self.commands: list[list[str]] = []

    async def shell(self, serial: str, argv: list[str], **_: Any) -> _Shell:
        self.commands.append([serial, *argv])
        return _Shell()


async def test_the_phone_link_wires_am_start_of_the_relay_activity_without_extras() -> None:
    backend = InFrontBackend()
    devices = _Devices()
    launch = RelayLaunch(serial="PHONE1", package="org.cetp.inspector.relay",
                         socket_name="cetp-relay-x", token=TOKEN)

    async def handshake(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                        token: str) -> RelayClient:
        return await _client(backend)

    link = RelayLink(devices, launch, handshake=handshake)  # type: ignore[arg-type]

    async def streams() -> tuple[Any, Any]:
        return None, None

    link._open_streams = streams  # type: ignore[method-assign]
    client = await link.open(5)
    assert isinstance(client, RelayClient)
    try:
        backend.in_front = False
        with pytest.raises(RelayError):
            await client.start_activity("com.x", "com.x.ACTION", Bundle())
        assert devices.commands == [["PHONE1", "am", "start", "-W", "-n",
                                     "org.cetp.inspector.relay/.app.RelayActivity"]]
    finally:
        await client.close()
