#!/usr/bin/env python3
"""Traffic log with 100 000 exchanges: insert, filter (on the UI thread and in a worker),
and the worst-case UI-thread time of one filter change.

Prints figures; not a timed test.  .venv/bin/python benchmarks/traffic_filter.py [N]
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import qasync  # noqa: E402
from PySide6.QtWidgets import QApplication, QTableView  # noqa: E402

from inspector.protocol.exchange import Exchange, ExchangeKind, ExchangeStatus  # noqa: E402
from inspector.ui import workers  # noqa: E402
from inspector.ui.traffic_model import TrafficModel  # noqa: E402

FILTERS = [
    "status:error",
    "tool:tool_17",
    "p7.cetp",
    "method:execute tool:tool_2 status:error",
    "no-such-text",
]


def exchanges(n: int) -> list[Exchange]:
    out = []
    for i in range(n):
        err = i % 7 == 3
        ex = Exchange(
            kind=ExchangeKind.CETP,
            device="virtual",
            target=f"com.example.p{i % 13}.cetp",
            method="execute_tool" if i % 3 else "list_tools",
            tool=f"tool_{i % 29}" if i % 3 else None,
            request_id=f"req-{i}",
            request={"tool_name": f"tool_{i % 29}"},
            request_bytes=100,
            response_bytes=200,
            error_code="INVALID_ARGS" if err else None,
        )
        ex.finish(ExchangeStatus.PROVIDER_ERROR if err else ExchangeStatus.SUCCESS)
        out.append(ex)
    return out


def ms(t: float) -> float:
    return (time.perf_counter() - t) * 1000


async def main(n: int) -> None:
    t = time.perf_counter()
    data = exchanges(n)
    print(f"built {n:,} exchanges in {ms(t):.0f} ms (not part of the UI)")
    model = TrafficModel()
    view = QTableView()
    view.setModel(model)
    view.resize(1200, 600)
    view.show()
    t = time.perf_counter()
    for i in range(0, n, 500):  # as the recorder delivers them: batches per flush
        model.add_many(data[i : i + 500])
    print(f"inserted in batches of 500: {ms(t):.0f} ms total, rows={model.rowCount():,}")
    print(f"\nfilter on the UI thread (set_filter), median of 5 runs, {n:,} rows:")
    for f in FILTERS:
        times = []
        for _ in range(5):
            t = time.perf_counter()
            model.set_filter(f)
            times.append(ms(t))
        print(f"  {f!r:45s} {statistics.median(times):7.1f} ms → {model.rowCount():,} rows")
        model.set_filter("")
    print("\nfilter in the worker thread (set_filter_async): wall time, and the longest")
    print("UI-thread stall while it runs (a 1 ms ticker measures event-loop latency):")
    for f in FILTERS:
        stalls: list[float] = []
        running = [True]

        async def ticker(stalls: list[float] = stalls, running: list[bool] = running) -> None:
            last = time.perf_counter()
            while running[0]:
                await asyncio.sleep(0.001)
                now = time.perf_counter()
                stalls.append((now - last) * 1000)
                last = now

        tick = asyncio.ensure_future(ticker())
        t = time.perf_counter()
        await model.set_filter_async(f)
        wall = ms(t)
        running[0] = False
        await tick
        print(
            f"  {f!r:45s} wall {wall:7.1f} ms, worst UI stall {max(stalls or [0]):6.1f} ms"
            f" → {model.rowCount():,} rows"
        )
        model.set_filter("")


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    app = QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        loop.run_until_complete(main(n))
    workers.shutdown()
