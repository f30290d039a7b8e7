"""Streamable HTTP for the bridge: loopback only, bearer token, DNS-rebinding protection.

- The listening host must be a loopback address (127.0.0.1, ::1, localhost): the bridge
  exposes a phone's tools, so it refuses to listen anywhere else.
- Every request needs `Authorization: Bearer <token>`; the comparison is constant-time.
  The token comes from $CETP_INSPECTOR_MCP_TOKEN or is generated (secrets.token_urlsafe)
  and printed once on stderr by the CLI; it is never logged.
- The SDK's transport security checks Host/Origin (DNS rebinding, MCP "Security Warning"
  for streamable HTTP).
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import secrets
from collections.abc import AsyncIterator
from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from inspector.session.errors import ExitCode, InspectorError
from inspector.tasks import spawn

TOKEN_ENV = "CETP_INSPECTOR_MCP_TOKEN"
MCP_PATH = "/mcp"


def new_token() -> str:
    return secrets.token_urlsafe(32)


def parse_listen(spec: str) -> tuple[str, int]:
    """HOST:PORT (port 0 = any free port); refuses non-loopback hosts."""
    host, sep, port_text = spec.rpartition(":")
    host = host.strip("[]")
    if not sep or not host:
        raise InspectorError("BAD_LISTEN", f"--http needs HOST:PORT, got {spec!r}",
                             hint="e.g. --http 127.0.0.1:8765", exit_code=ExitCode.USAGE)
    try:
        port = int(port_text)
        if not 0 <= port <= 65535:
            raise ValueError
    except ValueError:
        raise InspectorError("BAD_LISTEN", f"bad port in {spec!r}",
                             hint="a number 0–65535 (0: any free port)",
                             exit_code=ExitCode.USAGE) from None
    if host != "localhost":
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise InspectorError(
                "NOT_LOCALHOST", f"the bridge only listens on this machine; {host!r} is not "
                "a loopback address", hint="use --http 127.0.0.1:PORT (reach it from "
                "elsewhere through an SSH tunnel)", exit_code=ExitCode.USAGE)
    return host, port


class BearerAuth:
    """ASGI middleware: 401 without the right bearer token (constant-time compare)."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = b""
        for k, v in scope.get("headers", []):
            if k == b"authorization":
                given = v
                break
        scheme, _, value = given.partition(b" ")
        if scheme.lower() != b"bearer" or not hmac.compare_digest(value.strip(), self._token):
            response = JSONResponse(
                {"error": "unauthorized", "error_description":
                 "send Authorization: Bearer <token> (printed by `cetp-inspector mcp --http` "
                 f"at start, or ${TOKEN_ENV})"},
                status_code=401, headers={"WWW-Authenticate": 'Bearer realm="cetp-inspector"'})
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


def build_app(server: Any, token: str, host: str, port: int) -> Starlette:
    """The Starlette app serving `server` (an mcp low-level Server) at /mcp."""
    names = {host, "127.0.0.1", "localhost", "[::1]"}
    allowed_hosts = [f"{h}:{port}" for h in names] + [f"{h}:*" for h in names]
    manager = StreamableHTTPSessionManager(
        app=server, security_settings=TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=allowed_hosts,
            allowed_origins=[f"http://{h}:{port}" for h in names]
            + [f"http://{h}:*" for h in names]))

    async def handle(scope: Scope, receive: Receive, send: Send) -> None:
        await manager.handle_request(scope, receive, send)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    # a Route, not a Mount: no redirect to /mcp/ answered before the token is checked
    app = Starlette(routes=[Route(MCP_PATH, endpoint=BearerAuth(handle, token))],
                    lifespan=lifespan)
    return app


async def serve_http(server: Any, token: str, host: str, port: int,
                     on_ready: Any = None) -> None:
    """Run uvicorn until cancelled; `on_ready(url)` once it accepts connections."""
    import asyncio

    import uvicorn

    config = uvicorn.Config(build_app(server, token, host, port), host=host, port=port,
                            log_level="warning", access_log=False, lifespan="on")
    userver = uvicorn.Server(config)
    userver.install_signal_handlers = lambda: None  # type: ignore[method-assign]
    task = spawn(userver.serve(), "mcp-http")
    try:
        while not userver.started:
            if task.done():
                await task
                raise InspectorError("HTTP_FAILED", f"cannot listen on {host}:{port}",
                                     hint="is the port in use?", exit_code=ExitCode.DEVICE)
            await asyncio.sleep(0.02)
        bound = port
        for s in userver.servers:
            for sock in s.sockets:
                bound = sock.getsockname()[1]
        if on_ready is not None:
            on_ready(f"http://{host if ':' not in host else f'[{host}]'}:{bound}{MCP_PATH}")
        await task
    finally:
        userver.should_exit = True
        if not task.done():
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(task, 5)
