"""A receive path for relay frames without StreamReader copies (the client's fast path).

`asyncio.StreamReader` copies every byte into its own buffer and again out of it, and moves
the rest of the buffer after each read; for a 256 MiB file that is most of the CPU time.
`FrameProtocol` is an `asyncio.BufferedProtocol`: small frames are parsed out of one scratch
buffer, and a large payload is received straight into its own bytearray. Headers are still
checked before any payload byte is accepted (same rules as `frames.unpack_header`).
Flow control: reading pauses while more than `HIGH_WATER` bytes of frames wait unread.
Large payload buffers are recycled once nothing else references them (`BufferPool`):
a fresh 256 KiB bytearray per CHUNK costs page faults and zero-filling, a third of the
receive CPU of a big stream.
"""

from __future__ import annotations

import asyncio
import sys
from collections import deque
from typing import Any

from inspector.relay.api import RelayError
from inspector.relay.frames import HEADER_SIZE, Frame, FrameType, TruncatedFrame, unpack_header

POOL_MIN = 64 * 1024
"""Payloads at least this big are received into recycled buffers."""
POOL_SIZE = 64
"""Recently handed-out buffers watched for reuse (≥ the frames one stream keeps queued)."""
SCRATCH = 64 * 1024
HIGH_WATER = 8 * 1024 * 1024
LOW_WATER = 2 * 1024 * 1024


class BufferPool:
    """Reuses payload buffers that nobody references any more (CPython refcounts).

    A buffer handed out in a frame may be kept by anyone (a queue, a hashing thread, a
    memoryview): it is only reused when the pool holds the last reference, so a consumer
    never sees its bytes change. Buffers still in use simply age out of the pool.
    """

    def __init__(self, size: int = POOL_SIZE) -> None:
        self._recent: deque[bytearray] = deque(maxlen=size)
        probe: deque[bytearray] = deque([bytearray(1)])
        for _, buf in enumerate(probe):  # an idle buffer's references, seen as in `take`
            self._idle_refs = sys.getrefcount(buf)

    def take(self, n: int) -> bytearray:
        """A bytearray of exactly `n` bytes (contents undefined); handed out again later."""
        for i, buf in enumerate(self._recent):
            if len(buf) == n and sys.getrefcount(buf) == self._idle_refs:
                del self._recent[i]  # by position: `remove` would compare contents
                break
        else:
            buf = bytearray(n)
        self._recent.append(buf)
        return buf


class FrameProtocol(asyncio.BufferedProtocol):
    """Parses incoming frames; `await read_frame()` like `frames.read_frame(reader)`."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._scratch = bytearray(SCRATCH)
        self._pool = BufferPool()
        self._fill = 0
        self._payload: bytearray | None = None
        self._payload_pos = 0
        self._payload_head: tuple[FrameType, int] = (FrameType.CHUNK, 0)
        self._frames: deque[Frame | BaseException] = deque()
        self._queued = 0
        self._waiter: asyncio.Future[None] | None = None
        self._eof = False
        self._broken = False
        self._paused = False
        self._write_paused: asyncio.Future[None] | None = None
        self.transport: asyncio.Transport | None = None
        self.closed: asyncio.Future[None] = self._loop.create_future()

    # -- asyncio.BufferedProtocol ---------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def get_buffer(self, sizehint: int) -> memoryview:
        if self._payload is not None:
            return memoryview(self._payload)[self._payload_pos :]
        return memoryview(self._scratch)[self._fill :]

    def buffer_updated(self, nbytes: int) -> None:
        if self._broken:
            return
        if self._payload is not None:
            self._payload_pos += nbytes
            if self._payload_pos == len(self._payload):
                ftype, rid = self._payload_head
                payload, self._payload = self._payload, None
                self._emit(Frame(ftype, rid, payload))  # type: ignore[arg-type]
            return
        self._fill += nbytes
        self._parse()

    def _parse(self) -> None:
        view = memoryview(self._scratch)
        pos, fill = 0, self._fill
        try:
            while fill - pos >= HEADER_SIZE:
                try:
                    ftype, rid, n = unpack_header(view[pos : pos + HEADER_SIZE])
                except RelayError as exc:
                    self._fail(exc)
                    return
                start = pos + HEADER_SIZE
                if fill - start >= n:
                    self._emit(Frame(ftype, rid, bytes(view[start : start + n])))
                    pos = start + n
                    continue
                # the payload continues beyond what arrived: receive the rest in place
                payload = self._pool.take(n) if n >= POOL_MIN else bytearray(n)
                have = fill - start
                payload[:have] = view[start:fill]
                self._payload, self._payload_pos, self._payload_head = payload, have, (ftype, rid)
                pos = fill
                break
            rest = fill - pos
            if rest and pos:
                self._scratch[:rest] = view[pos:fill]
            self._fill = rest
        finally:
            view.release()

    def eof_received(self) -> bool:
        if self._payload is not None or self._fill:
            got = self._payload_pos if self._payload is not None else self._fill
            where = "payload" if self._payload is not None else "header"
            self._fail(TruncatedFrame(f"connection closed inside a frame {where} ({got} bytes)"))
        self._eof = True
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None and not self._broken:
            self._fail(ConnectionResetError(str(exc) or "connection lost"))
        self._eof = True
        self._wake()
        if not self.closed.done():
            self.closed.set_result(None)
        if self._write_paused is not None and not self._write_paused.done():
            self._write_paused.set_result(None)

    def pause_writing(self) -> None:
        if self._write_paused is None or self._write_paused.done():
            self._write_paused = self._loop.create_future()

    def resume_writing(self) -> None:
        if self._write_paused is not None and not self._write_paused.done():
            self._write_paused.set_result(None)

    # -- frames -------------------------------------------------------------------------
    def _emit(self, frame: Frame) -> None:
        self._frames.append(frame)
        self._queued += len(frame.payload)
        if self._queued > HIGH_WATER and not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()
        self._wake()

    def _fail(self, exc: BaseException) -> None:
        self._broken = True
        self._fill, self._payload = 0, None  # later bytes are discarded unread
        self._frames.append(exc)
        self._wake()

    def _wake(self) -> None:
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    async def read_frame(self) -> Frame | None:
        """The next frame; None at a clean end of stream; raises like `frames.read_frame`."""
        while True:
            if self._frames:
                item = self._frames.popleft()
                if isinstance(item, BaseException):
                    raise item
                self._queued -= len(item.payload)
                if self._paused and self._queued < LOW_WATER and self.transport is not None:
                    self._paused = False
                    self.transport.resume_reading()
                return item
            if self._eof:
                return None
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    async def drain(self) -> None:
        if self._write_paused is not None:
            await self._write_paused


class TransportWriter:
    """The part of `asyncio.StreamWriter` the client uses, over a FrameProtocol transport."""

    def __init__(self, transport: asyncio.Transport, protocol: FrameProtocol) -> None:
        self.transport = transport
        self._protocol = protocol

    def write(self, data: Any) -> None:
        self.transport.write(data)

    async def drain(self) -> None:
        await self._protocol.drain()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self.transport.get_extra_info(name, default)

    def is_closing(self) -> bool:
        return self.transport.is_closing()

    def close(self) -> None:
        self.transport.close()

    async def wait_closed(self) -> None:
        await asyncio.shield(self._protocol.closed)
