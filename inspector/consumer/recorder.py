"""Records every request and response the engine makes as an `Exchange`.

The GUI traffic log, the session journal and the conformance evidence all subscribe to one
`Recorder`; listeners are called when an exchange starts and again when it finishes (the
same object, its `status` tells which), so a live view can show pending calls.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from typing import Any

from inspector.protocol.bundle import (
    Bundle,
    BundleArray,
    Double,
    FileDescriptorHandle,
    Int,
    IntArray,
    Long,
    PendingIntentHandle,
    StringArray,
    Unsupported,
    to_jsonable,
)
from inspector.protocol.exchange import Exchange, ExchangeKind, ExchangeStatus, Finding

log = logging.getLogger(__name__)

ExchangeListener = Callable[[Exchange], None]


def _str_size(s: str) -> int:
    return 4 + len(s.encode("utf-8", "surrogatepass"))


def encoded_size(value: Any) -> int:
    """Bytes the value takes in the relay codec (docs/relay-protocol.md §2), tag included.

    Used for exchange sizes so that they mean the same thing for every relay.
    """
    if value is None:
        return 1
    if isinstance(value, bool):
        return 2
    if isinstance(value, Int):
        return 5
    if isinstance(value, Long | Double):
        return 9
    if isinstance(value, str):
        return 1 + _str_size(value)
    if isinstance(value, IntArray):
        return 5 + 4 * len(value)
    if isinstance(value, StringArray):
        return 5 + sum(4 if v is None else _str_size(v) for v in value)
    if isinstance(value, Bundle):
        return 5 + sum(_str_size(k) + encoded_size(v) for k, v in value.items())
    if isinstance(value, BundleArray):
        return 5 + sum(encoded_size(v) for v in value)
    if isinstance(value, bytes):
        return 5 + len(value)
    if isinstance(value, PendingIntentHandle):
        return 1 + _str_size(value.id) + _str_size(value.creator_package) + 4
    if isinstance(value, FileDescriptorHandle):
        return 1 + _str_size(value.id) + 8
    if isinstance(value, Unsupported):
        return 1 + _str_size(value.class_name)
    if isinstance(value, int):  # untyped int from a careless caller: count it as a long
        return 9
    try:  # plain JSON op arguments (relay housekeeping): their JSON size
        return len(json.dumps(value, default=str).encode("utf-8"))
    except (TypeError, ValueError):
        return 0


def jsonable(value: Any) -> Any:
    """JSON form for the record: typed Bundles loss-free, plain JSON data as is."""
    if isinstance(value, Bundle):
        return to_jsonable(value)
    return value


class Recorder:
    """Holds the exchanges of one session and notifies listeners."""

    def __init__(self, device: str = "", max_exchanges: int = 10_000) -> None:
        self.device = device
        self.max_exchanges = max_exchanges
        self.exchanges: list[Exchange] = []
        self._listeners: list[ExchangeListener] = []

    def add_listener(self, listener: ExchangeListener) -> Callable[[], None]:
        """Subscribe; returns a function that unsubscribes."""
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    def _notify(self, exchange: Exchange) -> None:
        for listener in list(self._listeners):
            try:
                listener(exchange)
            except Exception:  # a broken view must not break the engine
                log.exception("exchange listener failed")

    def start(
        self,
        kind: ExchangeKind,
        target: str,
        method: str,
        *,
        request: Any = None,
        package: str = "",
        tool: str | None = None,
        request_id: str | None = None,
        parent_id: str | None = None,
        attempt: int = 1,
        notes: Iterable[str] = (),
    ) -> Exchange:
        """Create and publish a pending exchange before the request is sent."""
        ex = Exchange(
            kind=kind,
            device=self.device,
            target=target,
            package=package,
            method=method,
            tool=tool,
            request_id=request_id,
            request=jsonable(request),
            request_bytes=encoded_size(request) if request is not None else 0,
            parent_id=parent_id,
            attempt=attempt,
            notes=list(notes),
        )
        self.exchanges.append(ex)
        if len(self.exchanges) > self.max_exchanges:
            del self.exchanges[: len(self.exchanges) - self.max_exchanges]
        self._notify(ex)
        return ex

    def finish(
        self,
        exchange: Exchange,
        status: ExchangeStatus,
        *,
        response: Any = None,
        decoded: Any = None,
        error_code: str | None = None,
        error_message: str | None = None,
        response_bytes: int | None = None,
        findings: Iterable[Finding] = (),
        notes: Iterable[str] = (),
    ) -> Exchange:
        """Complete an exchange with what came back and publish it again."""
        if response is not None:
            exchange.response = jsonable(response)
        exchange.response_bytes = (
            response_bytes if response_bytes is not None
            else encoded_size(response) if response is not None else 0
        )
        if decoded is not None:
            exchange.decoded = decoded
        exchange.error_code = error_code
        exchange.error_message = error_message
        exchange.findings.extend(findings)
        exchange.notes.extend(notes)
        exchange.finish(status)
        self._notify(exchange)
        return exchange

    def add_findings(self, exchange: Exchange, findings: Iterable[Finding]) -> None:
        """Attach later verdicts (e.g. a file verification) and republish."""
        exchange.findings.extend(findings)
        self._notify(exchange)

    def refused(
        self,
        kind: ExchangeKind,
        target: str,
        method: str,
        reason_code: str,
        message: str,
        **kw: Any,
    ) -> Exchange:
        """Record a request the inspector refused to send (never reaches the device)."""
        ex = self.start(kind, target, method, **kw)
        return self.finish(ex, ExchangeStatus.REFUSED, error_code=reason_code,
                           error_message=message)

    def by_id(self, exchange_id: str) -> Exchange | None:
        for ex in self.exchanges:
            if ex.id == exchange_id:
                return ex
        return None
