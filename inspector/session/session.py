"""One inspection session: a device's relay, what was discovered there, and everything done.

The GUI and the CLI share this class (no Qt here). It owns:
- a `RelayLink` (reconnects after a disconnect; provider sessions keep working through it),
- the discovery (CETP declarations and AndyClaw extensions, `inspector.protocol.discovery`),
  rescanned when the device reports a `package_changed` event,
- one consumer-engine session per provider (v2 or v1 view) sharing one `Recorder`, so the
  exchange list (traffic log, journal) and the executions/operations outlive reconnects,
- the answer to the virtual device's confirmation screen (a front-end policy).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from inspector.consumer.andyclaw_host import ExtensionHost
from inspector.consumer.clock import Clock, SystemClock
from inspector.consumer.engine import ProviderSession
from inspector.consumer.execution import ExecState, Execution
from inspector.consumer.options import EngineOptions
from inspector.consumer.recorder import ExchangeListener, Recorder
from inspector.consumer.v1 import V1ProviderSession
from inspector.protocol.bundle import Bundle
from inspector.protocol.discovery import (
    CetpDeclaration,
    Discovery,
    ExtensionDeclaration,
    discover,
)
from inspector.protocol.exchange import ExchangeKind, ExchangeStatus
from inspector.relay.api import RelayApi, RelayError
from inspector.session.confirmations import ConfirmationPolicy, ConfirmationRequest
from inspector.session.errors import ExitCode, InspectorError
from inspector.session.lookup import find_one
from inspector.session.provider_logs import ProviderLogs
from inspector.session.relay_link import Connector, LinkState, RelayLink, StateListener
from inspector.tasks import Spawner
from inspector.tasks import spawner as default_spawner

log = logging.getLogger(__name__)

AnyProviderSession = ProviderSession | V1ProviderSession
DiscoveryListener = Callable[[Discovery], None]
ExecutionListener = Callable[[Execution], None]
ConfirmationListener = Callable[[ConfirmationRequest, bool], None]


class Session:
    """An inspection session on one device (see module docstring)."""

    def __init__(
        self,
        serial: str,
        connector: Connector,
        *,
        options: EngineOptions | None = None,
        clock: Clock | None = None,
        spawner: Spawner | None = None,
        max_exchanges: int = 100_000,
    ) -> None:
        self.serial = serial
        self.link = RelayLink(connector)
        self.recorder = Recorder(device=serial, max_exchanges=max_exchanges)
        self.options = options or EngineOptions()
        self.clock = clock or SystemClock()
        self.spawner = spawner or default_spawner()
        self.discovery: Discovery | None = None
        self.confirmation_policy: ConfirmationPolicy | None = None
        self.confirmations: list[tuple[ConfirmationRequest, bool]] = []
        self.events: list[Bundle] = []
        self._providers: dict[tuple[str, int], AnyProviderSession] = {}
        self._extension_hosts: dict[str, ExtensionHost] = {}
        self._discovery_listeners: list[DiscoveryListener] = []
        self._execution_listeners: list[ExecutionListener] = []
        self._confirmation_listeners: list[ConfirmationListener] = []
        self._event_listeners: list[Callable[[Bundle], None]] = []
        self._rescan_task: asyncio.Task[Any] | None = None
        self.link.add_event_handler(self._on_event)
        # the provider's log lines and crashes, attached to each exchange (issue 16)
        self.provider_logs = ProviderLogs(self.recorder)
        self.link.add_state_listener(self._follow_logs)

    # ------------------------------------------------------------------ lifecycle
    async def open(self) -> Session:
        """Connect and discover (raises InspectorError on device/relay failure)."""
        await self.connect()
        await self.rescan()
        return self

    async def connect(self) -> RelayApi:
        try:
            client = await self.link.ensure()
        except RelayError as exc:
            raise device_error(exc, f"cannot connect to device {self.serial!r}") from exc
        await self.provider_logs.follow(self.link)
        return client

    def _follow_logs(self, state: LinkState, _detail: str) -> None:
        """Follow every new connection's log channel (also after a reconnect)."""
        if state == LinkState.CONNECTED:
            self.spawner.spawn(self.provider_logs.follow(self.link), "session-follow-logs")

    async def reconnect(self) -> None:
        """Drop the connection and connect again; exchanges and executions are kept."""
        try:
            await self.link.reconnect()
        except RelayError as exc:
            raise device_error(exc, f"cannot reconnect to device {self.serial!r}") from exc

    async def close(self) -> None:
        if self._rescan_task is not None:
            self._rescan_task.cancel()
        await self.provider_logs.aclose()
        await self.link.close()

    @property
    def relay(self) -> RelayApi:
        """The relay as the engine sees it (survives reconnects)."""
        return self.link

    # ------------------------------------------------------------------ listeners
    def add_exchange_listener(self, listener: ExchangeListener) -> Callable[[], None]:
        return self.recorder.add_listener(listener)

    def add_discovery_listener(self, listener: DiscoveryListener) -> None:
        self._discovery_listeners.append(listener)

    def add_execution_listener(self, listener: ExecutionListener) -> None:
        self._execution_listeners.append(listener)

    def add_state_listener(self, listener: StateListener) -> None:
        self.link.add_state_listener(listener)

    def add_confirmation_listener(self, listener: ConfirmationListener) -> None:
        self._confirmation_listeners.append(listener)

    def add_event_listener(self, listener: Callable[[Bundle], None]) -> None:
        self._event_listeners.append(listener)

    @property
    def exchanges(self) -> list[Any]:
        return self.recorder.exchanges

    @property
    def state(self) -> LinkState:
        return self.link.state

    # ------------------------------------------------------------------ discovery
    async def rescan(self) -> Discovery:
        """discover on the relay and derive providers/extensions; notifies listeners."""
        x = self.recorder.start(ExchangeKind.RELAY, "relay", "discover")
        try:
            records = await self.link.discover()
        except RelayError as exc:
            self.recorder.finish(x, ExchangeStatus.TRANSPORT_ERROR, error_code=exc.code,
                                 error_message=exc.message)
            raise device_error(exc, "discovery failed") from exc
        self.recorder.finish(x, ExchangeStatus.SUCCESS, decoded={"packages": len(records)},
                             response_bytes=0)
        self.discovery = discover(records)
        for listener in list(self._discovery_listeners):
            listener(self.discovery)
        return self.discovery

    async def ensure_discovery(self) -> Discovery:
        return self.discovery if self.discovery is not None else await self.rescan()

    @property
    def providers(self) -> list[CetpDeclaration]:
        return list(self.discovery.cetp) if self.discovery else []

    @property
    def extensions(self) -> list[ExtensionDeclaration]:
        return list(self.discovery.extensions) if self.discovery else []

    def find_provider(self, name: str) -> CetpDeclaration:
        """By package, provider_id (once negotiated) or authority; clear errors otherwise."""

        def keys(d: CetpDeclaration) -> list[str]:
            out = [d.package, d.key]
            if d.authority:
                out.append(d.authority)
            for (authority, _v), ps in self._providers.items():
                sess = getattr(ps, "session", None)
                if authority == d.authority and sess is not None:
                    out.append(sess.result.provider_id)
            return out

        # candidates are printed as names that select exactly one (copy-pasteable)
        return find_one(self.providers, name, keys, lambda d: d.key, "provider")

    def find_extension(self, name: str) -> ExtensionDeclaration:
        return find_one(self.extensions, name, lambda e: [e.id, e.package],
                        lambda e: f"{e.id} ({e.package})", "extension")

    # ------------------------------------------------------------------ providers
    def provider_session(self, decl: CetpDeclaration, *, v1: bool = False) -> AnyProviderSession:
        """The engine session for a provider: v2 when advertised (never downgraded, §8);
        the v1 view only on request (or for a v1-only provider)."""
        if not decl.authority:
            raise InspectorError(
                "NO_AUTHORITY", f"{decl.package} declares no com.clawseed.tools.authority",
                hint="the provider cannot be called; see its manifest problems",
                exit_code=ExitCode.PROVIDER_ERROR,
            )
        if v1 and not decl.supports_v1:
            raise InspectorError(
                "NO_V1", f"{decl.package} does not advertise CETP v1 (versions "
                f"{list(decl.versions)})", hint="drop --v1", exit_code=ExitCode.USAGE)
        version = 1 if v1 or not decl.supports_v2 else 2
        if version == 1 and not decl.supports_v1:
            raise InspectorError(
                "NO_COMMON_VERSION",
                f"{decl.package} advertises versions {list(decl.versions)}; the inspector "
                "speaks 1 and 2", exit_code=ExitCode.PROVIDER_ERROR)
        key = (decl.authority, version)
        ps = self._providers.get(key)
        if ps is None:
            cls = ProviderSession if version == 2 else V1ProviderSession
            ps = cls(self.link, decl.authority, package=decl.package, recorder=self.recorder,
                     clock=self.clock, options=self.options)
            if isinstance(ps, ProviderSession):
                ps.add_execution_listener(self._execution_changed)
            self._providers[key] = ps
        return ps

    def extension_host(self, decl: ExtensionDeclaration) -> ExtensionHost:
        """The AndyClaw host for an extension (one per package, kept across rescans;
        its declaration is refreshed so the bridge choice follows the manifest)."""
        host = self._extension_hosts.get(decl.package)
        if host is None:
            host = ExtensionHost(self.link, decl, recorder=self.recorder)
            self._extension_hosts[decl.package] = host
        else:
            host.decl = decl
        return host

    def provider_sessions(self) -> list[AnyProviderSession]:
        return list(self._providers.values())

    def _execution_changed(self, ex: Execution) -> None:
        for listener in list(self._execution_listeners):
            try:
                listener(ex)
            except Exception:
                log.exception("execution listener failed")

    def operations(self) -> list[tuple[AnyProviderSession, Execution]]:
        """Every execution that became an async operation, oldest first."""
        out: list[tuple[AnyProviderSession, Execution]] = []
        for ps in self._providers.values():
            for ex in ps.executions.values():
                if ex.operation_id:
                    out.append((ps, ex))
        return out

    def find_operation(self, operation_id: str) -> tuple[AnyProviderSession, Execution]:
        ops = self.operations()
        return find_one(ops, operation_id, lambda p: [p[1].operation_id or ""],
                        lambda p: p[1].operation_id or "", "operation")

    def adopt_operation(self, decl: CetpDeclaration, operation_id: str, request_id: str,
                        tool_name: str = "") -> tuple[ProviderSession, Execution]:
        """Track an operation started elsewhere (another process, an earlier session)."""
        ps = self.provider_session(decl)
        if not isinstance(ps, ProviderSession):
            raise InspectorError("NO_V2", f"{decl.package} is not a v2 provider: v1 has no "
                                 "async operations", exit_code=ExitCode.USAGE)
        ex = ps.executions.get(request_id)
        if ex is None:
            ex = Execution(request_id=request_id, tool_name=tool_name, args_json="{}",
                           state=ExecState.ACCEPTED, operation_id=operation_id)
            ps.executions[request_id] = ex
        return ps, ex

    # ------------------------------------------------------------------ events
    def _on_event(self, event: Bundle) -> None:
        kind = event.get("event")
        if kind == "log":  # a log line, not a device event: attached to exchanges, not kept
            self.provider_logs.feed_event(event)
            return
        self.events.append(event)
        for listener in list(self._event_listeners):
            try:
                listener(event)
            except Exception:
                log.exception("event listener failed")
        if kind == "package_changed":
            if self._rescan_task is None or self._rescan_task.done():
                self._rescan_task = self.spawner.spawn(self._rescan_quietly(), "session-rescan")
        elif kind == "confirmation_request":
            request = ConfirmationRequest.from_event(event)
            self.spawner.spawn(self._answer(request), f"confirm-{request.confirmation_id}")

    async def _rescan_quietly(self) -> None:
        await asyncio.sleep(0.05)  # let a burst of package events settle
        try:
            await self.rescan()
        except InspectorError as exc:
            log.info("rescan after package change failed: %s", exc)

    async def _answer(self, request: ConfirmationRequest) -> None:
        policy = self.confirmation_policy
        approve = False
        if policy is not None:
            try:
                answer = await policy(request)
                if answer is None:  # the person answers on the device's screen (issue 16)
                    return
                approve = bool(answer)
            except Exception:
                log.exception("confirmation policy failed; denying")
                approve = False
        self.confirmations.append((request, approve))
        for listener in list(self._confirmation_listeners):
            listener(request, approve)
        try:
            await self.link.answer_confirmation(request.confirmation_id, approve)
        except RelayError as exc:
            log.warning("answering confirmation %s failed: %s", request.confirmation_id, exc)


def device_error(exc: RelayError, what: str) -> InspectorError:
    """A relay failure as an InspectorError (exit code 3)."""
    return InspectorError(
        exc.code, f"{what}: {exc.message}", hint=exc.hint,
        retryable=exc.code in ("TIMEOUT", "BUSY", "DISCONNECTED", "IPC_FAILED"),
        exit_code=ExitCode.DEVICE,
    )
