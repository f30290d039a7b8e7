"""Validation of provider schemas in a separate worker process, with a hard deadline.

The in-process budget (`schema_budget`) bounds the walk, but a walk of that size still
holds the GIL and churns the garbage collector for a second or two: run in a thread of the
GUI process it stalled the UI thread for ~0.5 s (issue 12). Here validation runs in one
long-lived child process (spawned, never forked from a Qt process), capped by an address
space limit; the caller's thread only waits. If the child does not answer within
`DEADLINE_S` it is killed and the verdict is "schema too costly to validate" — a bound
that holds even where the step budget would not (one huge keyword application).

Call `validate_isolated` from a worker thread or the CLI — never from the UI thread
(it blocks until the verdict).
"""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from inspector.protocol import schema as schemas
from inspector.protocol.schema_budget import MAX_SECONDS

#: Extra seconds for the first call (the child imports jsonschema and RE2) and IPC.
STARTUP_GRACE_S = 20.0
DEADLINE_S = MAX_SECONDS + 5.0
#: Address space of the child: a runaway walk hits MemoryError, not the machine.
MEMORY_LIMIT_BYTES = 2 * 1024**3

WORKERS = 2
_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None
_warm = False
_outstanding = 0  # submitted and not yet answered: a queued call waits for the others


def _limit_memory() -> None:
    try:
        import resource

        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = MEMORY_LIMIT_BYTES if hard == resource.RLIM_INFINITY else min(hard,
                                                                          MEMORY_LIMIT_BYTES)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (ImportError, ValueError, OSError):  # not POSIX, or not allowed: budget only
        pass


def _worker_validate(instance: Any, schema: Any, dialect: str | None, max_errors: int,
                     formats: bool) -> list[tuple[str, str]]:
    """Runs in the child."""
    fmt = None
    if formats:
        fmt = schemas.validator_class(dialect).FORMAT_CHECKER  # type: ignore[attr-defined]
    try:
        return schemas.validate(instance, schema, dialect, max_errors=max_errors,
                                format_checker=fmt)
    except MemoryError:
        return [("", f"{schemas.TOO_COSTLY}: more than "
                     f"{MEMORY_LIMIT_BYTES // 1024**3} GiB of memory")]


def _get_pool() -> tuple[ProcessPoolExecutor, bool]:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ProcessPoolExecutor(max_workers=WORKERS,
                                        mp_context=multiprocessing.get_context("spawn"),
                                        initializer=_limit_memory)
        return _pool, _warm


def _discard_pool(pool: ProcessPoolExecutor) -> None:
    """Kill a child that went past its deadline (shutdown alone would wait for it)."""
    global _pool, _warm
    with _lock:
        if _pool is pool:
            _pool, _warm = None, False
    for proc in list(getattr(pool, "_processes", {}).values()):  # no public kill API
        with contextlib.suppress(OSError, AttributeError):
            proc.kill()
    pool.shutdown(wait=False, cancel_futures=True)


def validate_isolated(instance: Any, schema: Any, dialect: str | None = None,
                      max_errors: int = schemas.MAX_ERRORS, *,
                      formats: bool = False) -> list[tuple[str, str]]:
    """`schemas.validate` in the worker process; blocks the calling thread (not the UI)."""
    global _warm, _outstanding
    pool, warm = _get_pool()
    with _lock:
        ahead = _outstanding
        _outstanding += 1
    # each validation ends within its budget in the child; a call queued behind others
    # gets their time too, so a busy worker is not mistaken for a runaway one
    deadline = DEADLINE_S * (1 + ahead // WORKERS) + (0 if warm else STARTUP_GRACE_S)
    try:
        fut = pool.submit(_worker_validate, instance, schema, dialect, max_errors, formats)
        out = fut.result(timeout=deadline)
    except FutureTimeout:
        _discard_pool(pool)
        return [("", f"{schemas.TOO_COSTLY}: no verdict within {deadline:g} s "
                     "(the validation worker was stopped)")]
    except BrokenProcessPool:
        _discard_pool(pool)
        return [("", f"{schemas.TOO_COSTLY}: the validation worker died (out of memory?)")]
    except RuntimeError:  # the pool was shut down under us (exit, or another timeout)
        return [("", f"{schemas.TOO_COSTLY}: validation was interrupted; try again")]
    finally:
        with _lock:
            _outstanding -= 1
    with _lock:
        if _pool is pool:
            _warm = True
    return out


def shutdown() -> None:
    """Stop the worker (tests, app exit)."""
    global _pool, _warm
    with _lock:
        pool, _pool, _warm = _pool, None, False
    if pool is not None:
        _discard_pool(pool)


atexit.register(shutdown)
