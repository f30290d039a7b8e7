from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from inspector.relay.client import RelayClient
from inspector.relay.server import connect_in_process
from tests.relay.fakes import TOKEN, FakeBackend, raw_connection


@pytest.fixture
def backend() -> FakeBackend:
    return FakeBackend()


@pytest.fixture(params=["frame-protocol", "stream-reader"])
async def client(
    request: pytest.FixtureRequest, backend: FakeBackend
) -> AsyncIterator[RelayClient]:
    """A connected client over both receive paths (FrameProtocol and asyncio streams)."""
    if request.param == "frame-protocol":
        c = await connect_in_process(backend, TOKEN)
    else:
        reader, writer, _ = await raw_connection(backend)
        c = await RelayClient.connect(reader, writer, TOKEN)
    yield c
    await c.close()
