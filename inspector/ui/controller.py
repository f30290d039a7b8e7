"""The window's binding to the session layer, as Qt signals.

The controller owns no protocol logic. Per device it holds one
`inspector.session.session.Session` (reconnecting relay link, discovery, one engine session
per provider, extension hosts, one Recorder) and turns the session's listener callbacks into
Qt signals. Every method that talks to a device is a coroutine the window starts with
`inspector.tasks.spawn` (never a bare create_task). The virtual device's confirmation
screen is answered through a policy that waits for the GUI's dialog.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, Signal

from inspector.consumer.andyclaw_host import ExtensionHost
from inspector.consumer.engine import ProviderSession
from inspector.consumer.execution import ExecState, Execution
from inspector.consumer.options import EngineOptions
from inspector.protocol import andyclaw as ac
from inspector.protocol.discovery import CetpDeclaration, Discovery, ExtensionDeclaration
from inspector.protocol.exchange import Exchange
from inspector.relay.api import DISCONNECTED, RelayError
from inspector.session.confirmations import ConfirmationRequest
from inspector.session.devices import VIRTUAL_SERIAL, DeviceInfo, DeviceManager, VirtualConfig
from inspector.session.phone_logs import start_phone_logs
from inspector.session.relay_link import Connector, LinkState
from inspector.session.session import Session

log = logging.getLogger(__name__)

#: the navigator state of a device adb stopped listing while its session is kept
UNPLUGGED = "unplugged"


def provider_key(serial: str, decl_key: str) -> str:
    return f"{serial}|{decl_key}"


@dataclass
class ProviderEntry:
    """One provider the user opened: its declaration and engine sessions (v2 and v1 view)."""

    key: str
    serial: str
    declaration: CetpDeclaration
    engine: Any = None  # ProviderSession | V1ProviderSession
    v1_engine: Any = None  # dual-stack: the v1 view beside the v2 one
    error: str = ""
    loaded: bool = False
    executions: dict[str, Execution] = field(default_factory=dict)


@dataclass
class ExtensionCall:
    """One extension call as the result view shows it."""

    function: str
    bridge: str
    params: str
    reply: ac.ExtensionReply | None = None
    error: str = ""


@dataclass
class DeviceEntry:
    serial: str
    info: DeviceInfo
    session: Session | None = None
    state: str = LinkState.DISCONNECTED.value
    detail: str = ""

    @property
    def discovery(self) -> Discovery | None:
        return self.session.discovery if self.session else None


class Controller(QObject):
    """Signals out, coroutines in."""

    devicesChanged = Signal(list)  # list[DeviceInfo]
    linkStateChanged = Signal(str, str, str)  # serial, state, detail
    discoveryChanged = Signal(str)  # serial
    providerChanged = Signal(str)  # provider key: negotiation/info/tools changed
    executionChanged = Signal(str, object)  # serial, Execution
    extensionChanged = Signal(str)  # extension key: manifest loaded
    exchangeRecorded = Signal(object)  # Exchange (new or updated)
    confirmationRequested = Signal(str, object)  # serial, ConfirmationRequest
    transferProgress = Signal(str, int, int)  # request_id, bytes done, declared total

    def __init__(
        self,
        devices: DeviceManager | None = None,
        options: EngineOptions | None = None,
        parent: QObject | None = None,
        *,
        connectors: dict[str, Connector] | None = None,
        journal: bool = False,
        journal_dir: Any = None,
    ) -> None:
        super().__init__(parent)
        self.devices_manager = devices or DeviceManager(VirtualConfig())
        #: per-serial connector overrides (tests, or embedding a VirtualDevice you built)
        self.connectors: dict[str, Connector] = dict(connectors or {})
        self.options = options or EngineOptions()
        self.devices: dict[str, DeviceEntry] = {}
        self.providers: dict[str, ProviderEntry] = {}
        self.extensions: dict[str, tuple[str, ExtensionHost]] = {}
        self._answers: dict[str, asyncio.Future[bool]] = {}
        #: record every device session as a journal (Sessions… lists them; bug reports)
        self.journal = journal
        self.journal_dir = journal_dir
        self.journals: dict[str, Any] = {}
        #: the in-process VirtualDevice (bug reports are served on it); tests may replace it
        self.virtual_device: Callable[[], Any] = self.devices_manager.virtual.ensure_device
        self.closing = False
        self.devices_manager.add_listener(self._on_devices)

    # ------------------------------------------------------------------ devices
    def _on_devices(self, infos: list[DeviceInfo]) -> None:
        seen = set()
        for info in infos:
            seen.add(info.serial)
            entry = self.devices.get(info.serial)
            if entry is None:
                self.devices[info.serial] = DeviceEntry(info.serial, info)
            else:
                entry.info = info
                if entry.state == UNPLUGGED:  # plugged back in: show the link's real state
                    link = entry.session.link if entry.session else None
                    entry.state = (link.state if link else LinkState.DISCONNECTED).value
                    entry.detail = ""
                    self.linkStateChanged.emit(info.serial, entry.state, entry.detail)
        for serial, entry in list(self.devices.items()):
            if serial in seen or serial == VIRTUAL_SERIAL:
                continue
            if entry.session is None:  # never opened: nothing to keep, drop the row
                del self.devices[serial]
            elif entry.state != UNPLUGGED:  # keep its session for when the cable is back
                entry.state, entry.detail = UNPLUGGED, "adb no longer lists the device"
                self.linkStateChanged.emit(serial, entry.state, entry.detail)
        self.devicesChanged.emit([e.info for e in self.devices.values()])

    async def refresh_devices(self) -> list[DeviceInfo]:
        return await self.devices_manager.refresh()

    def device(self, serial: str) -> DeviceEntry | None:
        return self.devices.get(serial)

    def session(self, serial: str) -> Session:
        """The device's session, created on first use."""
        entry = self.devices.get(serial)
        if entry is None:
            info = (
                self.devices_manager.virtual_info()
                if serial == VIRTUAL_SERIAL
                else DeviceInfo(serial=serial, kind="adb")
            )
            entry = self.devices[serial] = DeviceEntry(serial, info)
        if entry.session is None:
            inner = self.connectors.get(serial) or self.devices_manager.connector(serial)

            async def connector(inner: Connector = inner) -> Any:
                if self.closing:  # a late task must not reconnect a closed window's link
                    raise RelayError(DISCONNECTED, "the inspector is closing")
                return await inner()

            s = Session(serial, connector, options=self.options)
            s.add_exchange_listener(self.exchangeRecorded.emit)
            s.add_discovery_listener(lambda _d, sr=serial: self.discoveryChanged.emit(sr))
            s.add_execution_listener(lambda ex, sr=serial: self.executionChanged.emit(sr, ex))
            s.add_state_listener(lambda st, detail, sr=serial: self._on_link_state(sr, st, detail))
            s.confirmation_policy = lambda req, sr=serial: self._ask(sr, req)
            entry.session = s
            if self.journal:
                self._start_journal(serial, s)
            # issue 16: the phone's logcat next to each call (adb devices only)
            getter = self.devices_manager.adb_device_getter(serial)
            if getter is not None:
                from inspector.tasks import spawn

                spawn(start_phone_logs(s, getter), f"phone-logs-{serial}")
        return entry.session

    def _start_journal(self, serial: str, s: Session) -> None:
        """Journal this device session; a failure only costs the journal, not the session."""
        import time

        from inspector.session.journal import JournalError, JournalWriter

        try:
            w = JournalWriter.create(
                name=f"GUI {serial} {time.strftime('%Y-%m-%d %H:%M')}",
                device={"serial": serial},
                directory=self.journal_dir,
            )
        except (OSError, JournalError) as exc:
            log.warning("cannot journal the %s session: %s", serial, exc)
            return
        w.attach(s.recorder)
        self.journals[serial] = w

    def _on_link_state(self, serial: str, state: LinkState, detail: str) -> None:
        entry = self.devices.get(serial)
        if entry is not None:
            entry.state, entry.detail = state.value, detail
        self.linkStateChanged.emit(serial, state.value, detail)

    async def _ask(self, serial: str, req: ConfirmationRequest) -> bool:
        """The GUI's confirmation policy: show the dialog, wait for Approve / Deny."""
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._answers[req.confirmation_id] = fut
        self.confirmationRequested.emit(serial, req)
        try:
            return await fut
        finally:
            self._answers.pop(req.confirmation_id, None)

    def answer(self, confirmation_id: str, approve: bool) -> bool:
        """The dialog's answer; the session sends it to the device."""
        fut = self._answers.get(confirmation_id)
        if fut is None or fut.done():
            return False
        fut.set_result(approve)
        return True

    async def connect(self, serial: str) -> Discovery:
        """Connect the relay of `serial` and discover its providers."""
        return await self.session(serial).open()

    async def reconnect(self, serial: str) -> None:
        """Drop and re-create the relay connection; provider sessions and operations stay,
        and running operations are polled again with their original request_ids."""
        s = self.session(serial)
        await s.reconnect()
        await s.rescan()
        from inspector.tasks import spawn

        for ps, ex in s.operations():
            if isinstance(ps, ProviderSession) and ex.state == ExecState.ACCEPTED:
                spawn(self._follow(serial, ps, ex), f"poll:{ex.request_id}")

    async def rescan(self, serial: str) -> Discovery:
        return await self.session(serial).rescan()

    def discovery(self, serial: str) -> Discovery | None:
        e = self.devices.get(serial)
        return e.discovery if e else None

    async def fault(self, serial: str, kind: str, **args: object) -> bool:
        """Virtual-device fault injection (drop_connection, delay, corrupt_digest …)."""
        return await self.session(serial).link.fault(kind, **args)

    # ------------------------------------------------------------------ providers
    def open(self, serial: str, decl: CetpDeclaration) -> ProviderEntry:
        """The provider entry for a declaration (engines are created on load)."""
        key = provider_key(serial, decl.key)
        entry = self.providers.get(key)
        if entry is None:
            entry = self.providers[key] = ProviderEntry(key=key, serial=serial, declaration=decl)
        else:
            entry.declaration = decl
        return entry

    def entry(self, key: str) -> ProviderEntry | None:
        return self.providers.get(key)

    def _engine(self, entry: ProviderEntry) -> Any:
        if entry.engine is None:
            entry.engine = self.session(entry.serial).provider_session(entry.declaration)
        return entry.engine

    async def load(self, key: str) -> None:
        """Negotiate (v2), read provider info and the tool list; dual-stack also over v1."""
        entry = self.providers[key]
        entry.error = ""
        try:
            engine = self._engine(entry)
            if isinstance(engine, ProviderSession):
                await engine.negotiate()
            try:
                await engine.get_provider_info()
            except Exception as exc:  # get_provider_info is optional in v1
                entry.error = describe_error(exc)
            await engine.list_tools()
            d = entry.declaration
            if isinstance(engine, ProviderSession) and d.supports_v1 and d.legacy_visible:
                entry.v1_engine = self.session(entry.serial).provider_session(d, v1=True)
                try:
                    await entry.v1_engine.list_tools()
                except Exception as exc:
                    entry.error = f"v1 view: {describe_error(exc)}"
            entry.loaded = True
        except Exception as exc:
            entry.error = describe_error(exc)
            raise
        finally:
            self.providerChanged.emit(key)

    async def negotiate(
        self, key: str, versions: tuple[int, ...], capabilities: tuple[str, ...]
    ) -> None:
        """Negotiate again with the user's consumer versions and capabilities."""
        entry = self.providers[key]
        engine = self._engine(entry)
        opts = engine.options.model_copy(
            update={"consumer_versions": tuple(versions), "capabilities": tuple(capabilities)}
        )
        engine.options = opts
        engine.caller.options = opts
        entry.error = ""
        try:
            await engine.negotiate()
            await engine.list_tools()
        except Exception as exc:
            entry.error = describe_error(exc)
            raise
        finally:
            self.providerChanged.emit(key)

    def set_wake_and_retry(self, on: bool) -> None:
        """Wake a provider whose process is not running ("Unknown authority"): acquire its
        client, then launch its app, and retry with the same request_id (as ClawSeed does).
        Applies to providers already open and to those opened later."""
        self.options.wake_and_retry = on
        for entry in self.providers.values():
            for engine in (entry.engine, entry.v1_engine):
                if engine is None:
                    continue
                engine.options = engine.options.model_copy(update={"wake_and_retry": on})
                engine.caller.options = engine.options

    # ------------------------------------------------------------------ executions
    async def execute(
        self, key: str, tool_name: str, args_text: str, request_id: str, deadline_ms: int
    ) -> Execution:
        """Run one call; follow an async operation and verify a file result.

        A request_id already used with the same tool and arguments is re-sent as a retry of
        that execution; with other arguments it is sent as given — the provider must then
        answer INVALID_REQUEST (§6), which is exactly what a developer may want to see."""
        entry = self.providers[key]
        engine = self._engine(entry)
        engine.options = engine.options.model_copy(update={"deadline_ms": deadline_ms})
        engine.caller.options = engine.options
        ex = engine.executions.get(request_id)
        if ex is None or ex.args_json != args_text or ex.tool_name != tool_name:
            ex = Execution(
                request_id=request_id,
                tool_name=tool_name,
                args_json=args_text,
                protocol_version=2 if isinstance(engine, ProviderSession) else 1,
            )
            engine.executions[request_id] = ex
        entry.executions[request_id] = ex
        self.executionChanged.emit(entry.serial, ex)
        ex = await engine.run(ex)
        self.executionChanged.emit(entry.serial, ex)
        if isinstance(engine, ProviderSession):
            await self._after_run(entry.serial, engine, ex)
        return ex

    async def _after_run(self, serial: str, engine: ProviderSession, ex: Execution) -> None:
        if ex.state == ExecState.ACCEPTED and ex.operation_id:
            await self._follow(serial, engine, ex)
        elif ex.result_fd is not None and ex.file is not None:
            await self._fetch(engine, ex)

    async def _follow(self, serial: str, engine: ProviderSession, ex: Execution) -> Execution:
        ex = await engine.wait_operation(ex, lambda e: self.executionChanged.emit(serial, e))
        self.executionChanged.emit(serial, ex)
        if ex.result_fd is not None and ex.file is not None:
            await self._fetch(engine, ex)
        return ex

    async def _fetch(self, engine: ProviderSession, ex: Execution) -> None:
        total = ex.file.size_bytes if ex.file else 0
        rid = ex.request_id

        def progress(done: int, *_: Any) -> None:
            self.transferProgress.emit(rid, int(done), int(total))

        await engine.fetch_file(ex, on_progress=progress)

    def _find(self, key: str, request_id: str) -> tuple[ProviderEntry, Any, Execution]:
        entry = self.providers[key]
        engine = self._engine(entry)
        ex = engine.executions.get(request_id) or entry.executions[request_id]
        return entry, engine, ex

    async def cancel_operation(self, key: str, request_id: str) -> Execution:
        entry, engine, ex = self._find(key, request_id)
        await engine.cancel_operation(ex, confirm=True)
        self.executionChanged.emit(entry.serial, ex)
        return ex

    async def launch_resolution(self, key: str, request_id: str) -> Execution:
        """Launch the PendingIntent; on approval the engine resumes with the same id."""
        entry, engine, ex = self._find(key, request_id)
        ex = await engine.launch_resolution(ex, resume=True)
        self.executionChanged.emit(entry.serial, ex)
        await self._after_run(entry.serial, engine, ex)
        return ex

    def execution(self, key: str, request_id: str) -> Execution | None:
        entry = self.providers.get(key)
        if entry is None:
            return None
        eng = entry.engine
        return (eng.executions.get(request_id) if eng is not None else None) or (
            entry.executions.get(request_id)
        )

    def timing(self, serial: str, ex: Execution) -> tuple[float, float] | None:
        """(first start, last finish) in ms over the execution's exchanges, when known."""
        entry = self.devices.get(serial)
        if entry is None or entry.session is None or not ex.exchange_ids:
            return None
        rec = entry.session.recorder
        xs = [x for x in (rec.by_id(i) for i in ex.exchange_ids) if x is not None]
        done = [x.finished_ms for x in xs if x.finished_ms is not None]
        if not xs or not done:
            return None
        return min(x.started_ms for x in xs), max(done)

    # ------------------------------------------------------------------ extensions
    def extension_host(self, serial: str, decl: ExtensionDeclaration) -> tuple[str, ExtensionHost]:
        key = f"{serial}|ext:{decl.package}"
        host = self.session(serial).extension_host(decl)
        self.extensions[key] = (serial, host)
        return key, host

    async def load_extension(self, key: str) -> None:
        """Read the manifest resource, then GET_MANIFEST when the service bridge exists."""
        _serial, host = self.extensions[key]
        try:
            if host.decl.manifest_resource_id is not None:
                await host.read_manifest()
            if host.decl.component(ac.Bridge.SERVICE) is not None:
                manifest = await host.get_manifest()
                if not host.functions:
                    host.functions = list(manifest.functions)
        finally:
            self.extensionChanged.emit(key)

    async def call_extension(
        self, key: str, function: str, params_text: str, bridge: str, approved: bool = False
    ) -> ExtensionCall:
        _serial, host = self.extensions[key]
        call = ExtensionCall(function=function, bridge=bridge, params=params_text)
        try:
            params = json.loads(params_text or "{}")
        except ValueError:
            params = params_text
        try:
            call.reply = await host.execute(
                function, params, bridge=ac.Bridge(bridge), approved=approved
            )
        except Exception as exc:
            call.error = describe_error(exc)
        return call

    # ------------------------------------------------------------------ lifecycle
    def exchanges(self) -> list[Exchange]:
        out: list[Exchange] = []
        for e in self.devices.values():
            if e.session is not None:
                out.extend(e.session.exchanges)
        return out

    async def close(self) -> None:
        self.closing = True
        for w in self.journals.values():
            try:
                w.close()
            except OSError:
                log.debug("closing journal failed", exc_info=True)
        for fut in self._answers.values():
            if not fut.done():
                fut.set_result(False)
        for e in self.devices.values():
            if e.session is not None:
                try:
                    await e.session.close()
                except Exception:
                    log.debug("closing session failed", exc_info=True)
        await self.devices_manager.close()


def describe_error(exc: BaseException) -> str:
    """One readable line: code, message and the hint of what to try."""
    code = getattr(exc, "code", None)
    msg = getattr(exc, "message", None) or str(exc)
    hint = getattr(exc, "hint", "")
    return " — ".join(x for x in (f"{code}: {msg}" if code else msg, hint) if x)
