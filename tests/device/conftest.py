"""Fixtures for the device-layer tests: a private real adb server and fake phones.

The adb server runs on a free private port (never 5037), exported through
ANDROID_ADB_SERVER_PORT so every adb client in the test process uses it, and is killed at
the end of the session.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator

import adbutils
import pytest

from inspector.device.adb_server import AdbEndpoint, ensure_server, kill_server
from tests.device.fakephone import FakePhone, free_port


@pytest.fixture(scope="session")
def adb_endpoint() -> Iterator[AdbEndpoint]:
    old = os.environ.get("ANDROID_ADB_SERVER_PORT")
    endpoint = AdbEndpoint(port=free_port())
    os.environ["ANDROID_ADB_SERVER_PORT"] = str(endpoint.port)
    asyncio.run(ensure_server(endpoint))
    try:
        yield endpoint
    finally:
        asyncio.run(kill_server(endpoint))
        if old is None:
            os.environ.pop("ANDROID_ADB_SERVER_PORT", None)
        else:
            os.environ["ANDROID_ADB_SERVER_PORT"] = old


def connect_phone(endpoint: AdbEndpoint, phone: FakePhone, timeout: float = 5.0) -> str:
    client = adbutils.AdbClient(host=endpoint.host, port=endpoint.port)
    try:
        return client.connect(phone.serial, timeout=timeout)
    except adbutils.AdbTimeout:
        return "timeout"


@pytest.fixture
def phone(adb_endpoint: AdbEndpoint) -> Iterator[FakePhone]:
    """A fake phone in the `device` state, `adb connect`ed to the private server."""
    p = FakePhone().start()
    answer = connect_phone(adb_endpoint, p)
    assert answer.startswith("connected"), answer
    try:
        yield p
    finally:
        adbutils.AdbClient(host=adb_endpoint.host, port=adb_endpoint.port).disconnect(p.serial)
        p.stop()
