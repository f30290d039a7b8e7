"""Fixtures for the device-layer tests: a private real adb server and fake phones.

The adb server runs on a free private port (never 5037), exported through
ANDROID_ADB_SERVER_PORT so every adb client in the test process uses it, and is killed at
the end of the session.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import adbutils
import pytest

from inspector.device.adb_server import AdbEndpoint, ensure_server, kill_server
from inspector.device.shipped_relay import ShippedRelay, load_shipped_relay, resources_dir
from tests.device.fakephone import FakePhone, free_port
from tests.device.tiny_relay import PhoneRelay, stand_in_relay
from tests.relay_apk.host_jvm import JavaToolError, compile_core

T = TypeVar("T")


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from sync code, even while a loop runs in this thread
    (tests/ui keeps a qasync loop marked running): on a thread of its own."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


@pytest.fixture(scope="session")
def adb_endpoint() -> Iterator[AdbEndpoint]:
    old = os.environ.get("ANDROID_ADB_SERVER_PORT")
    endpoint = AdbEndpoint(port=free_port())
    os.environ["ANDROID_ADB_SERVER_PORT"] = str(endpoint.port)
    run_async(ensure_server(endpoint))
    try:
        yield endpoint
    finally:
        run_async(kill_server(endpoint))
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


@pytest.fixture
def shipped(tmp_path_factory: pytest.TempPathFactory) -> ShippedRelay:
    """The real shipped relay when `resources/relay/relay.json` exists, else a stand-in."""
    if (resources_dir() / "relay" / "relay.json").exists():
        return load_shipped_relay()  # a broken shipped relay must fail the tests
    return stand_in_relay(tmp_path_factory.mktemp("relay"))


@pytest.fixture
async def phone_relay(phone: FakePhone) -> AsyncIterator[PhoneRelay]:
    relay = PhoneRelay(phone)
    try:
        yield relay
    finally:
        phone.call(relay.close())


async def poll_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll a blocking check (run in a thread) until it holds; fail after `timeout`."""
    deadline = time.monotonic() + timeout
    while not await asyncio.to_thread(predicate):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(0.05)


@pytest.fixture(scope="session")
def relay_core_classes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The relay's Java core + host platform compiled for the host JVM (no JUnit tests).

    The Java-relay fake-phone tests serve `localabstract:` from these classes.
    """
    for tool in ("javac", "java"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is not installed: run `./dev setup --system` (JDK 17)")
    try:
        return compile_core(tmp_path_factory.mktemp("relay-core"), with_tests=False)
    except JavaToolError as e:
        pytest.fail(str(e))
