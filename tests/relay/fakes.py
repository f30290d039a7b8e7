"""A tiny in-memory RelayBackend for relay tests: echo calls, files, delays, events."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from inspector.protocol.bundle import Bundle, BundleArray, Int
from inspector.relay.api import (
    NOT_FOUND,
    HelloInfo,
    RelayError,
    ServerConnection,
)
from inspector.tasks import Spawner

TOKEN = "s3cret-token"
TEST_SPAWNER = Spawner()

CAPABILITIES = (
    "discover",
    "call",
    "read_file",
    "close_handle",
    "answer_confirmation",
    "fault",
)


class FakeBackend:
    """Answers `call` by echoing, `read_file` from `files`, and records what it saw.

    Call methods: "echo" returns the extras; "sleep" waits `extras.ms`; "boom" raises;
    "emit" pushes an event to the caller's connection.
    """

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.file_chunk = 65_536
        self.chunks_sent: dict[str, int] = {}
        self.cancelled: list[str] = []
        self.closed_connections: list[str] = []
        self.connections: list[ServerConnection] = []
        self.opened: list[ServerConnection] = []
        self.stream_gate: asyncio.Event | None = None

    def hello_info(self, client: str) -> HelloInfo:
        return HelloInfo(
            protocol_version=1,
            relay_version_code=7,
            relay_version_name="0.7-fake",
            capabilities=CAPABILITIES,
            caller_package="com.android.shell",
            caller_uid=2000,
            caller_cert_sha256=("ab" * 32,),
            device={
                "serial": "fake",
                "manufacturer": "Test",
                "model": "Fake",
                "sdk_int": 34,
                "release": "14",
                "abi": "x86_64",
            },
        )

    async def handle(self, op: str, args: Bundle, conn: ServerConnection) -> object:
        if conn not in self.connections:
            self.connections.append(conn)
        if op == "discover":
            return Bundle(packages=BundleArray([Bundle(package="com.example.a", uid=Int(10001))]))
        if op == "call":
            method = args.get("method")
            extras = args.get("extras")
            if method == "echo":
                return Bundle(reply=extras)
            if method == "sleep":
                assert isinstance(extras, Bundle)
                try:
                    await asyncio.sleep(int(extras["ms"]) / 1000)
                except asyncio.CancelledError:
                    self.cancelled.append(str(extras.get("tag", "")))
                    raise
                return Bundle(reply=extras)
            if method == "boom":
                raise ZeroDivisionError("boom")
            if method == "emit":
                conn.emit(Bundle(event="package_changed", change="added", package="com.x"))
                return Bundle(reply=None)
            raise RelayError(NOT_FOUND, f"no method {method}")
        if op == "read_file":
            handle = args.get("handle")
            if handle not in self.files:
                raise RelayError(NOT_FOUND, f"no handle {handle}")
            return self._stream(str(handle))
        if op == "close_handle":
            return Bundle(closed=self.files.pop(str(args.get("handle")), None) is not None)
        if op == "fault":
            if args.get("kind") == "drop_connection":
                conn.close()  # type: ignore[attr-defined]
            return Bundle(armed=True)
        raise RelayError(NOT_FOUND, op)

    async def _stream(self, handle: str) -> AsyncIterator[bytes]:
        data = memoryview(self.files[handle])
        self.chunks_sent[handle] = 0
        try:
            for off in range(0, len(data), self.file_chunk):
                if self.stream_gate is not None:
                    await self.stream_gate.wait()
                yield bytes(data[off : off + self.file_chunk])
                self.chunks_sent[handle] += 1
        except (asyncio.CancelledError, GeneratorExit):
            self.cancelled.append(handle)
            raise

    def connection_opened(self, conn: ServerConnection) -> None:
        self.opened.append(conn)

    def connection_closed(self, conn: ServerConnection) -> None:
        self.closed_connections.append(conn.connection_id)


async def raw_connection(
    backend: object, token: str = TOKEN
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, asyncio.Task[None]]:
    """A bare socket to a RelayServer: tests write frames by hand and read the replies."""
    import socket

    from inspector.relay.server import RelayServer

    server = RelayServer(backend, token)  # type: ignore[arg-type]
    a, b = socket.socketpair()
    sreader, swriter = await asyncio.open_connection(sock=a)
    task = TEST_SPAWNER.spawn(server.serve_connection(sreader, swriter), "raw-relay-server")
    reader, writer = await asyncio.open_connection(sock=b)
    return reader, writer, task


def hello_frame(rid: int = 1, token: str = TOKEN, version: int = 1, events: bool = True) -> bytes:
    from inspector.relay.frames import FrameType, encode_frame

    args = Bundle(protocol_version=Int(version), token=token, client="test", events=events)
    return encode_frame(FrameType.REQUEST, rid, Bundle(op="hello", args=args))
