"""Repairs that keep a journal append-only (issue 12).

A crash can leave a journal's last line torn (no newline). Continuing the journal used to
cut that line — and a header-only journal lost its header. Now nothing is ever removed: the
torn bytes are copied aside and the line is closed with a newline, so it reads as one
damaged line. Journals continued by older versions may hold a torn line with the next
record glued to its end: `salvage` recovers that record.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

log = logging.getLogger(__name__)


class TornTail(BaseModel):
    """A last line without its newline, found when a journal is continued."""

    path: str
    bytes: int
    kept_in: str | None = None  # where its bytes were copied (None: it was a whole line)


def seal_torn_tail(path: Path, max_line_bytes: int = 64 * 1024 * 1024) -> TornTail | None:
    """Make appends start on a fresh line — without removing a byte (journals are
    append-only, issue 12). A last line that parses whole only lacked its newline; a torn
    one is copied aside to `<id>.torn-<ms>.bak` and stays in the journal as one damaged
    line, so readers report it. Returns what was found (None: nothing torn)."""
    size = path.stat().st_size
    if size == 0:
        return None
    with open(path, "rb+") as f:
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return None
        pos, block, start_of_tail = size, 65536, 0
        while pos > 0:
            start = max(0, pos - block)
            f.seek(start)
            chunk = f.read(pos - start)
            nl = chunk.rfind(b"\n")
            if nl >= 0:
                start_of_tail = start + nl + 1
                break
            pos = start
        f.seek(start_of_tail)
        tail = f.read(min(size - start_of_tail, max_line_bytes + 1))
        whole = True
        try:
            whole = isinstance(json.loads(tail), dict)
        except (ValueError, RecursionError):
            whole = False
        kept: str | None = None
        if not whole:
            side = path.with_name(f"{path.stem}.torn-{int(time.time() * 1000)}.bak")
            f.seek(start_of_tail)
            side.write_bytes(f.read())
            kept = str(side)
        f.seek(0, os.SEEK_END)
        f.write(b"\n")
    torn = TornTail(path=str(path), bytes=size - start_of_tail, kept_in=kept)
    if kept:
        log.warning("journal %s had a torn last line (%d bytes), kept in %s", path,
                    torn.bytes, kept)
    return torn


_RECORD_START = re.compile(rb'\{"type":"')


def salvage(line: bytes) -> dict[str, Any] | None:
    """A record written after a torn line without a newline between them (an older
    inspector continued such journals) sits at the end of the damaged line: recover it."""
    for m in _RECORD_START.finditer(line, 1):
        try:
            obj = json.loads(line[m.start():])
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict):
            return obj
    return None
