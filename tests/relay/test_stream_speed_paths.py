"""The copy-free stream paths: re-cutting pieces into CHUNKs, the END-digest thread, and
the client's recycled receive buffers (which must never change a chunk someone holds)."""

from __future__ import annotations

import hashlib
import os

from inspector.relay.api import StreamEnd
from inspector.relay.client import FrameRecord, RelayClient
from inspector.relay.frame_protocol import BufferPool
from tests.relay.fakes import FakeBackend


async def test_odd_pieces_are_recut_into_full_chunks_with_the_right_digest(
    client: RelayClient, backend: FakeBackend
) -> None:
    data = os.urandom(1_000_003)
    backend.file_chunk = 100_001  # pieces that never line up with the 256 KiB frames
    backend.files["odd"] = data
    records: list[FrameRecord] = []
    client.on_frame = records.append
    got, end = bytearray(), None
    async for item in client.read_file("odd", len(data)):
        if isinstance(item, StreamEnd):
            end = item
        else:
            got += item
    assert bytes(got) == data
    assert end == StreamEnd(len(data), hashlib.sha256(data).hexdigest())
    sizes = [r.size for r in records if r.type == "CHUNK"]
    assert sizes == [262_144] * 3 + [len(data) - 3 * 262_144]


async def test_chunks_kept_by_the_caller_never_change(
    client: RelayClient, backend: FakeBackend
) -> None:
    blocks = [bytes([i]) * 262_144 for i in range(40)]
    backend.file_chunk = 262_144
    backend.files["kept"] = b"".join(blocks)
    kept: list[bytes | bytearray] = []
    async for item in client.read_file("kept", 1 << 30):
        if not isinstance(item, StreamEnd):
            if len(kept) % 2 == 0:
                kept.append(item)  # hold every other chunk, drop the rest
            else:
                kept.append(bytes(item))
    assert [bytes(k) for k in kept] == blocks


def test_buffer_pool_reuses_only_unreferenced_buffers() -> None:
    pool = BufferPool()
    first = pool.take(1000)
    first_id = id(first)
    del first
    again = pool.take(1000)
    assert id(again) == first_id  # nobody held it: recycled
    view = memoryview(again)
    other = pool.take(1000)
    assert other is not again and view.obj is again  # held through a view: left alone
    assert len(pool.take(2000)) == 2000
