"""Fixtures: a fresh virtual device per test, reached through the backend or a real socket."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from inspector.relay.client import RelayClient
from inspector.relay.server import RelayServer
from inspector.virtual.device import VirtualDevice
from tests.virtual.phones import V2, BackendPhone


@pytest.fixture
async def device(tmp_path: Path) -> AsyncIterator[VirtualDevice]:
    dev = VirtualDevice(tmp_path / "state")
    yield dev
    await dev.aclose()


class SocketPhone:
    """A RelayClient over a Unix socket; collects events like BackendPhone."""

    def __init__(self, client: RelayClient, device: VirtualDevice, path: str, token: str) -> None:
        self.client = client
        self.device = device
        self.path = path
        self.token = token
        self.events: list[Any] = []
        client.add_event_handler(self.events.append)

    async def reconnect(self) -> None:
        """A new connection after the old one was lost (handles do not survive it)."""
        await self.client.close()
        self.client = await RelayClient.open_unix(self.path, self.token)
        self.client.add_event_handler(self.events.append)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    async def start_activity(self, package: str, action: str, extras: Any) -> Any:
        r = await self.client.start_activity(package, action, extras)
        return r.launched, r.component

    async def read_resource(self, package: str, resource_id: int, max_bytes: int) -> Any:
        r = await self.client.read_resource(package, resource_id, max_bytes)
        return r.data, r.name

    async def wake_provider(self, authority: str, package: str, mode: str) -> Any:
        r = await self.client.wake_provider(authority, package, mode)
        return r.ok, r.detail


@pytest.fixture(params=["backend", "socket"])
async def phone(
    request: pytest.FixtureRequest, device: VirtualDevice, tmp_path: Path
) -> AsyncIterator[Any]:
    if request.param == "backend":
        yield BackendPhone(device)
        return
    token = secrets.token_hex(8)
    server = RelayServer(device, token)
    handle = await server.serve_unix(str(tmp_path / "relay.sock"))
    client = await RelayClient.open_unix(str(tmp_path / "relay.sock"), token)
    phone = SocketPhone(client, device, str(tmp_path / "relay.sock"), token)
    try:
        yield phone
    finally:
        await phone.client.close()
        handle.close()
        await handle.wait_closed()


@pytest.fixture
async def v2(phone: Any) -> V2:
    c = V2(phone)
    r = await c.negotiate()
    assert r["status"] == "success"
    return c
