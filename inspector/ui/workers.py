"""The UI's worker threads for CPU work that must not block the window.

Filtering 100 000 exchanges, lexing a 5 MB JSON result and validating big arguments run
here. A plain ThreadPoolExecutor (not qasync's QThread-based default) so threads end
cleanly at exit and tests need no Qt thread teardown.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
_pool: ThreadPoolExecutor | None = None


def _executor() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="ui-worker")
    return _pool


async def run_in_thread(fn: Callable[..., T], *args: Any) -> T:
    """Run `fn(*args)` in a worker thread and await its result on the UI loop."""
    return await asyncio.get_running_loop().run_in_executor(_executor(), fn, *args)


def shutdown() -> None:
    global _pool
    if _pool is not None:
        _pool.shutdown(wait=False, cancel_futures=True)
        _pool = None
