"""execute_tool: envelopes, size limits, retries with one request_id, outputs."""

from __future__ import annotations

import json
import uuid

from inspector.consumer import errors as cerr
from inspector.consumer.execution import ExecState
from inspector.consumer.options import EngineOptions
from inspector.protocol.bundle import Int, Long
from inspector.protocol.exchange import ExchangeStatus
from tests.consumer.factories import v2_rig


def failed_rules(rig) -> list[str]:
    return [f.rule_id for x in rig.recorder.exchanges for f in x.findings if not f.ok]


async def test_execute_envelope() -> None:
    rig = v2_rig(EngineOptions(deadline_ms=5_000))
    ex = await rig.session.execute_tool("get_quote", {"symbol": "ACME"})
    assert ex.state == ExecState.SUCCEEDED and ex.value == {"price": 101.5}
    extras = rig.provider.calls("execute_tool")[0]
    assert isinstance(extras["protocol_version"], Int) and extras["protocol_version"] == 2
    assert str(uuid.UUID(extras["request_id"])) == extras["request_id"] == ex.request_id
    assert isinstance(extras["deadline_at_ms"], Long)
    assert extras["deadline_at_ms"] == rig.clock.now_ms() + 5_000
    assert extras["tool_name"] == "get_quote"
    assert json.loads(extras["args"]) == {"symbol": "ACME"}
    assert "resume_token" not in extras
    assert [f.rule_id for f in ex.output_findings if f.ok] == ["result.output_schema"]


async def test_args_over_max_request_bytes_are_refused_before_sending() -> None:
    rig = v2_rig()
    # 40 000 characters but 80 000+ UTF-8 bytes: the limit is on bytes
    ex = await rig.session.execute_tool("get_quote", {"symbol": "é" * 40_000})
    assert ex.state == ExecState.REFUSED
    assert "max_request_bytes 65536" in ex.message
    assert rig.provider.calls("execute_tool") == []
    refused = rig.recorder.by_id(ex.exchange_ids[-1])
    assert refused.status == ExchangeStatus.REFUSED
    assert refused.error_code == cerr.REQUEST_TOO_LARGE


async def test_args_just_under_the_limit_are_sent() -> None:
    rig = v2_rig()
    overhead = len(json.dumps({"symbol": ""}, separators=(",", ":")))
    ex = await rig.session.execute_tool("get_quote", {"symbol": "a" * (65536 - overhead)})
    assert ex.args_bytes == 65536
    assert len(rig.provider.calls("execute_tool")) == 1


async def test_invalid_json_args_are_refused() -> None:
    rig = v2_rig()
    ex = await rig.session.execute_tool("get_quote", '{"symbol": ')
    assert ex.state == ExecState.REFUSED
    assert rig.provider.calls("execute_tool") == []


async def test_retryable_error_waits_retry_after_and_keeps_request_id() -> None:
    rig = v2_rig(execute_errors=[{"code": "RATE_LIMITED", "retryable": True,
                                  "retry_after_ms": 1500}])
    ex = await rig.session.execute_tool("create_alert", {"symbol": "ACME", "price": 1})
    assert ex.state == ExecState.SUCCEEDED
    assert rig.clock.sleeps == [1500]
    assert [a.outcome for a in ex.attempts] == ["error:RATE_LIMITED", "success"]
    assert ex.attempts[1].waited_ms == 1500
    assert {e["request_id"] for e in rig.provider.calls("execute_tool")} == {ex.request_id}


async def test_non_retryable_error_is_not_retried() -> None:
    rig = v2_rig(execute_errors=[{"code": "PERMISSION_DENIED", "retryable": False}])
    ex = await rig.session.execute_tool("get_quote", {"symbol": "X"})
    assert ex.state == ExecState.FAILED
    assert len(rig.provider.calls("execute_tool")) == 1
    assert rig.clock.sleeps == []


async def test_argument_error_marked_retryable_is_flagged_and_not_looped() -> None:
    rig = v2_rig(execute_errors=[{"code": "INVALID_ARGS", "retryable": True}] * 3)
    ex = await rig.session.execute_tool("get_quote", {"symbol": "X"})
    assert ex.state == ExecState.FAILED
    assert len(rig.provider.calls("execute_tool")) == 1
    assert "error.retryable_matches" in failed_rules(rig)


async def test_long_retry_after_is_left_to_the_user() -> None:
    rig = v2_rig(EngineOptions(max_auto_wait_ms=10_000),
                 execute_errors=[{"code": "UNAVAILABLE", "retryable": True,
                                  "retry_after_ms": 600_000}])
    ex = await rig.session.execute_tool("get_quote", {"symbol": "X"})
    assert ex.state == ExecState.FAILED
    assert "retry the same execution after 600000 ms" in ex.message
    assert rig.clock.sleeps == []
    again = await rig.session.run(ex)  # the user retries: same id
    assert again.state == ExecState.SUCCEEDED
    assert {e["request_id"] for e in rig.provider.calls("execute_tool")} == {ex.request_id}


async def test_auto_retries_are_bounded() -> None:
    rig = v2_rig(EngineOptions(max_auto_retries=2),
                 execute_errors=[{"code": "UNAVAILABLE", "retryable": True}] * 5)
    ex = await rig.session.execute_tool("get_quote", {"symbol": "X"})
    assert ex.state == ExecState.FAILED
    assert len(ex.attempts) == 3


async def test_lost_reply_on_mutation_is_retried_with_same_id() -> None:
    rig = v2_rig(lose_replies=1)
    ex = await rig.session.execute_tool("create_alert", {"symbol": "ACME", "price": 3})
    assert ex.state == ExecState.SUCCEEDED
    assert [a.outcome for a in ex.attempts] == ["transport:TIMEOUT", "success"]
    assert rig.provider.effects == [(ex.request_id, "create_alert")]  # exactly once
    assert {e["request_id"] for e in rig.provider.calls("execute_tool")} == {ex.request_id}


async def test_lost_reply_without_auto_retry_is_outcome_unknown() -> None:
    rig = v2_rig(lose_replies=1)
    ex = await rig.session.execute_tool("create_alert", {"symbol": "A", "price": 3},
                                        auto_retry=False)
    assert ex.state == ExecState.OUTCOME_UNKNOWN
    assert "SAME request id" in ex.message
    ex = await rig.session.run(ex)
    assert ex.state == ExecState.SUCCEEDED
    assert len(rig.provider.effects) == 1


async def test_new_execution_only_when_asked() -> None:
    rig = v2_rig()
    first = await rig.session.execute_tool("create_alert", {"symbol": "A", "price": 3})
    second = await rig.session.run(first.again())
    assert second.request_id != first.request_id
    assert len(rig.provider.effects) == 2


async def test_output_schema_violation_is_reported() -> None:
    rig = v2_rig(bad_output=True)
    ex = await rig.session.execute_tool("get_quote", {"symbol": "X"})
    assert ex.state == ExecState.SUCCEEDED
    assert "does not match output_schema" in ex.message
    assert [f.path for f in ex.output_findings if not f.ok] == ["/price"]
    assert "result.output_schema" in failed_rules(rig)


async def test_wrong_request_id_echo_is_malformed() -> None:
    rig = v2_rig(echo_wrong_request_id=True)
    ex = await rig.session.execute_tool("get_quote", {"symbol": "X"})
    assert ex.state == ExecState.MALFORMED
    x = rig.recorder.by_id(ex.exchange_ids[-1])
    assert x.status == ExchangeStatus.MALFORMED
    assert x.findings and x.findings[0].rule_id == "reply.echo"


async def test_unknown_error_code_is_flagged() -> None:
    rig = v2_rig(execute_errors=[{"code": "FLUX_CAPACITOR", "retryable": False}])
    ex = await rig.session.execute_tool("get_quote", {"symbol": "X"})
    assert ex.state == ExecState.FAILED
    assert "error.known_code" in failed_rules(rig)


async def test_execution_listener_sees_state_changes() -> None:
    rig = v2_rig()
    states: list[str] = []
    remove = rig.session.add_execution_listener(lambda e: states.append(e.state.value))
    await rig.session.execute_tool("get_quote", {"symbol": "X"})
    assert states == ["running", "succeeded"]
    remove()
    await rig.session.execute_tool("get_quote", {"symbol": "X"})
    assert len(states) == 2


async def test_untrusted_error_text_is_bounded_and_escaped_in_messages() -> None:
    rig = v2_rig(execute_errors=[{"code": "PERMISSION_DENIED", "retryable": False,
                                  "message": "\x1b[31mdenied " + "x" * 5000}])
    ex = await rig.session.execute_tool("get_quote", {"symbol": "X"})
    assert "\x1b" not in ex.message
    assert len(ex.message) < 700 and "[5012 characters]" in ex.message
    assert ex.error.error_message.startswith("\x1b")  # the raw value is kept as data


async def test_missing_echo_is_a_finding_not_a_failure() -> None:
    rig = v2_rig()
    await rig.session.list_tools()
    real = rig.provider

    class NoEcho:
        def call(self, method, extras, arg):
            reply = real.call(method, extras, arg)
            reply.pop("request_id", None)
            return reply

    rig.relay.providers[real.authority] = NoEcho()
    ex = await rig.session.execute_tool("get_quote", {"symbol": "X"})
    assert ex.state == ExecState.SUCCEEDED
    assert "reply.echo" in failed_rules(rig)
