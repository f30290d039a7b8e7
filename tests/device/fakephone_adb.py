"""The ADB transport protocol, device side, for tests/device/fakephone.py: message framing,
the CNXN/AUTH handshake and OPEN/OKAY/WRTE/CLSE streams with flow control.

Protocol reference: AOSP `packages/modules/adb/protocol.txt`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import struct
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.device.fakephone import FakePhone

A_CNXN = 0x4E584E43
A_AUTH = 0x48545541
A_OPEN = 0x4E45504F
A_OKAY = 0x59414B4F
A_CLSE = 0x45534C43
A_WRTE = 0x45545257
A_VERSION = 0x01000001  # "skip checksum" version; we still send correct checksums
DEVICE_MAX_PAYLOAD = 256 * 1024
AUTH_TOKEN, AUTH_SIGNATURE, AUTH_RSAPUBLICKEY = 1, 2, 3

# Ports the adb server scans for emulators: a fake phone must never listen there.
EMULATOR_PORTS = range(5554, 5586)


def free_port() -> int:
    """A free localhost TCP port outside the adb emulator scan range and not 5037."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in EMULATOR_PORTS and port != 5037:
            return port
    raise RuntimeError("no free port found")


class _Stream:
    """One ADB stream (an OPENed service) seen from the device side."""

    def __init__(self, transport: _Transport, local_id: int, remote_id: int) -> None:
        self.t = transport
        self.local_id = local_id
        self.remote_id = remote_id
        self.can_send = asyncio.Event()
        self.can_send.set()
        self.inbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.buffer = bytearray()
        self.closed = False

    async def accept(self) -> None:
        await self.t.send(A_OKAY, self.local_id, self.remote_id)

    async def refuse(self) -> None:
        """Refuse an OPEN: CLSE with local id 0, as adbd does (the host ignores a CLSE
        naming a local id it was never told about)."""
        self.closed = True
        await self.t.send(A_CLSE, 0, self.remote_id)
        self.t.streams.pop(self.local_id, None)

    async def write(self, data: bytes) -> None:
        step = min(self.t.host_max_payload, DEVICE_MAX_PAYLOAD)
        for i in range(0, len(data), step):
            await self.can_send.wait()
            if self.closed:
                return
            self.can_send.clear()
            await self.t.send(A_WRTE, self.local_id, self.remote_id, data[i : i + step])

    async def read_exact(self, n: int) -> bytes | None:
        while len(self.buffer) < n:
            chunk = await self.inbox.get()
            if chunk is None:
                return None
            self.buffer += chunk
        out = bytes(self.buffer[:n])
        del self.buffer[:n]
        return out

    async def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.can_send.set()
            await self.t.send(A_CLSE, self.local_id, self.remote_id)
            self.t.streams.pop(self.local_id, None)

    def remote_closed(self) -> None:
        self.closed = True
        self.can_send.set()
        self.inbox.put_nowait(None)


class _Transport:
    """One TCP connection from the adb server (one `adb connect`)."""

    def __init__(
        self, phone: FakePhone, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.phone = phone
        self.reader = reader
        self.writer = writer
        self.streams: dict[int, _Stream] = {}
        self.next_id = 1
        self.host_max_payload = 4096
        self.online = False

    async def send(self, cmd: int, arg0: int, arg1: int, data: bytes = b"") -> None:
        if self.writer.is_closing():
            return
        header = struct.pack(
            "<6I", cmd, arg0, arg1, len(data), sum(data) & 0xFFFFFFFF, cmd ^ 0xFFFFFFFF
        )
        self.writer.write(header + data)
        with contextlib.suppress(ConnectionError):
            await self.writer.drain()

    async def run(self) -> None:
        try:
            while True:
                header = await self.reader.readexactly(24)
                cmd, arg0, arg1, length, _crc, magic = struct.unpack("<6I", header)
                if magic != cmd ^ 0xFFFFFFFF:
                    return
                data = await self.reader.readexactly(length) if length else b""
                await self.dispatch(cmd, arg0, arg1, data)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            for s in list(self.streams.values()):
                s.remote_closed()
            self.streams.clear()
            self.writer.close()
            self.phone._transports.discard(self)

    async def dispatch(self, cmd: int, arg0: int, arg1: int, data: bytes) -> None:
        phone = self.phone
        if cmd == A_CNXN:
            self.host_max_payload = arg1
            if phone.mode == "offline":
                return  # never answer: the server keeps the transport offline
            if phone.mode == "unauthorized":
                await self.send(A_AUTH, AUTH_TOKEN, 0, os.urandom(20))
                return
            self.online = True
            await self.send(A_CNXN, min(arg0, A_VERSION), DEVICE_MAX_PAYLOAD, phone.banner())
        elif cmd == A_AUTH:
            if arg0 == AUTH_SIGNATURE:  # no key is ever accepted: ask again, like adbd
                await self.send(A_AUTH, AUTH_TOKEN, 0, os.urandom(20))
            # AUTH_RSAPUBLICKEY: the user would see a dialog; nobody answers it.
        elif not self.online:
            return
        elif cmd == A_OPEN:
            local_id = self.next_id
            self.next_id += 1
            stream = _Stream(self, local_id, arg0)
            self.streams[local_id] = stream
            service = data.rstrip(b"\0").decode("utf-8", "replace")
            phone._spawner.spawn(phone._serve(stream, service), f"fakephone {service[:40]}")
        elif cmd == A_OKAY:
            s = self.streams.get(arg1)
            if s is not None:
                s.can_send.set()
        elif cmd == A_WRTE:
            s = self.streams.get(arg1)
            if s is not None:
                s.inbox.put_nowait(data)
                await self.send(A_OKAY, s.local_id, s.remote_id)
        elif cmd == A_CLSE:
            s = self.streams.pop(arg1, None)
            if s is not None:
                s.remote_closed()
