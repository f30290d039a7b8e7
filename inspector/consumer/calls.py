"""One recorded `ContentResolver.call` through the relay.

Every CETP call goes through `Caller.call`: it records the exchange, maps relay failures,
optionally wakes a sleeping provider ("Unknown authority") the way the ClawSeed consumer
does, parses the reply with `inspector.protocol.cetp.parse_reply`, and attaches wire
violations as findings.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from inspector.consumer.clock import Clock
from inspector.consumer.findings import violation_finding
from inspector.consumer.options import EngineOptions
from inspector.consumer.recorder import Recorder
from inspector.protocol.bundle import Bundle
from inspector.protocol.cetp import ProtocolViolation, Reply, parse_reply
from inspector.protocol.exchange import Exchange, ExchangeKind, ExchangeStatus
from inspector.relay.api import DISCONNECTED, NOT_FOUND, TIMEOUT, RelayApi, RelayError

#: relay failures after which a reply may have been lost (the provider may have acted)
OUTCOME_UNKNOWN_CODES = frozenset({TIMEOUT, DISCONNECTED, "IPC_FAILED", "BUSY", "CANCELLED"})


WAKE_OFF_HINT = (
    "The relay found no running provider for this authority. If the app is installed, its "
    "process is probably not running and this ROM does not start it for call(): retry with "
    "wake_and_retry (CLI: --wake), which wakes it the ClawSeed way (acquire, then launch), "
    "or open the app once and retry."
)
WAKE_FAILED_HINT = (
    "The provider stayed unreachable after wake_provider(acquire) and (launch): check that "
    "the app is installed and enabled (rescan), open it once on the phone, then retry with "
    "the same request id."
)


class UnreachableProvider(RelayError):
    """A NOT_FOUND `call` carrying a hint about waking the provider (the generic relay hint
    says "rescan", which does not help when the provider process is merely not running)."""

    def __init__(self, cause: RelayError, hint: str) -> None:
        super().__init__(cause.code, cause.message, cause.details)
        self._hint = hint

    @property
    def hint(self) -> str:
        return self._hint


@dataclass
class CallResult:
    exchange: Exchange
    reply: Reply | None = None
    violation: ProtocolViolation | None = None
    transport: RelayError | None = None
    wake_exchanges: list[Exchange] = field(default_factory=list)

    @property
    def outcome_unknown(self) -> bool:
        """A timeout/disconnect: the provider may or may not have acted."""
        return self.transport is not None and self.transport.code in OUTCOME_UNKNOWN_CODES


class Caller:
    """Sends CETP calls to one authority and records them."""

    def __init__(self, relay: RelayApi, authority: str, package: str, recorder: Recorder,
                 clock: Clock, options: EngineOptions) -> None:
        self.relay = relay
        self.authority = authority
        self.package = package
        self.recorder = recorder
        self.clock = clock
        self.options = options
        self._slots: asyncio.Semaphore | None = None
        self.concurrency: int | None = None

    def set_concurrency(self, limit: int) -> None:
        """Honour the negotiated max_concurrent_requests (at least 1) for later calls."""
        self.concurrency = max(1, limit)
        self._slots = asyncio.Semaphore(self.concurrency)

    async def call(
        self,
        method: str,
        extras: Bundle | None,
        *,
        v2: bool,
        request_id: str | None = None,
        tool: str | None = None,
        parent_id: str | None = None,
        attempt: int = 1,
        check_echo: bool = True,
    ) -> CallResult:
        result = await self._send(method, extras, v2=v2, request_id=request_id, tool=tool,
                                  parent_id=parent_id, attempt=attempt, check_echo=check_echo)
        if (result.transport is not None and result.transport.code == NOT_FOUND
                and self.options.wake_and_retry):
            woken = await self._wake_and_retry(method, extras, v2=v2, request_id=request_id,
                                               tool=tool, parent_id=result.exchange.id,
                                               attempt=attempt, check_echo=check_echo)
            if woken is not None:
                return woken
            # no wake-up succeeded, so nothing was retried: say so on the original call
            assert result.transport is not None
            result.transport = UnreachableProvider(result.transport, WAKE_FAILED_HINT)
            result.exchange.notes.append(WAKE_FAILED_HINT)
        return result

    async def _send(self, method: str, extras: Bundle | None, *, v2: bool,
                    request_id: str | None, tool: str | None, parent_id: str | None,
                    attempt: int, check_echo: bool) -> CallResult:
        ex = self.recorder.start(ExchangeKind.CETP, self.authority, method, request=extras,
                                 package=self.package, tool=tool, request_id=request_id,
                                 parent_id=parent_id, attempt=attempt)
        try:
            if self._slots is not None and method != "negotiate":
                async with self._slots:
                    bundle = await self.relay.call(self.authority, method, extras,
                                                   timeout_ms=self.options.call_timeout_ms)
            else:
                bundle = await self.relay.call(self.authority, method, extras,
                                               timeout_ms=self.options.call_timeout_ms)
        except RelayError as exc:
            if exc.code == NOT_FOUND and not self.options.wake_and_retry:
                exc = UnreachableProvider(exc, WAKE_OFF_HINT)
            note = exc.hint
            self.recorder.finish(ex, ExchangeStatus.TRANSPORT_ERROR, error_code=exc.code,
                                 error_message=exc.message, notes=[note] if note else [])
            if ex.crash is not None and ex.error_message:  # the session linked a crash
                exc.message = ex.error_message
            return CallResult(ex, transport=exc)
        try:
            reply = parse_reply(bundle, v2=v2, method=method,
                                request_id=request_id if (v2 and check_echo) else None)
        except ProtocolViolation as v:
            self.recorder.finish(ex, ExchangeStatus.MALFORMED, response=bundle,
                                 error_code="MALFORMED_REPLY", error_message=str(v),
                                 findings=[violation_finding(v)])
            return CallResult(ex, violation=v)
        status = {
            "success": ExchangeStatus.SUCCESS,
            "accepted": ExchangeStatus.ACCEPTED,
        }.get(reply.status, ExchangeStatus.PROVIDER_ERROR)
        err = reply.error
        self.recorder.finish(
            ex, status, response=bundle, decoded=reply.decoded,
            error_code=err.error_code if err else None,
            error_message=err.error_message if err else None,
            findings=[violation_finding(p) for p in reply.problems],
        )
        return CallResult(ex, reply=reply)

    async def _wake_and_retry(self, method: str, extras: Bundle | None, *, v2: bool,
                              request_id: str | None, tool: str | None, parent_id: str,
                              attempt: int, check_echo: bool) -> CallResult | None:
        """acquire → retry; then launch → retry (each step recorded)."""
        last: CallResult | None = None
        for mode in ("acquire", "launch"):
            wx = self.recorder.start(ExchangeKind.RELAY, self.authority, "wake_provider",
                                     package=self.package, parent_id=parent_id,
                                     request={"authority": self.authority,
                                              "package": self.package, "mode": mode})
            try:
                woke = await self.relay.wake_provider(self.authority, self.package, mode)
            except RelayError as exc:
                self.recorder.finish(wx, ExchangeStatus.TRANSPORT_ERROR, error_code=exc.code,
                                     error_message=exc.message)
                continue
            self.recorder.finish(
                wx, ExchangeStatus.SUCCESS if woke.ok else ExchangeStatus.TRANSPORT_ERROR,
                decoded={"ok": woke.ok, "detail": woke.detail},
                error_code=None if woke.ok else "WAKE_FAILED",
                error_message=None if woke.ok else woke.detail)
            if not woke.ok:
                continue
            await self.clock.sleep_ms(self.options.wake_delay_ms)
            last = await self._send(method, extras, v2=v2, request_id=request_id, tool=tool,
                                    parent_id=parent_id, attempt=attempt,
                                    check_echo=check_echo)
            last.exchange.notes.append(f"retried after wake_provider({mode})")
            if not (last.transport is not None and last.transport.code == NOT_FOUND):
                return last
        if last is not None and last.transport is not None:
            last.transport = UnreachableProvider(last.transport, WAKE_FAILED_HINT)
            last.exchange.notes.append(WAKE_FAILED_HINT)
        return last
