"""A progress bar on stderr for async operations and file transfers.

On a terminal it redraws one line (`\\r`); otherwise (pipes, CI logs, tests) it prints a
line only when the state or message changes, so logs stay short. stdout is never touched,
so `--json` output stays one clean document.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from inspector.cli.terminal_text import safe_text

BAR_WIDTH = 24


class ProgressBar:
    """Draws `label [#####.....] 40/100 message` and remembers what it last drew."""

    def __init__(self, label: str, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last_line = ""
        self._last_key = ""
        self._last_draw = 0.0
        self.updates = 0

    def update(self, current: float | None, total: float | None, message: str = "") -> None:
        if not self.enabled:
            return
        self.updates += 1
        msg = safe_text(message, 80, one_line=True)
        if current is not None and total:
            frac = max(0.0, min(1.0, float(current) / float(total)))
            filled = int(frac * BAR_WIDTH)
            bar = "#" * filled + "." * (BAR_WIDTH - filled)
            line = f"{self.label} [{bar}] {_num(current)}/{_num(total)} {msg}".rstrip()
        else:
            line = f"{self.label} {msg}".rstrip()
        if self.tty:
            now = time.monotonic()
            if line != self._last_line and (now - self._last_draw > 0.05 or current == total):
                self.stream.write("\r\x1b[2K" + line)
                self.stream.flush()
                self._last_draw = now
            self._last_line = line
            return
        # not a terminal: one line per 10 % step or message change, so logs stay short
        step = (int(float(current) * 10 / float(total)) if current is not None and total
                else None)
        key = f"{step}|{msg}"
        if key != self._last_key:
            self.stream.write(line + "\n")
            self.stream.flush()
            self._last_key = key
        self._last_line = line

    def done(self, message: str = "") -> None:
        if not self.enabled:
            return
        if self.tty:
            self.stream.write("\r\x1b[2K")
        if message:
            self.stream.write(f"{self.label} {safe_text(message, 200, one_line=True)}\n")
        self.stream.flush()


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:.1f}"
