"""Replies that break the protocol become MALFORMED exchanges and readable errors."""

from __future__ import annotations

from typing import Any

import pytest

from inspector.consumer import errors as cerr
from inspector.consumer.execution import ExecState
from inspector.protocol.bundle import Bundle, Int
from inspector.protocol.exchange import ExchangeStatus
from tests.consumer.factories import v1_rig, v2_rig
from tests.consumer.fakes import V1_AUTHORITY


class Scripted:
    """A provider answering every call with one fixed reply."""

    def __init__(self, reply: Any) -> None:
        self.reply = reply

    def call(self, method: str, extras: Bundle | None, arg: str | None) -> Any:
        return self.reply


@pytest.mark.parametrize(("reply", "needle"), [
    (None, "null Bundle"),
    (Bundle(status="maybe", data="{}"), "neither"),
    (Bundle(status="success", data="{not json"), "not valid JSON"),
    (Bundle(status="success"), "data"),
])
async def test_v1_malformed_replies(reply: Any, needle: str) -> None:
    rig = v1_rig()
    rig.relay.providers[V1_AUTHORITY] = Scripted(reply)
    with pytest.raises(cerr.MalformedReply, match=needle):
        await rig.session.list_tools()
    x = rig.recorder.exchanges[-1]
    assert x.status == ExchangeStatus.MALFORMED and x.findings and not x.findings[0].ok


async def test_v1_list_with_wrong_shape_is_malformed() -> None:
    rig = v1_rig()
    rig.relay.providers[V1_AUTHORITY] = Scripted(Bundle(status="success",
                                                        data='{"tools": "none"}'))
    with pytest.raises(cerr.MalformedReply, match="tools"):
        await rig.session.list_tools()
    assert rig.recorder.exchanges[-1].status == ExchangeStatus.MALFORMED


async def test_v2_execute_null_bundle_is_malformed() -> None:
    rig = v2_rig()
    await rig.session.list_tools()
    rig.relay.providers[rig.provider.authority] = Scripted(None)
    ex = await rig.session.execute_tool("get_quote", {"symbol": "X"})
    assert ex.state == ExecState.MALFORMED and "null Bundle" in ex.message
    assert len(ex.attempts) == 1  # not retried


async def test_v2_error_without_retryable_is_malformed() -> None:
    rig = v2_rig()
    await rig.session.list_tools()
    rid_echo = Bundle(status="error", protocol_version=Int(2), error_code="UNAVAILABLE",
                      error_message="down")
    rig.relay.providers[rig.provider.authority] = Scripted(rid_echo)
    ex = await rig.session.execute_tool("get_quote", {"symbol": "X"})
    assert ex.state == ExecState.MALFORMED and "retryable" in ex.message


async def test_v2_unknown_result_kind_is_malformed() -> None:
    rig = v2_rig()
    await rig.session.list_tools()
    ex = rig.session.new_execution("get_quote", {"symbol": "X"})
    rig.relay.providers[rig.provider.authority] = Scripted(Bundle(
        status="success", protocol_version=Int(2), request_id=ex.request_id,
        data='{"kind": "carrier_pigeon"}'))
    ex = await rig.session.run(ex)
    assert ex.state == ExecState.MALFORMED and "kind" in ex.message
    assert rig.recorder.by_id(ex.exchange_ids[-1]).status == ExchangeStatus.MALFORMED
