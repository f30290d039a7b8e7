"""SHA-256 (and optionally a spool-file write) of a byte stream, off the event loop.

Shared by both ends of a file result: the relay server core hashes what it sends for the
END digest, the consumer hashes (and spools) what it receives to verify it. Verifying a
256 MiB result means hashing every byte and usually writing it to disk. Done
inline, that CPU time stalls the socket reads and writes; an executor hop per chunk costs more than
it saves. `DigestSink` keeps one worker thread per stream fed by a plain queue: hashlib
and file writes release the GIL, so the loop keeps receiving while the worker hashes and
writes, in order. The backlog is bounded, so memory stays flat whatever the file size.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import queue
import threading
from collections.abc import Callable
from typing import BinaryIO

DEFAULT_BACKLOG = 8 * 1024 * 1024
"""Bytes the stream may run ahead of the worker before `feed` waits."""

Chunk = bytes | bytearray | memoryview


class DigestSink:
    """Hash (and optionally write to `out`) chunks in a worker thread, in order."""

    def __init__(self, out: BinaryIO | None = None, *, backlog: int = DEFAULT_BACKLOG) -> None:
        self._loop = asyncio.get_running_loop()
        self._digest = hashlib.sha256()
        self._out = out
        self._queue: queue.SimpleQueue[Chunk | None] = queue.SimpleQueue()
        self._limit = max(1, backlog)
        self._held = 0  # bytes queued and not processed yet
        self._lock = threading.Lock()
        self._room: asyncio.Future[None] | None = None
        self._done: asyncio.Future[None] = self._loop.create_future()
        self._error: OSError | None = None
        self._closed = False
        self._aborted = False
        self.bytes_fed = 0
        self._thread = threading.Thread(target=self._work, name="cetp-digest", daemon=True)
        self._thread.start()

    # -- worker thread ------------------------------------------------------------------
    def _work(self) -> None:
        while (item := self._queue.get()) is not None:
            if self._error is None and not self._aborted:
                self._digest.update(item)
                if self._out is not None:
                    try:
                        self._out.write(item)
                    except (OSError, ValueError) as exc:  # disk full, file closed by abort
                        self._error = exc if isinstance(exc, OSError) else OSError(str(exc))
            with self._lock:
                self._held -= len(item)
                wake = self._room is not None and self._held <= self._limit // 2
            if wake:
                self._call(self._wake)
        self._call(self._finish)

    def _call(self, fn: Callable[[], None]) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
            self._loop.call_soon_threadsafe(fn)

    # -- event loop side ----------------------------------------------------------------
    def _wake(self, force: bool = False) -> None:
        with self._lock:  # a stale wake-up must not release a newer, still-full wait
            if not force and self._held > self._limit // 2:
                return
            room, self._room = self._room, None
        if room is not None and not room.done():
            room.set_result(None)

    def _finish(self) -> None:
        self._wake(force=True)
        if not self._done.done():
            self._done.set_result(None)

    async def feed(self, data: Chunk) -> None:
        """Queue `data` (not copied: the caller must not change it afterwards); waits while
        the backlog is full. Raises the worker's OSError (e.g. disk full) once it failed."""
        if self._error is not None:
            raise self._error
        if self._closed:
            raise RuntimeError("DigestSink.feed after finish/close")
        n = len(data)
        if not n:
            return
        self.bytes_fed += n
        room: asyncio.Future[None] | None = None
        with self._lock:
            self._held += n
            if self._held > self._limit:
                room = self._room = self._loop.create_future()
        self._queue.put(data)
        if room is not None:
            await room

    async def finish(self) -> str:
        """Wait for the worker; the hex SHA-256 of everything fed (raises its OSError)."""
        self.close()
        await asyncio.shield(self._done)
        if self._error is not None:
            raise self._error
        return self._digest.hexdigest()

    def close(self) -> None:
        """Let the worker stop after the queued data (idempotent; never blocks)."""
        if not self._closed:
            self._closed = True
            self._queue.put(None)

    def abort(self) -> None:
        """Stop now: the worker drops what is still queued (the stream failed or was
        cancelled; the file may be closed under it)."""
        self._aborted = True
        self.close()

    @property
    def backlog(self) -> int:
        """Bytes queued and not hashed yet (for tests and diagnostics)."""
        with self._lock:
            return self._held
