"""The provider's log lines and crash in the exchange detail (plain text, bounded).

Log text is the provider's: untrusted, so every line goes through `bound` (length cut,
control and bidi characters neutralised) and is shown as plain text only.
"""

from __future__ import annotations

import time

from inspector.protocol.exchange import Exchange
from inspector.ui.text import bound

MAX_SHOWN_LINES = 200
MAX_TRACE_SHOWN = 20


def _clock(ms: float) -> str:
    t = time.localtime(ms / 1000.0)
    return time.strftime("%H:%M:%S", t) + f".{int(ms) % 1000:03d}"


def describe_logs(ex: Exchange) -> list[str]:
    """Header lines for the detail pane: the crash first, then what the provider logged."""
    out: list[str] = []
    if ex.crash is not None:
        c = ex.crash
        out.append(f"// ── {bound(c.summary(0), 200)} ──")
        for t in c.trace[:MAX_TRACE_SHOWN]:
            out.append(f"//   {bound(t, 300)}")
        if len(c.trace) > MAX_TRACE_SHOWN:
            out.append(f"//   … {len(c.trace) - MAX_TRACE_SHOWN} more trace lines")
    if ex.logs:
        errors = sum(1 for ln in ex.logs if ln.is_error)
        out.append(f"// ── provider log: {len(ex.logs)} lines"
                   + (f", {errors} errors" if errors else "")
                   + (f", {ex.logs_dropped} more not kept" if ex.logs_dropped else "") + " ──")
        for ln in ex.logs[:MAX_SHOWN_LINES]:
            out.append(f"// {_clock(ln.time_ms)} {ln.pid:>5} {ln.tid:>5} {ln.level} "
                       f"{bound(ln.tag, 40)}: {bound(ln.message, 400)}")
        if len(ex.logs) > MAX_SHOWN_LINES:
            out.append(f"// … {len(ex.logs) - MAX_SHOWN_LINES} more lines (export to see them)")
    return out
