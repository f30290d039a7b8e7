"""The virtual device's log channel (its `logcat`) and its crash fault.

Reference apps log through `app_log(app, level, tag, message)`, as an Android app calls
`android.util.Log`; each entry carries the time, the app process's pid (a new one per
process start, like Android), a thread id, the app's uid, the level and the tag. The
device keeps a bounded ring buffer (like logd's main buffer, AOSP system/logging/logd) and
serves it over the relay protocol with the virtual-device-only op `logcat`
(docs/relay-protocol.md §4.2): a dump like `logcat -d`, and with `follow: true` a stream of
`log` EVENTs like a running `logcat`. On a phone the desktop reads the real logcat over adb
instead (`inspector.device.logcat`).

The `crash` fault (docs/relay-protocol.md §6.1) makes an app's process die during its next
IPC the way an uncaught exception kills an Android app: `AndroidRuntime` logs
`FATAL EXCEPTION: main`, `Process: <pkg>, PID: <pid>` and a Java stack trace
(RuntimeInit.KillApplicationHandler, AOSP frameworks/base/core/java/com/android/internal/os/
RuntimeInit.java), `ActivityManager` logs `Process <pkg> (pid <pid>) has died`
(ProcessList, AOSP frameworks/base/services/core/java/com/android/server/am/ProcessList.java),
and the caller's binder call fails with a DeadObjectException (relay error `IPC_FAILED`).
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING

from inspector.protocol.bundle import Bundle, BundleArray, Int, Long
from inspector.protocol.logs import LEVELS, LogLine, line_to_bundle
from inspector.relay.api import BAD_ARGS, IPC_FAILED, NOT_FOUND, RelayError, ServerConnection

if TYPE_CHECKING:
    from inspector.virtual.app import VirtualApp
    from inspector.virtual.device import VirtualDevice

#: Entries the ring buffer keeps (logd's default main buffer is 256 KiB; a few thousand lines).
BUFFER_LINES = 5000
MAX_DUMP_LINES = 2000
DEFAULT_DUMP_LINES = 500
SYSTEM_PID = 1000  # system_server, as far as the virtual device's log shows it
SYSTEM_UID = 1000
FIRST_PID = 4100


@dataclass
class ArmedCrash:
    exception: str
    message: str


class LogChannel:
    """The device's log buffer, its followers and the armed crash faults."""

    def __init__(self, device: VirtualDevice, capacity: int = BUFFER_LINES) -> None:
        self.device = device
        self.lines: deque[tuple[int, LogLine]] = deque(maxlen=capacity)
        self._seq = itertools.count(1)
        self._pids: dict[tuple[str, int], int] = {}
        self._next_pid = itertools.count(FIRST_PID, 7)
        self._followers: dict[str, ServerConnection] = {}
        self.crashes: dict[str, ArmedCrash] = {}

    # --- writing ------------------------------------------------------------------------------
    def pid_of(self, app: VirtualApp) -> int:
        """The pid of the app's current process (a new pid after every restart)."""
        key = (app.package, app.process_starts)
        pid = self._pids.get(key)
        if pid is None:
            pid = self._pids[key] = next(self._next_pid)
        return pid

    def log(self, app: VirtualApp, level: str, tag: str, message: str, *,
            tid: int | None = None) -> LogLine:
        """An entry from the app's process (android.util.Log)."""
        pid = self.pid_of(app)
        return self.append(LogLine.make(time_ms=time.time() * 1000.0, pid=pid,
                                        tid=pid if tid is None else tid, uid=app.uid,
                                        level=level, tag=tag, message=message,
                                        package=app.package))

    def system(self, level: str, tag: str, message: str, package: str = "") -> LogLine:
        """An entry from system_server (ActivityManager …), about `package` when given."""
        return self.append(LogLine.make(time_ms=time.time() * 1000.0, pid=SYSTEM_PID,
                                        tid=SYSTEM_PID + 17, uid=SYSTEM_UID, level=level,
                                        tag=tag, message=message, package=package))

    def append(self, line: LogLine) -> LogLine:
        seq = next(self._seq)
        self.lines.append((seq, line))
        if self._followers:
            event = line_to_bundle(seq, line)
            event["event"] = "log"
            for cid, conn in list(self._followers.items()):
                if conn.is_closed():
                    self._followers.pop(cid, None)
                    continue
                with contextlib.suppress(Exception):
                    conn.emit(event)
        return line

    # --- the `logcat` op (§4.2) ------------------------------------------------------------------
    def op_logcat(self, args: Bundle, conn: ServerConnection) -> Bundle:
        after = args.get("after_seq", Long(0))
        if not isinstance(after, Int | Long) or isinstance(after, bool) or after < 0:
            raise RelayError(BAD_ARGS, "after_seq must be a long ≥ 0")
        max_lines = args.get("max_lines", Int(DEFAULT_DUMP_LINES))
        if (not isinstance(max_lines, Int) or isinstance(max_lines, bool)
                or not 1 <= max_lines <= MAX_DUMP_LINES):
            raise RelayError(BAD_ARGS, f"max_lines must be an int in 1…{MAX_DUMP_LINES}")
        follow = args.get("follow", False)
        if not isinstance(follow, bool):
            raise RelayError(BAD_ARGS, "follow must be a boolean")
        oldest = self.lines[0][0] if self.lines else 0
        dropped = max(0, oldest - int(after) - 1) if self.lines and int(after) < oldest else 0
        out = [line_to_bundle(s, ln) for s, ln in self.lines if s > int(after)]
        out = out[-int(max_lines):]
        next_seq = self.lines[-1][0] if self.lines else int(after)
        if follow:
            self._followers[conn.connection_id] = conn
        return Bundle(lines=BundleArray(out), next_seq=Long(next_seq), dropped=Long(dropped),
                      following=conn.connection_id in self._followers)

    # --- the `crash` fault ------------------------------------------------------------------
    def arm_crash(self, args: Bundle) -> None:
        package = args.get("package")
        if not isinstance(package, str):
            raise RelayError(BAD_ARGS, "the crash fault needs package: String")
        if package not in self.device.apps:
            raise RelayError(NOT_FOUND, f"package {package!r} is not installed")
        exception = args.get("exception", "java.lang.IllegalStateException")
        message = args.get("message", "injected crash (fault 'crash')")
        if not isinstance(exception, str) or not isinstance(message, str):
            raise RelayError(BAD_ARGS, "crash exception and message must be Strings")
        self.crashes[package] = ArmedCrash(exception[:200], message[:500])

    def crash_if_armed(self, app: VirtualApp, what: str) -> None:
        """Called as an IPC enters the app: an armed crash kills the process here."""
        armed = self.crashes.pop(app.package, None)
        if armed is None:
            return
        self.write_crash(app, armed.exception, armed.message)
        app.kill_process()
        raise RelayError(IPC_FAILED,
                         f"{app.package} died during {what} (DeadObjectException)")

    def write_crash(self, app: VirtualApp, exception: str, message: str) -> int:
        """What Android logs when an app's main thread throws (see module docstring)."""
        pid = self.pid_of(app)
        cls = app.package + ".ToolProvider"
        trace = [
            "FATAL EXCEPTION: main",
            f"Process: {app.package}, PID: {pid}",
            f"{exception}: {message}",
            f"\tat {cls}.onToolCall(ToolProvider.java:87)",
            f"\tat {cls}$1.run(ToolProvider.java:52)",
            "\tat android.os.Handler.handleCallback(Handler.java:958)",
            "\tat android.os.Handler.dispatchMessage(Handler.java:99)",
            "\tat android.os.Looper.loopOnce(Looper.java:205)",
            "\tat android.os.Looper.loop(Looper.java:294)",
            "\tat android.app.ActivityThread.main(ActivityThread.java:8177)",
            "\tat java.lang.reflect.Method.invoke(Native Method)",
            "\tat com.android.internal.os.RuntimeInit$MethodAndArgsCaller.run("
            "RuntimeInit.java:552)",
            "\tat com.android.internal.os.ZygoteInit.main(ZygoteInit.java:971)",
        ]
        for t in trace:
            self.log(app, "E", "AndroidRuntime", t)
        self.log(app, "I", "Process", f"Sending signal. PID: {pid} SIG: 9")
        self.system("I", "ActivityManager",
                    f"Process {app.package} (pid {pid}) has died: fg  SVC", app.package)
        return pid


def app_log(app: VirtualApp, level: str, tag: str, message: str) -> None:
    """Log from a reference app (a no-op when the app is not installed on a device)."""
    device = app.device
    channel = getattr(device, "logcat", None) if device is not None else None
    if channel is not None and level in LEVELS:
        channel.log(app, level, tag, message)


def replay_lines(app: VirtualApp, lines: list[LogLine]) -> None:
    """A replayed provider logs again what the recorded one logged for the same call (now,
    from its own process), so a replay shows the recorded lines beside the recorded answer."""
    for line in lines[:500]:
        if line.package and line.package != app.package:
            continue  # system lines about the process stay in the recording
        app_log(app, line.level, line.tag, line.message)
