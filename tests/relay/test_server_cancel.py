"""REQUEST and CANCEL arriving in one write (issue 12): every request is answered, no
request id leaks, and the connection never answers BUSY forever."""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.protocol.bundle import Bundle
from inspector.relay.api import BUSY, CANCELLED
from inspector.relay.codec import decode_bundle
from inspector.relay.frames import FrameType, encode_frame, frame_bytes, read_frame
from tests.relay.fakes import FakeBackend, hello_frame, raw_connection


class SlowBackend(FakeBackend):
    """`call` waits long enough that only a cancel ends it."""

    async def handle(self, op, args, conn):
        if op == "call":
            await asyncio.sleep(30)
        return await super().handle(op, args, conn)


def _req(rid: int, op: str = "ping") -> bytes:
    return encode_frame(FrameType.REQUEST, rid, Bundle(op=op, args=Bundle()))


def _cancel(rid: int) -> bytes:
    return frame_bytes(FrameType.CANCEL, rid)


async def _replies(reader, n: int) -> dict[int, tuple[FrameType, Bundle]]:
    out: dict[int, tuple[FrameType, Bundle]] = {}
    while len(out) < n:
        frame = await asyncio.wait_for(read_frame(reader), 10)
        assert frame is not None
        if frame.type in (FrameType.RESPONSE, FrameType.ERROR):
            out[frame.request_id] = (frame.type, decode_bundle(frame.payload))
    return out


async def _pairs_in_one_write(count: int, op: str) -> dict[int, tuple[FrameType, Bundle]]:
    reader, writer, task = await raw_connection(SlowBackend())
    writer.write(hello_frame())
    await _replies(reader, 1)
    blob = b"".join(_req(rid, op) + _cancel(rid) for rid in range(10, 10 + count))
    writer.write(blob)  # each REQUEST and its CANCEL in the same write
    got = await _replies(reader, count)
    writer.write(_req(999))  # afterwards the connection still serves
    after = await _replies(reader, 1)
    writer.close()
    await asyncio.wait_for(task, 10)
    got.update(after)
    return got


async def test_200_request_cancel_pairs_are_all_answered_and_never_busy() -> None:
    got = await _pairs_in_one_write(200, "ping")  # > MAX_IN_FLIGHT (64) pairs
    codes = [b.get("code") for rid, (t, b) in got.items() if rid != 999 and t is FrameType.ERROR]
    assert BUSY not in codes
    assert all(c == CANCELLED for c in codes)
    assert len([r for r in got if r != 999]) == 200
    assert got[999][0] is FrameType.RESPONSE


async def test_cancel_of_a_running_call_still_answers_cancelled() -> None:
    reader, writer, task = await raw_connection(SlowBackend())
    writer.write(hello_frame())
    await _replies(reader, 1)
    writer.write(_req(5, "call"))
    await asyncio.sleep(0.05)  # let it start
    writer.write(_cancel(5))
    got = await _replies(reader, 1)
    assert got[5][0] is FrameType.ERROR and got[5][1].get("code") == CANCELLED
    writer.close()
    await asyncio.wait_for(task, 10)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(1, 300), st.booleans()), min_size=65, max_size=140,
                unique_by=lambda t: t[0]))
def test_any_mix_of_cancelled_requests_is_answered_exactly_once(reqs) -> None:
    async def run() -> None:
        reader, writer, task = await raw_connection(SlowBackend())
        writer.write(hello_frame(rid=1000))
        await _replies(reader, 1)
        writer.write(b"".join(_req(rid) + (_cancel(rid) if c else b"") for rid, c in reqs))
        writer.write(_req(2000))
        want = sorted([rid for rid, _ in reqs] + [2000])
        seen: list[int] = []
        while len(seen) < len(want):
            frame = await asyncio.wait_for(read_frame(reader), 10)
            assert frame is not None
            if frame.type in (FrameType.RESPONSE, FrameType.ERROR):
                seen.append(frame.request_id)
        assert sorted(seen) == want  # every request answered, once
        await asyncio.sleep(0.05)  # the answered tasks finish their cleanup
        writer.write(_req(2001))  # and nothing stays in flight: served, not BUSY
        (t, body), = (await _replies(reader, 1)).values()
        assert t is FrameType.RESPONSE, body
        writer.close()
        await asyncio.wait_for(task, 10)

    asyncio.run(run())
