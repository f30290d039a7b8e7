"""The desktop end of a started relay: reach its abstract socket through adb, handshake,
and come back after a cable pull.

Two ways to reach `localabstract:NAME` on the phone:
- FORWARD: `adb forward tcp:PORT localabstract:NAME`, then a TCP connection to PORT. The
  adb server drops forwards when the device goes away, so `reconnect` re-creates it (on the
  same local port when it is still free).
- DIRECT: adbutils `create_connection(LOCAL_ABSTRACT, NAME)`; the adb-server socket it
  returns is wrapped as asyncio streams. Nothing to clean up, nothing to re-create.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections.abc import Awaitable, Callable
from enum import StrEnum

from adbutils._utils import get_free_port

from inspector.device.blocking import run_blocking
from inspector.device.devices import AdbDevices
from inspector.device.errors import RELAY_UNREACHABLE, DeviceError
from inspector.device.models import DeviceState, parse_state, transport_of
from inspector.device.relay_lifecycle import RelayLaunch, relay_bring_forward_command
from inspector.relay.api import DISCONNECTED, TIMEOUT, RelayApi, RelayError

log = logging.getLogger(__name__)

STREAM_LIMIT = 4 * 1024 * 1024
RETRY_DELAY_S = 0.1
HELLO_TIMEOUT_S = 5.0

Streams = tuple[asyncio.StreamReader, asyncio.StreamWriter]
Handshake = Callable[[asyncio.StreamReader, asyncio.StreamWriter, str], Awaitable[RelayApi]]


class ConnectMode(StrEnum):
    FORWARD = "forward"
    DIRECT = "direct"


async def relay_client_handshake(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, token: str
) -> RelayApi:
    """Default handshake: `inspector.relay.client.RelayClient` over the given streams."""
    from inspector.relay.client import RelayClient

    return await RelayClient.connect(reader, writer, token, hello_timeout_s=HELLO_TIMEOUT_S)


class RelayLink:
    """One relay started on one phone, and the client connected to it."""

    def __init__(
        self,
        devices: AdbDevices,
        launch: RelayLaunch,
        mode: ConnectMode = ConnectMode.FORWARD,
        handshake: Handshake = relay_client_handshake,
    ) -> None:
        self.devices = devices
        self.launch = launch
        self.mode = mode
        self._handshake = handshake
        self.local_port: int | None = None
        self.client: RelayApi | None = None

    @property
    def serial(self) -> str:
        return self.launch.serial

    @property
    def remote(self) -> str:
        return f"localabstract:{self.launch.socket_name}"

    async def open(self, timeout: float = 15.0) -> RelayApi:
        """Connect and handshake, retrying while the relay is still opening its socket."""
        deadline = time.monotonic() + timeout
        last: Exception | None = None
        while True:
            try:
                reader, writer = await self._open_streams()
            except DeviceError as e:
                last = e
            else:
                try:
                    self.client = await self._handshake(reader, writer, self.launch.token)
                    if hasattr(self.client, "bring_forward"):  # NEEDS_FOREGROUND → retry once
                        self.client.bring_forward = self.bring_forward
                    return self.client
                except RelayError as e:
                    writer.close()
                    if e.code not in (DISCONNECTED, TIMEOUT):
                        raise  # AUTH_FAILED, UNSUPPORTED_VERSION …: retrying cannot help
                    last = e
            if time.monotonic() >= deadline:
                raise DeviceError(
                    RELAY_UNREACHABLE,
                    f"The relay on {self.serial} did not accept a connection within "
                    f"{timeout:g} s (last error: {last}).",
                    "Restart the relay from the inspector; if it keeps failing, reinstall it "
                    "and check the phone for a crash dialog.",
                )
            await asyncio.sleep(RETRY_DELAY_S)

    async def bring_forward(self) -> None:
        """`am start` the relay activity (no extras); the client then retries its op once."""
        ret = await self.devices.shell(self.serial,
                                       relay_bring_forward_command(self.launch.package))
        if ret.exit_code != 0 or "Error" in ret.output:
            log.info("bringing the relay forward on %s failed: %s", self.serial, ret.output[:200])

    async def _open_streams(self) -> Streams:
        if self.mode is ConnectMode.DIRECT:
            return await self._open_direct()
        await self.ensure_forward()
        assert self.local_port is not None
        try:
            return await asyncio.open_connection("127.0.0.1", self.local_port, limit=STREAM_LIMIT)
        except OSError as e:
            raise DeviceError(RELAY_UNREACHABLE, f"Forwarded port {self.local_port}: {e}") from e

    async def _open_direct(self) -> Streams:
        # adbutils' create_connection(Network.LOCAL_ABSTRACT, name), with a socket timeout
        # while adb answers so a silent device cannot pin a worker thread forever.
        dev = self.devices.device(self.serial)

        def connect() -> socket.socket:
            c = dev.open_transport(timeout=self.devices.timeout)
            try:
                c.send_command(f"localabstract:{self.launch.socket_name}")
                c.check_okay()
            except BaseException:
                c.close()
                raise
            return c.conn

        sock = await run_blocking(
            connect, timeout=self.devices.timeout + 1, what="Opening the relay socket"
        )
        sock.settimeout(None)
        sock.setblocking(False)
        return await asyncio.open_connection(sock=sock, limit=STREAM_LIMIT)

    async def ensure_forward(self) -> int:
        """Make sure `tcp:PORT -> localabstract:NAME` exists (again); returns PORT."""
        try:
            return await self._ensure_forward()
        except DeviceError as e:  # name the cause: a bare AdbError when the phone went away
            raise await self.devices.explain(
                self.serial, e, "Forwarding the relay socket"
            ) from None

    async def _ensure_forward(self) -> int:
        dev = self.devices.device(self.serial)
        existing = await run_blocking(
            dev.forward_list, timeout=self.devices.timeout, what="Listing forwards"
        )
        for item in existing:
            if item.remote == self.remote and item.local == f"tcp:{self.local_port}":
                return self.local_port  # type: ignore[return-value]
        port = self.local_port or get_free_port()
        try:
            await run_blocking(
                dev.forward,
                f"tcp:{port}",
                self.remote,
                timeout=self.devices.timeout,
                what="Forwarding the relay socket",
            )
        except DeviceError:
            if self.local_port is None:
                raise
            port = get_free_port()  # the old port was taken meanwhile
            await run_blocking(
                dev.forward,
                f"tcp:{port}",
                self.remote,
                timeout=self.devices.timeout,
                what="Forwarding the relay socket",
            )
        self.local_port = port
        return port

    async def wait_for_device(self, timeout: float) -> None:
        """Wait until the phone is back in the `device` state (a network device is
        `adb connect`ed again on each try, as a user would after a Wi-Fi drop)."""
        deadline = time.monotonic() + timeout
        while True:
            if transport_of(self.serial) == "tcp":
                with contextlib.suppress(DeviceError):
                    await self.devices.connect_network(self.serial)
            with contextlib.suppress(DeviceError):
                states = dict(await self.devices.list_states())
                if parse_state(states.get(self.serial, "")) is DeviceState.DEVICE:
                    return
            if time.monotonic() >= deadline:
                raise DeviceError(
                    RELAY_UNREACHABLE,
                    f"{self.serial} did not come back within {timeout:g} s.",
                    "Plug the cable in again (or reconnect Wi-Fi debugging) and retry.",
                )
            await asyncio.sleep(0.2)

    async def reconnect(self, timeout: float = 30.0) -> RelayApi:
        """After a cable pull: wait for the device, re-create the forward, handshake again.

        The relay keeps its socket name and token across a cable pull (its process lives on
        the phone), so the same launch is reused.
        """
        await self.close_client()
        start = time.monotonic()
        await self.wait_for_device(timeout)
        return await self.open(max(1.0, timeout - (time.monotonic() - start)))

    async def close_client(self) -> None:
        """Drop the current client (a dead one after a cable pull); the forward stays."""
        if self.client is not None:
            with contextlib.suppress(Exception):
                await self.client.close()
            self.client = None

    async def close(self) -> None:
        await self.close_client()
        if self.mode is ConnectMode.FORWARD and self.local_port is not None:
            dev = self.devices.device(self.serial)
            with contextlib.suppress(DeviceError):
                await run_blocking(
                    lambda: dev.forward_remove(f"tcp:{self.local_port}", raise_non_found=False),
                    timeout=self.devices.timeout,
                    what="Removing the relay forward",
                )
