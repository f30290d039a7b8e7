"""The connection rules of docs/relay-protocol.md §1/§3/§4, on the wire, for BOTH relays.

The same raw-frame conversations run against the Java relay core (HostMain + fake
platform) and the Python `RelayServer` (test backend): both must answer them alike.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from inspector.protocol.bundle import Bundle, Int
from inspector.relay.api import (
    AUTH_FAILED,
    BAD_ARGS,
    BAD_FRAME,
    UNKNOWN_OP,
    UNSUPPORTED_VERSION,
)
from inspector.relay.codec import decode_bundle
from inspector.relay.frames import FrameType, encode_frame, frame_bytes, pack_header, read_frame
from inspector.relay.server import RelayServer
from tests.relay.fakes import FakeBackend
from tests.relay_apk.host_jvm import HostRelayProcess, JavaToolError

pytestmark = pytest.mark.java

JAVA_AUTHORITY = "com.example.fakeprovider.clawseed.tools"


@dataclass
class Relay:
    """Where a relay listens, its token, and how to make a request that stays in flight."""

    name: str
    host: str
    port: int
    token: str
    slow_call: Callable[[], Bundle]


@pytest.fixture(params=["java", "python"])
async def relay(request: pytest.FixtureRequest, java_classes: Path) -> AsyncIterator[Relay]:
    if request.param == "java":
        proc = HostRelayProcess(java_classes)
        try:
            proc.__enter__()
        except JavaToolError as e:
            pytest.fail(str(e))
        try:
            yield Relay("java", proc.host, proc.port, proc.token, lambda: Bundle(
                authority=JAVA_AUTHORITY, method="slow", timeout_ms=Int(60_000)))
        finally:
            proc.stop()
    else:
        token = "python-relay-token-0123"
        handle = await RelayServer(FakeBackend(), token).serve_tcp()
        try:
            yield Relay("python", *handle.address, token, lambda: Bundle(
                authority="a", method="sleep", extras=Bundle(ms=Int(60_000)),
                timeout_ms=Int(60_000)))
        finally:
            handle.close()
            await handle.wait_closed()


class Peer:
    """A raw desktop side: write frames by hand, read the relay's frames."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def request(self, rid: int, op: str, args: Bundle | None = None) -> None:
        req = Bundle(op=op) if args is None else Bundle(op=op, args=args)
        await self.send(encode_frame(FrameType.REQUEST, rid, req))

    async def reply(self, rid: int, ftype: FrameType) -> Bundle:
        frame = await asyncio.wait_for(read_frame(self.reader), 10)
        assert frame is not None, "the relay closed the connection instead of answering"
        body = decode_bundle(frame.payload)
        assert (frame.type, frame.request_id) == (ftype, rid), body
        return body

    async def error(self, rid: int) -> str:
        return str((await self.reply(rid, FrameType.ERROR))["code"])

    async def closed(self) -> bool:
        return await asyncio.wait_for(self.reader.read(1), 10) == b""


async def connect(relay: Relay, hello: bool = True) -> Peer:
    peer = Peer(*await asyncio.open_connection(relay.host, relay.port))
    if hello:
        await peer.request(1, "hello", hello_args(relay.token))
        await peer.reply(1, FrameType.RESPONSE)
    return peer


def hello_args(token: str, version: int = 1) -> Bundle:
    return Bundle(protocol_version=Int(version), token=token, client="rules", events=False)


async def close(peer: Peer) -> None:
    peer.writer.close()
    await peer.writer.wait_closed()


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(lambda: encode_frame(FrameType.RESPONSE, 5, Bundle()), id="wrong-direction"),
        pytest.param(lambda: frame_bytes(FrameType.CHUNK, 5, b"x"), id="chunk-from-desktop"),
        pytest.param(lambda: encode_frame(FrameType.REQUEST, 0, Bundle(op="ping")), id="id-0"),
        pytest.param(lambda: pack_header(FrameType.CHUNK, 5, 0), id="empty-chunk"),
        pytest.param(lambda: pack_header(FrameType.CANCEL, 5, 4), id="cancel-with-payload"),
        pytest.param(lambda: pack_header(FrameType.EVENT, 5, 0), id="event-nonzero-id"),
    ],
)
async def test_connection_level_mistakes_close_with_bad_frame_on_request_zero(
    relay: Relay, bad: Callable[[], bytes]
) -> None:
    peer = await connect(relay)
    try:
        await peer.send(bad())  # header-only cases send no payload: no waiting for one
        assert await peer.error(0) == BAD_FRAME
        assert await peer.closed()
    finally:
        await close(peer)


async def test_a_reused_id_in_flight_closes_with_bad_frame(relay: Relay) -> None:
    peer = await connect(relay)
    try:
        await peer.request(7, "call", relay.slow_call())
        await peer.request(7, "ping")
        assert await peer.error(0) == BAD_FRAME
        assert await peer.closed()
    finally:
        await close(peer)


async def test_request_level_mistakes_keep_the_connection(relay: Relay) -> None:
    peer = await connect(relay)
    try:
        await peer.send(frame_bytes(FrameType.REQUEST, 2, b"\x07\x00\x00\x00\x01"))
        assert await peer.error(2) == BAD_FRAME
        await peer.send(encode_frame(FrameType.REQUEST, 3, Bundle(op=Int(5))))
        assert await peer.error(3) == BAD_ARGS
        await peer.send(encode_frame(FrameType.REQUEST, 4, Bundle(op="ping", args="x")))
        assert await peer.error(4) == BAD_ARGS
        await peer.request(5, "hello", hello_args(relay.token))
        assert await peer.error(5) == BAD_ARGS
        await peer.request(6, "load_dex", Bundle())
        assert await peer.error(6) == UNKNOWN_OP
        await peer.request(7, "ping", Bundle(timeout_ms=Int(0)))
        assert await peer.error(7) == BAD_ARGS
        await peer.request(8, "ping")  # args omitted
        assert "time_ms" in await peer.reply(8, FrameType.RESPONSE)
    finally:
        await close(peer)


async def test_hello_checks_the_version_before_the_token(relay: Relay) -> None:
    peer = await connect(relay, hello=False)
    try:
        await peer.request(9, "hello", hello_args("wrong-token", version=2))
        assert await peer.error(9) == UNSUPPORTED_VERSION
        assert await peer.closed()
    finally:
        await close(peer)


async def test_hello_failures_carry_the_hello_request_id(relay: Relay) -> None:
    for send, code in [
        (encode_frame(FrameType.REQUEST, 4, Bundle(op="hello", args=hello_args("wrong"))),
         AUTH_FAILED),
        (encode_frame(FrameType.REQUEST, 4, Bundle(op="ping")), AUTH_FAILED),
        (frame_bytes(FrameType.REQUEST, 4, b"\x07\x00"), BAD_FRAME),
    ]:
        peer = await connect(relay, hello=False)
        try:
            await peer.send(send)
            assert await peer.error(4) == code
            assert await peer.closed()
        finally:
            await close(peer)


async def test_ops_are_unknown_unless_in_the_capabilities(relay: Relay) -> None:
    peer = Peer(*await asyncio.open_connection(relay.host, relay.port))
    try:
        await peer.request(1, "hello", hello_args(relay.token))
        caps = list((await peer.reply(1, FrameType.RESPONSE))["capabilities"])  # type: ignore[call-overload]
        ops = ["force_stop", "answer_confirmation", "fault", "wake_provider"]
        for rid, op in enumerate(ops, 2):
            await peer.request(rid, op, Bundle())
            reply = await asyncio.wait_for(read_frame(peer.reader), 10)
            assert reply is not None and reply.request_id == rid
            code = decode_bundle(reply.payload).get("code")
            assert (code == UNKNOWN_OP) == (op not in caps), (op, code)
    finally:
        await close(peer)
