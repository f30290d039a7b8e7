"""The app model of the virtual device: what an installed app can do and what it may ask of
the device (PendingIntents, file descriptors, background work).

A `VirtualApp` plays one Android package. The device routes IPC to it by component
(authority, service action, receiver action, activity action) exactly as Android would,
and simulates its process: `kill_process()` drops everything in memory, while whatever
the app keeps in its state directory (SQLite) survives.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from inspector.protocol.bundle import Bundle, FileDescriptorHandle, PendingIntentHandle
from inspector.virtual.manifest import PackageManifest

if TYPE_CHECKING:
    from inspector.virtual.device import VirtualDevice

# The relay app's identity as the virtual device reports it (the calling package/UID every
# provider sees, Binder.getCallingUid()).
RELAY_PACKAGE = "org.cetp.inspector.relay"
RELAY_UID = 10_200


@dataclass(frozen=True)
class Caller:
    """The identity a provider captures at the IPC entry point (spec §7.1)."""

    uid: int = RELAY_UID
    package: str = RELAY_PACKAGE


class ConfirmationScreen(BaseModel):
    """What a provider's confirmation Activity shows (spec §7.2: concrete target, action,
    critical parameters and irreversible consequences)."""

    model_config = ConfigDict(frozen=True)

    title: str
    target: str
    action: str
    parameters: dict[str, str] = Field(default_factory=dict)
    consequences: str = ""


@dataclass
class PendingActivity:
    """The activity a PendingIntent launches. `screen` is shown to the user; the answer is
    passed to `on_result`, whose return value is the activity result (result_code, data)."""

    package: str
    component: str
    screen: ConfirmationScreen | None
    on_result: Callable[[bool], Awaitable[tuple[int, Bundle | None]]]
    immutable: bool = True
    kind: str = "activity"
    """activity | service | broadcast (rule pending_intent_non_activity)"""
    new_task: bool = False
    """The activity launches as a new task (rule pending_intent_new_task)."""


class FileSource:
    """A read-only file an app hands out as a ParcelFileDescriptor.

    `chunks` produces the bytes on demand (never the whole file in memory); `sha256` is the
    digest the app computed for the content it meant to write.
    """

    def __init__(
        self,
        size: int,
        chunks: Callable[[int], AsyncIterator[bytes]],
        sha256: str,
    ) -> None:
        self.size = size
        self._chunks = chunks
        self.sha256 = sha256

    def read(self, chunk_size: int) -> AsyncIterator[bytes]:
        return self._chunks(chunk_size)

    @classmethod
    def from_bytes(cls, data: bytes) -> FileSource:
        async def chunks(chunk_size: int) -> AsyncIterator[bytes]:
            view = memoryview(data)
            for i in range(0, len(data), chunk_size):
                yield bytes(view[i : i + chunk_size])

        return cls(len(data), chunks, hashlib.sha256(data).hexdigest())


@dataclass
class TransactResult:
    """A Binder transaction outcome: `readException()` then `readString()`."""

    reply: str | None = None
    exception_class: str | None = None
    exception_message: str | None = None


@dataclass
class CallContext:
    """Per-call services the device offers an app (the Android framework, in effect)."""

    device: VirtualDevice
    app: VirtualApp
    caller: Caller
    connection_id: str
    handles: list[str] = field(default_factory=list)

    def pending_intent(self, activity: PendingActivity) -> PendingIntentHandle:
        return self.device.register_pending_intent(self, activity)

    def file_descriptor(self, source: FileSource) -> FileDescriptorHandle:
        return self.device.register_file(self, source)

    def fault_after_commit(self) -> None:
        """Called by an app right after it committed a mutation: an armed
        `restart_process when=after_commit` fault kills the process here (before replying)."""
        self.device.faults.check_after_commit(self)


class ProcessKilled(Exception):
    """The app's process died during this call (the caller sees a dead binder)."""


class VirtualApp:
    """Base class of every virtual app. Subclasses set `PACKAGE`/`LABEL` and override
    `build_manifest` and the IPC entry points they serve."""

    PACKAGE: str = "com.example.app"
    LABEL: str = "Example"
    null_binding_actions: frozenset[str] = frozenset()
    """Service actions whose onBind returns null (rule null_binding)."""

    def __init__(self, package: str | None = None, label: str | None = None) -> None:
        self.package = package or self.PACKAGE
        self.label = label or self.LABEL
        self.uid = 0  # assigned by the device on install
        self.state_dir: Path | None = None
        self.device: VirtualDevice | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        # tasks currently inside an IPC entry point of this app (a binder thread, in effect)
        self.ipc_tasks: set[asyncio.Task[Any]] = set()
        self.killed_ipc: set[asyncio.Task[Any]] = set()
        self.process_running = False
        self.process_starts = 0
        self._manifest: PackageManifest | None = None

    # --- lifecycle ------------------------------------------------------------------------------
    def attach(self, device: VirtualDevice, uid: int, state_dir: Path) -> None:
        self.device = device
        self.uid = uid
        self._manifest = None
        self.state_dir = state_dir
        state_dir.mkdir(parents=True, exist_ok=True)
        self.on_install()

    def on_install(self) -> None:
        """Open durable state (called once when the device installs the app)."""

    def ensure_process(self) -> None:
        """Start the process on first IPC, as Android does."""
        if not self.process_running:
            self.process_running = True
            self.process_starts += 1
            self.on_process_start()

    def on_process_start(self) -> None:
        """Rebuild in-memory state, resume durable work (a fresh process)."""

    def kill_process(self, spare: asyncio.Task[Any] | None = None) -> None:
        """Drop every in-memory thing: tasks die, tokens vanish; the state dir survives.

        `spare` is the task doing the killing (it ends by raising `ProcessKilled`)."""
        for t in list(self._tasks):
            if t is not spare:
                t.cancel()
        self._tasks.clear()
        for t in list(self.ipc_tasks):
            if t is not spare:
                self.killed_ipc.add(t)
                t.cancel()
        self.ipc_tasks.clear()
        self.process_running = False
        self.on_process_death()

    def on_process_death(self) -> None:
        """Forget in-memory state."""

    def close(self) -> None:
        """Release files (device shutdown or uninstall)."""
        self.kill_process()

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        """Background work inside the app's process: dies with `kill_process`."""
        assert self.device is not None
        task = self.device.spawner.spawn(coro, name=f"{self.package}:{name}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # --- declarations ---------------------------------------------------------------------------
    @property
    def manifest(self) -> PackageManifest:
        """The installed manifest (built once; a new install rebuilds it)."""
        if self._manifest is None:
            self._manifest = self.build_manifest()
        return self._manifest

    def build_manifest(self) -> PackageManifest:
        return PackageManifest(package=self.package, label=self.label, uid=self.uid)

    def raw_resources(self) -> dict[int, tuple[str, bytes]]:
        """`res/raw` resources by id: (name, bytes)."""
        return {}

    # --- IPC entry points (default: the component does not exist) -------------------------------
    async def call(
        self, ctx: CallContext, authority: str, method: str, arg: str | None, extras: Bundle | None
    ) -> Bundle | None:
        raise NotImplementedError

    async def transact(
        self, ctx: CallContext, action: str, descriptor: str, code: int, strings: list[str | None]
    ) -> TransactResult:
        raise NotImplementedError

    async def on_broadcast(
        self, ctx: CallContext, action: str, extras: Bundle
    ) -> tuple[str, Bundle] | None:
        """Handle a broadcast; return (reply action, reply extras) to broadcast back."""
        return None

    async def on_activity_start(self, ctx: CallContext, action: str, extras: Bundle) -> None:
        """An activity of this app was started."""
