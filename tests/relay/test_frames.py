from __future__ import annotations

import asyncio

import pytest

from inspector.protocol.bundle import Bundle
from inspector.relay.api import BAD_FRAME, RelayError
from inspector.relay.frames import (
    HEADER_SIZE,
    MAX_FRAME_PAYLOAD,
    FrameType,
    TruncatedFrame,
    encode_frame,
    frame_bytes,
    pack_header,
    read_frame,
    unpack_header,
)


def _reader(data: bytes, eof: bool = True) -> asyncio.StreamReader:
    r = asyncio.StreamReader()
    r.feed_data(data)
    if eof:
        r.feed_eof()
    return r


def test_header_layout_is_big_endian_and_16_bytes() -> None:
    h = pack_header(FrameType.END, 0x01020304, 0x000B0C0D)
    assert h == b"CETR\x01\x05\x00\x00\x01\x02\x03\x04\x00\x0b\x0c\x0d"
    assert len(h) == HEADER_SIZE
    assert unpack_header(h) == (FrameType.END, 0x01020304, 0x000B0C0D)


def test_unpack_header_rejects_oversized_length_but_accepts_the_maximum() -> None:
    assert unpack_header(pack_header(FrameType.RESPONSE, 1, MAX_FRAME_PAYLOAD))[2] == (
        MAX_FRAME_PAYLOAD
    )
    with pytest.raises(RelayError) as info:
        unpack_header(pack_header(FrameType.RESPONSE, 1, MAX_FRAME_PAYLOAD + 1))
    assert info.value.code == BAD_FRAME


async def test_read_frame_round_trip_and_clean_eof() -> None:
    data = encode_frame(FrameType.REQUEST, 9, Bundle(op="ping", args=Bundle()))
    data += frame_bytes(FrameType.CANCEL, 9)
    r = _reader(data)
    f1 = await read_frame(r)
    f2 = await read_frame(r)
    assert f1 is not None and f1.type is FrameType.REQUEST and f1.request_id == 9
    assert f2 is not None and f2.type is FrameType.CANCEL and f2.payload == b""
    assert await read_frame(r) is None


async def test_too_big_frame_is_rejected_from_the_header_alone() -> None:
    # no payload bytes and no EOF: a reader that tried to read the payload would hang
    r = _reader(pack_header(FrameType.RESPONSE, 1, 50_000_000), eof=False)
    with pytest.raises(RelayError, match="exceeds"):
        await asyncio.wait_for(read_frame(r), 1.0)


@pytest.mark.parametrize(
    "data",
    [
        b"CETR\x01",
        pack_header(FrameType.RESPONSE, 1, 10) + b"\x00" * 3,
    ],
)
async def test_connection_closed_inside_a_frame_is_truncated(data: bytes) -> None:
    with pytest.raises(TruncatedFrame) as info:
        await read_frame(_reader(data))
    assert info.value.code == BAD_FRAME
    assert "inside" in info.value.message
