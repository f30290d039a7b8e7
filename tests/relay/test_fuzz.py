"""Hypothesis fuzzing of the server and the client: protocol errors, never a hang or crash."""

from __future__ import annotations

import asyncio
import contextlib
import struct

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.protocol.bundle import Bundle
from inspector.relay.api import RelayError
from inspector.relay.client import RelayClient
from inspector.relay.codec import decode_bundle, encode_value
from inspector.relay.frames import FrameType, encode_frame, pack_header, read_frame
from inspector.relay.hello import hello_result
from tests.relay.fakes import TOKEN, FakeBackend, hello_frame, raw_connection
from tests.relay.test_codec import values

_ops = st.sampled_from(
    ["ping", "call", "read_file", "discover", "hello", "fault", "bogus", "close_handle"]
)
_valid_request = st.builds(
    lambda rid, op, args: encode_frame(FrameType.REQUEST, rid, Bundle(op=op, args=args)),
    st.integers(0, 5),
    _ops,
    st.dictionaries(
        st.sampled_from(["handle", "max_bytes", "timeout_ms", "method", "extras", "kind"]),
        values,
        max_size=4,
    ).map(Bundle),
)
_typed_frame = st.builds(
    lambda t, rid, v: pack_header(t, rid, len(encode_value(v))) + encode_value(v),
    st.integers(0, 9),
    st.integers(0, 6),
    values,
)
_header_only = st.builds(
    lambda t, f, rid, n: struct.pack(">4sBBHII", b"CETR", 1, t, f, rid, n),
    st.integers(0, 9),
    st.sampled_from([0, 0, 0, 1]),
    st.integers(0, 6),
    st.sampled_from([0, 1, 5, 1_048_576, 1_048_577, 0xFFFFFFFF]),
)
junk = st.lists(
    st.one_of(st.binary(max_size=40), _valid_request, _typed_frame, _header_only),
    max_size=6,
)

_settings = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


async def _drive_server(say_hello: bool, parts: list[bytes]) -> None:
    backend = FakeBackend()
    backend.files["0"] = b"abc"
    reader, writer, task = await raw_connection(backend)
    if say_hello:
        writer.write(hello_frame())
    for p in parts:
        writer.write(p)
    writer.write(encode_frame(FrameType.REQUEST, 99, Bundle(op="ping", args=Bundle())))
    writer.write_eof()

    async def read_all() -> None:
        while True:
            try:
                frame = await read_frame(reader)
            except RelayError:
                return  # the server closed mid-write: fine, it said BAD_FRAME before
            if frame is None:
                return
            assert frame.type in (
                FrameType.RESPONSE,
                FrameType.ERROR,
                FrameType.CHUNK,
                FrameType.END,
                FrameType.EVENT,
            )
            if frame.type is not FrameType.CHUNK:
                decode_bundle(frame.payload)  # every reply is a valid typed Bundle

    await asyncio.wait_for(read_all(), 10)
    await asyncio.wait_for(task, 10)
    assert task.exception() is None
    writer.close()


@_settings
@given(st.booleans(), junk)
def test_server_survives_any_bytes(say_hello: bool, parts: list[bytes]) -> None:
    asyncio.run(_drive_server(say_hello, parts))


async def _drive_client(parts: list[bytes]) -> None:
    async def evil(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        frame = await read_frame(reader)
        assert frame is not None
        info = hello_result(FakeBackend().hello_info(""))
        writer.write(encode_frame(FrameType.RESPONSE, frame.request_id, info))
        await read_frame(reader)  # the ping
        for p in parts:
            writer.write(p)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(evil, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = await RelayClient.open_tcp("127.0.0.1", port, TOKEN, call_timeout_s=5)
    with contextlib.suppress(RelayError):  # a protocol error is fine; a hang or crash is not
        await asyncio.wait_for(client.ping(), 8)
    await client.close()
    server.close()


@_settings
@given(junk)
def test_client_never_hangs_on_garbage_replies(parts: list[bytes]) -> None:
    asyncio.run(_drive_client(parts))
