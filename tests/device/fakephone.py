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

Protocol reference: AOSP `packages/modules/adb/protocol.txt` and `SYNC.TXT`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shlex
import socket
import stat
import struct
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, TypeVar

from inspector.tasks import Spawner

T = TypeVar("T")

A_CNXN = 0x4E584E43
A_AUTH = 0x48545541
A_OPEN = 0x4E45504F
A_OKAY = 0x59414B4F
A_CLSE = 0x45534C43
A_WRTE = 0x45545257
A_VERSION = 0x01000001  # "skip checksum" version; we still send correct checksums
DEVICE_MAX_PAYLOAD = 256 * 1024
AUTH_TOKEN, AUTH_SIGNATURE, AUTH_RSAPUBLICKEY = 1, 2, 3
SYNC_CHUNK = 64 * 1024
EXIT_MARKER = "; echo X4EXIT:$?"  # adbutils' shell2 (v1) appends this to learn the exit code

# Ports the adb server scans for emulators: a fake phone must never listen there.
EMULATOR_PORTS = range(5554, 5586)


def free_port() -> int:
    """A free localhost TCP port outside the adb emulator scan range and not 5037."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in EMULATOR_PORTS and port != 5037:
            return port
    raise RuntimeError("no free port found")


@dataclass
class ApkInfo:
    """What `pm install` learns from an APK (the fake cannot parse APKs: tests declare it)."""

    package: str
    version_code: int
    version_name: str
    cert_sha256: str = "c0ffee"


@dataclass
class InstalledPackage:
    package: str
    version_code: int
    version_name: str
    cert_sha256: str
    apk: bytes
    launch_activity: str | None = None

    @property
    def path(self) -> str:
        return f"/data/app/~~fake==/{self.package}-1/base.apk"


@dataclass
class Install:
    """One `pm install` the phone ran (recorded for assertions)."""

    path: str
    flags: list[str]
    apk: bytes
    result: str


# A relay starter runs on the phone's loop when `am start-foreground-service` starts the
# relay; it returns the TCP address that backs the abstract socket it was asked to open, or
# None when it registers that address in `state.abstract_sockets` itself later (a relay
# that starts listening a moment after `am` returned, as on a real phone).
RelayStarter = Callable[[str, str], Awaitable[tuple[str, int] | None]]
# Runs on the phone's loop when `am force-stop PACKAGE` kills an app's processes (a test
# relay uses it to stop the process behind the abstract socket, as Android would).
ForceStopHook = Callable[[str], Awaitable[None]]
# A shell command handler registered with `FakePhone.on_shell(name, handler)`: gets the
# phone and the arguments after the command name, returns (output, exit code), or None to
# let the built-in command answer. tests/device/fakephone_android.py builds real-phone
# behaviours (Android versions, vendor ROMs, prompts) out of these.
ShellHandler = Callable[["FakePhone", list[str]], Awaitable[tuple[str, int] | None]]


@dataclass
class PhoneState:
    props: dict[str, str] = field(
        default_factory=lambda: {
            "ro.product.manufacturer": "Fakeco",
            "ro.product.model": "Fake Phone 7",
            "ro.product.name": "fakephone",
            "ro.product.device": "fake7",
            "ro.build.version.sdk": "34",
            "ro.build.version.release": "14",
            "ro.product.cpu.abi": "arm64-v8a",
            "ro.serialno": "FAKE0001",
            "sys.boot_completed": "1",
        }
    )
    packages: dict[str, InstalledPackage] = field(default_factory=dict)
    known_apks: dict[str, ApkInfo] = field(default_factory=dict)  # sha256 -> info
    files: dict[str, bytes] = field(default_factory=dict)
    dirs: set[str] = field(default_factory=lambda: {"/", "/data", "/data/local", "/data/local/tmp"})
    abstract_sockets: dict[str, tuple[str, int]] = field(default_factory=dict)
    abstract_opens: list[str] = field(default_factory=list)  # every localabstract: attempt
    commands: list[str] = field(default_factory=list)
    installs: list[Install] = field(default_factory=list)
    grants: list[tuple[str, str]] = field(default_factory=list)
    appops: list[tuple[str, str, str]] = field(default_factory=list)
    started: list[str] = field(default_factory=list)  # activity/service components started
    force_stopped: list[str] = field(default_factory=list)
    next_install_failure: str | None = None
    # The phone's reason when a `sync:` SEND cannot be written (e.g. "write failed: No
    # space left on device", as adbd's handle_send_file answers with FAIL).
    sync_send_failure: str | None = None


class _Stream:
    """One ADB stream (an OPENed service) seen from the device side."""

    def __init__(self, transport: _Transport, local_id: int, remote_id: int) -> None:
        self.t = transport
        self.local_id = local_id
        self.remote_id = remote_id
        self.can_send = asyncio.Event()
        self.can_send.set()
        self.inbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.buffer = bytearray()
        self.closed = False

    async def accept(self) -> None:
        await self.t.send(A_OKAY, self.local_id, self.remote_id)

    async def refuse(self) -> None:
        """Refuse an OPEN: CLSE with local id 0, as adbd does (the host ignores a CLSE
        naming a local id it was never told about)."""
        self.closed = True
        await self.t.send(A_CLSE, 0, self.remote_id)
        self.t.streams.pop(self.local_id, None)

    async def write(self, data: bytes) -> None:
        step = min(self.t.host_max_payload, DEVICE_MAX_PAYLOAD)
        for i in range(0, len(data), step):
            await self.can_send.wait()
            if self.closed:
                return
            self.can_send.clear()
            await self.t.send(A_WRTE, self.local_id, self.remote_id, data[i : i + step])

    async def read_exact(self, n: int) -> bytes | None:
        while len(self.buffer) < n:
            chunk = await self.inbox.get()
            if chunk is None:
                return None
            self.buffer += chunk
        out = bytes(self.buffer[:n])
        del self.buffer[:n]
        return out

    async def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.can_send.set()
            await self.t.send(A_CLSE, self.local_id, self.remote_id)
            self.t.streams.pop(self.local_id, None)

    def remote_closed(self) -> None:
        self.closed = True
        self.can_send.set()
        self.inbox.put_nowait(None)


class _Transport:
    """One TCP connection from the adb server (one `adb connect`)."""

    def __init__(
        self, phone: FakePhone, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.phone = phone
        self.reader = reader
        self.writer = writer
        self.streams: dict[int, _Stream] = {}
        self.next_id = 1
        self.host_max_payload = 4096
        self.online = False

    async def send(self, cmd: int, arg0: int, arg1: int, data: bytes = b"") -> None:
        if self.writer.is_closing():
            return
        header = struct.pack(
            "<6I", cmd, arg0, arg1, len(data), sum(data) & 0xFFFFFFFF, cmd ^ 0xFFFFFFFF
        )
        self.writer.write(header + data)
        with contextlib.suppress(ConnectionError):
            await self.writer.drain()

    async def run(self) -> None:
        try:
            while True:
                header = await self.reader.readexactly(24)
                cmd, arg0, arg1, length, _crc, magic = struct.unpack("<6I", header)
                if magic != cmd ^ 0xFFFFFFFF:
                    return
                data = await self.reader.readexactly(length) if length else b""
                await self.dispatch(cmd, arg0, arg1, data)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            for s in list(self.streams.values()):
                s.remote_closed()
            self.streams.clear()
            self.writer.close()
            self.phone._transports.discard(self)

    async def dispatch(self, cmd: int, arg0: int, arg1: int, data: bytes) -> None:
        phone = self.phone
        if cmd == A_CNXN:
            self.host_max_payload = arg1
            if phone.mode == "offline":
                return  # never answer: the server keeps the transport offline
            if phone.mode == "unauthorized":
                await self.send(A_AUTH, AUTH_TOKEN, 0, os.urandom(20))
                return
            self.online = True
            await self.send(A_CNXN, min(arg0, A_VERSION), DEVICE_MAX_PAYLOAD, phone.banner())
        elif cmd == A_AUTH:
            if arg0 == AUTH_SIGNATURE:  # no key is ever accepted: ask again, like adbd
                await self.send(A_AUTH, AUTH_TOKEN, 0, os.urandom(20))
            # AUTH_RSAPUBLICKEY: the user would see a dialog; nobody answers it.
        elif not self.online:
            return
        elif cmd == A_OPEN:
            local_id = self.next_id
            self.next_id += 1
            stream = _Stream(self, local_id, arg0)
            self.streams[local_id] = stream
            service = data.rstrip(b"\0").decode("utf-8", "replace")
            phone._spawner.spawn(phone._serve(stream, service), f"fakephone {service[:40]}")
        elif cmd == A_OKAY:
            s = self.streams.get(arg1)
            if s is not None:
                s.can_send.set()
        elif cmd == A_WRTE:
            s = self.streams.get(arg1)
            if s is not None:
                s.inbox.put_nowait(data)
                await self.send(A_OKAY, s.local_id, s.remote_id)
        elif cmd == A_CLSE:
            s = self.streams.pop(arg1, None)
            if s is not None:
                s.remote_closed()


class FakePhone:
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

    # -- sync -------------------------------------------------------------------------------
    async def _sync(self, stream: _Stream) -> None:
        st = self.state
        while True:
            head = await stream.read_exact(8)
            if head is None:
                return
            cmd, n = head[:4].decode("ascii", "replace"), struct.unpack("<I", head[4:])[0]
            arg = await stream.read_exact(n)
            if arg is None:
                return
            path = arg.decode()
            if cmd == "STAT":
                await stream.write(b"STAT" + self._stat(path))
            elif cmd == "LIST":
                prefix = path.rstrip("/") + "/"
                for f, data in st.files.items():
                    if f.startswith(prefix) and "/" not in f[len(prefix) :]:
                        name = f[len(prefix) :].encode()
                        entry = struct.pack("<IIII", stat.S_IFREG | 0o644, len(data), 0, len(name))
                        await stream.write(b"DENT" + entry + name)
                await stream.write(b"DONE" + bytes(16))
            elif cmd == "SEND":
                target = path.rsplit(",", 1)[0]
                data = bytearray()
                while True:
                    h = await stream.read_exact(8)
                    if h is None:
                        return
                    kind, size = h[:4], struct.unpack("<I", h[4:])[0]
                    if kind == b"DATA":
                        chunk = await stream.read_exact(size)
                        if chunk is None:
                            return
                        data += chunk
                    elif kind == b"DONE":
                        break
                    else:
                        return
                if st.sync_send_failure is not None:
                    msg = st.sync_send_failure.encode()
                    await stream.write(b"FAIL" + struct.pack("<I", len(msg)) + msg)
                    continue
                st.files[target] = bytes(data)
                await stream.write(b"OKAY" + bytes(4))
            elif cmd == "RECV":
                data = self._read_file(path)
                if data is None:
                    msg = b"No such file or directory"
                    await stream.write(b"FAIL" + struct.pack("<I", len(msg)) + msg)
                else:
                    for i in range(0, len(data), SYNC_CHUNK):
                        chunk = data[i : i + SYNC_CHUNK]
                        await stream.write(b"DATA" + struct.pack("<I", len(chunk)) + chunk)
                    await stream.write(b"DONE" + bytes(4))
            else:  # QUIT or unknown
                await stream.close()
                return

    def _read_file(self, path: str) -> bytes | None:
        if path in self.state.files:
            return self.state.files[path]
        for pkg in self.state.packages.values():
            if pkg.path == path:
                return pkg.apk
        return None

    def _stat(self, path: str) -> bytes:
        if path.rstrip("/") in self.state.dirs or path == "/":
            return struct.pack("<III", stat.S_IFDIR | 0o771, 4096, int(time.time()))
        data = self._read_file(path)
        if data is None:
            return bytes(12)
        return struct.pack("<III", stat.S_IFREG | 0o644, len(data), int(time.time()))

    # -- shell ------------------------------------------------------------------------------
    async def _shell(self, line: str) -> bytes:
        with_exit = line.endswith(EXIT_MARKER)
        if with_exit:
            line = line[: -len(EXIT_MARKER)]
        self.state.commands.append(line)
        try:
            argv = shlex.split(line)
        except ValueError:
            argv = []
        try:
            out, code = await self._run(argv)
        except _ShellFailure as e:
            out, code = e.output, e.code
        if with_exit:
            out += f"X4EXIT:{code}\n"
        return out.encode()

    async def _run(self, argv: list[str]) -> tuple[str, int]:
        if not argv:
            return "", 0
        for custom in list(self.shell_handlers.get(argv[0], ())):
            answer = await custom(self, argv[1:])
            if answer is not None:
                return answer
        handler = _COMMANDS.get(argv[0])
        if handler is None:
            return f"/system/bin/sh: {argv[0]}: inaccessible or not found\n", 127
        return await handler(self, argv[1:])

    async def _getprop(self, args: list[str]) -> tuple[str, int]:
        props = self.state.props
        if args:
            return props.get(args[0], "") + "\n", 0
        return "".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items())), 0

    async def _pm(self, args: list[str]) -> tuple[str, int]:
        st = self.state
        sub, rest = (args[0], args[1:]) if args else ("", [])
        if sub == "list" and rest[:1] == ["packages"]:
            opts = [a for a in rest[1:] if a.startswith("-")]
            filt = next((a for a in rest[1:] if not a.startswith("-")), "")
            lines = []
            for name, pkg in sorted(st.packages.items()):
                if filt in name:
                    show = "--show-versioncode" in opts
                    extra = f" versionCode:{pkg.version_code}" if show else ""
                    lines.append(f"package:{name}{extra}\n")
            return "".join(lines), 0
        if sub == "path":
            pkg = st.packages.get(rest[0]) if rest else None
            return (f"package:{pkg.path}\n", 0) if pkg else ("", 1)
        if sub == "install":
            return self._install([a for a in rest if a.startswith("-")], rest[-1] if rest else "")
        if sub == "uninstall":
            name = rest[-1] if rest else ""
            if st.packages.pop(name, None) is None:
                return "Failure [DELETE_FAILED_INTERNAL_ERROR]\n", 1
            return "Success\n", 0
        if sub == "grant":
            if len(rest) < 2 or rest[0] not in st.packages:
                pkg = rest[0] if rest else ""
                raise _ShellFailure(
                    "Exception occurred while executing 'grant':\n"
                    f"java.lang.IllegalArgumentException: Unknown package: {pkg}\n",
                    255,
                )
            st.grants.append((rest[0], rest[1]))
            return "", 0
        return f"Unknown command: pm {sub}\n", 255

    def _install(self, flags: list[str], path: str) -> tuple[str, int]:
        st = self.state
        apk = st.files.get(path)
        if apk is None:
            return f"Failure [INSTALL_FAILED_INVALID_URI: Path {path} not found]\n", 1
        result = self._install_result(flags, apk)
        st.installs.append(Install(path, flags, apk, result))
        return result + "\n", 0 if result == "Success" else 1

    def _install_result(self, flags: list[str], apk: bytes) -> str:
        st = self.state
        if st.next_install_failure is not None:
            failure, st.next_install_failure = st.next_install_failure, None
            return failure
        info = st.known_apks.get(hashlib.sha256(apk).hexdigest())
        if info is None:
            return "Failure [INSTALL_PARSE_FAILED_NOT_APK: Failed to parse APK]"
        old = st.packages.get(info.package)
        if old is not None:
            if "-r" not in flags:
                return "Failure [INSTALL_FAILED_ALREADY_EXISTS]"
            if old.cert_sha256 != info.cert_sha256:
                return (
                    f"Failure [INSTALL_FAILED_UPDATE_INCOMPATIBLE: Existing package "
                    f"{info.package} signatures do not match newer version; ignoring!]"
                )
            if old.version_code > info.version_code and "-d" not in flags:
                return "Failure [INSTALL_FAILED_VERSION_DOWNGRADE]"
        st.packages[info.package] = InstalledPackage(
            info.package,
            info.version_code,
            info.version_name,
            info.cert_sha256,
            apk,
            launch_activity=old.launch_activity if old else None,
        )
        return "Success"

    async def _am(self, args: list[str]) -> tuple[str, int]:
        st = self.state
        sub = args[0] if args else ""
        if sub == "force-stop":
            st.force_stopped.append(args[-1])
            if self.force_stop_hook is not None:
                await self.force_stop_hook(args[-1])
            return "", 0
        comp = args[args.index("-n") + 1] if "-n" in args else None
        extras = {args[i + 1]: args[i + 2] for i, a in enumerate(args[:-2]) if a == "--es"}
        if sub in ("start-foreground-service", "startservice", "start-service", "start"):
            if comp is None or comp.split("/")[0] not in st.packages:
                if sub == "start":
                    return (
                        f"Starting: Intent {{ cmp={comp} }}\nError type 3\n"
                        f"Error: Activity class {{{comp}}} does not exist.\n"
                    ), 0
                return "Error: Not found; no service started.\n", 0
            st.started.append(comp)
            name = next((v for k, v in extras.items() if k.lower().endswith("socket")), None)
            token = next((v for k, v in extras.items() if k.lower().endswith("token")), "")
            if self.relay_starter is not None and name is not None:
                address = await self.relay_starter(name, token)
                if address is not None:
                    st.abstract_sockets[name] = address
            if sub == "start":
                wait = "Status: ok\nLaunchState: COLD\nComplete\n" if "-W" in args else ""
                return f"Starting: Intent {{ cmp={comp} }}\n{wait}", 0
            return f"Starting service: Intent {{ cmp={comp} }}\n", 0
        return f"Unknown command: am {sub}\n", 255

    async def _appops(self, args: list[str]) -> tuple[str, int]:
        if len(args) >= 4 and args[0] == "set":
            self.state.appops.append((args[1], args[2], args[3]))
            return "", 0
        return "Error: bad appops arguments\n", 255

    async def _cmd(self, args: list[str]) -> tuple[str, int]:
        if args[:3] == ["package", "resolve-activity", "--brief"] and len(args) >= 4:
            pkg = self.state.packages.get(args[-1])
            if pkg is None or pkg.launch_activity is None:
                return "No activity found\n", 0
            return (
                f"priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true\n"
                f"{pkg.package}/{pkg.launch_activity}\n",
                0,
            )
        return f"Unknown command: cmd {' '.join(args[:2])}\n", 255

    async def _dumpsys(self, args: list[str]) -> tuple[str, int]:
        if args[:1] == ["package"] and len(args) >= 2:
            pkg = self.state.packages.get(args[1])
            if pkg is None:
                return f"Unable to find package: {args[1]}\n", 0
            return (
                f"Packages:\n  Package [{pkg.package}] (fake):\n"
                f"    versionCode={pkg.version_code} minSdk=26 targetSdk=34\n"
                f"    versionName={pkg.version_name}\n"
                f"    codePath={pkg.path.rsplit('/', 1)[0]}\n"
            ), 0
        return "", 0

    async def _rm(self, args: list[str]) -> tuple[str, int]:
        for a in args:
            if not a.startswith("-"):
                self.state.files.pop(a, None)
        return "", 0

    async def _echo(self, args: list[str]) -> tuple[str, int]:
        return " ".join(args) + "\n", 0


class _ShellFailure(Exception):
    def __init__(self, output: str, code: int) -> None:
        super().__init__(output)
        self.output = output
        self.code = code


_COMMANDS: dict[str, Callable[[FakePhone, list[str]], Awaitable[tuple[str, int]]]] = {
    "getprop": FakePhone._getprop,
    "pm": FakePhone._pm,
    "am": FakePhone._am,
    "appops": FakePhone._appops,
    "cmd": FakePhone._cmd,
    "dumpsys": FakePhone._dumpsys,
    "rm": FakePhone._rm,
    "echo": FakePhone._echo,
}
