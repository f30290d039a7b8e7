"""The fake phone's logcat, ps, date, screencap and input (issue 16), as adbd serves them.

`fakephone.FakePhone._serve` hands every `shell:`/`exec:` service to `service_for` first;
the commands here stream (logcat follows until the host closes the stream) or return bytes
(screencap), which the fake phone's one-shot text command table does not do.

Formats are AOSP's: `logcat -v threadtime -v epoch -v uid` (system/logging/liblog/
logprint.cpp), `ps -A -o PID,UID,NAME` (toybox ps), `date +%s.%N` (toybox date),
`screencap -p` (a PNG on stdout, frameworks/base/cmds/screencap), `input tap X Y`,
`input swipe X1 Y1 X2 Y2 [MS]`, `input text TEXT`, `input keyevent KEY`
(frameworks/base/cmds/input).
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.device.fakephone import FakePhone, _Stream

Service = Callable[["_Stream"], Awaitable[None]]


def uid_name(uid: int) -> str:
    if uid >= 10_000:
        return f"u{uid // 100_000}_a{uid % 100_000 - 10_000}"
    return {0: "root", 1000: "system", 2000: "shell"}.get(uid, str(uid))


def threadtime(t_s: float, uid: int, pid: int, tid: int, level: str, tag: str,
               message: str) -> str:
    """One line as `logcat -v threadtime -v epoch -v uid` prints it."""
    return f"{t_s:14.3f} {uid_name(uid):>8} {pid:5d} {tid:5d} {level} {tag:<8}: {message}"


def plain_threadtime(t_s: float, uid: int, pid: int, tid: int, level: str, tag: str,
                     message: str) -> str:
    """The same entry as `logcat -v threadtime` prints it before Android 7 (no uid)."""
    lt = time.localtime(t_s)
    ms = int((t_s % 1) * 1000)  # logcat truncates to the millisecond
    return (f"{time.strftime('%m-%d %H:%M:%S', lt)}.{ms:03d} {pid:5d} {tid:5d} {level} "
            f"{tag:<8}: {message}")


@dataclass
class FakeAndroid:
    """Android-side state of one fake phone (logs, processes, clock, screen, input)."""

    phone: Any
    history: list[Any] = field(default_factory=list)  # raw lines or entry tuples
    processes: dict[int, tuple[int, str]] = field(default_factory=dict)  # pid → (uid, name)
    clock_skew_s: float = 0.0  # the phone's clock minus the desktop's
    screen_png: Callable[[], bytes] | None = None
    inputs: list[list[str]] = field(default_factory=list)
    _followers: set[asyncio.Queue[Any]] = field(default_factory=set)
    logcat_opens: int = 0
    before_android_7: bool = False  # logcat refuses `-v uid` / `-v epoch`

    def now(self) -> float:
        return time.time() + self.clock_skew_s

    # --- called from the test thread ------------------------------------------------------
    def log(self, uid: int, pid: int, level: str, tag: str, message: str,
            at: float | None = None) -> str:
        """Log a line now (phone clock) and push it to every running `logcat` (in the
        format that logcat asked for)."""
        entry = (self.now() if at is None else at, uid, pid, pid, level, tag, message)
        return self.raw(entry)  # type: ignore[arg-type]

    def raw(self, text: Any) -> Any:
        """Push a raw line (str, printed as is) or an entry tuple (formatted per stream)."""
        def push() -> None:
            self.history.append(text)
            for q in list(self._followers):
                q.put_nowait(text)

        self.phone._loop.call_soon_threadsafe(push)
        return text

    def followers(self) -> int:
        return len(self._followers)

    # --- services (on the phone's loop) ----------------------------------------------------
    def service_for(self, service: str) -> Service | None:
        kind, _, line = service.partition(":")
        if kind not in ("shell", "exec"):
            return None
        try:
            argv = shlex.split(line)
        except ValueError:
            return None
        if not argv:
            return None
        name = argv[0]
        if name == "logcat":
            return lambda s: self._logcat(s, argv[1:])
        if name == "ps":
            return lambda s: self._write(s, self._ps())
        if name == "date" and argv[1:] == ["+%s.%N"]:
            return lambda s: self._write(s, f"{self.now():.9f}\n".encode())
        if name == "screencap" and self.screen_png is not None:
            return lambda s: self._write(s, self.screen_png() if self.screen_png else b"")
        if name == "log":  # toybox log: -p PRIORITY -t TAG MESSAGE…
            args = argv[1:]
            prio, tag = "i", "log"
            while len(args) >= 2 and args[0] in ("-p", "-t"):
                if args[0] == "-p":
                    prio = args[1]
                else:
                    tag = args[1]
                args = args[2:]
            self.raw((self.now(), 2000, 9999, 9999, prio.upper()[:1], tag, " ".join(args)))
            return lambda s: self._write(s, b"")
        if name == "input":
            self.inputs.append(argv[1:])
            return lambda s: self._write(s, b"")
        return None

    async def _write(self, stream: _Stream, data: bytes) -> None:
        await stream.write(data)

    def _ps(self) -> bytes:
        rows = ["  PID   UID NAME"]
        rows += [f"{pid:5d} {uid_name(uid):>5} {name}" for pid, (uid, name)
                 in sorted(self.processes.items())]
        return ("\n".join(rows) + "\n").encode()

    async def _logcat(self, stream: _Stream, args: list[str]) -> None:
        self.logcat_opens += 1
        modern = "uid" in args or "epoch" in args
        if modern and self.before_android_7:
            await stream.write(b"logcat: Unknown format 'epoch'\n")
            return

        def fmt(entry: Any) -> str:
            if isinstance(entry, str):
                return entry
            return (threadtime if modern else plain_threadtime)(*entry)

        if "-d" in args:
            await stream.write(("\n".join(fmt(e) for e in self.history) + "\n").encode())
            return
        queue: asyncio.Queue[Any] = asyncio.Queue()
        self._followers.add(queue)
        try:
            await stream.write(b"--------- beginning of main\n")
            tail = args[args.index("-T") + 1] if "-T" in args else ""
            if tail.isdigit():
                for entry in self.history[-int(tail):]:
                    await stream.write((fmt(entry) + "\n").encode())
            while not stream.closed:
                with contextlib.suppress(TimeoutError):
                    entry = await asyncio.wait_for(queue.get(), 0.1)
                    await stream.write((fmt(entry) + "\n").encode())
        finally:
            self._followers.discard(queue)


def android_of(phone: FakePhone) -> FakeAndroid:
    """The phone's Android-side state (created on first use)."""
    state = getattr(phone, "_android", None)
    if state is None:
        state = FakeAndroid(phone)
        phone._android = state
    return state
