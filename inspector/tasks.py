"""The one place that spawns background asyncio tasks.

asyncio (and qasync 0.28) keep only weak references to tasks, so a fire-and-forget task can
be garbage-collected mid-run. `Spawner` keeps each task strongly referenced until it ends,
names it, logs unexpected failures, cancels everything on quit, and lets tests wait for
idleness with `is_idle()`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")


class Spawner:
    """Owns background tasks: strong references, names, error logging, cancellation."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self.on_error: Callable[[str, BaseException], None] | None = None

    def spawn(self, coro: Coroutine[Any, Any, T], name: str) -> asyncio.Task[T]:
        task = asyncio.get_event_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            log.error("background task %s failed: %s", task.get_name(), exc, exc_info=exc)
            if self.on_error is not None:
                self.on_error(task.get_name(), exc)

    def is_idle(self) -> bool:
        return not self._tasks

    @property
    def tasks(self) -> frozenset[asyncio.Task[Any]]:
        return frozenset(self._tasks)

    async def cancel_all(self) -> None:
        tasks = list(self._tasks)
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)


_default = Spawner()


def spawner() -> Spawner:
    """The process-wide spawner (GUI and CLI share it)."""
    return _default


def spawn(coro: Coroutine[Any, Any, T], name: str) -> asyncio.Task[T]:
    """Spawn `coro` as a named, strongly referenced background task."""
    return _default.spawn(coro, name)
