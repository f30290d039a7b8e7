"""The Python relay client against the Java relay core (HostMain + fake platform).

The same Java classes run in the APK, so these check the phone relay's protocol behaviour
from the desktop's side without a phone.
"""

from __future__ import annotations

import asyncio
import hashlib

import pytest

from inspector.protocol.bundle import (
    Bundle,
    BundleArray,
    Double,
    FileDescriptorHandle,
    Int,
    IntArray,
    Long,
    PendingIntentHandle,
    StringArray,
    Unsupported,
)
from inspector.relay.api import AUTH_FAILED, NOT_FOUND, SECURITY, UNKNOWN_OP, RelayError, StreamEnd
from inspector.relay.client import RelayClient
from inspector.relay.codec import decode_bundle
from inspector.relay.frames import FrameType, encode_frame, read_frame
from inspector.relay.hello import hello_args
from tests.relay_apk.host_jvm import HostRelayProcess as HostRelay

pytestmark = pytest.mark.java

AUTHORITY = "com.example.fakeprovider.clawseed.tools"
LARGE_FILE = bytes(ord("a") + i % 26 for i in range(300_000))


async def test_hello_reports_the_relay_identity(host_relay: HostRelay) -> None:
    client = await RelayClient.open_tcp(host_relay.host, host_relay.port, host_relay.token)
    try:
        info = client.hello_info
        assert info.protocol_version == 1
        assert info.caller_package == "org.cetp.inspector.relay"
        assert {"call", "read_file", "discover", "bind_transact"} <= set(info.capabilities)
        assert info.device["sdk_int"] == 34
        assert isinstance(await client.ping(), int)
    finally:
        await client.close()


async def test_wrong_token_is_refused(host_relay: HostRelay) -> None:
    with pytest.raises(RelayError) as err:
        await RelayClient.open_tcp(host_relay.host, host_relay.port, "wrong-" + host_relay.token)
    assert err.value.code == AUTH_FAILED


async def test_call_with_typed_bundles_both_ways(host_relay: HostRelay) -> None:
    client = await RelayClient.open_tcp(host_relay.host, host_relay.port, host_relay.token)
    try:
        extras = Bundle(
            n=Int(5), l=Long(5), d=Double(0.25), flag=True, ints=IntArray([1, 2]),
            names=StringArray(["a", None]), inner=Bundle(x="y"),
            many=BundleArray([Bundle(k=Int(1)), None]), raw=b"\x00\xff",
        )
        reply = await client.call(AUTHORITY, "echo", extras, arg="hello")
        assert reply is not None
        assert reply["extras"] == extras
        assert type(reply["extras"]["n"]) is Int and type(reply["extras"]["l"]) is Long
        assert reply["arg"] == "hello"
        assert reply["unsupported"] == Unsupported("android.graphics.Bitmap")
        negotiated = await client.call(AUTHORITY, "negotiate", Bundle(
            consumer_versions=IntArray([2, 1]), consumer_capabilities='["large_results"]'))
        assert negotiated is not None and negotiated["status"] == "success"
        assert negotiated["protocol_version"] == Int(2)
        assert await client.call(AUTHORITY, "null_reply", None) is None
        with pytest.raises(RelayError) as err:
            await client.call(AUTHORITY, "forbidden", None)
        assert err.value.code == SECURITY
        with pytest.raises(RelayError) as err:
            await client.call("no.such.authority", "list_tools", None)
        assert err.value.code == NOT_FOUND
    finally:
        await client.close()


async def test_streamed_file_arrives_whole_with_its_digest(host_relay: HostRelay) -> None:
    client = await RelayClient.open_tcp(host_relay.host, host_relay.port, host_relay.token)
    try:
        reply = await client.call(AUTHORITY, "large_result", None)
        assert reply is not None
        fd = reply["result_fd"]
        assert isinstance(fd, FileDescriptorHandle) and fd.size == len(LARGE_FILE)
        data = bytearray()
        end: StreamEnd | None = None
        chunks = 0
        async for item in client.read_file(fd.id, max_bytes=1 << 20, chunk_size=65_536):
            if isinstance(item, StreamEnd):
                end = item
            else:
                chunks += 1
                data += item
        assert bytes(data) == LARGE_FILE
        assert chunks == 5
        assert end == StreamEnd(len(LARGE_FILE), hashlib.sha256(LARGE_FILE).hexdigest())
        assert await client.close_handle(fd.id) is True
        assert await client.close_handle(fd.id) is False
    finally:
        await client.close()


async def test_pending_intent_and_extension_ops(host_relay: HostRelay) -> None:
    client = await RelayClient.open_tcp(host_relay.host, host_relay.port, host_relay.token)
    try:
        reply = await client.call(AUTHORITY, "needs_approval", None)
        assert reply is not None
        pi = reply["resolution"]
        assert isinstance(pi, PendingIntentHandle)
        assert pi.immutable is True and pi.targets_activity is True
        result = await client.launch_pending_intent(pi.id, timeout_ms=5_000)
        assert result.ok and result.data == Bundle(approved=True,
                                                   target="com.example.fakeprovider.Approve")
        manifest = await client.bind_transact(
            "com.example.fakeextension", "org.ethereumphone.andyclaw.EXTENSION_SERVICE",
            "org.ethereumphone.andyclaw.IExtension", 1, [])
        assert manifest.exception is None and manifest.reply is not None
        assert manifest.reply.startswith("[{")
        packages = await client.discover()
        assert {p["package"] for p in packages} == {"com.example.fakeprovider",
                                                    "com.example.fakeextension"}
    finally:
        await client.close()


async def test_unknown_op_is_refused_and_the_connection_lives(host_relay: HostRelay) -> None:
    reader, writer = await asyncio.open_connection(host_relay.host, host_relay.port)
    try:
        writer.write(encode_frame(FrameType.REQUEST, 1, Bundle(
            op="hello", args=hello_args(host_relay.token, "pytest", False))))
        writer.write(encode_frame(FrameType.REQUEST, 2, Bundle(op="load_dex", args=Bundle())))
        writer.write(encode_frame(FrameType.REQUEST, 3, Bundle(op="ping", args=Bundle())))
        await writer.drain()
        frames = [await asyncio.wait_for(read_frame(reader), 10) for _ in range(3)]
        by_id = {f.request_id: f for f in frames if f is not None}
        assert by_id[1].type is FrameType.RESPONSE
        assert by_id[2].type is FrameType.ERROR
        assert decode_bundle(by_id[2].payload)["code"] == UNKNOWN_OP
        assert by_id[3].type is FrameType.RESPONSE
    finally:
        writer.close()
        await writer.wait_closed()
