"""The provider's log lines and crash in the exchange detail (plain text, bounded).

Log text is the provider's: untrusted, so every line goes through `bound` (length cut,
control and bidi characters neutralised) and is shown as plain text only.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from inspector.protocol.exchange import Exchange
from inspector.protocol.logs import CrashReport, LogLine
from inspector.ui.text import bound

MAX_SHOWN_LINES = 200
MAX_TRACE_SHOWN = 20


def _clock(ms: float) -> str:
    t = time.localtime(ms / 1000.0)
    return time.strftime("%H:%M:%S", t) + f".{int(ms) % 1000:03d}"


def describe_logs(ex: Exchange) -> list[str]:
    """Header lines for the detail pane: the crash first, then what the provider logged."""
    return describe_log_lines(ex.logs, ex.logs_dropped, ex.crash)


def describe_log_lines(logs: Sequence[LogLine], dropped: int = 0,
                       crash: CrashReport | None = None) -> list[str]:
    out: list[str] = []
    if crash is not None:
        c = crash
        out.append(f"// ── {bound(c.summary(0), 200)} ──")
        for t in c.trace[:MAX_TRACE_SHOWN]:
            out.append(f"//   {bound(t, 300)}")
        if len(c.trace) > MAX_TRACE_SHOWN:
            out.append(f"//   … {len(c.trace) - MAX_TRACE_SHOWN} more trace lines")
    if logs:
        errors = sum(1 for ln in logs if ln.is_error)
        n = len(logs)
        out.append(f"// ── provider log: {n} line{'' if n == 1 else 's'}"
                   + (f", {errors} errors" if errors else "")
                   + (f", {dropped} more not kept" if dropped else "") + " ──")
        for ln in logs[:MAX_SHOWN_LINES]:
            out.append(f"// {_clock(ln.time_ms)} {ln.pid:>5} {ln.tid:>5} {ln.level} "
                       f"{bound(ln.tag, 40)}: {bound(ln.message, 400)}")
        if len(logs) > MAX_SHOWN_LINES:
            out.append(f"// … {len(logs) - MAX_SHOWN_LINES} more lines (export to see them)")
    return out
