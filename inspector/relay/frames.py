"""Frames of the relay protocol (docs/relay-protocol.md §1): header, limits, read and write.

The header is checked before a single payload byte is read, so a peer announcing a huge
frame costs nothing; readers use read-fully loops (`readexactly`) and report a connection
that closes inside a frame as a truncated frame.
"""

from __future__ import annotations

import asyncio
import struct
from dataclasses import dataclass
from enum import IntEnum

from inspector.protocol.bundle import Value
from inspector.relay.api import BAD_FRAME, TOO_LARGE, RelayError
from inspector.relay.codec import encode_value

MAGIC = b"CETR"
VERSION = 1
HEADER_SIZE = 16
MAX_FRAME_PAYLOAD = 1_048_576
MAX_CHUNK = 262_144
DEFAULT_CHUNK = MAX_CHUNK

_HEADER = struct.Struct(">4sBBHII")


class FrameType(IntEnum):
    REQUEST = 1
    RESPONSE = 2
    ERROR = 3
    CHUNK = 4
    END = 5
    EVENT = 6
    CANCEL = 7


_TYPES = frozenset(int(t) for t in FrameType)


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame; `payload` is the raw bytes (a typed value, or raw data for CHUNK)."""

    type: FrameType
    request_id: int
    payload: bytes


class TruncatedFrame(RelayError):
    """The connection closed inside a frame (a BAD_FRAME the peer cannot be told about)."""

    def __init__(self, message: str) -> None:
        super().__init__(BAD_FRAME, message)


def pack_header(ftype: int, request_id: int, length: int) -> bytes:
    """The 16-byte header of a frame (no checks beyond struct ranges)."""
    return _HEADER.pack(MAGIC, VERSION, int(ftype), 0, request_id, length)


def unpack_header(header: bytes | memoryview) -> tuple[FrameType, int, int]:
    """Validate a 16-byte header; return (type, request_id, payload length).

    Raises RelayError(BAD_FRAME) for a bad magic, version, flags, type or length, including
    CHUNK and CANCEL payload sizes, so that nothing of a bad frame's payload is ever read.
    """
    if len(header) != HEADER_SIZE:
        raise RelayError(BAD_FRAME, f"frame header must be {HEADER_SIZE} bytes, got {len(header)}")
    magic, version, ftype, flags, request_id, length = _HEADER.unpack(header)
    if magic != MAGIC:
        raise RelayError(BAD_FRAME, f"bad magic {bytes(magic)!r} (expected b'CETR')")
    if version != VERSION:
        raise RelayError(BAD_FRAME, f"unknown frame version {version} (expected {VERSION})")
    if flags != 0:
        raise RelayError(BAD_FRAME, f"reserved flags must be 0, got {flags:#06x}")
    if ftype not in _TYPES:
        raise RelayError(BAD_FRAME, f"unknown frame type {ftype}")
    if length > MAX_FRAME_PAYLOAD:
        raise RelayError(
            BAD_FRAME, f"frame payload of {length} bytes exceeds the {MAX_FRAME_PAYLOAD} maximum"
        )
    t = FrameType(ftype)
    if t is FrameType.CHUNK and not 1 <= length <= MAX_CHUNK:
        raise RelayError(BAD_FRAME, f"CHUNK payload must be 1…{MAX_CHUNK} bytes, got {length}")
    if t is FrameType.CANCEL and length != 0:
        raise RelayError(BAD_FRAME, f"CANCEL payload must be empty, got {length} bytes")
    if t is FrameType.EVENT and request_id != 0:
        raise RelayError(BAD_FRAME, f"EVENT frames use request id 0, got {request_id}")
    return t, request_id, length


async def read_frame(reader: asyncio.StreamReader) -> Frame | None:
    """Read one whole frame; None on a clean end of stream between frames.

    Raises RelayError(BAD_FRAME) for an invalid header (payload left unread) and
    TruncatedFrame when the stream ends inside a frame.
    """
    try:
        header = await reader.readexactly(HEADER_SIZE)
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise TruncatedFrame(
            f"connection closed inside a frame header ({len(exc.partial)} of {HEADER_SIZE} bytes)"
        ) from None
    ftype, request_id, length = unpack_header(header)
    if length == 0:
        return Frame(ftype, request_id, b"")
    try:
        payload = await reader.readexactly(length)
    except asyncio.IncompleteReadError as exc:
        raise TruncatedFrame(
            f"connection closed inside a {ftype.name} payload "
            f"({len(exc.partial)} of {length} bytes)"
        ) from None
    return Frame(ftype, request_id, payload)


def frame_bytes(ftype: FrameType, request_id: int, payload: bytes = b"") -> bytes:
    """A whole frame as one bytes object (tests, vectors; writers avoid the copy)."""
    return pack_header(ftype, request_id, len(payload)) + payload


def encode_frame(ftype: FrameType, request_id: int, value: Value) -> bytes:
    """A whole frame whose payload is one typed value."""
    return frame_bytes(ftype, request_id, encode_value(value))


def write_frame(
    writer: asyncio.StreamWriter,
    ftype: FrameType,
    request_id: int,
    payload: bytes | bytearray | memoryview = b"",
) -> None:
    """Queue one frame on `writer` without copying the payload; callers `drain()`.

    Synchronous on purpose: header and payload go to the transport back to back, so frames
    from concurrent tasks never interleave.
    """
    n = len(payload)
    if n > MAX_FRAME_PAYLOAD:
        raise RelayError(
            TOO_LARGE, f"a {n}-byte payload exceeds the {MAX_FRAME_PAYLOAD}-byte frame maximum"
        )
    # Two writes, not writelines: on Python 3.11 writelines joins (copies) the buffers.
    writer.write(pack_header(ftype, request_id, n))
    if n:
        writer.write(payload)
