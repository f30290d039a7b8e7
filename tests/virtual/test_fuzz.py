"""Garbage in, structured answers out: the device and its providers never crash."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.protocol.bundle import Bundle, Int, IntArray, Long, StringArray
from inspector.relay.api import RelayError
from inspector.relay.hello import OPS
from inspector.virtual.device import VirtualDevice
from tests.virtual.phones import BAD_AUTH, FINANCE_AUTH, PRICE_AUTH, FakeConnection

KEYS = st.sampled_from(
    [
        "protocol_version",
        "session_token",
        "request_id",
        "deadline_at_ms",
        "tool_name",
        "args",
        "resume_token",
        "operation_id",
        "consumer_versions",
        "consumer_capabilities",
        "function",
        "params",
        "x",
    ]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**31), 2**31 - 1).map(Int),
    st.integers(-(2**63), 2**63 - 1).map(Long),
    st.text(max_size=40),
    st.sampled_from(['{"symbol":"ACME"}', "{}", "[", '{"rows":3}', "2"]),
    st.lists(st.integers(-5, 5), max_size=4).map(IntArray),
    st.lists(st.text(max_size=5), max_size=3).map(StringArray),
)
VALUES = st.recursive(
    SCALARS, lambda inner: st.dictionaries(KEYS, inner, max_size=4).map(Bundle), max_leaves=10
)
EXTRAS = st.one_of(st.none(), st.dictionaries(KEYS, VALUES, max_size=8).map(Bundle))
METHODS = st.sampled_from(
    [
        "negotiate",
        "list_tools",
        "execute_tool",
        "get_operation",
        "cancel_operation",
        "get_provider_info",
        "execute",
        "bogus",
    ]
)
_LOOP = asyncio.new_event_loop()
_DEVICE: list[VirtualDevice] = []


def on_device(fn: Any, tmp_path_factory: Any) -> None:
    """Run `fn(device)` on one long-lived loop and device (creating one per example is slow)."""
    if not _DEVICE:
        _DEVICE.append(VirtualDevice(tmp_path_factory.mktemp("fuzz")))
    _LOOP.run_until_complete(asyncio.wait_for(fn(_DEVICE[0]), 10))


def teardown_module() -> None:
    if _DEVICE:
        _LOOP.run_until_complete(_DEVICE.pop().aclose())
    _LOOP.close()


AUTHS = st.sampled_from(
    [PRICE_AUTH, FINANCE_AUTH, BAD_AUTH, "com.example.unitconverter.andyclaw.extension"]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(authority=AUTHS, method=METHODS, extras=EXTRAS)
def test_providers_answer_garbage_with_a_bundle(
    authority: str, method: str, extras: Bundle | None, tmp_path_factory: Any
) -> None:
    async def run(device: VirtualDevice) -> None:
        args = Bundle(authority=authority, method=method, arg=None, extras=extras)
        reply = (await device.handle("call", args, FakeConnection()))["reply"]
        assert isinstance(reply, Bundle)
        if "andyclaw" not in authority:
            assert reply["status"] in ("success", "error")
            if reply["status"] == "error":
                assert isinstance(reply["error_code"], str) and reply["error_message"]

    on_device(run, tmp_path_factory)


@settings(max_examples=100, deadline=None)
@given(
    # every whitelisted op except those fuzzed on their own above
    op=st.sampled_from(sorted(OPS - {"ping", "call"})),
    args=st.dictionaries(
        st.sampled_from(
            [
                "package",
                "handle",
                "max_bytes",
                "action",
                "code",
                "kind",
                "ms",
                "resource_id",
                "mode",
                "authority",
                "approve",
                "confirmation_id",
                "descriptor",
                "reply_action",
                "timeout_ms",
            ]
        ),
        VALUES,
        max_size=6,
    ).map(Bundle),
)
def test_ops_with_bad_args_raise_relay_errors(op: str, args: Bundle, tmp_path_factory: Any) -> None:
    async def run(device: VirtualDevice) -> None:
        if op == "broadcast":
            args["timeout_ms"] = Int(10)
        try:
            result = await device.handle(op, args, FakeConnection())
        except RelayError:
            return
        assert isinstance(result, Bundle) or hasattr(result, "__aiter__")

    on_device(run, tmp_path_factory)
