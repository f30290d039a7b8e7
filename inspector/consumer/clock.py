"""Injectable time: the engine never calls `time` or `asyncio.sleep` directly.

Tests of `retry_after_ms`, `poll_after_ms` and deadlines use `FakeClock`, which advances
virtual time instead of sleeping, and records every wait so a test can assert that the
engine honoured the provider's pacing.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol


class Clock(Protocol):
    """Wall-clock milliseconds (for `deadline_at_ms`) and an awaitable sleep."""

    def now_ms(self) -> int: ...

    async def sleep_ms(self, ms: int) -> None: ...


class SystemClock:
    """The real clock."""

    def now_ms(self) -> int:
        return int(time.time() * 1000)

    async def sleep_ms(self, ms: int) -> None:
        await asyncio.sleep(max(ms, 0) / 1000.0)


class FakeClock:
    """Virtual time for tests: `sleep_ms` advances `now_ms` at once and is recorded."""

    def __init__(self, start_ms: int = 1_788_220_800_000) -> None:  # 2026-09-01T00:00Z
        self._now = start_ms
        self.sleeps: list[int] = []

    def now_ms(self) -> int:
        return self._now

    def advance(self, ms: int) -> None:
        self._now += ms

    async def sleep_ms(self, ms: int) -> None:
        self.sleeps.append(ms)
        self._now += max(ms, 0)
        await asyncio.sleep(0)  # still yield, so other tasks run as they would
