"""Attach what a provider logged to the exchange that was running when it logged it.

`ProviderLogs` listens to the session's `Recorder`: while an exchange with a package is
running, every log line of that package (or a system line about its process, e.g.
ActivityManager's "has died") is added to `Exchange.logs`, bounded per exchange. When the
exchange finishes, a crash Android logged during it (`inspector.protocol.logs.detect_crash`)
is linked as `Exchange.crash` and, for a failed call, the error message starts with
"the provider crashed" and the first trace lines.

Lines come from the virtual device's `log` EVENTs (ordered before the reply on the same
connection, so they are always in time) or from a phone's logcat reader
(`inspector.device.logcat`), which lags: finished exchanges are kept for `grace_ms` and
late lines whose timestamp falls inside them are still attached (the exchange is then
republished so views refresh).
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from inspector.protocol.bundle import Bundle
from inspector.protocol.exchange import Exchange, ExchangeStatus
from inspector.protocol.logs import (
    MAX_TRACE_LINES,
    LogLine,
    detect_crash,
    line_from_bundle,
    mentions_package,
)

if TYPE_CHECKING:
    from inspector.consumer.recorder import Recorder
    from inspector.session.relay_link import RelayLink

log = logging.getLogger(__name__)

MAX_LINES_PER_EXCHANGE = 200
MAX_CHARS_PER_EXCHANGE = 64_000
#: A finished exchange still takes late lines (a phone's logcat lags) for this long.
GRACE_MS = 2000.0
RECENT_EXCHANGES = 64
LOGCAT_CAPABILITY = "logcat"


def _belongs(line: LogLine, package: str) -> bool:
    """The package's own line, or a system line (uid < 10000, or unattributed) about its
    process (death, ANR) — never another app's line that merely mentions the name."""
    if not package:
        return False
    if line.package == package or line.package.startswith(package + ":"):
        return True
    system = (line.uid is not None and line.uid < 10_000) or (
        line.uid is None and not line.package)
    return system and mentions_package(line, package)


def _crash_relevant(line: LogLine) -> bool:
    return line.tag in ("AndroidRuntime", "ActivityManager", "Process") and line.level in (
        "E", "F", "I", "W")


class ProviderLogs:
    """Log lines → exchanges (see module docstring). No Qt, no I/O of its own."""

    def __init__(
        self,
        recorder: Recorder,
        *,
        max_lines: int = MAX_LINES_PER_EXCHANGE,
        max_chars: int = MAX_CHARS_PER_EXCHANGE,
        grace_ms: float = GRACE_MS,
        tolerance_ms: float = 0.0,
        now_ms: Callable[[], float] = lambda: time.time() * 1000.0,
    ) -> None:
        self.recorder = recorder
        self.max_lines = max_lines
        self.max_chars = max_chars
        self.grace_ms = grace_ms
        self.tolerance_ms = tolerance_ms
        self._now_ms = now_ms
        self._running: dict[str, Exchange] = {}
        self._recent: deque[Exchange] = deque(maxlen=RECENT_EXCHANGES)
        self._chars: dict[str, int] = {}
        self._relay_error: dict[str, str] = {}  # the relay's own message, before a crash
        self.lines_seen = 0
        self._followed_connects = -1
        self._sources: list[Any] = []  # readers to close with the session (phone logcat)
        recorder.add_listener(self._on_exchange)

    def add_source(self, source: Any) -> None:
        """A line source with `async aclose()` that lives as long as the session."""
        self._sources.append(source)

    async def settle(self) -> None:
        """Let every source deliver what was logged until now (a phone's logcat lags);
        at once when there is none. Call before reporting a finished call."""
        for s in list(self._sources):
            sync = getattr(s, "sync", None)
            if sync is not None:
                try:
                    await sync()
                except Exception:
                    log.debug("a log source could not catch up", exc_info=True)

    async def aclose(self) -> None:
        sources, self._sources = self._sources, []
        for s in sources:
            try:
                await s.aclose()
            except Exception:  # closing a reader of a vanished phone may fail
                log.debug("closing a log source failed", exc_info=True)

    # --- exchanges --------------------------------------------------------------------------
    def _on_exchange(self, ex: Exchange) -> None:
        if not ex.package:
            return
        if ex.status == ExchangeStatus.PENDING:
            self._running[ex.id] = ex
            return
        if self._running.pop(ex.id, None) is None:
            return
        self._recent.append(ex)
        self._link_crash(ex)

    def _link_crash(self, ex: Exchange) -> bool:
        """Link (or refresh, as late trace lines arrive) a crash found in the exchange's
        lines; True when something changed."""
        if not ex.logs:
            return False
        crash = detect_crash(ex.logs, ex.package)
        if crash is None or crash == ex.crash:
            return False
        ex.crash = crash
        if ex.status in (ExchangeStatus.TRANSPORT_ERROR, ExchangeStatus.PENDING):
            original = self._relay_error.setdefault(ex.id, ex.error_message or "")
            ex.error_message = crash.summary() + (f" — relay: {original}" if original else "")
        return True

    # --- lines ------------------------------------------------------------------------------
    def feed(self, line: LogLine, *, late: bool = True) -> list[Exchange]:
        """Attach one line; returns the exchanges it went to. `late=False` for a source
        whose lines never arrive after the reply (the virtual device's events).

        A late line stamped inside a call that already finished goes to that call, not to
        the next call of the same provider that is running when it arrives; the tolerance
        (clock alignment) only widens the windows when no call contains the line."""
        self.lines_seen += 1
        t = line.time_ms
        now = self._now_ms()
        finished = [] if not late else [
            ex for ex in self._recent
            if ex.finished_ms is not None and now - ex.finished_ms <= self.grace_ms
            and _belongs(line, ex.package)]
        # logcat times are whole milliseconds: compare with the start cut the same way
        inside = [ex for ex in finished
                  if int(ex.started_ms) <= t <= (ex.finished_ms or 0.0)]
        running = [ex for ex in self._running.values() if _belongs(line, ex.package)]
        if inside:
            hits_running = [ex for ex in running if t >= int(ex.started_ms)]
        else:
            hits_running = [ex for ex in running
                            if t >= int(ex.started_ms) - self.tolerance_ms]
        hits_finished = inside
        if not hits_running and not inside:
            hits_finished = [ex for ex in finished
                             if int(ex.started_ms) - self.tolerance_ms <= t
                             <= (ex.finished_ms or 0.0) + self.tolerance_ms]
        for ex in hits_running:
            self._add(ex, line)
        for ex in hits_finished:
            self._add(ex, line)
            self._link_crash(ex)
            self.recorder.add_findings(ex, ())  # republish: views refresh
        return hits_running + hits_finished

    def _add(self, ex: Exchange, line: LogLine) -> None:
        used = self._chars.get(ex.id, 0)
        size = len(line.message) + len(line.tag)
        full = len(ex.logs) >= self.max_lines or used + size > self.max_chars
        # a chatty provider must not push its own crash out: keep crash lines past the bound
        if full and not (_crash_relevant(line)
                         and len(ex.logs) < self.max_lines + MAX_TRACE_LINES + 5):
            ex.logs_dropped += 1
            return
        ex.logs.append(line)
        self._chars[ex.id] = used + size
        if len(self._chars) > 4 * RECENT_EXCHANGES:
            keep = set(self._running) | {x.id for x in self._recent}
            self._chars = {k: v for k, v in self._chars.items() if k in keep}
            self._relay_error = {k: v for k, v in self._relay_error.items() if k in keep}

    def feed_event(self, event: Bundle) -> None:
        """A virtual device `log` EVENT (docs/relay-protocol.md §4.2)."""
        line = line_from_bundle(event)
        if line is not None:
            self.feed(line, late=False)

    # --- the virtual device's log channel ----------------------------------------------------
    async def follow(self, link: RelayLink) -> bool:
        """Subscribe the link's current connection to `log` EVENTs when the relay serves
        `logcat` (the virtual device). Once per connection; False when not offered."""
        try:
            info = link.hello_info
        except Exception:
            return False
        if LOGCAT_CAPABILITY not in info.capabilities:
            return False
        if self._followed_connects == link.connects:
            return True
        self._followed_connects = link.connects
        try:
            await link.logcat(after_seq=0, max_lines=1, follow=True)
        except Exception as exc:  # logs are a help, never a reason to fail a session
            log.info("could not follow the device log: %s", exc)
            self._followed_connects = -1
            return False
        return True


def logs_doc(ex: Exchange, limit: int = MAX_LINES_PER_EXCHANGE) -> dict[str, Any]:
    """The JSON form the CLI prints for an exchange's logs (bounded)."""
    return {
        "exchange_id": ex.id,
        "method": ex.method,
        "package": ex.package,
        "lines": [ln.model_dump(mode="json") for ln in ex.logs[:limit]],
        "dropped": ex.logs_dropped + max(0, len(ex.logs) - limit),
        "crash": ex.crash.model_dump(mode="json") if ex.crash is not None else None,
    }
