"""TEST HARNESS ONLY: a loopback reverse proxy that adds the bridge's bearer token.

The MCP conformance suite (`conformance server --url`) cannot send an Authorization
header; this proxy lets it test the real, token-protected bridge without weakening it.
Usage: python -m tests.mcp.auth_proxy TARGET_URL TOKEN  (prints `listening on URL`).
"""

from __future__ import annotations

import asyncio
import socket
import sys

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

HOP = {"host", "content-length", "transfer-encoding", "connection", "authorization"}


def build(target: str, token: str) -> Starlette:
    client = httpx.AsyncClient(timeout=None)

    async def forward(request: Request) -> Response:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP}
        headers["authorization"] = f"Bearer {token}"
        upstream = await client.send(client.build_request(
            request.method, target, headers=headers, content=await request.body()),
            stream=True)
        return StreamingResponse(upstream.aiter_raw(), status_code=upstream.status_code,
                                 headers={k: v for k, v in upstream.headers.items()
                                          if k.lower() not in HOP})

    return Starlette(routes=[Route("/mcp", forward, methods=["GET", "POST", "DELETE"])])


def main() -> None:
    target, token = sys.argv[1], sys.argv[2]
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(build(target, token), log_level="warning"))

    async def run() -> None:
        task = asyncio.ensure_future(server.serve(sockets=[sock]))
        while not server.started:
            await asyncio.sleep(0.02)
        print(f"listening on http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
        await task

    asyncio.run(run())


if __name__ == "__main__":
    main()
