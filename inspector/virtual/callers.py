"""Other callers on the virtual device: relay connections that act as a different app.

A phone has one relay app, so every call the inspector makes arrives with the relay's UID.
The spec binds session tokens, operations, resume tokens and dedup keys to the calling UID
(§2.2, §4.3, §4.4, §6, §7.1); checking that needs a *second* caller. The virtual device
therefore has a few installed "consumer apps" (their own UID, package and signing
certificate, no components) and lets a connection speak as one of them. This is a
virtual-device-only extension (docs/relay-protocol.md §3.1): the phone relay never offers it.

    client = await connect_virtual_device(device, caller_package=SECOND_CALLER)
    client.hello_info.caller_uid  # the consumer app's UID, not the relay's
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from inspector.protocol.bundle import Bundle
from inspector.relay.api import HelloInfo, RelayApi, ServerConnection
from inspector.virtual.app import RELAY_PACKAGE, RELAY_UID, Caller
from inspector.virtual.manifest import fake_cert_sha256

if TYPE_CHECKING:
    from inspector.virtual.device import VirtualDevice

#: the consumer app a second conformance connection speaks as
SECOND_CALLER = "org.cetp.consumer.second"

#: the whitelist: the only identities a connection may take (package → Caller)
CONSUMER_APPS: dict[str, Caller] = {
    SECOND_CALLER: Caller(uid=10_301, package=SECOND_CALLER),
    "org.cetp.consumer.third": Caller(uid=10_302, package="org.cetp.consumer.third"),
}

#: the default identity of every connection (the relay app itself)
RELAY_CALLER = Caller(uid=RELAY_UID, package=RELAY_PACKAGE)

Connector = Callable[[], Awaitable[RelayApi]]


def consumer_caller(package: str) -> Caller:
    """The whitelisted consumer app `package`; ValueError (naming the choices) otherwise."""
    caller = CONSUMER_APPS.get(package)
    if caller is None:
        raise ValueError(
            f"{package[:100]!r} is not a consumer app of the virtual device; choose one of "
            f"{', '.join(sorted(CONSUMER_APPS))}"
        )
    return caller


class CallerBackend:
    """A `RelayBackend` view of a device in which every connection is `caller`.

    Each in-process connection gets its own relay server core over this view, so the
    identity is fixed before the hello (no race between connections) and the hello result
    reports it (`caller_uid`, `caller_package`, `caller_cert_sha256`)."""

    def __init__(self, device: VirtualDevice, caller: Caller) -> None:
        self.device = device
        self.caller = caller

    def hello_info(self, client: str) -> HelloInfo:
        base = self.device.hello_info(client)
        device = dict(base.device)
        device["granted_permissions"] = ",".join(  # this app's grants, not the relay's
            sorted(self.device.platform().granted(self.caller.package)))
        return HelloInfo(
            protocol_version=base.protocol_version,
            relay_version_code=base.relay_version_code,
            relay_version_name=base.relay_version_name,
            capabilities=base.capabilities,
            caller_package=self.caller.package,
            caller_uid=self.caller.uid,
            caller_cert_sha256=(fake_cert_sha256(self.caller.package),),
            device=device,
        )

    def connection_opened(self, conn: ServerConnection) -> None:
        self.device.bind_caller(conn, self.caller)
        self.device.connection_opened(conn)

    async def handle(self, op: str, args: Bundle, conn: ServerConnection) -> Any:
        self.device.bind_caller(conn, self.caller)
        return await self.device.handle(op, args, conn)

    def connection_closed(self, conn: ServerConnection) -> None:
        self.device.connection_closed(conn)


def virtual_device_of(session: Any) -> VirtualDevice | None:
    """The in-process `VirtualDevice` behind a `Session`, or None (a phone, or a relay
    reached on a socket: neither can act as another app)."""
    link = getattr(session, "link", None)
    connector = getattr(link, "_connector", None)
    host = getattr(connector, "__self__", None)
    config = getattr(host, "config", None)
    if host is None or config is None or getattr(config, "relay_socket", None):
        return None
    ensure = getattr(host, "ensure_device", None)
    if not callable(ensure):
        return None
    from inspector.virtual.device import VirtualDevice

    device = ensure()
    return device if isinstance(device, VirtualDevice) else None


def second_caller_connector(target: Any, package: str = SECOND_CALLER) -> Connector | None:
    """A function opening a relay connection that speaks as consumer app `package`.

    `target` is a `VirtualDevice` or a `Session` on the in-process virtual device; anything
    else (a phone, a socket relay) gives None: the conformance suite then reports its
    caller-binding checks as needs_setup."""
    from inspector.virtual.device import VirtualDevice

    device = target if isinstance(target, VirtualDevice) else virtual_device_of(target)
    if device is None:
        return None
    consumer_caller(package)

    async def connect() -> RelayApi:
        from inspector.virtual.inprocess import connect_virtual_device

        return await connect_virtual_device(device, caller_package=package)

    return connect
