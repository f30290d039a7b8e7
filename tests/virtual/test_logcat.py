"""The virtual device's log channel (`logcat` op, `log` events) and its `crash` fault."""

from __future__ import annotations

from typing import Any

import pytest

from inspector.protocol.bundle import Bundle, Int, Long
from inspector.protocol.logs import detect_crash, line_from_bundle
from inspector.relay.api import BAD_ARGS, IPC_FAILED, NOT_FOUND, RelayError
from inspector.virtual.device import VirtualDevice
from inspector.virtual.inprocess import connect_virtual_device
from tests.virtual.phones import V2, FakeConnection

PRICE = "com.example.pricealerts"


async def dump(device: VirtualDevice, **args: Any) -> Bundle:
    return await device.handle("logcat", Bundle(args), FakeConnection())


async def test_a_provider_call_is_logged_with_pid_uid_level_and_tag(v2: V2, device: VirtualDevice,
                                                                    ) -> None:
    r = await dump(device)
    lines = [line_from_bundle(b) for b in r["lines"]]
    mine = [ln for ln in lines if ln is not None and ln.package == PRICE]
    assert mine, "negotiate logged nothing"
    first = mine[0]
    app = device.apps[PRICE]
    assert (first.level, first.tag) == ("D", "CetpProvider")
    assert first.message.startswith("call negotiate from uid ")
    assert first.uid == app.uid and first.pid == device.logcat.pid_of(app)
    assert int(r["next_seq"]) >= len(r["lines"])


async def test_dump_after_a_sequence_and_bounded(device: VirtualDevice) -> None:
    app = device.apps[PRICE]
    for i in range(30):
        device.logcat.log(app, "I", "T", f"line {i}")
    r = await dump(device, max_lines=Int(5))
    assert [b["message"] for b in r["lines"]] == [f"line {i}" for i in range(25, 30)]
    seq = int(r["lines"][0]["seq"])
    r2 = await dump(device, after_seq=Long(seq))
    assert [b["message"] for b in r2["lines"]] == [f"line {i}" for i in range(26, 30)]


async def test_the_ring_buffer_drops_old_lines_and_says_how_many(device: VirtualDevice) -> None:
    app = device.apps[PRICE]
    device.logcat.lines = type(device.logcat.lines)(maxlen=10)
    for i in range(25):
        device.logcat.log(app, "I", "T", f"line {i}")
    r = await dump(device, after_seq=Long(0))
    assert len(r["lines"]) == 10 and int(r["dropped"]) == 15


@pytest.mark.parametrize("args", [
    {"after_seq": "x"}, {"after_seq": Long(-1)}, {"max_lines": Int(0)},
    {"max_lines": Int(5000)}, {"follow": "yes"}])
async def test_bad_logcat_args(device: VirtualDevice, args: dict[str, Any]) -> None:
    with pytest.raises(RelayError) as exc:
        await dump(device, **args)
    assert exc.value.code == BAD_ARGS


async def test_follow_streams_log_events_to_that_connection_only(device: VirtualDevice) -> None:
    follower, other = FakeConnection(), FakeConnection()
    r = await device.handle("logcat", Bundle(follow=True), follower)
    assert r["following"] is True
    device.logcat.log(device.apps[PRICE], "W", "Tag", "hello")
    assert [e["message"] for e in follower.events if e["event"] == "log"] == ["hello"]
    assert other.events == []
    follower.closed = True  # a closed follower is forgotten
    device.logcat.log(device.apps[PRICE], "W", "Tag", "again")
    assert len(follower.events) == 1


async def test_log_events_reach_a_socket_client_before_the_reply(device: VirtualDevice) -> None:
    client = await connect_virtual_device(device)
    events: list[Bundle] = []
    client.add_event_handler(events.append)
    try:
        await client.logcat(follow=True)
        r = await V2(client).negotiate()
        at_reply = [e for e in events if e.get("event") == "log"]
        assert r["status"] == "success"
        # the provider's line arrived before its reply (same connection, in order)
        assert any(e["message"].startswith("call negotiate") for e in at_reply)
    finally:
        await client.close()


async def test_crash_fault_kills_the_process_with_a_java_trace(v2: V2, device: VirtualDevice,
                                                              ) -> None:
    app = device.apps[PRICE]
    pid_before = device.logcat.pid_of(app)
    await device.handle("fault", Bundle(kind="crash", package=PRICE,
                                        exception="java.lang.NullPointerException",
                                        message="alerts is null"), FakeConnection())
    with pytest.raises(RelayError) as exc:
        await v2.method("list_tools")
    assert exc.value.code == IPC_FAILED and "DeadObjectException" in exc.value.message
    lines = [line_from_bundle(b) for b in (await dump(device))["lines"]]
    crash = detect_crash([ln for ln in lines if ln is not None], PRICE)
    assert crash is not None and crash.kind == "crash" and crash.pid == pid_before
    assert crash.exception == "java.lang.NullPointerException: alerts is null"
    assert any(ln is not None and ln.tag == "ActivityManager" and "has died" in ln.message
               for ln in lines)
    assert not app.process_running
    # fires once: the next call starts a fresh process with a new pid
    r = await v2.negotiate()
    assert r["status"] == "success" and device.logcat.pid_of(app) != pid_before


async def test_crash_fault_args(device: VirtualDevice) -> None:
    with pytest.raises(RelayError) as exc:
        await device.handle("fault", Bundle(kind="crash"), FakeConnection())
    assert exc.value.code == BAD_ARGS
    with pytest.raises(RelayError) as exc:
        await device.handle("fault", Bundle(kind="crash", package="no.such"), FakeConnection())
    assert exc.value.code == NOT_FOUND
