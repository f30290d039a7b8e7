"""What the fake phone runs as "the relay": the relay server core with a tiny backend.

The backend answers `call` by echoing what it was asked, and counts connections, so the
tests can see a real CETP-shaped call travel desktop → adb server → fake phone → relay.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from inspector.device.shipped_relay import RELAY_PACKAGE, ShippedRelay, load_shipped_relay
from inspector.protocol.bundle import Bundle, Int
from inspector.relay.api import HelloInfo, RelayBackend, ServerConnection
from inspector.relay.server import RelayServer, ServerHandle
from tests.device.fakephone import ApkInfo, FakePhone, InstalledPackage
from tests.device.signed_apk import certificate_of, signed_apk

RELAY_KEY = "relay-release-key"


class TinyBackend:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.connections = 0

    def hello_info(self, client: str) -> HelloInfo:
        self.connections += 1
        return HelloInfo(
            protocol_version=1,
            relay_version_code=1,
            relay_version_name="tiny",
            capabilities=("call",),
            caller_package=RELAY_PACKAGE,
            caller_uid=10234,
            caller_cert_sha256=(RELAY_KEY,),
            device={"serial": "FAKE0001", "model": "Fake Phone 7", "sdk_int": 34},
        )

    async def handle(self, op: str, args: Bundle, conn: ServerConnection) -> Bundle:
        self.calls.append((str(args.get("authority")), str(args.get("method"))))
        reply = Bundle(method=args.get("method"), count=Int(len(self.calls)))
        return Bundle(reply=reply)

    def connection_closed(self, conn: ServerConnection) -> None:
        pass


class PhoneRelay:
    """Plugs a relay server into a fake phone's `am start-foreground-service`."""

    def __init__(
        self,
        phone: FakePhone,
        token_override: str | None = None,
        backend: RelayBackend | None = None,
    ) -> None:
        self.tiny = TinyBackend()
        self.backend: RelayBackend = backend or self.tiny
        self.handles: list[ServerHandle] = []
        self.started: list[tuple[str, str]] = []  # (socket name, token) as the phone got them
        self._token_override = token_override
        phone.relay_starter = self.start

    async def start(self, name: str, token: str) -> tuple[str, int]:
        self.started.append((name, token))
        server = RelayServer(self.backend, self._token_override or token)
        handle = await server.serve_tcp()
        self.handles.append(handle)
        return handle.address

    async def close(self) -> None:
        for h in self.handles:
            h.close()


def stand_in_relay(folder: Path, version_code: int = 3) -> ShippedRelay:
    """A generated stand-in for the shipped APK (used while resources/relay/ is absent)."""
    folder.mkdir(parents=True, exist_ok=True)
    payload = b"stand-in relay " + bytes(range(256)) * 300
    apk = signed_apk(RELAY_KEY.encode() + b" certificate", payload)
    (folder / "cetp-relay.apk").write_bytes(apk)
    meta = {
        "versionCode": version_code,
        "versionName": f"0.{version_code}",
        "sha256": hashlib.sha256(apk).hexdigest(),
    }
    (folder / "relay.json").write_text(json.dumps(meta))
    return load_shipped_relay(folder)


@contextlib.contextmanager
def serving_reference_apps(phone: FakePhone, shipped: ShippedRelay) -> Iterator[Any]:
    """The phone with the shipped relay known to `pm install` and a relay serving the
    virtual device's reference apps (a CETP provider list like a real phone's); yields
    that `VirtualDevice` (faults can be armed on it)."""
    from inspector.virtual.device import VirtualDevice

    async def make() -> VirtualDevice:
        return VirtualDevice()

    device = phone.call(make())
    relay = PhoneRelay(phone, backend=device)
    teach_phone(phone, shipped)
    try:
        yield device
    finally:
        phone.call(relay.close())
        phone.call(device.aclose())


def teach_phone(phone: FakePhone, shipped: ShippedRelay, cert: str = RELAY_KEY) -> None:
    """Tell the fake `pm install` what the shipped APK contains (it cannot parse APKs)."""
    digest = hashlib.sha256(shipped.apk_path.read_bytes()).hexdigest()
    phone.state.known_apks[digest] = ApkInfo(
        shipped.package, shipped.version_code, shipped.version_name, cert
    )


def relay_apk_signed_by(shipped: ShippedRelay, cert: str, payload: bytes = b"own build") -> bytes:
    """Relay APK bytes (not the shipped ones) signed by `cert`: RELAY_KEY means the shipped
    relay's own certificate (our key, another build), anything else a stranger's."""
    der = certificate_of(shipped.apk_path.read_bytes()) if cert == RELAY_KEY else cert.encode()
    return signed_apk(der, payload)


def preinstall_relay(
    phone: FakePhone, shipped: ShippedRelay, version: int, cert: str, name: str = "old"
) -> None:
    """A relay already on the phone, as another build signed by `cert` left it."""
    phone.state.packages[shipped.package] = InstalledPackage(
        shipped.package, version, name, cert, relay_apk_signed_by(shipped, cert, name.encode())
    )
