"""The provider's log next to each call: log lines, crashes and how they are recognised.

A `LogLine` is one Android log entry (as `logcat -v threadtime` shows it: time, pid, tid,
level, tag, message) plus the uid and package when the reader knows them. Lines come from
the virtual device's log channel (`inspector.virtual.logcat`) or a phone's logcat
(`inspector.device.logcat`); the session layer attaches them to the exchanges that were
running (`inspector.session.provider_logs`).

A crash is recognised from what Android itself logs (pure functions, no I/O):
- `AndroidRuntime` `FATAL EXCEPTION: <thread>` followed by `Process: <package>, PID: <pid>`
  and the Java stack trace — `RuntimeInit.KillApplicationHandler.uncaughtException`
  (AOSP frameworks/base/core/java/com/android/internal/os/RuntimeInit.java);
- `ActivityManager` `Process <package> (pid <pid>) has died` — `ProcessList`/
  `ActivityManagerService.appDiedLocked` (AOSP frameworks/base/services/core/java/com/
  android/server/am/ProcessList.java; wording varies between releases, so the match is loose);
- `ActivityManager` `ANR in <package>` — `ProcessErrorStateRecord.appNotResponding`
  (AOSP frameworks/base/services/core/java/com/android/server/am/ProcessErrorStateRecord.java).
Only a real phone shows the exact wording of its release and vendor; the patterns are the
AOSP ones and tolerate extra text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from inspector.protocol.bundle import Bundle, Int, Long

#: Android log priorities (android.util.Log): V D I W E F(A = assert, shown as F).
LEVELS = ("V", "D", "I", "W", "E", "F")
ERROR_LEVELS = frozenset({"E", "F"})
#: Bounds on what one line may carry (logcat itself caps an entry near 4 KiB).
MAX_TAG_CHARS = 128
MAX_MESSAGE_CHARS = 4096
#: How many trace lines a crash keeps, and how many the call's error quotes.
MAX_TRACE_LINES = 60
ERROR_TRACE_LINES = 3


class LogLine(BaseModel):
    """One log entry, bounded (provider text: untrusted, shown as plain text only)."""

    model_config = ConfigDict(frozen=True)

    time_ms: float  # wall-clock time of the entry (the device's clock, aligned by the reader)
    pid: int = 0
    tid: int = 0
    uid: int | None = None
    level: str = "I"
    tag: str = ""
    message: str = ""
    package: str = ""  # the package the reader attributed the line to ("" unknown)

    @classmethod
    def make(cls, **kw: Any) -> LogLine:
        """A line with its tag and message cut to the bounds and the level normalised."""
        level = str(kw.pop("level", "I"))[:1].upper() or "I"
        if level == "A":
            level = "F"
        if level not in LEVELS:
            level = "I"
        tag = str(kw.pop("tag", ""))[:MAX_TAG_CHARS]
        message = str(kw.pop("message", ""))[:MAX_MESSAGE_CHARS]
        return cls(level=level, tag=tag, message=message, **kw)

    @property
    def is_error(self) -> bool:
        return self.level in ERROR_LEVELS

    def text(self) -> str:
        """`logcat -v brief`-like one-line form (for the CLI and the detail view)."""
        return f"{self.level}/{self.tag}({self.pid}): {self.message}"


class CrashReport(BaseModel):
    """A provider process that died during a call, with what Android logged about it."""

    model_config = ConfigDict(frozen=True)

    package: str
    pid: int = 0
    kind: str = "crash"  # "crash" (FATAL EXCEPTION) | "died" (process death only) | "anr"
    exception: str = ""  # first trace line, e.g. "java.lang.IllegalStateException: boom"
    trace: list[str] = Field(default_factory=list)  # bounded stack trace lines

    def summary(self, lines: int = ERROR_TRACE_LINES) -> str:
        """'the provider crashed' + the first lines of the trace (the call's error text)."""
        what = {"crash": "the provider crashed", "anr": "the provider did not respond (ANR)",
                "died": "the provider's process died"}.get(self.kind, "the provider crashed")
        head = f"{what} ({self.package}, pid {self.pid})"
        shown = [t.strip() for t in self.trace[:lines] if t.strip()]
        return head + (": " + " | ".join(shown) if shown else "")


_FATAL = re.compile(r"FATAL EXCEPTION:\s*(?P<thread>.*)")
_PROCESS = re.compile(r"Process:\s*(?P<pkg>[\w.:]+),\s*PID:\s*(?P<pid>\d+)")
_DIED = re.compile(r"Process\s+(?P<pkg>[\w.:]+)\s+\(pid\s+(?P<pid>\d+)\)\s+has died")
_KILLING = re.compile(r"Killing\s+(?P<pid>\d+):(?P<pkg>[\w.:]+)/")
_ANR = re.compile(r"ANR in\s+(?P<pkg>[\w.:]+)")


def _proc_matches(proc: str, package: str) -> bool:
    """`com.x` or one of its processes `com.x:remote`."""
    return proc == package or proc.startswith(package + ":")


def mentions_package(line: LogLine, package: str) -> bool:
    """Whether a system line (ActivityManager …) reports on `package`'s process."""
    for rx in (_DIED, _KILLING, _ANR, _PROCESS):
        m = rx.search(line.message)
        if m and _proc_matches(m.group("pkg"), package):
            return True
    return False


def detect_crash(lines: Sequence[LogLine], package: str) -> CrashReport | None:
    """The crash (or death, or ANR) of `package` in `lines`, if Android logged one.

    A FATAL EXCEPTION block wins over a bare death line, which wins over an ANR. Bounded:
    at most `MAX_TRACE_LINES` trace lines are kept."""
    crash: CrashReport | None = None
    died: CrashReport | None = None
    anr: CrashReport | None = None
    i = 0
    n = len(lines)
    while i < n:
        ln = lines[i]
        msg = ln.message
        if ln.tag == "AndroidRuntime" and _FATAL.search(msg) and crash is None:
            pid = ln.pid
            proc = ln.package
            trace: list[str] = []
            j = i + 1
            while j < n and len(trace) < MAX_TRACE_LINES:
                nxt = lines[j]
                if nxt.tag != "AndroidRuntime" or nxt.pid != ln.pid:
                    if nxt.pid == ln.pid or nxt.tag == "AndroidRuntime":
                        break
                    j += 1  # another process interleaved: skip it
                    continue
                if _FATAL.search(nxt.message):
                    break
                m = _PROCESS.search(nxt.message)
                if m and not trace:
                    proc, pid = m.group("pkg"), int(m.group("pid"))
                else:
                    trace.append(nxt.message)
                j += 1
            if _proc_matches(proc, package):
                first = next((t.strip() for t in trace if t.strip()), "")
                crash = CrashReport(package=package, pid=pid, kind="crash",
                                    exception=first, trace=trace)
            i = j
            continue
        if died is None:
            m = _DIED.search(msg) or _KILLING.search(msg)
            if m and _proc_matches(m.group("pkg"), package):
                died = CrashReport(package=package, pid=int(m.group("pid")), kind="died",
                                   trace=[msg])
        if anr is None:
            m = _ANR.search(msg)
            if m and _proc_matches(m.group("pkg"), package):
                anr = CrashReport(package=package, pid=ln.pid, kind="anr", trace=[msg])
        i += 1
    return crash or died or anr


def line_to_bundle(seq: int, line: LogLine) -> Bundle:
    """A log entry as the relay protocol carries it (docs/relay-protocol.md §4.2)."""
    return Bundle(
        seq=Long(seq),
        time_ms=Long(int(line.time_ms)),
        pid=Int(line.pid),
        tid=Int(line.tid),
        uid=Int(line.uid if line.uid is not None else -1),
        level=line.level,
        tag=line.tag,
        message=line.message,
        package=line.package,
    )


def line_from_bundle(b: Bundle) -> LogLine | None:
    """A `log` event or a `logcat` line back to a `LogLine` (None when malformed)."""
    try:
        uid = int(b.get("uid", -1))  # type: ignore[call-overload]
        return LogLine.make(
            time_ms=float(b["time_ms"]),  # type: ignore[arg-type]
            pid=int(b.get("pid", 0)),  # type: ignore[call-overload]
            tid=int(b.get("tid", 0)),  # type: ignore[call-overload]
            uid=uid if uid >= 0 else None,
            level=str(b.get("level", "I")),
            tag=str(b.get("tag", "")),
            message=str(b.get("message", "")),
            package=str(b.get("package", "")),
        )
    except (KeyError, TypeError, ValueError):
        return None


def errors_logged(lines: Iterable[LogLine]) -> bool:
    return any(ln.is_error for ln in lines)
