"""Bridges for the tests, driven by the official MCP Python SDK client.

- `stdio_bridge`: `python -m inspector mcp` as a subprocess (exactly what a desktop agent
  launches) against a standalone virtual device on a Unix socket.
- `http_bridge`: the bridge in this process over streamable HTTP on 127.0.0.1 (port 0),
  on the in-process virtual device, so a test can reach the device (install/uninstall apps,
  arm faults) while a real HTTP client talks to the bridge.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from inspector.mcp.bridge import Bridge, BridgeOptions
from inspector.mcp.http import serve_http
from inspector.session import journal as j
from inspector.session.devices import VIRTUAL_SERIAL, DeviceManager, VirtualConfig
from inspector.session.session import Session
from tests.cli.conftest import ROOT, VirtualServer

PRICE = "com.example.pricealerts"
TOKEN = "test-bridge-token-0123456789"


def _env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"CETP_INSPECTOR_NO_ADB": "1", "CETP_INSPECTOR_HOME": str(home),
                "PYTHONPATH": str(ROOT)})
    env.pop("CETP_INSPECTOR_MCP_TEST_ONLY_VIRTUAL_SCREEN", None)
    env.update(extra or {})
    return env


@contextlib.asynccontextmanager
async def stdio_bridge(server: VirtualServer, home: Path, *args: str,
                       env: dict[str, str] | None = None,
                       client_kwargs: dict[str, Any] | None = None
                       ) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "inspector", "mcp", "--relay-socket", server.socket, "--token",
              server.token, *args],
        env=_env(home, env), cwd=str(ROOT))
    errlog = open(home / "bridge-stderr.txt", "w")  # noqa: SIM115 (closed below)
    try:
        async with stdio_client(params, errlog=errlog) as (read, write), \
                ClientSession(read, write, **(client_kwargs or {})) as session:
            await session.initialize()
            yield session
    finally:
        errlog.close()


@dataclass
class HttpBridge:
    url: str
    bridge: Bridge
    session: Session
    manager: DeviceManager
    journal: Any

    @property
    def device(self) -> Any:
        return self.manager.virtual.ensure_device()

    @contextlib.asynccontextmanager
    async def client(self, token: str = TOKEN, **kwargs: Any) -> AsyncIterator[ClientSession]:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with http, streamable_http_client(self.url, http_client=http) as (
                read, write, _sid), ClientSession(read, write, **kwargs) as session:
            await session.initialize()
            yield session


@contextlib.asynccontextmanager
async def serve_bridge(session: Session, home: Path, options: BridgeOptions | None = None,
                       manager: Any = None) -> AsyncIterator[HttpBridge]:
    """The bridge on an open session, over HTTP on 127.0.0.1:<free port>, journalled."""
    journal = j.JournalWriter.create(name="mcp-bridge", device={"serial": session.serial},
                                     directory=home / "sessions")
    session.add_exchange_listener(journal.on_exchange)
    bridge = Bridge(session, options or BridgeOptions(), journal)
    await bridge.start()
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(serve_http(bridge.server, TOKEN, "127.0.0.1", 0,
                                            on_ready=ready.set_result))
    try:
        url = await asyncio.wait_for(ready, 20)
        yield HttpBridge(url, bridge, session, manager, journal)
    finally:
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        journal.close()


@contextlib.asynccontextmanager
async def http_bridge(home: Path, options: BridgeOptions | None = None
                      ) -> AsyncIterator[HttpBridge]:
    """The bridge on the in-process virtual device, over HTTP."""
    manager = DeviceManager(VirtualConfig(state_dir=str(home / "state")), use_adb=False)
    session = Session(VIRTUAL_SERIAL, manager.connector(VIRTUAL_SERIAL))
    await session.open()
    try:
        async with serve_bridge(session, home, options, manager) as hb:
            yield hb
    finally:
        await session.close()
        await manager.close()


def texts(result: Any) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)
