"""Durable provider state in SQLite: what must survive a provider-process restart.

Spec §4.4/§6: mutation deduplication records and operation state MUST be durable and a
restart MUST NOT cause duplicate execution. The business mutation, the dedup record and the
stored outcome are written in ONE transaction (`with store.tx():`), so there is no window in
which a mutation is committed but its outcome is not.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CORE_SCHEMA = """
CREATE TABLE IF NOT EXISTS dedup (
    uid INTEGER NOT NULL,
    provider_id TEXT NOT NULL,
    request_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    args_sha256 TEXT NOT NULL,
    outcome_json TEXT,            -- stored terminal reply (success data or error), or NULL
    operation_id TEXT,            -- set when the execution is a background operation
    created_ms INTEGER NOT NULL,
    PRIMARY KEY (uid, provider_id, request_id)
);
CREATE TABLE IF NOT EXISTS operations (
    operation_id TEXT PRIMARY KEY,
    uid INTEGER NOT NULL,
    request_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    args_json TEXT NOT NULL,
    state TEXT NOT NULL,          -- queued | running | succeeded | failed | cancelled
    progress_current INTEGER NOT NULL DEFAULT 0,
    progress_total INTEGER NOT NULL DEFAULT 0,
    progress_message TEXT NOT NULL DEFAULT '',
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    committed INTEGER NOT NULL DEFAULT 0,
    result_json TEXT,
    error_json TEXT,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS confirmations (
    confirmation_id TEXT PRIMARY KEY,
    resume_token TEXT NOT NULL UNIQUE,
    uid INTEGER NOT NULL,
    request_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    args_sha256 TEXT NOT NULL,
    screen_json TEXT NOT NULL,
    state TEXT NOT NULL,          -- pending | approved | denied | used
    expires_ms INTEGER NOT NULL,
    kind TEXT NOT NULL DEFAULT 'confirm',  -- confirm (USER_ACTION_REQUIRED) | auth (AUTH_REQUIRED)
    scopes TEXT NOT NULL DEFAULT ''        -- auth: the scopes the user grants (comma-separated)
);
CREATE TABLE IF NOT EXISTS grants (       -- scope grants a user gave a caller UID (§7.1)
    uid INTEGER NOT NULL,
    scope TEXT NOT NULL,
    expires_ms INTEGER NOT NULL,
    PRIMARY KEY (uid, scope)
);
CREATE TABLE IF NOT EXISTS executions (   -- audit: one row per business side effect
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    uid INTEGER NOT NULL,
    request_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    at_ms INTEGER NOT NULL
);
"""


def now_ms() -> int:
    return int(time.time() * 1000)


class Store:
    """One SQLite database per app (autocommit off; explicit transactions)."""

    def __init__(self, path: Path, extra_schema: str = "") -> None:
        self.path = path
        self.db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(CORE_SCHEMA + extra_schema)
        self._depth = 0

    @contextlib.contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        """One atomic transaction (nested calls join the outer one)."""
        if self._depth:
            self._depth += 1
            try:
                yield self.db
            finally:
                self._depth -= 1
            return
        self.db.execute("BEGIN IMMEDIATE")
        self._depth = 1
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        else:
            self.db.execute("COMMIT")
        finally:
            self._depth = 0

    def one(self, sql: str, *params: Any) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self.db.execute(sql, params).fetchone()
        return row

    def all(self, sql: str, *params: Any) -> list[sqlite3.Row]:
        return list(self.db.execute(sql, params).fetchall())

    def run(self, sql: str, *params: Any) -> int:
        return self.db.execute(sql, params).rowcount

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.db.close()
