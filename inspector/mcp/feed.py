"""The bridge's own events in the session journal, and reading them back live.

The bridge journals every provider exchange through the session recorder (the same
`JournalWriter.on_exchange` as `--record`), plus `mcp` records of its own: which client
connected, each tools/call (started / finished, with the request_id of the CETP execution
behind it), pending confirmations and list_changed notifications. The window's Bridge view
tails the journal file with `JournalTail` (no Qt here), so it can attach to a bridge running
in another process; `bundle create` exports the same journal as a bug report.

Confirmations on the *virtual* device are answered by a person: the Bridge view (or any
tool) drops an answer file next to the journal (`<journal>.answers/<confirmation_id>`,
content `approve` or `deny`); the bridge's virtual-device policy waits for it. This is the
virtual device's screen, not the bridge approving: nothing is answered without that file.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from pathlib import Path
from typing import Any

from inspector.session.journal import MAX_LINE_BYTES

REC_MCP = "mcp"
_SAFE_ID = re.compile(r"^[A-Za-z0-9_-]{1,80}$")


def answers_dir(journal_path: Path | str) -> Path:
    p = Path(journal_path)
    return p.with_name(p.name + ".answers")


def write_answer(journal_path: Path | str, confirmation_id: str, approve: bool) -> Path:
    """What the virtual device's screen does when its user taps Approve or Deny."""
    if not _SAFE_ID.match(confirmation_id):
        raise ValueError(f"not a confirmation id: {confirmation_id[:80]!r}")
    d = answers_dir(journal_path)
    d.mkdir(parents=True, exist_ok=True)
    target = d / confirmation_id
    tmp = d / f".{confirmation_id}.tmp"
    tmp.write_text("approve" if approve else "deny", encoding="ascii")
    tmp.replace(target)
    return target


async def wait_answer(journal_path: Path | str, confirmation_id: str, timeout_s: float,
                      poll_s: float = 0.1) -> bool | None:
    """The answer file's verdict, or None when nobody answered in time."""
    if not _SAFE_ID.match(confirmation_id):
        return None
    target = answers_dir(journal_path) / confirmation_id
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            text = target.read_text(encoding="ascii", errors="replace").strip()
            with contextlib.suppress(OSError):
                target.unlink()
            return text == "approve"
        await asyncio.sleep(poll_s)
    return None


class JournalTail:
    """Reads the records appended to a journal since the last `poll()` (bounded per call).

    Lines are parsed defensively (journals are untrusted input): an over-long or broken
    line is skipped, a torn last line is kept for the next poll.
    """

    def __init__(self, path: Path | str, max_bytes_per_poll: int = 4 * 1024 * 1024) -> None:
        self.path = Path(path)
        self.offset = 0
        self.max_bytes = max_bytes_per_poll
        self._partial = b""
        self.header: dict[str, Any] | None = None

    def poll(self) -> list[dict[str, Any]]:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                chunk = f.read(self.max_bytes)
        except OSError:
            return []
        self.offset += len(chunk)
        data = self._partial + chunk
        lines = data.split(b"\n")
        self._partial = lines.pop()
        if len(self._partial) > MAX_LINE_BYTES:
            self._partial = b""
        out: list[dict[str, Any]] = []
        for raw in lines:
            if not raw.strip() or len(raw) > MAX_LINE_BYTES:
                continue
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(obj, dict):
                continue
            if self.header is None and "format" in obj:
                self.header = obj
                continue
            out.append(obj)
        return out
