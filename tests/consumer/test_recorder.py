"""Exchanges are recorded for every call, serialisable, with sizes, timings and listeners."""

from __future__ import annotations

import json

from inspector.consumer.clock import FakeClock, SystemClock
from inspector.consumer.recorder import Recorder, encoded_size
from inspector.protocol.bundle import Bundle, Int, Long, StringArray, bundle_to_jsonable
from inspector.protocol.bundle import from_jsonable as typed_from_json
from inspector.protocol.exchange import Exchange, ExchangeKind, ExchangeStatus
from tests.consumer.factories import v2_rig


def test_encoded_size_matches_the_relay_codec_layout() -> None:
    assert encoded_size(None) == 1
    assert encoded_size("ab") == 1 + 4 + 2
    assert encoded_size(Int(1)) == 5 and encoded_size(Long(1)) == 9
    assert encoded_size(StringArray(["a", None])) == 1 + 4 + (4 + 1) + 4
    # Bundle: tag, count, then key (len + bytes) and the value with its tag
    assert encoded_size(Bundle(k=Int(7))) == 1 + 4 + (4 + 1) + 5


def test_listeners_see_start_and_finish_and_can_unsubscribe() -> None:
    rec = Recorder(device="virtual")
    seen: list[tuple[str, ExchangeStatus]] = []
    remove = rec.add_listener(lambda x: seen.append((x.method, x.status)))
    x = rec.start(ExchangeKind.CETP, "auth", "list_tools", request=Bundle(a="b"))
    rec.finish(x, ExchangeStatus.SUCCESS, response=Bundle(status="success"))
    assert seen == [("list_tools", ExchangeStatus.PENDING), ("list_tools", ExchangeStatus.SUCCESS)]
    assert x.device == "virtual" and x.request_bytes > 0 and x.response_bytes > 0
    assert x.duration_ms is not None and x.duration_ms >= 0
    remove()
    rec.start(ExchangeKind.CETP, "auth", "negotiate")
    assert len(seen) == 2


def test_a_failing_listener_does_not_break_recording() -> None:
    rec = Recorder()

    def boom(_: Exchange) -> None:
        raise RuntimeError("view crashed")

    rec.add_listener(boom)
    x = rec.start(ExchangeKind.RELAY, "dev", "ping")
    assert rec.exchanges == [x]


def test_recorder_is_bounded() -> None:
    rec = Recorder(max_exchanges=3)
    for i in range(5):
        rec.start(ExchangeKind.RELAY, "dev", f"op{i}")
    assert [x.method for x in rec.exchanges] == ["op2", "op3", "op4"]


async def test_a_full_session_is_recorded_and_serialisable() -> None:
    rig = v2_rig()
    await rig.session.get_provider_info()
    ex = await rig.session.execute_tool("delete_alert", {"alert_id": "a"})
    await rig.session.launch_resolution(ex)
    op = await rig.session.execute_tool("sync_portfolio", {})
    await rig.session.wait_operation(op)
    f = await rig.session.execute_tool("export_history", {})
    (await rig.session.fetch_file(f)).discard()
    failed = [(x.method, f.rule_id) for x in rig.recorder.exchanges for f in x.findings
              if not f.ok]
    assert failed == []  # a conforming provider yields no failed finding anywhere
    methods = [x.method for x in rig.recorder.exchanges]
    assert methods[:3] == ["negotiate", "get_provider_info", "list_tools"]
    assert "launch_pending_intent" in methods and "read_file" in methods
    assert methods.count("get_operation") == 3
    for x in rig.recorder.exchanges:
        assert x.status != ExchangeStatus.PENDING
        assert x.finished_ms is not None and x.finished_ms >= x.started_ms
        restored = Exchange.model_validate_json(x.model_dump_json())
        assert restored.id == x.id and restored.findings == x.findings
    first = rig.recorder.exchanges[0]
    typed = typed_from_json(first.request)
    assert bundle_to_jsonable(typed) == first.request  # loss-free typed form
    assert json.loads(first.model_dump_json())["request"]["t"] == "Bundle"
    # a resume and the polls belong to their execution
    for x in rig.recorder.exchanges:
        if x.method in ("get_operation",):
            assert x.request_id == op.request_id and x.parent_id == op.exchange_ids[0]


async def test_fake_clock_records_sleeps_and_system_clock_moves() -> None:
    clock = FakeClock(start_ms=1000)
    await clock.sleep_ms(250)
    assert clock.now_ms() == 1250 and clock.sleeps == [250]
    real = SystemClock()
    assert real.now_ms() > 1_700_000_000_000
    await real.sleep_ms(0)
