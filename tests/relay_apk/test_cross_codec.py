"""Property test across implementations: any Bundle the Python codec writes, the Java core
decodes, hands to a provider (the fake platform's `echo`) and re-encodes unchanged."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.protocol.bundle import (
    Bundle,
    BundleArray,
    Double,
    Int,
    IntArray,
    Long,
    StringArray,
    to_jsonable,
)
from inspector.relay.client import RelayClient
from tests.relay_apk.host_jvm import HostRelayProcess

pytestmark = pytest.mark.java

AUTHORITY = "com.example.fakeprovider.clawseed.tools"

keys = st.text(max_size=12)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**31), 2**31 - 1).map(Int),
    st.integers(-(2**63), 2**63 - 1).map(Long),
    st.floats(allow_nan=False).map(Double),
    st.text(max_size=40),
    st.binary(max_size=64),
    st.lists(st.integers(-(2**31), 2**31 - 1), max_size=8).map(IntArray),
    st.lists(st.none() | st.text(max_size=10), max_size=6).map(StringArray),
)
bundles = st.recursive(
    st.dictionaries(keys, scalars, max_size=6).map(Bundle),
    lambda inner: st.dictionaries(
        keys,
        scalars | inner | st.lists(st.none() | inner, max_size=3).map(BundleArray),
        max_size=5,
    ).map(Bundle),
    max_leaves=30,
)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(extras=bundles)
def test_java_core_round_trips_any_bundle(host_relay: HostRelayProcess, extras: Bundle) -> None:
    async def echo() -> Bundle | None:
        client = await RelayClient.open_tcp(host_relay.host, host_relay.port, host_relay.token,
                                            events=False)
        try:
            return await client.call(AUTHORITY, "echo", extras)
        finally:
            await client.close()

    reply = asyncio.run(echo())
    assert reply is not None
    # the JSON text carries every Java type and the sign of zero: Int vs Long or -0.0 vs 0.0
    # would show
    assert canonical(reply["extras"]) == canonical(extras)


def canonical(b: Bundle) -> str:
    return json.dumps(to_jsonable(b), sort_keys=True)
