"""Listing and tracking adb devices, and running shell commands on them (async over adbutils).

Device states are parsed from adb's own `serial<TAB>state` lines rather than adbutils'
`list()`, because adb's "no permissions (…; see …)" state contains spaces.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shlex
import socket
import threading
from collections.abc import Callable, Sequence

import adbutils
from adbutils import AdbDevice
from pydantic import BaseModel, ConfigDict

from inspector.device.adb_server import AdbEndpoint, ensure_server
from inspector.device.blocking import run_blocking
from inspector.device.errors import (
    ADB_SERVER,
    DEVICE_NOT_FOUND,
    DEVICE_NOT_READY,
    TIMEOUT,
    DeviceError,
    redact,
)
from inspector.device.models import (
    STATE_HINTS,
    DeviceChange,
    DeviceInfo,
    DeviceState,
    parse_state,
    transport_of,
)
from inspector.device.vendors import vendor_grant_setting
from inspector.tasks import Spawner
from inspector.tasks import spawner as default_spawner

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 15.0
PROP_KEYS = {
    "model": "ro.product.model",
    "manufacturer": "ro.product.manufacturer",
    "sdk_int": "ro.build.version.sdk",
    "release": "ro.build.version.release",
    "abi": "ro.product.cpu.abi",
    "booted": "sys.boot_completed",
}
# Reading one phone's properties may take this long before the listing goes on without it.
DESCRIBE_TIMEOUT_S = 4.0


class ShellResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    command: str
    exit_code: int
    output: str


def parse_device_lines(text: str) -> list[tuple[str, str]]:
    """adb's `serial\\tstate` lines (host:devices and host:track-devices) → pairs."""
    pairs = []
    for line in text.splitlines():
        serial, sep, state = line.partition("\t")
        if sep and serial.strip():
            pairs.append((serial.strip(), state.strip()))
    return pairs


def parse_getprop(text: str) -> dict[str, str]:
    """`getprop` output lines `[key]: [value]` → dict."""
    props: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("]: [")
        if sep and key.startswith("[") and value.endswith("]"):
            props[key[1:]] = value[:-1]
    return props


def info_from_props(
    serial: str, raw_state: str, props: dict[str, str], error: str | None = None
) -> DeviceInfo:
    sdk = props.get(PROP_KEYS["sdk_int"], "")
    return DeviceInfo(
        serial=serial,
        state=parse_state(raw_state),
        raw_state=raw_state,
        transport=transport_of(serial),
        model=props.get(PROP_KEYS["model"]) or None,
        manufacturer=props.get(PROP_KEYS["manufacturer"]) or None,
        sdk_int=int(sdk) if sdk.isdigit() else None,
        release=props.get(PROP_KEYS["release"]) or None,
        abi=props.get(PROP_KEYS["abi"]) or None,
        booted=(props.get(PROP_KEYS["booted"], "").strip() == "1") if props else None,
        grant_setting=vendor_grant_setting(props),
        error=error,
    )


class AdbDevices:
    """Async access to the adb server's devices; every blocking call has a deadline."""

    def __init__(self, endpoint: AdbEndpoint | None = None, timeout: float = DEFAULT_TIMEOUT_S):
        self.endpoint = endpoint or AdbEndpoint.from_env()
        self.timeout = timeout
        self.client = adbutils.AdbClient(
            host=self.endpoint.host, port=self.endpoint.port, socket_timeout=timeout
        )

    def device(self, serial: str) -> AdbDevice:
        return self.client.device(serial)

    async def start_server(self) -> bool:
        """Start the adb server when it is not running (True when this call started it)."""
        return await ensure_server(self.endpoint)

    def _devices_text(self) -> str:
        with self.client.make_connection(timeout=self.timeout) as c:
            c.send_command("host:devices")
            c.check_okay()
            return c.read_string_block()

    async def list_states(self) -> list[tuple[str, str]]:
        """(serial, raw adb state) for every device the server knows."""
        text = await run_blocking(self._devices_text, timeout=self.timeout, what="Listing devices")
        return parse_device_lines(text)

    async def describe(
        self, serial: str, raw_state: str, timeout: float | None = None
    ) -> DeviceInfo:
        """A DeviceInfo; build facts are read only from devices in the `device` state."""
        if parse_state(raw_state) is not DeviceState.DEVICE:
            return info_from_props(serial, raw_state, {})
        result = await self.shell(serial, ["getprop"], timeout=timeout)
        return info_from_props(serial, raw_state, parse_getprop(result.output))

    async def describe_or_error(
        self, serial: str, raw_state: str, timeout: float = DESCRIBE_TIMEOUT_S
    ) -> DeviceInfo:
        """`describe` with a deadline; a phone that does not answer (or vanished meanwhile)
        is still listed, with its adb state and what went wrong, never dropped."""
        try:
            return await asyncio.wait_for(self.describe(serial, raw_state, timeout), timeout + 1)
        except (DeviceError, TimeoutError) as e:
            timed_out = isinstance(e, TimeoutError) or e.code == TIMEOUT
            why = (
                f"it did not answer within {timeout:g} s"
                if timed_out
                else (e.message if isinstance(e, DeviceError) else str(e))
            )
            log.info("could not read properties of %s: %s", serial, why)
            return info_from_props(
                serial,
                raw_state,
                {},
                error=f"Its properties could not be read: {why.rstrip('.')}. The phone may be "
                "asleep, busy or wedged, or was just unplugged: wake it, replug it, or reboot "
                "it.",
            )

    async def list_devices(self) -> list[DeviceInfo]:
        """Every device, each phone asked concurrently with its own deadline: one slow or
        vanishing phone never hides or delays the others (issue 11)."""
        pairs = await self.list_states()
        return list(await asyncio.gather(*(self.describe_or_error(s, st) for s, st in pairs)))

    async def shell(
        self,
        serial: str,
        argv: Sequence[str],
        *,
        timeout: float | None = None,
        secrets: Sequence[str] = (),
    ) -> ShellResult:
        """Run a command (arguments are shell-quoted); the exit code comes back too.

        `secrets` (e.g. the relay token) are blanked out of any error message, since
        adbutils puts the command line into some of its exceptions.
        """
        t = timeout or self.timeout
        dev = self.device(serial)
        command = shlex.join(argv)
        ret = await run_blocking(
            lambda: dev.shell2(command, timeout=t),
            timeout=t + 2,
            what=f"`{argv[0]}` on {serial}",
            secrets=secrets,
        )
        return ShellResult(
            command=redact(command, secrets),
            exit_code=ret.returncode,
            output=redact(ret.output, secrets),
        )

    async def explain(self, serial: str, err: DeviceError, what: str) -> DeviceError:
        """A failed adb request on `serial`, with the cause when the phone itself is gone or
        not ready (adb answers those with a bare error that names nothing)."""
        if err.code not in (ADB_SERVER, TIMEOUT):
            return err
        try:
            raw = dict(await self.list_states()).get(serial)
        except DeviceError:
            return err
        if raw is None:
            return DeviceError(
                DEVICE_NOT_FOUND,
                f"{what} failed: {serial} is no longer attached (the cable came "
                "out, Wi-Fi debugging dropped or the phone rebooted).",
                "Plug it in again (or `adb connect` it) and retry.",
            )
        state = parse_state(raw)
        if state is not DeviceState.DEVICE:
            return DeviceError(
                DEVICE_NOT_READY,
                f"{what} failed: {serial} is {raw}.",
                STATE_HINTS[state],
            )
        return err

    async def connect_network(self, address: str) -> str:
        """`adb connect host:port` (Wi-Fi debugging, and the fake phone in tests)."""
        return await run_blocking(
            lambda: self.client.connect(address, timeout=self.timeout),
            timeout=self.timeout + 2,
            what=f"Connecting to {address}",
        )

    async def disconnect_network(self, address: str) -> None:
        await run_blocking(
            lambda: self.client.disconnect(address),
            timeout=self.timeout,
            what=f"Disconnecting {address}",
        )


Listener = Callable[[DeviceChange], None]

# `host:track-devices` of adb 29 (Debian's) does not report a transport turning
# `unauthorized` after `adb connect` (seen with the fake phone: the tracker kept `offline`
# while `adb devices` said `unauthorized`); the adb in the adbutils wheel (36) does. The
# inspector cannot choose which adb runs the user's server (Android Studio or a distro adb
# may have started it), so the tracker reconciles by also polling `host:devices`.
POLL_INTERVAL_S = 2.0


class DeviceTracker:
    """A live device list: `snapshot()` plus change events, fed by `host:track-devices`.

    (adbutils' `track_devices()` keeps its socket to itself, so it could never be stopped;
    this tracker owns the connection and closes it on `stop()`.)

    The blocking track connection lives in its own thread and hands adb's lists to the
    loop; if the adb server goes away the tracker reports every device removed and keeps
    retrying (restarting the server when it runs locally).
    """

    def __init__(
        self,
        devices: AdbDevices,
        spawner: Spawner | None = None,
        retry_interval: float = 1.0,
        start_server: bool = True,
        poll_interval: float = POLL_INTERVAL_S,
    ) -> None:
        self.devices = devices
        self._poll_interval = poll_interval
        self._describing: dict[str, asyncio.Task[None]] = {}
        self._spawner = spawner or default_spawner()
        self._retry = retry_interval
        self._start_server = start_server
        self._snapshot: dict[str, DeviceInfo] = {}
        self._listeners: list[Listener] = []
        self._changed = asyncio.Condition()
        self._sock: socket.socket | None = None
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self.last_error: DeviceError | None = None

    def snapshot(self) -> list[DeviceInfo]:
        return sorted(self._snapshot.values(), key=lambda d: d.serial)

    def get(self, serial: str) -> DeviceInfo | None:
        return self._snapshot.get(serial)

    def add_listener(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    def start(self) -> None:
        if self._task is not None and not self._task.done():
            return
        self._stopping = False
        self._task = self._spawner.spawn(self._run(), "adb-device-tracker")

    async def stop(self) -> None:
        """Stop tracking (only this tracker's tasks: the spawner may be the app's)."""
        self._stopping = True
        self._close_socket()
        for pending in list(self._describing.values()):
            pending.cancel()
        self._describing.clear()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def wait_for(
        self, predicate: Callable[[list[DeviceInfo]], bool], timeout: float
    ) -> list[DeviceInfo]:
        """Wait until `predicate(snapshot)` holds (tests, and "wait for the cable")."""
        async with self._changed:
            await asyncio.wait_for(
                self._changed.wait_for(lambda: predicate(self.snapshot())), timeout
            )
        return self.snapshot()

    async def wait_for_state(self, serial: str, state: DeviceState, timeout: float) -> DeviceInfo:
        def ok(devs: list[DeviceInfo]) -> bool:
            return any(d.serial == serial and d.state is state for d in devs)

        await self.wait_for(ok, timeout)
        info = self._snapshot[serial]
        return info

    def _close_socket(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    async def _run(self) -> None:
        while not self._stopping:
            queue: asyncio.Queue[str | None] = asyncio.Queue()
            try:
                if self._start_server:
                    await self.devices.start_server()
                await self._open_track(queue)
                self.last_error = None
                poller = self._spawner.spawn(self._poll(queue), "adb-device-poll")
                try:
                    while (text := await queue.get()) is not None:
                        await self._apply(parse_device_lines(text))
                finally:
                    poller.cancel()
            except DeviceError as e:
                self.last_error = e
            finally:
                self._close_socket()
            if self._stopping:
                return
            if self._snapshot:
                await self._apply([])  # the server went away: nothing is attached any more
            if self.last_error is None:
                self.last_error = DeviceError(
                    ADB_SERVER, "The adb server closed the device list.", "Retrying."
                )
            await asyncio.sleep(self._retry)

    async def _open_track(self, queue: asyncio.Queue[str | None]) -> None:
        loop = asyncio.get_running_loop()
        client = self.devices.client

        def connect() -> socket.socket:
            c = client.make_connection(timeout=self.devices.timeout)
            try:
                c.send_command("host:track-devices")
                c.check_okay()
            except BaseException:
                c.close()
                raise
            c.conn.settimeout(None)
            return c.conn

        self._sock = await run_blocking(
            connect, timeout=self.devices.timeout, what="Tracking devices"
        )
        sock = self._sock

        def reader() -> None:
            try:
                while True:
                    size = _recv_exact(sock, 4)
                    text = _recv_exact(sock, int(size, 16)) if size else None
                    if text is None:
                        break
                    loop.call_soon_threadsafe(queue.put_nowait, text)
            except (OSError, ValueError):
                pass
            with contextlib.suppress(RuntimeError):  # loop closed during shutdown
                loop.call_soon_threadsafe(queue.put_nowait, None)

        threading.Thread(target=reader, name="adb-track-devices", daemon=True).start()

    async def _poll(self, queue: asyncio.Queue[str | None]) -> None:
        """Feed `host:devices` into the same queue every few seconds (see POLL_INTERVAL_S)."""
        while True:
            await asyncio.sleep(self._poll_interval)
            try:
                text = await run_blocking(
                    self.devices._devices_text, timeout=self.devices.timeout, what="Polling devices"
                )
            except DeviceError as e:
                log.info("polling adb devices failed: %s", e)
                continue
            queue.put_nowait(text)

    async def _apply(self, pairs: list[tuple[str, str]]) -> None:
        """Update the snapshot at once; each phone's facts are read in their own task and
        arrive as a later "changed" event, so no phone ever waits on another (issue 11)."""
        current = dict(pairs)
        changes: list[DeviceChange] = []
        for serial in list(self._snapshot):
            if serial not in current:
                self._cancel_describe(serial)
                changes.append(DeviceChange(kind="removed", device=self._snapshot.pop(serial)))
        for serial, raw in current.items():
            old = self._snapshot.get(serial)
            if old is not None and old.raw_state == raw:
                if old.error and old.state is DeviceState.DEVICE and serial not in self._describing:
                    # Its properties could not be read (a sleepy or busy phone): try again on
                    # each poll, so it does not stay nameless until it is replugged.
                    self._describing[serial] = self._spawner.spawn(
                        self._describe(serial, raw), f"adb-describe {serial}"
                    )
                continue
            self._cancel_describe(serial)
            info = info_from_props(serial, raw, {})
            self._snapshot[serial] = info
            changes.append(DeviceChange(kind="added" if old is None else "changed", device=info))
            if info.state is DeviceState.DEVICE:
                self._describing[serial] = self._spawner.spawn(
                    self._describe(serial, raw), f"adb-describe {serial}"
                )
        await self._emit(changes)

    def _cancel_describe(self, serial: str) -> None:
        pending = self._describing.pop(serial, None)
        if pending is not None and pending is not asyncio.current_task():
            pending.cancel()

    async def _describe(self, serial: str, raw: str) -> None:
        info = await self.devices.describe_or_error(serial, raw)
        if self._describing.get(serial) is asyncio.current_task():
            del self._describing[serial]
        current = self._snapshot.get(serial)
        if current is None or current.raw_state != raw:
            return  # it changed meanwhile; a newer task describes it
        self._snapshot[serial] = info
        await self._emit([DeviceChange(kind="changed", device=info)])

    async def _emit(self, changes: list[DeviceChange]) -> None:
        for change in changes:
            for listener in list(self._listeners):
                try:
                    listener(change)
                except Exception:
                    log.exception("device listener failed")
        async with self._changed:
            self._changed.notify_all()


def _recv_exact(sock: socket.socket, n: int) -> str | None:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf.decode("utf-8", "replace")
