from __future__ import annotations

import asyncio
import hashlib
import os
import tempfile
import time

import pytest

from inspector.protocol.bundle import Bundle, BundleArray, Int, IntArray, Long
from inspector.relay.api import (
    AUTH_FAILED,
    BAD_ARGS,
    BAD_FRAME,
    CANCELLED,
    DISCONNECTED,
    INTERNAL,
    NOT_FOUND,
    TIMEOUT,
    TOO_LARGE,
    UNKNOWN_OP,
    UNSUPPORTED_VERSION,
    RelayError,
    StreamEnd,
)
from inspector.relay.client import FrameRecord, RelayClient
from inspector.relay.codec import decode_bundle
from inspector.relay.frames import FrameType, encode_frame, frame_bytes, pack_header, read_frame
from inspector.relay.server import RelayServer, connect_in_process
from tests.relay.fakes import TOKEN, FakeBackend, hello_frame, raw_connection


async def test_hello_reports_the_backend_info(client: RelayClient) -> None:
    info = client.hello_info
    assert info.protocol_version == 1 and info.relay_version_code == 7
    assert "call" in info.capabilities and info.caller_uid == 2000
    assert info.device["sdk_int"] == 34 and isinstance(info.device["sdk_int"], Int)
    assert abs(await client.ping() - time.time() * 1000) < 60_000


async def test_typed_values_survive_a_call(client: RelayClient) -> None:
    extras = Bundle(i=Int(1), l=Long(1), arr=IntArray([1, 2]), ba=BundleArray([None]))
    reply = await client.call("com.a", "echo", extras)
    assert reply == extras
    assert type(reply["i"]) is Int and type(reply["l"]) is Long  # type: ignore[index]
    assert await client.call("com.a", "echo", None) is None


async def test_wrong_token_is_refused(backend: FakeBackend) -> None:
    reader, writer, task = await raw_connection(backend)
    with pytest.raises(RelayError) as info:
        await RelayClient.connect(reader, writer, "wrong")
    assert info.value.code == AUTH_FAILED
    await asyncio.wait_for(task, 5)
    assert backend.closed_connections == []


async def test_wrong_version_gets_supported_versions_and_close(backend: FakeBackend) -> None:
    reader, writer, task = await raw_connection(backend)
    writer.write(hello_frame(version=2))
    frame = await asyncio.wait_for(read_frame(reader), 5)
    assert frame is not None and frame.type is FrameType.ERROR and frame.request_id == 1
    err = decode_bundle(frame.payload)
    assert err["code"] == UNSUPPORTED_VERSION
    assert err["details"] == Bundle(supported=IntArray([1]))
    assert await asyncio.wait_for(read_frame(reader), 5) is None  # closed by the relay
    await asyncio.wait_for(task, 5)
    writer.close()


async def test_first_request_must_be_hello(backend: FakeBackend) -> None:
    reader, writer, task = await raw_connection(backend)
    writer.write(encode_frame(FrameType.REQUEST, 4, Bundle(op="discover", args=Bundle())))
    frame = await asyncio.wait_for(read_frame(reader), 5)
    assert frame is not None and decode_bundle(frame.payload)["code"] == AUTH_FAILED
    assert await asyncio.wait_for(read_frame(reader), 5) is None
    await asyncio.wait_for(task, 5)
    assert backend.connections == [] and backend.closed_connections == []
    writer.close()


async def test_calls_in_flight_complete_out_of_order(client: RelayClient) -> None:
    done: list[str] = []

    async def call(tag: str, ms: int) -> None:
        reply = await client.call("a", "sleep", Bundle(ms=Int(ms), tag=tag))
        assert reply is not None and reply["tag"] == tag
        done.append(tag)

    await asyncio.gather(call("slow", 400), call("fast", 10), call("mid", 150))
    assert done == ["fast", "mid", "slow"]


async def test_stream_delivers_bytes_and_verified_end(
    client: RelayClient, backend: FakeBackend
) -> None:
    data = os.urandom(1_000_003)
    backend.files["h"] = data
    got = bytearray()
    end = None
    async for item in client.read_file("h", 2_000_000, chunk_size=100_000):
        if isinstance(item, StreamEnd):
            end = item
        else:
            assert 0 < len(item) <= 100_000
            got += item
    assert bytes(got) == data
    assert end == StreamEnd(len(data), hashlib.sha256(data).hexdigest())


async def test_stream_over_max_bytes_is_too_large(
    client: RelayClient, backend: FakeBackend
) -> None:
    backend.files["h"] = b"x" * 300_000
    with pytest.raises(RelayError) as info:
        async for _ in client.read_file("h", 200_000):
            pass
    assert info.value.code == TOO_LARGE
    with pytest.raises(RelayError) as info:
        async for _ in client.read_file("missing", 10):
            pass
    assert info.value.code == NOT_FOUND
    assert await client.ping() > 0


async def test_slow_reader_applies_backpressure_and_close_cancels(
    client: RelayClient, backend: FakeBackend
) -> None:
    backend.file_chunk = 262_144
    backend.files["big"] = bytes(64 * 1024 * 1024)  # 256 chunks
    stream = client.read_file("big", 1 << 30)
    first = await stream.__anext__()
    assert isinstance(first, (bytes, bytearray)) and len(first) == 262_144
    await asyncio.sleep(0.5)  # the consumer stalls: the relay must stall too
    assert backend.chunks_sent["big"] < 100
    await stream.aclose()
    for _ in range(100):
        if "big" in backend.cancelled:
            break
        await asyncio.sleep(0.02)
    assert "big" in backend.cancelled
    assert await client.call("a", "echo", Bundle(x="still ok")) == Bundle(x="still ok")


async def test_cancelling_the_awaiting_task_cancels_on_the_relay(
    client: RelayClient, backend: FakeBackend
) -> None:
    records: list[FrameRecord] = []
    client.on_frame = records.append
    task = asyncio.ensure_future(client.call("a", "sleep", Bundle(ms=Int(10_000), tag="t1")))
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(100):
        if backend.cancelled:
            break
        await asyncio.sleep(0.02)
    assert backend.cancelled == ["t1"]
    assert [r.type for r in records if r.direction == "out"] == ["REQUEST", "CANCEL"]
    await asyncio.sleep(0.05)
    errors = [r for r in records if r.direction == "in" and r.type == "ERROR"]
    assert errors and errors[0].value["code"] == CANCELLED  # type: ignore[index]


async def test_relay_side_timeout(client: RelayClient, monkeypatch: pytest.MonkeyPatch) -> None:
    from inspector.relay import server

    monkeypatch.setattr(server, "BACKEND_GRACE_S", 0.2)  # the backend overruns timeout + grace
    with pytest.raises(RelayError) as info:
        await client.call("a", "sleep", Bundle(ms=Int(2_000)), timeout_ms=100)
    assert info.value.code == TIMEOUT


async def test_client_side_timeout_when_the_relay_never_answers() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        frame = await read_frame(reader)  # hello
        assert frame is not None
        backend = FakeBackend()
        from inspector.relay.hello import hello_result

        writer.write(
            encode_frame(FrameType.RESPONSE, frame.request_id, hello_result(backend.hello_info("")))
        )
        seen.append(await read_frame(reader))  # the ping, never answered
        seen.append(await read_frame(reader))  # the CANCEL after the client's timeout
        await reader.read()
        writer.close()

    seen: list = []
    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = await RelayClient.open_tcp("127.0.0.1", port, TOKEN, call_timeout_s=0.2)
    with pytest.raises(RelayError) as info:
        await client.ping()
    assert info.value.code == TIMEOUT
    await asyncio.sleep(0.1)
    assert [f.type for f in seen] == [FrameType.REQUEST, FrameType.CANCEL]
    await client.close()
    server.close()


async def test_dropped_connection_fails_every_pending_call(
    client: RelayClient, backend: FakeBackend
) -> None:
    pending = asyncio.ensure_future(client.call("a", "sleep", Bundle(ms=Int(10_000))))
    backend.files["h"] = b"x" * 10
    backend.stream_gate = asyncio.Event()
    stream = client.read_file("h", 100)
    streaming = asyncio.ensure_future(stream.__anext__())
    await asyncio.sleep(0.1)
    t0 = time.monotonic()
    with pytest.raises(RelayError) as info:
        await client.fault("drop_connection")
    assert info.value.code == DISCONNECTED
    for fut in (pending, streaming):
        with pytest.raises(RelayError) as info:
            await asyncio.wait_for(fut, 5)
        assert info.value.code == DISCONNECTED
    assert time.monotonic() - t0 < 2
    with pytest.raises(RelayError) as info:
        await client.ping()
    assert info.value.code == DISCONNECTED
    assert client.closed


async def test_events_are_dispatched_only_when_asked(backend: FakeBackend) -> None:
    got: list[Bundle] = []
    c = await connect_in_process(backend, TOKEN)
    c.add_event_handler(got.append)
    await c.call("a", "emit", None)
    await c.ping()
    assert got == [Bundle(event="package_changed", change="added", package="com.x")]
    quiet = await connect_in_process(backend, TOKEN, events=False)
    quiet_got: list[Bundle] = []
    quiet.add_event_handler(quiet_got.append)
    await quiet.call("a", "emit", None)
    await quiet.ping()
    assert quiet_got == []
    await c.close()
    await quiet.close()


async def test_unknown_and_unoffered_ops(client: RelayClient, backend: FakeBackend) -> None:
    with pytest.raises(RelayError) as info:
        await client.wake_provider("a", "b", "acquire")  # not in the fake's capabilities
    assert info.value.code == UNKNOWN_OP
    with pytest.raises(RelayError) as info:
        await client._request("load_class", Bundle(name="evil"))
    assert info.value.code == UNKNOWN_OP
    with pytest.raises(RelayError) as info:
        await client._request("call", Bundle(timeout_ms=Long(5)))
    assert info.value.code == BAD_ARGS


async def test_backend_crash_is_internal_and_the_connection_survives(
    client: RelayClient,
) -> None:
    with pytest.raises(RelayError) as info:
        await client.call("a", "boom", None)
    assert info.value.code == INTERNAL and "ZeroDivisionError" in info.value.message
    assert await client.discover() == [Bundle(package="com.example.a", uid=Int(10001))]


async def test_frame_hook_sees_both_directions(client: RelayClient) -> None:
    records: list[FrameRecord] = []
    client.on_frame = records.append
    await client.call("com.a", "echo", Bundle(k="v"))
    out, inn = records
    assert (out.direction, out.type, out.op) == ("out", "REQUEST", "call")
    assert out.value["args"]["extras"] == Bundle(k="v")  # type: ignore[index]
    assert (inn.direction, inn.type, inn.op, inn.request_id) == (
        "in",
        "RESPONSE",
        "call",
        out.request_id,
    )
    assert inn.size > 0


async def test_garbage_after_hello_gets_bad_frame_and_close(backend: FakeBackend) -> None:
    reader, writer, task = await raw_connection(backend)
    writer.write(hello_frame())
    assert (await read_frame(reader)).type is FrameType.RESPONSE  # type: ignore[union-attr]
    writer.write(frame_bytes(FrameType.RESPONSE, 5, b"\x00"))
    frame = await asyncio.wait_for(read_frame(reader), 5)
    assert frame is not None and frame.request_id == 0
    assert decode_bundle(frame.payload)["code"] == BAD_FRAME
    assert await asyncio.wait_for(read_frame(reader), 5) is None
    await asyncio.wait_for(task, 5)
    assert len(backend.closed_connections) == 1
    writer.close()


async def test_undecodable_request_payload_keeps_the_connection(backend: FakeBackend) -> None:
    reader, writer, _ = await raw_connection(backend)
    writer.write(hello_frame())
    await read_frame(reader)
    writer.write(frame_bytes(FrameType.REQUEST, 6, b"\x07\x00\x00\x00\x01"))
    frame = await asyncio.wait_for(read_frame(reader), 5)
    assert frame is not None and frame.request_id == 6
    assert decode_bundle(frame.payload)["code"] == BAD_FRAME
    writer.write(encode_frame(FrameType.REQUEST, 7, Bundle(op="ping", args=Bundle())))
    frame = await asyncio.wait_for(read_frame(reader), 5)
    assert frame is not None and frame.type is FrameType.RESPONSE and frame.request_id == 7
    writer.close()


async def test_serve_unix_and_tcp(backend: FakeBackend) -> None:
    server = RelayServer(backend, TOKEN)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "relay.sock")
        handle = await server.serve_unix(path)
        c = await RelayClient.open_unix(path, TOKEN)
        assert await c.ping() > 0
        handle.close()
        await handle.wait_closed()
        with pytest.raises(RelayError) as info:
            await asyncio.wait_for(c.ping(), 5)
        assert info.value.code == DISCONNECTED
        await c.close()
    handle = await server.serve_tcp()
    host, port = handle.address
    c = await RelayClient.open_tcp(host, port, TOKEN)
    assert await c.discover()
    await c.close()
    handle.close()
    with pytest.raises(RelayError) as info:
        await RelayClient.open_tcp(host, port, TOKEN)
    assert info.value.code == DISCONNECTED


async def test_server_rejects_an_oversized_frame_without_waiting_for_it(
    backend: FakeBackend,
) -> None:
    reader, writer, task = await raw_connection(backend)
    writer.write(hello_frame())
    await read_frame(reader)
    writer.write(pack_header(FrameType.REQUEST, 2, 2 * 1024 * 1024))  # no payload, no EOF
    frame = await asyncio.wait_for(read_frame(reader), 2)
    assert frame is not None and frame.request_id == 0
    err = decode_bundle(frame.payload)
    assert err["code"] == BAD_FRAME and "exceeds" in err["message"]
    assert await asyncio.wait_for(read_frame(reader), 2) is None
    await asyncio.wait_for(task, 2)
    writer.close()


async def test_backend_can_push_events_right_after_hello(
    client: RelayClient, backend: FakeBackend
) -> None:
    got: list[Bundle] = []
    client.add_event_handler(got.append)
    [conn] = backend.opened
    conn.emit(Bundle(event="package_changed", change="removed", package="com.y"))
    await client.ping()
    assert got == [Bundle(event="package_changed", change="removed", package="com.y")]


async def test_small_backend_pieces_are_coalesced_into_full_chunks(
    client: RelayClient, backend: FakeBackend
) -> None:
    data = os.urandom(300_001)
    backend.files["h"], backend.file_chunk = data, 1_000
    sizes: list[int] = []
    got = bytearray()
    end = None
    async for item in client.read_file("h", len(data), chunk_size=70_000):
        if isinstance(item, StreamEnd):
            end = item
        else:
            sizes.append(len(item))
            got += item
    assert sizes == [70_000] * 4 + [20_001]
    assert bytes(got) == data and end == StreamEnd(len(data), hashlib.sha256(data).hexdigest())


async def test_close_handler_fires_once_on_an_idle_disconnect(client: RelayClient) -> None:
    """A pulled cable must be noticed while idle, not only at the next call."""
    seen: list[str] = []
    closed = asyncio.Event()

    def on_close(err: RelayError) -> None:
        seen.append(err.code)
        closed.set()

    client.add_close_handler(on_close)
    with pytest.raises(RelayError):
        await client.fault("drop_connection")
    await asyncio.wait_for(closed.wait(), 5)
    assert seen == [DISCONNECTED]
    late: list[str] = []
    client.add_close_handler(lambda err: late.append(err.code))  # after the fact: at once
    await client.close()
    assert seen == [DISCONNECTED] and late == [DISCONNECTED]


async def test_in_process_servers_are_cancelled_at_exit(backend: FakeBackend) -> None:
    """An app that exits while an in-process client is open leaves no pending server task."""
    from inspector.relay.server import _in_process_spawner, close_in_process_servers

    client = await connect_in_process(backend, TOKEN)
    assert not _in_process_spawner.is_idle()
    await close_in_process_servers()
    assert _in_process_spawner.is_idle()
    with pytest.raises(RelayError):  # its server is gone: calls fail, never hang
        await asyncio.wait_for(client.ping(), 5)
    await client.close()
