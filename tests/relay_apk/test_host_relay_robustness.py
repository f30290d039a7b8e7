"""Attacks on the Java relay core's resource bounds (HostMain + fake platform).

Each test is one attack a hostile or broken peer (or a provider that never returns) can
make; the relay must stay bounded in memory, threads and time, and answer every request.
Issue 10 part 1: before the fix, 126 unauthenticated 1 MiB announcements ended the JVM
with OutOfMemoryError, 600 timed-out requests left +602 threads, a reply over 1 MiB was
dropped silently and 500 connections took 28 s to open.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import time
from pathlib import Path

import pytest

from inspector.protocol.bundle import Bundle, Int
from inspector.relay.api import BAD_FRAME, BUSY, CANCELLED, TIMEOUT, TOO_LARGE
from inspector.relay.codec import decode_bundle, encode_value
from inspector.relay.frames import FrameType, encode_frame, pack_header, read_frame
from inspector.relay.hello import hello_args
from tests.relay_apk.host_jvm import HostRelayProcess as HostRelay
from tests.relay_apk.relay_tools import require as require_tool

pytestmark = pytest.mark.java

AUTHORITY = "com.example.fakeprovider.clawseed.tools"
MAX_FRAME = 1_048_576
MAX_IN_FLIGHT = 64  # Limits.MAX_IN_FLIGHT


@pytest.fixture
def host_relay_args() -> list[str]:
    return ["--hello-timeout-ms", "20000"]


def _threads(relay: HostRelay) -> int:
    """Live threads of the HostMain JVM, from /proc."""
    assert relay._proc is not None
    for line in Path(f"/proc/{relay._proc.pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    raise AssertionError("no Threads: line")


def _heap_used_mib(relay: HostRelay) -> float:
    """Java heap in use after a full GC (jcmd), so only live objects count."""
    assert relay._proc is not None
    pid = str(relay._proc.pid)
    subprocess.run(["jcmd", pid, "GC.run"], capture_output=True, timeout=60, check=True)
    info = subprocess.run(["jcmd", pid, "GC.heap_info"], capture_output=True, text=True,
                          timeout=60, check=True).stdout
    m = re.search(r"used (\d+)K", info)
    assert m, info
    return int(m.group(1)) / 1024


async def _open(relay: HostRelay) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A raw connection that has done its hello."""
    reader, writer = await asyncio.open_connection(relay.host, relay.port)
    writer.write(encode_frame(FrameType.REQUEST, 1, Bundle(
        op="hello", args=hello_args(relay.token, "robustness-test", False))))
    await writer.drain()
    frame = await asyncio.wait_for(read_frame(reader), 20)
    assert frame is not None and frame.type is FrameType.RESPONSE, frame
    return reader, writer


def _call(rid: int, method: str, arg: str | None = None, timeout_ms: int = 30_000) -> bytes:
    args = Bundle(authority=AUTHORITY, method=method, timeout_ms=Int(timeout_ms))
    if arg is not None:
        args["arg"] = arg
    return encode_frame(FrameType.REQUEST, rid, Bundle(op="call", args=args))


async def _replies(reader: asyncio.StreamReader, count: int, timeout: float) -> dict[int, str]:
    """request id → 'RESPONSE' or the ERROR code, for the next `count` final frames."""
    out: dict[int, str] = {}
    while len(out) < count:
        frame = await asyncio.wait_for(read_frame(reader), timeout)
        assert frame is not None, f"connection closed after {len(out)} of {count} replies"
        if frame.type is FrameType.ERROR:
            out[frame.request_id] = str(decode_bundle(frame.payload)["code"])
        else:
            out[frame.request_id] = frame.type.name
    return out


async def test_pre_hello_frames_are_capped_small(host_relay: HostRelay) -> None:
    reader, writer = await asyncio.open_connection(host_relay.host, host_relay.port)
    try:
        writer.write(pack_header(FrameType.REQUEST, 1, 8193))  # over the 8 KiB hello cap
        await writer.drain()
        frame = await asyncio.wait_for(read_frame(reader), 10)
        assert frame is not None and frame.type is FrameType.ERROR and frame.request_id == 0
        error = decode_bundle(frame.payload)
        assert error["code"] == BAD_FRAME and "before the hello" in str(error["message"])
        assert await asyncio.wait_for(reader.read(1), 10) == b""
    finally:
        writer.close()


async def test_announced_payloads_are_not_allocated_ahead_of_the_bytes(
    host_relay: HostRelay,
) -> None:
    """300 authenticated peers each announce a 1 MiB payload and send one byte of it: eager
    allocation held 300 MiB (126 such headers ended the JVM with OutOfMemoryError); growing
    the buffer with the bytes holds 64 KiB per peer."""
    require_tool("jcmd")
    opened = [await _open(host_relay) for _ in range(300)]
    writers = [w for _, w in opened]
    try:
        before = await asyncio.to_thread(_heap_used_mib, host_relay)
        for w in writers:
            w.write(pack_header(FrameType.REQUEST, 2, MAX_FRAME) + b"\x00")
        await asyncio.gather(*(w.drain() for w in writers))
        await asyncio.sleep(1.0)  # let every connection thread read its header and byte
        grown = await asyncio.to_thread(_heap_used_mib, host_relay) - before
        assert grown < 60, f"the relay holds {grown:.0f} MiB more for 300 announcements"
        # and it still serves a new client
        reader, writer = await _open(host_relay)
        writers.append(writer)
        writer.write(_call(5, "echo"))
        await writer.drain()
        assert await _replies(reader, 1, 20) == {5: "RESPONSE"}
    finally:
        for w in writers:
            w.close()
    assert host_relay.running


async def test_timed_out_requests_keep_their_slots_and_threads_stay_bounded(
    host_relay: HostRelay,
) -> None:
    """600 requests to a provider that ignores interrupts for 3 s, each with a 200 ms timeout.

    The first 64 time out but keep their slots until the stuck calls return: the rest get BUSY
    (not +600 threads); once the stuck calls end, the connection serves again."""
    reader, writer = await _open(host_relay)
    try:
        base = _threads(host_relay)
        writer.write(b"".join(_call(10 + i, "stuck", "3000", 200) for i in range(600)))
        await writer.drain()
        start = time.monotonic()
        replies = await _replies(reader, 600, 30)
        codes = list(replies.values())
        assert codes.count(TIMEOUT) == MAX_IN_FLIGHT, codes
        assert codes.count(BUSY) == 600 - MAX_IN_FLIGHT
        peak = _threads(host_relay)
        assert peak - base <= 2 * MAX_IN_FLIGHT + 8, f"{peak - base} threads for 600 requests"
        # timed out but still stuck in the provider: the slot is still taken
        if time.monotonic() - start < 2.0:
            writer.write(_call(1000, "echo"))
            await writer.drain()
            assert await _replies(reader, 1, 10) == {1000: BUSY}
        await asyncio.sleep(max(0.0, 3.5 - (time.monotonic() - start)))
        writer.write(_call(1001, "echo"))
        await writer.drain()
        assert await _replies(reader, 1, 10) == {1001: "RESPONSE"}
        assert _threads(host_relay) - base <= 2 * MAX_IN_FLIGHT + 8
    finally:
        writer.close()


async def test_a_cancelled_request_keeps_its_slot_until_its_thread_ends(
    host_relay: HostRelay,
) -> None:
    reader, writer = await _open(host_relay)
    try:
        writer.write(b"".join(_call(10 + i, "stuck", "2000") for i in range(MAX_IN_FLIGHT)))
        writer.write(b"".join(pack_header(FrameType.CANCEL, 10 + i, 0)
                              for i in range(MAX_IN_FLIGHT)))
        await writer.drain()
        start = time.monotonic()
        codes = await _replies(reader, MAX_IN_FLIGHT, 10)
        assert set(codes.values()) == {CANCELLED}
        if time.monotonic() - start < 1.0:
            writer.write(_call(500, "echo"))
            await writer.drain()
            assert await _replies(reader, 1, 10) == {500: BUSY}
        await asyncio.sleep(max(0.0, 2.5 - (time.monotonic() - start)))
        writer.write(_call(501, "echo"))
        await writer.drain()
        assert await _replies(reader, 1, 10) == {501: "RESPONSE"}
    finally:
        writer.close()


async def test_a_reply_over_the_frame_maximum_is_a_typed_error(host_relay: HostRelay) -> None:
    """echo returns the request's extras plus more: a request just under 1 MiB gets a reply
    just over it, which must come back as ERROR TOO_LARGE, not silence."""
    def request(n: int) -> Bundle:
        return Bundle(op="call", args=Bundle(authority=AUTHORITY, method="echo",
                                             extras=Bundle(blob=bytes(n))))

    size = MAX_FRAME - len(encode_value(request(0)))
    while len(encode_value(request(size))) > MAX_FRAME:
        size -= 1
    reader, writer = await _open(host_relay)
    try:
        writer.write(encode_frame(FrameType.REQUEST, 7, request(size)))
        await writer.drain()
        frame = await asyncio.wait_for(read_frame(reader), 20)
        assert frame is not None and frame.type is FrameType.ERROR and frame.request_id == 7
        error = decode_bundle(frame.payload)
        assert error["code"] == TOO_LARGE
        details = error["details"]
        assert isinstance(details, Bundle) and int(details["size"]) > MAX_FRAME  # type: ignore[call-overload]
        # the connection goes on
        writer.write(_call(8, "echo"))
        await writer.drain()
        assert await _replies(reader, 1, 10) == {8: "RESPONSE"}
    finally:
        writer.close()


async def test_500_connections_open_quickly(host_relay: HostRelay) -> None:
    """A backlog of 16 made 500 simultaneous connects take 28 s (SYN retransmits)."""
    start = time.monotonic()
    opened = await asyncio.gather(*(_open(host_relay) for _ in range(500)))
    elapsed = time.monotonic() - start
    for _, writer in opened:
        writer.close()
    assert elapsed < 10, f"500 connections took {elapsed:.1f} s"
