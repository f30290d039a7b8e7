"""A 256 MiB file result streamed from the virtual device and verified, vs plain sha256.

Run: `.venv/bin/python benchmarks/large_result.py [--mib 256] [--rounds 3] [--in-process]`

The virtual device runs as its own process (`python -m inspector.virtual`, like the relay on
a phone) on a Unix socket (`--in-process`: same process and loop). This process negotiates
`large_results`, asks com.example.pricealerts for `export_history {"bytes": N}`, then streams
the file handle with `RelayClient.read_file`, verifying size and sha256 against the declared
values while receiving (hashing in a worker thread, in order). The baseline is
`hashlib.sha256` over exactly the same bytes (generated in pieces; only hashing is timed).
Rounds alternate stream and baseline so both see the same machine load; the best round of
each is compared (target ≥ 0.5×), and the peak memory growth of both processes during the
transfers is reported (target ≤ 64 MiB).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from inspector.protocol.bundle import Bundle, Int, IntArray, Long  # noqa: E402
from inspector.relay.api import StreamEnd  # noqa: E402
from inspector.relay.client import RelayClient  # noqa: E402
from inspector.relay.server import RelayServer  # noqa: E402
from inspector.virtual.device import VirtualDevice  # noqa: E402
from inspector.virtual.filegen import iter_document, layout_for_bytes  # noqa: E402

AUTH = "com.example.pricealerts.clawseed.tools"
MIB = 1 << 20


def rss_kib(pid: int | str = "self") -> tuple[int, int]:
    """(current RSS, peak RSS) in KiB from /proc."""
    cur = peak = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            cur = int(line.split()[1])
        elif line.startswith("VmHWM:"):
            peak = int(line.split()[1])
    return cur, peak


def reset_peak(pid: int | str = "self") -> None:
    """Reset VmHWM so the peak covers only the transfers (Linux ≥ 4.0)."""
    with contextlib.suppress(OSError):
        Path(f"/proc/{pid}/clear_refs").write_text("5")


async def stream_once(client: RelayClient, handle: str, size: int) -> tuple[float, int, str, Any]:
    h = hashlib.sha256()
    n = 0
    end: StreamEnd | None = None
    loop = asyncio.get_running_loop()
    hashing: asyncio.Future[None] | None = None
    t = time.perf_counter()
    async for item in client.read_file(handle, size):
        if isinstance(item, StreamEnd):
            end = item
        else:
            if hashing is not None:
                await hashing
            hashing = loop.run_in_executor(None, h.update, item)
            n += len(item)
    if hashing is not None:
        await hashing
    return time.perf_counter() - t, n, h.hexdigest(), end


def hash_once(size: int) -> tuple[float, str]:
    records, padding = layout_for_bytes(size)
    h = hashlib.sha256()
    spent = 0.0
    for piece in iter_document(records, padding):
        t = time.perf_counter()
        h.update(piece)
        spent += time.perf_counter() - t
    return spent, h.hexdigest()


async def main(mib: int, rounds: int, in_process: bool) -> int:
    size = mib * MIB
    tmp = Path(tempfile.mkdtemp(prefix="cetp-bench-"))
    sock = tmp / "v.sock"
    device: VirtualDevice | None = None
    proc: asyncio.subprocess.Process | None = None
    if in_process:
        device = VirtualDevice(tmp / "state")
        server = await RelayServer(device, "bench").serve_unix(str(sock))
        pid: int | str = "self"
    else:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "inspector.virtual",
            "--listen",
            f"unix:{sock}",
            "--token",
            "bench",
            "--state-dir",
            str(tmp / "state"),
            stdout=asyncio.subprocess.PIPE,
            cwd=str(ROOT),
        )
        assert proc.stdout is not None
        await asyncio.wait_for(proc.stdout.readline(), 30)
        pid = proc.pid
    client = await RelayClient.open_unix(str(sock), "bench")
    streams: list[float] = []
    hashes: list[float] = []
    ok = True
    try:
        neg = await client.call(
            AUTH,
            "negotiate",
            Bundle(consumer_versions=IntArray([2]), consumer_capabilities='["large_results"]'),
        )
        token = json.loads(neg["data"])["session_token"]
        t = time.perf_counter()
        reply = await client.call(
            AUTH,
            "execute_tool",
            Bundle(
                protocol_version=Int(2),
                session_token=token,
                request_id=str(uuid.uuid4()),
                deadline_at_ms=Long(int(time.time() * 1000) + 120_000),
                tool_name="export_history",
                args=json.dumps({"bytes": size}),
            ),
            timeout_ms=120_000,
        )
        prepare = time.perf_counter() - t
        assert reply is not None and reply["status"] == "success", reply
        declared = json.loads(reply["data"])
        handle = reply["result_fd"].id
        reset_peak()
        reset_peak(pid)
        base_me, _ = rss_kib()
        base_dev, _ = rss_kib(pid)
        for _ in range(rounds):
            spent, n, digest, end = await stream_once(client, handle, size)
            ok = ok and end is not None and n == declared["size_bytes"] == end.size
            ok = ok and digest == declared["sha256"] == end.sha256
            streams.append(spent)
            spent, digest = hash_once(size)
            ok = ok and digest == declared["sha256"]
            hashes.append(spent)
        _, peak_me = rss_kib()
        _, peak_dev = rss_kib(pid)
        await client.close_handle(handle)
    finally:
        await client.close()
        if device is not None:
            server.close()
            await device.aclose()
        if proc is not None:
            proc.terminate()
            await proc.wait()

    def rate(s: float) -> float:
        return size / MIB / s

    best_stream, best_hash = min(streams), min(hashes)
    ratio = best_hash / best_stream
    grow_me = max(0, peak_me - base_me) / 1024
    grow_dev = max(0, peak_dev - base_dev) / 1024
    where = "in this process" if in_process else "in its own process"
    print(f"large file result: {mib} MiB JSON document, virtual device {where}, {rounds} rounds")
    print(f"provider prepared the result (size + sha256) in {prepare:.2f} s (not in the figures)")
    print(
        f"streamed + verified   best {rate(best_stream):7.1f} MiB/s   median "
        f"{rate(statistics.median(streams)):7.1f} MiB/s   verified={'yes' if ok else 'NO'}"
    )
    print(
        f"hashlib.sha256 alone  best {rate(best_hash):7.1f} MiB/s   median "
        f"{rate(statistics.median(hashes)):7.1f} MiB/s"
    )
    print(f"ratio (best/best) {ratio:.2f}x   target ≥ 0.5x: {'met' if ratio >= 0.5 else 'NOT met'}")
    same = " (same process)" if in_process else ""
    print(
        f"peak memory growth: desktop {grow_me:.1f} MiB, virtual device {grow_dev:.1f} MiB"
        f"{same}   target ≤ 64 MiB: {'met' if max(grow_me, grow_dev) <= 64 else 'NOT met'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--in-process",
        action="store_true",
        help="serve the virtual device from this process (same loop) instead of a subprocess",
    )
    a = ap.parse_args()
    sys.exit(asyncio.run(main(a.mib, a.rounds, a.in_process)))
