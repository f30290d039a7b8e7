"""Connection-level limits of the Java relay core, seen from a raw socket."""

from __future__ import annotations

import asyncio
import time

import pytest

from inspector.protocol.bundle import Bundle
from inspector.relay.api import AUTH_FAILED, BAD_FRAME
from inspector.relay.codec import decode_bundle
from inspector.relay.frames import FrameType, pack_header, read_frame
from tests.relay_apk.host_jvm import HostRelayProcess as HostRelay

pytestmark = pytest.mark.java


@pytest.fixture
def host_relay_args() -> list[str]:
    return ["--hello-timeout-ms", "300"]


async def test_silent_peer_gets_auth_failed_after_the_hello_timeout(host_relay: HostRelay) -> None:
    reader, writer = await asyncio.open_connection(host_relay.host, host_relay.port)
    try:
        start = time.monotonic()
        frame = await asyncio.wait_for(read_frame(reader), 10)
        assert frame is not None and frame.type is FrameType.ERROR and frame.request_id == 0
        assert decode_bundle(frame.payload)["code"] == AUTH_FAILED
        assert 0.25 <= time.monotonic() - start < 5  # the 300 ms timer, not the read backstop
        assert await asyncio.wait_for(reader.read(1), 10) == b""
    finally:
        writer.close()
        await writer.wait_closed()


async def test_oversized_frame_is_refused_from_its_header(host_relay: HostRelay) -> None:
    reader, writer = await asyncio.open_connection(host_relay.host, host_relay.port)
    try:
        writer.write(pack_header(FrameType.REQUEST, 1, 1_048_577))  # no payload follows
        await writer.drain()
        frame = await asyncio.wait_for(read_frame(reader), 10)
        assert frame is not None and frame.type is FrameType.ERROR and frame.request_id == 0
        error = decode_bundle(frame.payload)
        assert error["code"] == BAD_FRAME
        assert isinstance(error, Bundle) and "maximum" in str(error["message"])
        assert await asyncio.wait_for(reader.read(1), 10) == b""
    finally:
        writer.close()
        await writer.wait_closed()
