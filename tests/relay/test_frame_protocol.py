"""FrameProtocol (the client's receive path) parses exactly like frames.read_frame."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.relay.api import BAD_FRAME, RelayError
from inspector.relay.frame_protocol import HIGH_WATER, FrameProtocol
from inspector.relay.frames import Frame, FrameType, frame_bytes, read_frame

VECTORS = Path(__file__).resolve().parents[1] / "vectors"
VALID = b"".join(p.read_bytes() for p in sorted(VECTORS.glob("frame-*.bin")))
BIG = frame_bytes(FrameType.CHUNK, 7, bytes(range(256)) * 1024)  # larger than the scratch


class _Transport:
    def __init__(self) -> None:
        self.paused = False

    def pause_reading(self) -> None:
        self.paused = True

    def resume_reading(self) -> None:
        self.paused = False


def _feed(proto: FrameProtocol, data: bytes, cuts: list[int]) -> None:
    """Deliver `data` in pieces the way a transport does (get_buffer / buffer_updated)."""
    pieces, last = [], 0
    for c in sorted(set(cuts)):
        if last < c < len(data):
            pieces.append(data[last:c])
            last = c
    pieces.append(data[last:])
    for piece in pieces:
        while piece:
            buf = proto.get_buffer(-1)
            n = min(len(buf), len(piece))
            assert n > 0
            buf[:n] = piece[:n]
            proto.buffer_updated(n)
            piece = piece[n:]


async def _collect_protocol(data: bytes, cuts: list[int]) -> list[Frame | str]:
    proto = FrameProtocol()
    proto.connection_made(_Transport())  # type: ignore[arg-type]
    _feed(proto, data, cuts)
    proto.eof_received()
    out: list[Frame | str] = []
    while True:
        try:
            f = await proto.read_frame()
        except RelayError as exc:
            out.append(exc.code)
            return out
        if f is None:
            return out
        out.append(Frame(f.type, f.request_id, bytes(f.payload)))


async def _collect_reader(data: bytes) -> list[Frame | str]:
    r = asyncio.StreamReader()
    r.feed_data(data)
    r.feed_eof()
    out: list[Frame | str] = []
    while True:
        try:
            f = await read_frame(r)
        except RelayError as exc:
            out.append(exc.code)
            return out
        if f is None:
            return out
        out.append(f)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, len(VALID) + len(BIG)), max_size=12))
def test_any_fragmentation_gives_the_same_frames(cuts: list[int]) -> None:
    data = VALID + BIG
    got = asyncio.run(_collect_protocol(data, cuts))
    assert got == asyncio.run(_collect_reader(data))
    assert len(got) == len(list(VECTORS.glob("frame-*.bin"))) + 1


@pytest.mark.parametrize("path", sorted(VECTORS.glob("invalid-frame-*.bin")), ids=lambda p: p.stem)
def test_invalid_frames_are_bad_frame(path: Path) -> None:
    data = VALID + path.read_bytes()
    got = asyncio.run(_collect_protocol(data, [len(VALID) + 3]))
    assert got[-1] == BAD_FRAME
    assert got == asyncio.run(_collect_reader(data))


async def test_reading_pauses_while_frames_wait_unread() -> None:
    proto = FrameProtocol()
    transport = _Transport()
    proto.connection_made(transport)  # type: ignore[arg-type]
    n = HIGH_WATER // (len(BIG) - 16) + 2
    _feed(proto, BIG * n, [])
    assert transport.paused
    for _ in range(n):
        assert (await proto.read_frame()) is not None
    assert not transport.paused
