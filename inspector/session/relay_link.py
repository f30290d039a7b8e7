"""A `RelayApi` that survives reconnects.

The consumer engine keeps one `RelayApi` per provider session; if it held the raw client,
a cable pull would strand every provider session and operation. `RelayLink` forwards each
call to the current client and, after a disconnect, connects a fresh one on the next call
(never retrying the failed call itself: only the engine knows whether a retry is safe and
it retries with the same request_id). Event handlers are re-attached to every new client.
`close()` is final: a late call afterwards (a task that outlived its session) raises
`LinkClosed` instead of silently connecting a client nobody will ever close.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from enum import StrEnum
from typing import Any

from inspector.protocol.bundle import Bundle
from inspector.relay.api import (
    DISCONNECTED,
    ActivityResult,
    ActivityStart,
    BroadcastReply,
    EventHandler,
    HelloInfo,
    RelayApi,
    RelayError,
    ResourceData,
    StreamEnd,
    TransactReply,
    WakeResult,
)

log = logging.getLogger(__name__)

Connector = Callable[[], Awaitable[RelayApi]]


class LinkState(StrEnum):
    DISCONNECTED = "disconnected"
    CONNECTING = "connecting"
    CONNECTED = "connected"
    CLOSED = "closed"  # close() was called; the link never connects again


StateListener = Callable[[LinkState, str], None]


class LinkClosed(RelayError):
    """A call on a link after `close()`; a transport failure (code DISCONNECTED), never
    a reason to reconnect."""

    def __init__(self, detail: str = "") -> None:
        super().__init__(DISCONNECTED, "the relay link was closed" + (f" ({detail})" if detail
                                                                       else "")
                         + "; this session no longer talks to the device — open a new "
                         "session (reconnect) to continue")


class RelayLink:
    """Forwards `RelayApi` calls to the current relay client; reconnects on demand."""

    def __init__(self, connector: Connector) -> None:
        self._connector = connector
        self._client: RelayApi | None = None
        self._hello: HelloInfo | None = None
        self._lock = asyncio.Lock()
        self._event_handlers: list[EventHandler] = []
        self._state_listeners: list[StateListener] = []
        self.state = LinkState.DISCONNECTED
        self.connects = 0  # how many times a client was connected (1 + reconnects)
        self.last_error: str = ""
        self._closed = False

    # -- connection management -------------------------------------------------------
    def add_state_listener(self, listener: StateListener) -> None:
        self._state_listeners.append(listener)

    def _set_state(self, state: LinkState, detail: str = "") -> None:
        self.state = state
        for listener in list(self._state_listeners):
            try:
                listener(state, detail)
            except Exception:  # a broken listener must not break the link
                log.exception("relay state listener failed")

    async def ensure(self) -> RelayApi:
        """The connected client, connecting (or reconnecting) first when needed.

        Raises `LinkClosed` after `close()` (also when close() came while connecting)."""
        if self._closed:
            raise LinkClosed()
        if self._client is not None:
            return self._client
        async with self._lock:
            if self._closed:
                raise LinkClosed()
            if self._client is not None:
                return self._client
            self._set_state(LinkState.CONNECTING)
            try:
                client = await self._connector()
            except Exception as exc:
                self.last_error = getattr(exc, "message", None) or str(exc)
                self._set_state(LinkState.CLOSED if self._closed else LinkState.DISCONNECTED,
                                self.last_error)
                raise
            if self._closed:  # close() ran while we were connecting: do not keep it
                with contextlib.suppress(Exception):
                    await client.close()
                raise LinkClosed("while connecting")
            for handler in self._event_handlers:
                client.add_event_handler(handler)
            on_close = getattr(client, "add_close_handler", None)
            if callable(on_close):  # learn about an idle disconnect at once, not at next call
                on_close(lambda err, c=client: self._closed_by_peer(c, err))
            self._client = client
            self._hello = client.hello_info
            self.connects += 1
            self._set_state(LinkState.CONNECTED)
            return client

    async def reconnect(self) -> RelayApi:
        """Drop the current client (if any) and connect a new one."""
        await self._drop()
        return await self.ensure()

    def _closed_by_peer(self, client: RelayApi, err: object) -> None:
        """The client saw its connection end (cable pulled, relay killed) while idle."""
        if self._client is client:
            self._client = None
            self.last_error = getattr(err, "message", None) or str(err or "connection closed")
            self._set_state(LinkState.CLOSED if self._closed else LinkState.DISCONNECTED,
                            self.last_error)

    async def _drop(self, reason: str = "") -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                await client.close()
            except Exception:  # closing a dead connection may fail; nothing to do
                log.debug("closing relay client failed", exc_info=True)
            if not self._closed:
                self._set_state(LinkState.DISCONNECTED, reason)

    async def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        client = await self.ensure()
        try:
            return await getattr(client, name)(*args, **kwargs)
        except RelayError as exc:
            if exc.code == DISCONNECTED and self._client is client:
                self.last_error = exc.message
                await self._drop(exc.message)
            raise

    @property
    def connected(self) -> bool:
        return self._client is not None

    @property
    def closed(self) -> bool:
        return self._closed

    # -- RelayApi ----------------------------------------------------------------------
    @property
    def hello_info(self) -> HelloInfo:
        if self._hello is None:
            raise RelayError(DISCONNECTED, "not connected to a relay yet")
        return self._hello

    async def ping(self) -> int:
        return int(await self._call("ping"))

    async def discover(self, package: str | None = None) -> list[Bundle]:
        return list(await self._call("discover", package))

    async def call(
        self,
        authority: str,
        method: str,
        extras: Bundle | None,
        *,
        arg: str | None = None,
        timeout_ms: int = 30_000,
    ) -> Bundle | None:
        return await self._call("call", authority, method, extras, arg=arg, timeout_ms=timeout_ms)

    async def read_file(
        self, handle: str, max_bytes: int, chunk_size: int | None = None
    ) -> AsyncIterator[bytes | StreamEnd]:
        client = await self.ensure()
        inner = client.read_file(handle, max_bytes, chunk_size)
        try:
            async for item in inner:
                yield item
        except RelayError as exc:
            if exc.code == DISCONNECTED and self._client is client:
                await self._drop(exc.message)
            raise
        finally:
            closer = getattr(inner, "aclose", None)
            if closer is not None:  # stopping early must CANCEL the stream on the relay
                await closer()

    async def close_handle(self, handle: str) -> bool:
        return bool(await self._call("close_handle", handle))

    async def launch_pending_intent(self, handle: str, timeout_ms: int = 120_000) -> ActivityResult:
        return await self._call("launch_pending_intent", handle, timeout_ms)

    async def bind_transact(
        self,
        package: str,
        action: str,
        descriptor: str,
        code: int,
        strings: list[str],
        timeout_ms: int = 30_000,
    ) -> TransactReply:
        return await self._call(
            "bind_transact", package, action, descriptor, code, strings, timeout_ms
        )

    async def broadcast(
        self, package: str, action: str, extras: Bundle, reply_action: str, timeout_ms: int = 30_000
    ) -> BroadcastReply:
        return await self._call("broadcast", package, action, extras, reply_action, timeout_ms)

    async def start_activity(self, package: str, action: str, extras: Bundle) -> ActivityStart:
        return await self._call("start_activity", package, action, extras)

    async def read_resource(self, package: str, resource_id: int, max_bytes: int) -> ResourceData:
        return await self._call("read_resource", package, resource_id, max_bytes)

    async def wake_provider(self, authority: str, package: str, mode: str) -> WakeResult:
        return await self._call("wake_provider", authority, package, mode)

    async def force_stop(self, package: str) -> bool:
        return bool(await self._call("force_stop", package))

    async def answer_confirmation(self, confirmation_id: str, approve: bool) -> bool:
        return bool(await self._call("answer_confirmation", confirmation_id, approve))

    async def logcat(self, after_seq: int = 0, max_lines: int = 500,
                     follow: bool = False) -> Bundle:
        return await self._call("logcat", after_seq, max_lines, follow)  # type: ignore[no-any-return]

    async def screencap(self) -> Bundle:
        return await self._call("screencap")  # type: ignore[no-any-return]

    async def input(self, kind: str, **args: object) -> Bundle:
        return await self._call("input", kind, **args)  # type: ignore[no-any-return]

    async def fault(self, kind: str, **args: object) -> bool:
        return bool(await self._call("fault", kind, **args))

    def add_event_handler(self, handler: EventHandler) -> None:
        self._event_handlers.append(handler)
        if self._client is not None:
            self._client.add_event_handler(handler)

    async def close(self) -> None:
        """Close the client and the link for good (idempotent); later calls raise
        `LinkClosed`."""
        if self._closed:
            return
        self._closed = True
        await self._drop("closed")
        self._set_state(LinkState.CLOSED, "closed")
