"""Small-call round trip through the virtual device vs a bare echo on the same socket kind.

Run: `.venv/bin/python benchmarks/relay_roundtrip.py [--calls N] [--runs N] [--in-process]`

Servers run as their own processes (like the relay on a phone; `--in-process`: on this
process's loop), each on its own Unix socket:
- echo: reads one relay frame (16-byte header + payload) and writes it back — the floor for
  one request/response over that socket;
- ping: the relay protocol's `ping` through the virtual device's server core;
- call: a CETP v2 `execute_tool get_quote` on com.example.pricealerts (envelope checks,
  JSON Schema validation, output validation) through `RelayClient.call`.
Rounds alternate the three so they see the same machine load. Prints median and p95 per
call over all runs, the call/echo ratio of each run and the verdict on their median
(target: call ≤ 4× echo).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import struct
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from inspector.protocol.bundle import Bundle, Int, IntArray, Long  # noqa: E402
from inspector.relay.client import RelayClient  # noqa: E402
from inspector.relay.server import RelayServer  # noqa: E402
from inspector.virtual.device import VirtualDevice  # noqa: E402

AUTH = "com.example.pricealerts.clawseed.tools"
HEADER = struct.Struct(">4sBBHII")
ECHO_SERVER = r"""
import asyncio, struct, sys
H = struct.Struct(">4sBBHII")
async def serve(reader, writer):
    try:
        while True:
            head = await reader.readexactly(16)
            writer.write(head + await reader.readexactly(H.unpack(head)[5]))
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        writer.close()
async def main():
    server = await asyncio.start_unix_server(serve, sys.argv[1])
    print("listening", flush=True)
    await asyncio.Event().wait()
asyncio.run(main())
"""


async def echo_server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
        while True:
            head = await reader.readexactly(16)
            writer.write(head + await reader.readexactly(HEADER.unpack(head)[5]))
            await writer.drain()
    writer.close()


def line(name: str, samples: list[float], base: float | None) -> str:
    med = statistics.median(samples) * 1e6
    p95 = statistics.quantiles(samples, n=20)[18] * 1e6
    ratio = f"{med / base:5.2f}x echo" if base else "  (baseline)"
    return f"{name:<32} median {med:7.1f} µs   p95 {p95:7.1f} µs   {ratio}"


async def main(calls: int, in_process: bool, runs: int) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="cetp-bench-"))
    echo_sock, relay_sock = str(tmp / "echo.sock"), str(tmp / "relay.sock")
    procs: list[asyncio.subprocess.Process] = []
    device: VirtualDevice | None = None
    closers: list[Callable[[], object]] = []
    if in_process:
        echo = await asyncio.start_unix_server(echo_server, echo_sock)
        closers.append(echo.close)
        device = VirtualDevice(tmp / "state")
        handle = await RelayServer(device, "bench").serve_unix(relay_sock)
        closers.append(handle.close)
    else:
        for argv in (
            ["-c", ECHO_SERVER, echo_sock],
            ["-m", "inspector.virtual", "--listen", f"unix:{relay_sock}", "--token", "bench"],
        ):
            p = await asyncio.create_subprocess_exec(
                sys.executable, *argv, stdout=asyncio.subprocess.PIPE, cwd=str(ROOT)
            )
            assert p.stdout is not None
            await asyncio.wait_for(p.stdout.readline(), 30)
            procs.append(p)
    er, ew = await asyncio.open_unix_connection(echo_sock)
    frame = HEADER.pack(b"CETR", 1, 1, 0, 1, 300) + bytes(300)  # a small execute_tool's size

    async def echo_once() -> None:
        ew.write(frame)
        await ew.drain()
        head = await er.readexactly(16)
        await er.readexactly(HEADER.unpack(head)[5])

    client = await RelayClient.open_unix(relay_sock, "bench")
    neg = await client.call(
        AUTH,
        "negotiate",
        Bundle(consumer_versions=IntArray([2]), consumer_capabilities='["large_results"]'),
    )
    token = json.loads(neg["data"])["session_token"]

    async def quote() -> None:
        extras = Bundle(
            protocol_version=Int(2),
            session_token=token,
            request_id=str(uuid.uuid4()),
            deadline_at_ms=Long(int(time.time() * 1000) + 30_000),
            tool_name="get_quote",
            args='{"symbol":"ACME"}',
        )
        r = await client.call(AUTH, "execute_tool", extras)
        assert r is not None and r["status"] == "success", r

    fns: list[Callable[[], Awaitable[object]]] = [echo_once, client.ping, quote]
    for fn in fns:  # warm-up
        for _ in range(100):
            await fn()
    all_samples: list[list[float]] = [[], [], []]
    ratios: list[float] = []
    for _ in range(runs):
        samples: list[list[float]] = [[], [], []]
        for _ in range(max(1, calls // 50)):
            for fn, out in zip(fns, samples, strict=True):
                for _ in range(50):
                    t = time.perf_counter()
                    await fn()
                    out.append(time.perf_counter() - t)
        ratios.append(statistics.median(samples[2]) / statistics.median(samples[0]))
        for acc, got in zip(all_samples, samples, strict=True):
            acc.extend(got)
    e, p, q = all_samples
    base = statistics.median(e) * 1e6
    where = "on this process's loop" if in_process else "in their own processes"
    print(
        f"relay round trip, {runs} runs x {len(e) // runs} sequential calls each, Unix sockets, "
        f"servers {where}"
    )
    print(line("bare echo (300-byte frame)", e, None))
    print(line("virtual device: ping", p, base))
    print(line("virtual device: call get_quote", q, base))
    ratio = statistics.median(ratios)
    print(
        f"call/echo per run: {' '.join(f'{r:.2f}' for r in ratios)}   median {ratio:.2f}x   "
        f"target call ≤ 4x echo: {'met' if ratio <= 4 else 'NOT met'}"
    )
    await client.close()
    ew.close()
    for close in closers:
        close()
    for proc in procs:
        proc.terminate()
        await proc.wait()
    if device is not None:
        await device.aclose()
    return 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=1000, help="calls per kind and run")
    ap.add_argument("--runs", type=int, default=5, help="runs; the verdict uses their median")
    ap.add_argument("--in-process", action="store_true", help="serve from this process's loop")
    a = ap.parse_args()
    sys.exit(asyncio.run(main(a.calls, a.in_process, a.runs)))
