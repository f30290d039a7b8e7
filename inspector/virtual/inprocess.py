"""The embedded virtual device: a connected `RelayClient` with no listening socket."""

from __future__ import annotations

import secrets
from typing import Any

from inspector.relay.client import RelayClient
from inspector.relay.server import connect_in_process
from inspector.virtual.callers import CallerBackend, consumer_caller
from inspector.virtual.device import VirtualDevice


async def connect_virtual_device(
    device: VirtualDevice, *, caller_package: str | None = None, **client_kwargs: Any
) -> RelayClient:
    """A `RelayClient` talking to `device` through the real protocol over a socketpair.

    Several clients may connect to one device (each is its own relay connection).
    `caller_package` makes this connection act as one of the device's consumer apps
    (`inspector.virtual.callers.CONSUMER_APPS`, virtual-device only): providers see that
    app's UID, and the hello reports it. ValueError for a package not in that whitelist."""
    backend: Any = device
    if caller_package is not None:
        backend = CallerBackend(device, consumer_caller(caller_package))
    client: RelayClient = await connect_in_process(
        backend, secrets.token_urlsafe(16), **client_kwargs
    )
    return client
