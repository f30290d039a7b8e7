"""DigestSink: hashing and spooling in a worker thread, in order, with a bounded backlog."""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
import threading

import pytest

from inspector.digest_sink import DigestSink
from inspector.tasks import spawn


async def test_digest_and_file_match_what_was_fed() -> None:
    out = io.BytesIO()
    sink = DigestSink(out)
    pieces = [os.urandom(n) for n in (1, 70_000, 262_144, 5, 100_000)]
    for p in pieces:
        await sink.feed(bytearray(p))
    await sink.feed(b"")
    assert await sink.finish() == hashlib.sha256(b"".join(pieces)).hexdigest()
    assert out.getvalue() == b"".join(pieces) and sink.bytes_fed == out.tell()


class GatedFile(io.BytesIO):
    """A file whose writes block until the test opens the gate (a slow disk)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()

    def write(self, b) -> int:  # type: ignore[no-untyped-def, override]
        self.gate.wait(10)
        return super().write(b)


async def test_feed_waits_while_the_backlog_is_full() -> None:
    out = GatedFile()
    sink = DigestSink(out, backlog=300_000)
    await sink.feed(b"a" * 200_000)  # under the backlog: returns at once
    blocked = spawn(sink.feed(b"b" * 200_000), "feed past the backlog")
    await asyncio.sleep(0.05)
    assert not blocked.done() and sink.backlog == 400_000  # the worker is stuck writing
    out.gate.set()
    await asyncio.wait_for(blocked, 5)
    assert sink.backlog <= 150_000  # released at half the backlog
    await sink.feed(b"c" * 10)
    digest = await sink.finish()
    data = b"a" * 200_000 + b"b" * 200_000 + b"c" * 10
    assert digest == hashlib.sha256(data).hexdigest() and out.getvalue() == data


class FullDisk(io.BytesIO):
    def write(self, b) -> int:  # type: ignore[no-untyped-def, override]
        raise OSError(28, "No space left on device")


async def test_a_write_error_is_raised_by_feed_or_finish() -> None:
    sink = DigestSink(FullDisk())
    await sink.feed(b"x" * 1000)
    with pytest.raises(OSError, match="No space"):
        await sink.finish()


async def test_feed_after_finish_is_a_programming_error() -> None:
    sink = DigestSink()
    await sink.finish()
    with pytest.raises(RuntimeError):
        await sink.feed(b"late")
