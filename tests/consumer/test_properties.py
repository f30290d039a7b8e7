"""Property tests: whatever a provider answers, the engine ends in a recorded outcome.

Random and malformed reply Bundles never crash the engine: an execution always ends in a
state with a message, every exchange is finished, and session-level calls raise only the
engine's own `ConsumerError`s.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.consumer import errors as cerr
from inspector.consumer.execution import ExecState
from inspector.protocol.bundle import (
    Bundle,
    Double,
    FileDescriptorHandle,
    Int,
    Long,
    PendingIntentHandle,
    StringArray,
)
from inspector.protocol.exchange import ExchangeStatus
from tests.consumer.factories import v2_rig

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                  max_size=3),
    max_leaves=8,
)
envelopes = st.fixed_dictionaries({}, optional={
    "kind": st.sampled_from(["inline", "file", "x"]), "value": json_values,
    "media_type": st.sampled_from(["application/json", "", "text/csv"]),
    "size_bytes": st.integers(-5, 10**6), "sha256": st.sampled_from(["0" * 64, "zz", ""]),
    "operation_id": st.text(max_size=5), "poll_after_ms": st.integers(-5, 5000),
})
data_text = st.one_of(envelopes.map(json.dumps), json_values.map(json.dumps),
                      st.text(max_size=12))
values = st.one_of(
    st.none(), st.booleans(), st.text(max_size=10), st.integers(-5, 5).map(Int),
    st.integers(-5, 10**6).map(Long), st.floats(allow_nan=False).map(Double),
    st.just(StringArray(["a"])), st.just(PendingIntentHandle("pi-x", "com.example.app", 15)),
    st.just(FileDescriptorHandle("fd-x", 10)),
)
replies = st.one_of(
    st.none(),
    st.builds(
        lambda status, data, extra: Bundle({"status": status, "data": data, **extra}),
        st.sampled_from(["success", "accepted", "error", "weird", ""]),
        data_text,
        st.dictionaries(st.sampled_from(["protocol_version", "request_id", "error_code",
                                         "error_message", "retryable", "retry_after_ms",
                                         "resolution", "resume_token", "result_fd",
                                         "error_details"]), values, max_size=6),
    ),
)


class Scripted:
    def __init__(self, real: Any, reply: Any) -> None:
        self.real, self.reply = real, reply

    def call(self, method: str, extras: Bundle | None, arg: str | None) -> Any:
        if method in ("negotiate", "list_tools"):
            return self.real.call(method, extras, arg)
        return self.reply


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reply=replies)
def test_any_execute_reply_ends_in_a_recorded_outcome(reply: Any) -> None:
    async def run() -> None:
        rig = v2_rig()
        rig.relay.providers[rig.provider.authority] = Scripted(rig.provider, reply)
        ex = await rig.session.execute_tool("get_quote", {"symbol": "X"})
        assert ex.state != ExecState.RUNNING and ex.message
        if ex.state == ExecState.ACCEPTED:
            with contextlib.suppress(cerr.ConsumerError):
                await rig.session.wait_operation(ex)
        assert all(x.status != ExchangeStatus.PENDING for x in rig.recorder.exchanges)
        for x in rig.recorder.exchanges:
            x.model_dump_json()
        ex.model_dump_json()

    asyncio.run(run())


@settings(max_examples=40, deadline=None)
@given(reply=replies)
def test_any_info_reply_is_a_model_or_a_consumer_error(reply: Any) -> None:
    async def run() -> None:
        rig = v2_rig()
        rig.relay.providers[rig.provider.authority] = Scripted(rig.provider, reply)
        try:
            await rig.session.get_provider_info()
        except cerr.ConsumerError as exc:
            assert exc.code and exc.message
        assert all(x.status != ExchangeStatus.PENDING for x in rig.recorder.exchanges)

    asyncio.run(run())
