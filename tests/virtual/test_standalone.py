"""`python -m inspector.virtual` serves the device on a real socket in its own process."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import sys
import time
from pathlib import Path

import pytest

from inspector.relay.api import AUTH_FAILED, RelayError
from inspector.relay.client import RelayClient
from inspector.virtual import VirtualDevice, connect_virtual_device
from tests.virtual.phones import PRICE_AUTH, V2, value

PLUGIN = Path(__file__).parent / "plugin_files" / "retry_bug.py"


async def test_standalone_unix_socket_with_plugin(tmp_path: Path) -> None:
    sock = tmp_path / "v.sock"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "inspector.virtual",
        "--listen",
        f"unix:{sock}",
        "--token",
        "s3cret",
        "--state-dir",
        str(tmp_path / "state"),
        "--plugin",
        str(PLUGIN),
        "--confirmation-ttl-ms",
        "1234",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 20)
        assert line.decode().startswith("listening on unix:")
        with pytest.raises(RelayError) as exc:
            await RelayClient.open_unix(str(sock), "wrong")
        assert exc.value.code == AUTH_FAILED
        client = await RelayClient.open_unix(str(sock), "s3cret")
        try:
            assert client.hello_info.device["serial"] == "virtual"
            packages = {p["package"] for p in await client.discover()}
            assert {"com.example.pricealerts", "com.example.bug42"} <= packages
            c = V2(client)
            await c.negotiate()
            assert value(await c.execute("get_quote", {"symbol": "ACME"}))["price"] == 101.25
            asked_ms = int(time.time() * 1000)
            r = await c.execute("create_alert", {"symbol": "ACME", "price": 500})
            assert r["error_code"] == "USER_ACTION_REQUIRED"
        finally:
            await client.close()
    finally:
        proc.terminate()
        assert await asyncio.wait_for(proc.wait(), 10) == 0
    db = tmp_path / "state" / "apps" / "com.example.pricealerts" / "state.sqlite3"
    with contextlib.closing(sqlite3.connect(db)) as conn:
        [(expires_ms,)] = conn.execute("SELECT expires_ms FROM confirmations").fetchall()
    assert 1234 <= expires_ms - asked_ms < 1234 + 10_000  # --confirmation-ttl-ms applied


async def test_standalone_refuses_missing_token(tmp_path: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "inspector.virtual",
        "--listen",
        f"unix:{tmp_path}/x.sock",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={"PATH": ""},
    )
    _, err = await asyncio.wait_for(proc.communicate(), 20)
    assert proc.returncode == 2 and b"--token" in err


async def test_in_process_factory() -> None:
    device = VirtualDevice()
    client = await connect_virtual_device(device)
    try:
        r = await client.call(PRICE_AUTH, "list_tools", None)
        assert json.loads(r["data"])["tools"]
    finally:
        await client.close()
        await device.aclose()
