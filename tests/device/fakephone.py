"""A fake phone: the device side of the ADB transport protocol, for the REAL adb server.

The real adb server accepts it after `adb connect 127.0.0.1:PORT`, so adbutils and the
inspector's device layer run unchanged against it: shell (a tiny command table: getprop,
pm, am, appops, cmd, dumpsys, rm), `sync:` (STAT, SEND, RECV, LIST) and `localabstract:NAME`
bridged to a TCP server that a test relay serves. It advertises no optional features
(no shell_v2, stat_v2, delayed_ack), so the server only uses what is built here.

The phone runs its own asyncio loop in a thread: adbutils calls block, and the adb server
talks to the phone while the test's own loop is waiting on them. Everything it receives is
recorded (`commands`, `files`, `installs`) for assertions.

Extension point: `phone.on_shell(name, handler)` answers a shell command before the
built-in table (see `ShellHandler`); tests/device/fakephone_android.py builds real-phone
behaviours (Android versions, vendor ROMs, prompts, dumpsys screens) from it.

Layout: this module holds `FakePhone` (its thread and loop, the services it routes to,
the `localabstract:` bridge); the transport and streams are in fakephone_adb, the state it
records in fakephone_state, the shell command table in fakephone_shell and `sync:` in
fakephone_sync. Every name is importable from here.

Protocol reference: AOSP `packages/modules/adb/protocol.txt` and `SYNC.TXT`.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

from inspector.tasks import Spawner
from tests.device.fakephone_adb import (  # noqa: F401 - re-exported for the tests
    A_AUTH,
    A_CLSE,
    A_CNXN,
    A_OKAY,
    A_OPEN,
    A_VERSION,
    A_WRTE,
    AUTH_RSAPUBLICKEY,
    AUTH_SIGNATURE,
    AUTH_TOKEN,
    DEVICE_MAX_PAYLOAD,
    EMULATOR_PORTS,
    _Stream,
    _Transport,
    free_port,
)
from tests.device.fakephone_shell import EXIT_MARKER, ShellMixin, _ShellFailure  # noqa: F401
from tests.device.fakephone_state import (  # noqa: F401 - re-exported for the tests
    ApkInfo,
    ForceStopHook,
    Install,
    InstalledPackage,
    PhoneState,
    RelayStarter,
    ShellHandler,
)
from tests.device.fakephone_sync import SYNC_CHUNK, SyncMixin  # noqa: F401

T = TypeVar("T")


class FakePhone(ShellMixin, SyncMixin):
    """Serves the device side of ADB on 127.0.0.1:`port` from a background thread.

    `mode`: "device" (normal), "unauthorized" (asks for a key nobody approves) or
    "offline" (never answers the connection handshake).
    """

    def __init__(self, mode: str = "device", state: PhoneState | None = None) -> None:
        self.mode = mode
        self.state = state or PhoneState()
        self.port = free_port()
        self.serial = f"127.0.0.1:{self.port}"
        self.relay_starter: RelayStarter | None = None
        self.force_stop_hook: ForceStopHook | None = None
        self.shell_handlers: dict[str, list[ShellHandler]] = {}
        self.plugged = True
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="fakephone", daemon=True
        )
        self._spawner = Spawner()
        self._server: asyncio.AbstractServer | None = None
        self._transports: set[_Transport] = set()
        self._lock = threading.Lock()

    # -- lifecycle (called from the test thread) -------------------------------------------
    def start(self) -> FakePhone:
        self._thread.start()
        self.call(self._start_server())
        return self

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.call(self._shutdown(), timeout=5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        if not self._thread.is_alive():
            self._loop.close()

    def call(self, coro: Coroutine[Any, Any, T], timeout: float = 10) -> T:
        """Run `coro` on the phone's loop and wait for its result."""
        fut: Future[T] = asyncio.run_coroutine_threadsafe(coro, self._loop)
        return fut.result(timeout)

    def pull_cable(self) -> None:
        """Drop every transport and refuse new ones, as if the USB cable came out.

        Relay servers keep running (the relay process on a phone survives a cable pull).
        """
        self.plugged = False
        self.call(self._drop_transports())

    def plug_cable(self) -> None:
        self.plugged = True

    def on_shell(self, name: str, handler: ShellHandler) -> None:
        """Answer the shell command `name` with `handler` first (latest registered first);
        a handler returning None falls through to the next one and then the built-in."""
        self.shell_handlers.setdefault(name, []).insert(0, handler)

    @property
    def transport_count(self) -> int:
        return len(self._transports)

    # -- the phone's loop -----------------------------------------------------------------
    async def _start_server(self) -> None:
        self._server = await asyncio.start_server(self._on_connect, "127.0.0.1", self.port)

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        await self._drop_transports()
        await self._spawner.cancel_all()

    async def _drop_transports(self) -> None:
        for t in list(self._transports):
            t.writer.close()
            with contextlib.suppress(Exception):
                await t.writer.wait_closed()
        for task in self._spawner.tasks:
            if task.get_name().startswith("fakephone localabstract"):
                task.cancel()

    async def _on_connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self.plugged:
            writer.close()
            return
        t = _Transport(self, reader, writer)
        self._transports.add(t)
        await t.run()

    def banner(self) -> bytes:
        p = self.state.props
        keys = ("ro.product.name", "ro.product.model", "ro.product.device")
        props = "".join(f"{k}={p.get(k, '')};" for k in keys)
        return f"device::{props}features=\0".encode()

    async def _serve(self, stream: _Stream, service: str) -> None:
        try:
            # logcat, ps, date, screencap, input (issue 16: tests/device/fake_android_shell.py)
            from tests.device.fake_android_shell import android_of

            special = android_of(self).service_for(service)
            if special is not None:
                await stream.accept()
                await special(stream)
                await stream.close()
                return
            if service.startswith("shell:"):
                await stream.accept()
                output = await self._shell(service[len("shell:") :])
                await stream.write(output)
                await stream.close()
            elif service == "sync:":
                await stream.accept()
                await self._sync(stream)
            elif service.startswith("localabstract:"):
                await self._bridge(stream, service[len("localabstract:") :])
            else:
                await stream.refuse()  # unknown service
        except asyncio.CancelledError:
            await stream.close()
            raise

    # -- localabstract ----------------------------------------------------------------------
    async def _bridge(self, stream: _Stream, name: str) -> None:
        self.state.abstract_opens.append(name)
        address = self.state.abstract_sockets.get(name)
        if address is None:
            await stream.refuse()
            return
        try:
            reader, writer = await asyncio.open_connection(*address)
        except OSError:
            await stream.refuse()
            return
        await stream.accept()

        async def to_host() -> None:
            while data := await reader.read(65536):
                await stream.write(data)
            await stream.close()

        pump = self._spawner.spawn(to_host(), f"fakephone localabstract:{name} out")
        try:
            while (data := await stream.inbox.get()) is not None:
                writer.write(data)
                await writer.drain()
        finally:
            writer.close()
            pump.cancel()
