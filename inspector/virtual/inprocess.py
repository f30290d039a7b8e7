"""The embedded virtual device: a connected `RelayClient` with no listening socket."""

from __future__ import annotations

import secrets
from typing import Any

from inspector.relay.client import RelayClient
from inspector.relay.server import connect_in_process
from inspector.virtual.device import VirtualDevice


async def connect_virtual_device(device: VirtualDevice, **client_kwargs: Any) -> RelayClient:
    """A `RelayClient` talking to `device` through the real protocol over a socketpair.

    Several clients may connect to one device (each is its own relay connection)."""
    client: RelayClient = await connect_in_process(
        device, secrets.token_urlsafe(16), **client_kwargs
    )
    return client
