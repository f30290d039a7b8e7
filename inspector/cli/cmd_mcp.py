"""`mcp`: serve the device's providers and extensions to MCP clients (docs/mcp.md).

stdio by default (what desktop agents launch: stdout carries only JSON-RPC, everything
for people goes to stderr); `--http HOST:PORT` serves streamable HTTP on a loopback address
with a bearer token instead. Runs until the client closes stdin / SIGINT / SIGTERM — the
common `--timeout` does not apply.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from typing import Any

from inspector.cli.context import Ctx, open_journal, record_facts, split_list
from inspector.cli.terminal_text import safe_text
from inspector.mcp.bridge import Bridge, BridgeOptions, test_only_screen_from_env
from inspector.mcp.http import TOKEN_ENV, new_token, parse_listen, serve_http
from inspector.session.errors import ExitCode


def bridge_options(ctx: Ctx) -> BridgeOptions:
    a = ctx.args
    return BridgeOptions(
        providers=list(a.provider or []), extensions=list(a.extension or []),
        no_extensions=bool(a.no_extensions),
        allow_mutations=[m for entry in (a.allow_mutations or [])
                         for m in (split_list(entry) or [])],
        confirm_timeout_s=float(a.confirm_timeout), elicit=not a.no_elicit,
        max_read_bytes=getattr(a, "max_read_bytes", None))


async def run_bridge(ctx: Ctx) -> int:
    a = ctx.args
    listen = parse_listen(a.http) if a.http else None  # refuse a bad host before connecting
    options = bridge_options(ctx)
    session = await ctx.open_session()
    if ctx.journal is None:  # every bridge session is journalled (Bridge view, bundles)
        ctx.journal = open_journal(a.record or "mcp-bridge", session.serial)
        session.add_exchange_listener(ctx.journal.on_exchange)
        record_facts(ctx.journal, session)
    options.test_only_virtual_screen = test_only_screen_from_env(session.serial, ctx.err)
    bridge = Bridge(session, options, ctx.journal)
    catalog = await bridge.start()
    err = ctx.err
    err.write(f"cetp-inspector mcp: {len(catalog.tools)} tools from device "
              f"{safe_text(session.serial, 80, one_line=True)}; journal "
              f"{ctx.journal.session_id} ({ctx.journal.path})\n")
    for p in catalog.problems:
        err.write(f"  ! {safe_text(p, 400, one_line=True)}\n")
    gated = [bt.name for bt in catalog.tools.values() if bt.gated and not bt.allowed]
    if gated:
        err.write(f"  {len(gated)} mutating tool(s) listed but refused until allowed with "
                  "--allow-mutations (e.g. " + ", ".join(gated[:3]) + ")\n")
    err.flush()
    if listen is None:
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read, write):
            await bridge.server.run(read, write, bridge.initialization_options())
        return ExitCode.OK
    host, port = listen
    token = os.environ.get(TOKEN_ENV) or ""
    printed = not token
    token = token or new_token()

    def ready(url: str) -> None:
        ctx.out.write(f"listening on {url}\n")
        ctx.out.flush()
        if printed:  # printed once, here; never logged
            err.write(f"token: {token}\n(send it as 'Authorization: Bearer <token>'; set "
                      f"${TOKEN_ENV} to choose it)\n")
            err.flush()

    await serve_http(bridge.server, token, host, port, on_ready=ready)
    return ExitCode.OK


def cmd_mcp(ctx: Ctx) -> int:
    """Runs outside the common `--timeout` (a bridge serves until it is stopped)."""

    async def main() -> int:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, task.cancel)
        try:
            return await run_bridge(ctx)
        except asyncio.CancelledError:
            return ExitCode.OK
        finally:
            with contextlib.suppress(Exception):  # closing must not hide the outcome
                await asyncio.wait_for(ctx.close(), 5)

    result: Any = asyncio.run(main())
    return int(result)
