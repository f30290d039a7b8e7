"""A 256 MiB file result streamed from the virtual device and verified, vs plain sha256.

Run: `.venv/bin/python benchmarks/large_result.py [--mib 256] [--rounds 5] [--in-process]`

The virtual device runs as its own process (`python -m inspector.virtual`, like the relay on
a phone) on a Unix socket (`--in-process`: same process and loop). This process negotiates
`large_results`, asks com.example.pricealerts for `export_history {"bytes": N}` (once per
round, not timed), then reads the handle the way the product does:
`inspector.consumer.large_results.read_and_verify` over `RelayClient` — size, sha256 and the
relay's END digest checked while receiving, handle closed. `keep_content=False` (the
default measure) only hashes; `--spool` also writes the bytes to a temp file (what the GUI
keeps). The baseline is `hashlib.sha256` over exactly the same bytes (generated in pieces;
only hashing is timed). After one untimed warm-up stream, each round times a stream and a
baseline back to back, so both see the same machine load; the verdict uses the median of
the per-round ratios (target ≥ 0.5×) and the peak memory growth of both processes during
all transfers, warm-up included (target ≤ 64 MiB).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from inspector.consumer.large_results import FileVerdict, read_and_verify  # noqa: E402
from inspector.protocol.bundle import Bundle, Int, IntArray, Long  # noqa: E402
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


def cpu_s(pid: int | str = "self") -> float:
    """User + system CPU seconds of a process (all its threads) from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def reset_peak(pid: int | str = "self") -> None:
    """Reset VmHWM so the peak covers only the transfers (Linux ≥ 4.0)."""
    with contextlib.suppress(OSError):
        Path(f"/proc/{pid}/clear_refs").write_text("5")


async def stream_once(
    client: RelayClient, handle: str, size: int, sha256: str, spool: bool
) -> tuple[float, FileVerdict]:
    """(seconds, verdict) for one `read_and_verify` of the whole file result."""
    t = time.perf_counter()
    v = await read_and_verify(
        client,
        handle,
        declared_size=size,
        declared_sha256=sha256,
        declared_media_type="application/json",
        output_schema=None,
        validate=None,
        read_limit=size,
        keep_content=spool,
    )
    spent = time.perf_counter() - t
    v.discard()
    return spent, v


def verified(v: FileVerdict) -> bool:
    checks = {c.name: c.status.value for c in v.checks}
    wanted = ("size", "sha256", "relay_digest", "handle_closed")
    return v.complete and all(checks.get(name) == "pass" for name in wanted)


def hash_once(size: int) -> tuple[float, str]:
    records, padding = layout_for_bytes(size)
    h = hashlib.sha256()
    spent = 0.0
    for piece in iter_document(records, padding):
        t = time.perf_counter()
        h.update(piece)
        spent += time.perf_counter() - t
    return spent, h.hexdigest()


async def export(client: RelayClient, token: str, size: int) -> tuple[str, dict[str, Any]]:
    """A fresh file result (handle, declared envelope); read_and_verify closes it."""
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
    assert reply is not None and reply["status"] == "success", reply
    return reply["result_fd"].id, json.loads(reply["data"])


async def main(mib: int, rounds: int, in_process: bool, spool: bool) -> int:
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
    cpus: list[tuple[float, float]] = []  # (desktop, device) CPU seconds per stream
    ok = True
    try:
        neg = await client.call(
            AUTH,
            "negotiate",
            Bundle(consumer_versions=IntArray([2]), consumer_capabilities='["large_results"]'),
        )
        token = json.loads(neg["data"])["session_token"]
        t = time.perf_counter()
        handle, declared = await export(client, token, size)
        prepare = time.perf_counter() - t
        _, expected = hash_once(size)
        ok = declared["size_bytes"] == size and declared["sha256"] == expected
        base_me, _ = rss_kib()
        base_dev, _ = rss_kib(pid)
        reset_peak()
        reset_peak(pid)
        for i in range(rounds + 1):  # round 0 warms up (threads, buffers, caches): untimed
            if i:
                handle, _ = await export(client, token, size)
            c_me, c_dev = time.process_time(), cpu_s(pid)
            spent, verdict = await stream_once(client, handle, size, expected, spool)
            ok = ok and verified(verdict)
            if not i:
                continue
            cpus.append((time.process_time() - c_me, cpu_s(pid) - c_dev))
            streams.append(spent)
            spent, digest = hash_once(size)
            ok = ok and digest == expected
            hashes.append(spent)
        _, peak_me = rss_kib()
        _, peak_dev = rss_kib(pid)
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

    ratios = [h / s for h, s in zip(hashes, streams, strict=True)]
    ratio = statistics.median(ratios)
    grow_me = max(0, peak_me - base_me) / 1024
    grow_dev = max(0, peak_dev - base_dev) / 1024
    where = "in this process" if in_process else "in its own process"
    what = "read_and_verify, spooled to a temp file" if spool else "read_and_verify, hash only"
    print(f"large file result: {mib} MiB JSON document, virtual device {where}, {rounds} rounds")
    print(f"provider prepared the result (size + sha256) in {prepare:.2f} s (not in the figures)")
    print(
        f"streamed + verified ({what})   median {rate(statistics.median(streams)):7.1f} MiB/s"
        f"   best {rate(min(streams)):7.1f} MiB/s   verified={'yes' if ok else 'NO'}"
    )
    print(
        f"hashlib.sha256 alone                            median "
        f"{rate(statistics.median(hashes)):7.1f} MiB/s   best {rate(min(hashes)):7.1f} MiB/s"
    )
    print(
        f"ratio per round: {' '.join(f'{r:.2f}' for r in ratios)}   median {ratio:.2f}x   "
        f"target ≥ 0.5x: {'met' if ratio >= 0.5 else 'NOT met'}"
    )
    me_cpu = statistics.median(c[0] for c in cpus)
    dev_cpu = statistics.median(c[1] for c in cpus) if not in_process else 0.0
    print(
        f"CPU per stream (median): desktop {me_cpu:.2f} s"
        + ("" if in_process else f", virtual device {dev_cpu:.2f} s")
        + f"; sha256 alone {statistics.median(hashes):.2f} s"
    )
    same = " (same process)" if in_process else ""
    print(
        f"peak memory growth: desktop {grow_me:.1f} MiB, virtual device {grow_dev:.1f} MiB"
        f"{same}   target ≤ 64 MiB: {'met' if max(grow_me, grow_dev) <= 64 else 'NOT met'}"
    )
    print(f"load average: {os.getloadavg()[0]:.2f} (other work on this machine skews both sides)")
    return 0 if ok else 1


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument(
        "--in-process",
        action="store_true",
        help="serve the virtual device from this process (same loop) instead of a subprocess",
    )
    ap.add_argument(
        "--spool", action="store_true", help="also write the bytes to a temp file (keep_content)"
    )
    a = ap.parse_args()
    sys.exit(asyncio.run(main(a.mib, a.rounds, a.in_process, a.spool)))
