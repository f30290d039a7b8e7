from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from inspector.relay.client import RelayClient
from inspector.relay.server import connect_in_process
from tests.relay.fakes import TOKEN, FakeBackend


@pytest.fixture
def backend() -> FakeBackend:
    return FakeBackend()


@pytest.fixture
async def client(backend: FakeBackend) -> AsyncIterator[RelayClient]:
    c = await connect_in_process(backend, TOKEN)
    yield c
    await c.close()
