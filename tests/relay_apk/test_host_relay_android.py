"""The Java relay core over the wire, with the fake platform playing Android rules
(AndroidRules.java): a relay whose manifest lacks ACCESS_TOOLS gets SECURITY from the
protected provider, as on a phone; the API level shows in the hello; null binding follows
the API level."""

from __future__ import annotations

import pytest

from inspector.relay.api import IPC_FAILED, SECURITY, RelayError
from inspector.relay.client import RelayClient
from tests.relay_apk.host_jvm import HostRelayProcess as HostRelay

pytestmark = pytest.mark.java

AUTHORITY = "com.example.fakeprovider.clawseed.tools"
EXTENSION = "com.example.fakeextension"
NULL_BIND = "com.example.fakeextension.NULL_BIND"
ACCESS_TOOLS = "com.clawseed.permission.ACCESS_TOOLS"
DESCRIPTOR = "org.ethereumphone.andyclaw.IExtension"


@pytest.fixture(params=[
    ["--android-api", "26", "--without-permission", ACCESS_TOOLS],
    ["--android-api", "34"],
], ids=["api26-relay-before-issue10", "api34-shipped-relay"])
def host_relay_args(request: pytest.FixtureRequest) -> list[str]:
    return list(request.param)


async def test_the_protected_provider_and_null_binding_follow_the_rules(
        host_relay: HostRelay, host_relay_args: list[str]) -> None:
    api = int(host_relay_args[1])
    lacks_access_tools = "--without-permission" in host_relay_args
    client = await RelayClient.open_tcp(host_relay.host, host_relay.port, host_relay.token)
    try:
        assert client.hello_info.device["sdk_int"] == api
        if lacks_access_tools:
            with pytest.raises(RelayError) as err:
                await client.call(AUTHORITY, "list_tools", None)
            assert err.value.code == SECURITY
            assert f"does not hold {ACCESS_TOOLS}" in err.value.message
        else:
            reply = await client.call(AUTHORITY, "list_tools", None)
            assert reply is not None and reply["status"] == "success"
        with pytest.raises(RelayError) as bind:
            await client.bind_transact(EXTENSION, NULL_BIND, DESCRIPTOR, 1, [], timeout_ms=300)
        assert bind.value.code == IPC_FAILED  # before 28 after the timeout, "likely" null
        assert "onNullBinding" in bind.value.message
    finally:
        await client.close()
