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


class CallRow:
    """One MCP tools/call as the Bridge view shows it (all text untrusted, bounded later)."""

    __slots__ = ("arguments", "at_ms", "call_id", "client", "is_error", "request_id",
                 "state", "summary", "tool")

    def __init__(self, call_id: str, at_ms: float) -> None:
        self.call_id = call_id
        self.at_ms = at_ms
        self.client = ""
        self.tool = ""
        self.state = "running"
        self.summary = ""
        self.request_id = ""
        self.is_error = False
        self.arguments: Any = None


class BridgeState:
    """The bridge session folded from journal records (what the Bridge view renders)."""

    MAX_CALLS = 5000

    def __init__(self) -> None:
        self.calls: dict[str, CallRow] = {}
        self.clients: list[str] = []
        self.tools: list[str] = []
        self.problems: list[str] = []
        self.device = ""
        #: confirmation_id → what the virtual screen shows (until answered)
        self.pending: dict[str, dict[str, Any]] = {}
        #: call_id → "confirm on the phone" notes (a phone's confirmation has no id here)
        self.waiting_on_phone: dict[str, str] = {}
        self.exchanges = 0
        self.list_changed = 0

    def apply(self, records: list[dict[str, Any]]) -> bool:
        """Fold new records in; True when anything visible changed."""
        changed = False
        for rec in records:
            kind = rec.get("type")
            if kind == "exchange":
                self.exchanges += 1
                changed = True
                continue
            if kind != REC_MCP or not isinstance(rec.get("data"), dict):
                continue
            changed = True
            self._apply_mcp(rec["data"], float(rec.get("at_ms") or 0))
        return changed

    def _apply_mcp(self, d: dict[str, Any], at_ms: float) -> None:
        event = str(d.get("event", ""))
        cid = str(d.get("call_id", ""))
        if event == "bridge_started":
            self.device = str(d.get("device", ""))
            self.tools = [str(t) for t in d.get("tools") or []][:2000]
            self.problems = [str(p) for p in d.get("problems") or []][:200]
        elif event == "tools_list_changed":
            self.tools = [str(t) for t in d.get("tools") or []][:2000]
            self.list_changed += 1
        elif event == "client":
            self.clients.append(f"{d.get('name', '?')} {d.get('version', '')}".strip())
        elif event == "call_started" and cid:
            row = self.calls.setdefault(cid, CallRow(cid, at_ms))
            row.client, row.tool = str(d.get("client", "")), str(d.get("tool", ""))
            row.arguments = d.get("arguments")
            if len(self.calls) > self.MAX_CALLS:
                self.calls.pop(next(iter(self.calls)))
        elif event == "call_finished" and cid:
            row = self.calls.setdefault(cid, CallRow(cid, at_ms))
            row.tool = row.tool or str(d.get("tool", ""))
            row.client = row.client or str(d.get("client", ""))
            row.is_error = bool(d.get("is_error"))
            row.state = "error" if row.is_error else "ok"
            row.summary = str(d.get("summary", ""))
            row.request_id = str(d.get("request_id") or row.request_id)
            self.waiting_on_phone.pop(cid, None)
        elif event in ("execution", "operation", "confirmation", "retry") and cid:
            row = self.calls.get(cid)
            if row is not None:
                row.request_id = str(d.get("request_id") or row.request_id)
                if event == "operation" and row.state == "running":
                    row.summary = f"operation {d.get('operation_id', '')}: {d.get('state', '')}"
                if event == "confirmation":
                    state = str(d.get("state", ""))
                    row.summary = f"confirmation {state}"
                    if state == "pending" and str(d.get("screen", "")) == "phone":
                        self.waiting_on_phone[cid] = row.tool
                    else:
                        self.waiting_on_phone.pop(cid, None)
        elif event == "confirmation_screen":
            conf = str(d.get("confirmation_id", ""))
            if conf:
                self.pending[conf] = dict(d)
        elif event == "confirmation_answer":
            self.pending.pop(str(d.get("confirmation_id", "")), None)


def latest_bridge_journal(directory: Path | str | None = None) -> Path | None:
    """The most recently started bridge session (journal named `mcp-bridge…`)."""
    from inspector.session.journal import list_sessions

    found = [s for s in list_sessions(directory) if s.name.startswith("mcp-bridge")]
    if not found:
        return None
    return Path(max(found, key=lambda s: s.created_ms).path)
