"""Standalone virtual device: `python -m inspector.virtual --listen unix:PATH --token T`.

Serves the relay protocol on a Unix socket or a loopback TCP port until SIGINT/SIGTERM.
Prints one line `listening on <address>` to stdout once it accepts connections (scripts and
tests wait for it).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from pathlib import Path

from inspector.relay.server import RelayServer
from inspector.virtual.android_platform import RelayManifestError
from inspector.virtual.device import VirtualDevice
from inspector.virtual.plugins import PluginError


def parse_listen(value: str) -> tuple[str, str, int]:
    """`unix:PATH` or `tcp:127.0.0.1:PORT` → (kind, host-or-path, port)."""
    if value.startswith("unix:") and len(value) > 5:
        return "unix", value[5:], 0
    if value.startswith("tcp:"):
        host, _, port = value[4:].rpartition(":")
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise argparse.ArgumentTypeError("tcp listening is loopback only (127.0.0.1)")
        try:
            return "tcp", host, int(port)
        except ValueError:
            raise argparse.ArgumentTypeError(f"bad port in {value!r}") from None
    raise argparse.ArgumentTypeError("use unix:PATH or tcp:127.0.0.1:PORT")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m inspector.virtual",
        description="Serve the CETP Inspector virtual device over the relay protocol.",
    )
    p.add_argument(
        "--listen", required=True, type=parse_listen, help="unix:PATH | tcp:127.0.0.1:PORT"
    )
    p.add_argument(
        "--token",
        default=os.environ.get("CETP_VIRTUAL_TOKEN"),
        help="session token clients must present (default: $CETP_VIRTUAL_TOKEN)",
    )
    p.add_argument("--state-dir", type=Path, help="durable app state (default: a temp dir)")
    p.add_argument(
        "--plugin", action="append", type=Path, default=[], help="load a plugin file (repeatable)"
    )
    p.add_argument(
        "--confirmation-ttl-ms",
        type=int,
        metavar="MS",
        help="how long confirmations and resume tokens stay valid in every provider "
        "(default: 300000); a short one lets a conformance run test expired tokens",
    )
    p.add_argument(
        "--android-api",
        type=int,
        metavar="N",
        help="Android API level whose rules the device enforces (26, 28, 29, 30, 31, 33, 34, "
        "35; default 34)",
    )
    p.add_argument(
        "--relay-in-background",
        action="store_true",
        help="play a relay whose activity is not in front (background activity starts are "
        "then blocked from API 29)",
    )
    p.add_argument("-v", "--verbose", action="store_true")
    return p


async def serve(args: argparse.Namespace) -> int:
    try:
        device = VirtualDevice(
            args.state_dir,
            plugins=args.plugin,
            confirmation_ttl_ms=args.confirmation_ttl_ms,
            android_api=args.android_api,
            relay_in_front=not args.relay_in_background,
        )
    except (PluginError, ValueError, RelayManifestError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    server = RelayServer(device, args.token)
    kind, where, port = args.listen
    handle = await (server.serve_unix(where) if kind == "unix" else server.serve_tcp(where, port))
    address = handle.address if kind == "unix" else f"{handle.address[0]}:{handle.address[1]}"
    print(f"listening on {kind}:{address}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        handle.close()
        await handle.wait_closed()
        await device.aclose()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not args.token:
        print("error: --token (or $CETP_VIRTUAL_TOKEN) is required", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING)
    return asyncio.run(serve(args))


if __name__ == "__main__":
    sys.exit(main())
