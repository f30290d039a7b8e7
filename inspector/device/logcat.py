"""A phone's logcat, read over adb and narrowed to the packages being called (issue 16).

`adb shell logcat -v threadtime -v epoch -v uid -T 1` streams every new entry as
`<seconds.millis> <uid> <pid> <tid> <level> <tag>: <message>` (the `threadtime` layout with
the epoch and uid modifiers; AOSP system/logging/liblog/logprint.cpp, `-v` options in
https://developer.android.com/tools/logcat). `parse_line` also reads the plain threadtime
layout (`MM-DD HH:MM:SS.mmm pid tid level tag: message`, no uid) that older or vendor
builds print, and returns None for anything else (`--------- beginning of main`, vendor
banners, binary junk): a phone's log is untrusted input, every line is cut to
`MAX_LINE_CHARS` before it is parsed.

`LogcatReader` runs the blocking adbutils read loop in a thread of its own (never on the
event loop; a daemon thread, so a reader nobody stopped cannot hold the process), keeps
only the lines of the watched uids (or pids, when a build prints no uid; `ps -A -o
PID,UID,NAME` resolves them) plus system lines that name a watched package (ActivityManager
"has died", "ANR in"), aligns the phone's clock to the desktop's with one `date +%s.%N`
round trip, and hands lines to the loop in batches.

Only a real phone shows the exact wording of its release and vendor; the fake phone
(tests/device/fake_android_shell.py) serves the AOSP layouts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from inspector.device.blocking import run_blocking
from inspector.protocol.logs import LogLine, mentions_package

log = logging.getLogger(__name__)

LOGCAT_COMMAND = "logcat -v threadtime -v epoch -v uid -T 1"
#: before Android 7 logcat knows neither modifier: plain threadtime, pids resolved with ps
LOGCAT_FALLBACK = "logcat -v threadtime -T 1"
PID_REFRESH_S = 2.0
MAX_LINE_CHARS = 8192
READ_CHUNK = 16384
BATCH_LINES = 200
SYNC_TAG = "CetpInspectorSync"
#: system lines that can be about a watched app's process (death, ANR, crash of a child)
SYSTEM_TAGS = frozenset({"ActivityManager", "ActivityTaskManager", "AndroidRuntime"})

_LINE = re.compile(
    r"^\s*(?:(?P<epoch>\d{1,12}\.\d{1,9})|(?P<date>\d\d-\d\d)\s+(?P<clock>\d\d:\d\d:\d\d\.\d{1,9}))"
    r"\s+(?:(?P<uid>[A-Za-z_][\w]*|\d+)\s+)?(?P<pid>\d+)\s+(?P<tid>\d+)\s+"
    r"(?P<level>[VDIWEFA])\s+(?P<tag>.*?)\s*: ?(?P<msg>.*)$"
)
_APP_UID = re.compile(r"^u(?P<user>\d+)_a(?P<app>\d+)$")
_ISOLATED_UID = re.compile(r"^u(?P<user>\d+)_i(?P<iso>\d+)$")
#: AID names logcat prints for system uids (AOSP system/core/libcutils/include/private/
#: android_filesystem_config.h).
_AID_NAMES = {"root": 0, "system": 1000, "radio": 1001, "bluetooth": 1002, "shell": 2000,
              "media": 1013, "nfc": 1027, "logd": 1036, "keystore": 1017, "wifi": 1010}
PER_USER_RANGE = 100_000
FIRST_APPLICATION_UID = 10_000
FIRST_ISOLATED_UID = 90_000


def uid_from_name(text: str | None) -> int | None:
    """`u0_a123` → 10123, `u10_a5` → 1010005, `system` → 1000, `10123` → 10123."""
    if not text:
        return None
    if text.isdigit():
        return int(text)
    m = _APP_UID.match(text)
    if m:
        return (int(m.group("user")) * PER_USER_RANGE + FIRST_APPLICATION_UID
                + int(m.group("app")))
    m = _ISOLATED_UID.match(text)
    if m:
        return int(m.group("user")) * PER_USER_RANGE + FIRST_ISOLATED_UID + int(m.group("iso"))
    return _AID_NAMES.get(text)


def parse_line(text: str, *, offset_ms: float = 0.0, year: int | None = None) -> LogLine | None:
    """One logcat line → `LogLine` (times on the desktop clock), or None if it is not one."""
    text = text[:MAX_LINE_CHARS].rstrip("\r\n")
    m = _LINE.match(text)
    if m is None:
        return None
    if m.group("epoch"):
        t = float(m.group("epoch")) * 1000.0
    else:
        try:
            stamp = time.strptime(f"{year or time.localtime().tm_year}-{m.group('date')} "
                                  f"{m.group('clock')[:8]}", "%Y-%m-%d %H:%M:%S")
        except ValueError:
            return None
        frac = m.group("clock")[9:]
        t = time.mktime(stamp) * 1000.0 + (float("0." + frac) * 1000.0 if frac else 0.0)
    try:
        return LogLine.make(time_ms=t - offset_ms, pid=int(m.group("pid")),
                            tid=int(m.group("tid")), uid=uid_from_name(m.group("uid")),
                            level=m.group("level"), tag=m.group("tag").strip(),
                            message=m.group("msg"))
    except ValueError:
        return None


def split_lines(buffer: bytearray, chunk: bytes) -> list[str]:
    """Append `chunk`, take every complete line out of `buffer` (bounded: a line longer
    than `MAX_LINE_CHARS` without a newline is cut and its rest dropped)."""
    buffer += chunk
    out: list[str] = []
    while True:
        nl = buffer.find(b"\n")
        if nl < 0:
            if len(buffer) > MAX_LINE_CHARS * 4:
                out.append(bytes(buffer[:MAX_LINE_CHARS]).decode("utf-8", "replace"))
                del buffer[:]
            return out
        out.append(bytes(buffer[:nl]).decode("utf-8", "replace"))
        del buffer[: nl + 1]


def parse_ps(text: str) -> dict[int, tuple[int | None, str]]:
    """`ps -A -o PID,UID,NAME` → {pid: (uid, process name)} (header and junk skipped)."""
    out: dict[int, tuple[int | None, str]] = {}
    for row in text.splitlines()[:20_000]:
        parts = row.split()
        if len(parts) < 3 or not parts[0].isdigit():
            continue
        out[int(parts[0])] = (uid_from_name(parts[1]), parts[2][:200])
    return out


class LogcatReader:
    """Streams a phone's logcat to `on_lines`, only the watched packages' lines.

    `device` is an adbutils device (or anything with `shell(cmd, stream=…, timeout=…)`).
    `watch` maps uid → package (from discovery: the relay knows every package's uid)."""

    def __init__(self, device: Any, on_lines: Callable[[list[LogLine]], None], *,
                 watch: dict[int, str] | None = None, command: str = LOGCAT_COMMAND,
                 timeout: float = 10.0) -> None:
        self.device = device
        self.on_lines = on_lines
        self.watch: dict[int, str] = dict(watch or {})
        self.command = command
        self.timeout = timeout
        self.offset_ms = 0.0  # phone clock − desktop clock
        self.pids: dict[int, str] = {}  # pid → package, for builds without a uid column
        self.lines_read = 0
        self.lines_parsed = 0
        self.lines_kept = 0
        self._pids_refreshed = 0.0
        self._pids_pending = False
        self._seen_pids: set[int] = set()
        self._last_raw = ""
        self.error: str = ""
        self._stop = threading.Event()
        self._conn: Any = None
        self._thread: threading.Thread | None = None
        self._done = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._markers: dict[str, asyncio.Future[None]] = {}

    def watch_packages(self, uids: dict[int, str]) -> None:
        self.watch.update(uids)

    def _names(self) -> set[str]:
        return set(self.watch.values())

    # --- lifecycle ----------------------------------------------------------------------
    async def start(self) -> None:
        """Align the clocks, resolve pids, open the stream and start the read thread."""
        self._loop = asyncio.get_running_loop()
        await self.align_clock()
        await self.refresh_pids()
        await self._open()

    async def _open(self) -> None:
        self._conn = await run_blocking(self.device.shell, self.command, True,
                                        timeout=self.timeout, what="adb logcat")
        self._done.clear()
        # a daemon thread of its own (not a pool worker): a reader nobody stopped must never
        # keep the process alive at exit
        self._thread = threading.Thread(target=self._run, name="adb-logcat", daemon=True)
        self._thread.start()

    def _fall_back(self) -> None:
        """The modifiers were refused (before Android 7): plain threadtime, pids via ps."""
        if self._stop.is_set() or self.command == LOGCAT_FALLBACK:
            return
        log.info("logcat refused -v epoch/uid (%s); reading plain threadtime", self.error)
        self.command = LOGCAT_FALLBACK
        self.error = ""
        from inspector.tasks import spawn

        spawn(self._reopen(), "logcat-fallback")

    async def _reopen(self) -> None:
        try:
            await self._open()
        except Exception as exc:
            self.error = f"logcat could not be started: {exc}"[:300]

    def _want_pids(self) -> None:
        """A line from a pid not seen yet (no uid column): re-read ps — at most every 2 s,
        so a burst of new pids costs one `ps`, and a request inside the window is deferred
        to its end, never dropped."""
        if self._pids_pending or self._stop.is_set():
            return
        self._pids_pending = True
        delay = max(0.0, PID_REFRESH_S - (time.monotonic() - self._pids_refreshed))
        from inspector.tasks import spawn

        spawn(self._refresh_pids_later(delay), "logcat-pids")

    async def _refresh_pids_later(self, delay: float) -> None:
        try:
            if delay:
                await asyncio.sleep(delay)
            if self._stop.is_set():
                return
            self._pids_refreshed = time.monotonic()
            await self.refresh_pids()
        finally:
            self._pids_pending = False

    async def stop(self) -> None:
        self._stop.set()
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()
        if self._thread is not None:
            await asyncio.to_thread(self._done.wait, 5.0)

    def _run(self) -> None:
        try:
            self._pump()
        except Exception as exc:  # never let the read thread die silently
            self.error = f"the logcat reader failed: {exc!r}"[:300]
            log.warning("%s", self.error)
        finally:
            self._done.set()

    async def align_clock(self) -> None:
        """One `date +%s.%N` round trip; the midpoint is taken as the phone's now."""
        t0 = time.time() * 1000.0
        try:
            out = await run_blocking(self.device.shell, "date +%s.%N", timeout=self.timeout,
                                     what="adb shell date")
            t1 = time.time() * 1000.0
            phone = float(str(out).strip().split()[0]) * 1000.0
        except Exception as exc:  # an old toybox without %N: keep 0 and say so
            log.info("could not read the phone's clock (%s); assuming it matches", exc)
            return
        self.offset_ms = phone - (t0 + t1) / 2.0

    async def refresh_pids(self) -> None:
        try:
            out = await run_blocking(self.device.shell, "ps -A -o PID,UID,NAME",
                                     timeout=self.timeout, what="adb shell ps")
        except Exception as exc:
            log.info("ps failed (%s); lines without a uid cannot be attributed", exc)
            return
        names = self._names()
        self.pids = {pid: name.split(":")[0] for pid, (_uid, name) in parse_ps(str(out)).items()
                     if name.split(":")[0] in names}

    # --- the read thread --------------------------------------------------------------------
    def _pump(self) -> None:
        buffer = bytearray()
        batch: list[LogLine] = []
        conn = self._conn
        sock = getattr(conn, "conn", None)
        if sock is not None:
            with contextlib.suppress(Exception):
                sock.settimeout(0.25)
        while not self._stop.is_set() and conn is not None:
            try:
                chunk = sock.recv(READ_CHUNK) if sock is not None else conn.read(READ_CHUNK)
            except TimeoutError:
                self._flush(batch)
                batch = []
                continue
            except OSError as exc:
                if not self._stop.is_set():
                    self.error = f"the logcat stream failed: {exc}"
                break
            if not chunk:
                if not self._stop.is_set():
                    self.error = ("the logcat stream ended (device disconnected?)"
                                  + (f": {self._last_raw}" if self._last_raw else ""))
                    if self.lines_parsed == 0 and self.command == LOGCAT_COMMAND:
                        self._post(self._fall_back)
                break
            for text in split_lines(buffer, chunk):
                self.lines_read += 1
                self._last_raw = text[:200]
                if SYNC_TAG in text:
                    marker = _marker_in(text)
                    if marker is not None:
                        self._flush(batch)  # the lines before the marker go first
                        batch = []
                        self._post(self._marker_seen, marker)
                        continue
                line = self.keep(text)
                if line is not None:
                    batch.append(line)
                    if len(batch) >= BATCH_LINES:
                        self._flush(batch)
                        batch = []
            self._flush(batch)
            batch = []
        self._flush(batch)

    def keep(self, text: str) -> LogLine | None:
        """Parse and filter one line (called on the read thread)."""
        line = parse_line(text, offset_ms=self.offset_ms)
        if line is None:
            return None
        self.lines_parsed += 1
        pkg = self.watch.get(line.uid) if line.uid is not None else self.pids.get(line.pid)
        if pkg is None and line.uid is None and line.pid not in self._seen_pids:
            if len(self._seen_pids) > 10_000:
                self._seen_pids.clear()
            self._seen_pids.add(line.pid)
            self._post(self._want_pids)
        if pkg is not None:
            self.lines_kept += 1
            return line.model_copy(update={"package": pkg})
        system = line.uid is None or line.uid < FIRST_APPLICATION_UID
        if system and line.tag in SYSTEM_TAGS and any(
                mentions_package(line, name) for name in self._names()):
            self.lines_kept += 1
            return line
        return None

    def _flush(self, batch: list[LogLine]) -> None:
        if batch:
            self._post(self.on_lines, list(batch))

    def _post(self, fn: Callable[..., None], *args: Any) -> None:
        if self._loop is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(fn, *args)

    # --- catching up ------------------------------------------------------------------------
    async def sync(self, timeout: float = 2.0) -> bool:
        """Wait until every line logged before now has been delivered: log a marker line
        (`log -t CetpInspectorSync <token>`) and wait for the stream to bring it back
        (logd keeps the order). False when it did not come back in time."""
        if self._loop is None or self._conn is None or self.error:
            return False
        token = secrets.token_hex(6)
        fut: asyncio.Future[None] = self._loop.create_future()
        self._markers[token] = fut
        try:
            await run_blocking(self.device.shell, f"log -p i -t {SYNC_TAG} {token}",
                               timeout=self.timeout, what="adb shell log")
            await asyncio.wait_for(fut, timeout)
            return True
        except Exception as exc:
            log.info("the logcat stream did not catch up: %s", exc or type(exc).__name__)
            return False
        finally:
            self._markers.pop(token, None)

    def _marker_seen(self, token: str) -> None:
        fut = self._markers.get(token)
        if fut is not None and not fut.done():
            fut.set_result(None)


def _marker_in(text: str) -> str | None:
    line = parse_line(text)
    if line is None or line.tag != SYNC_TAG:
        return None
    token = line.message.strip()
    return token if re.fullmatch(r"[0-9a-f]{12}", token) else None


def watch_from_declarations(decls: Iterable[Any]) -> dict[int, str]:
    """uid → package from discovery declarations (CetpDeclaration, ExtensionDeclaration)."""
    out: dict[int, str] = {}
    for d in decls:
        uid = getattr(d, "uid", None)
        if isinstance(uid, int) and uid >= FIRST_APPLICATION_UID:
            out[uid] = d.package
    return out
