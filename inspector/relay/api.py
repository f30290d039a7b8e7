"""The operations a relay offers, as the consumer engine and the session layer see them.

`RelayApi` is the transport interface: the consumer engine is written against it and is
tested with in-memory fakes; `inspector.relay.client.RelayClient` implements it over a
socket (phone relay or virtual device). Failures are `RelayError` with a relay error code
from docs/relay-protocol.md §6.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Protocol

from inspector.protocol.bundle import Bundle

# Relay error codes (docs/relay-protocol.md §6)
BAD_FRAME = "BAD_FRAME"
UNSUPPORTED_VERSION = "UNSUPPORTED_VERSION"
AUTH_FAILED = "AUTH_FAILED"
UNKNOWN_OP = "UNKNOWN_OP"
BAD_ARGS = "BAD_ARGS"
NOT_FOUND = "NOT_FOUND"
SECURITY = "SECURITY"
TIMEOUT = "TIMEOUT"
IPC_FAILED = "IPC_FAILED"
TOO_LARGE = "TOO_LARGE"
CANCELLED = "CANCELLED"
BUSY = "BUSY"
INTERNAL = "INTERNAL"
# The phone relay must be the resumed activity to start another app's activity (Android 10+
# drops background starts silently); the desktop brings it forward and retries once.
NEEDS_FOREGROUND = "NEEDS_FOREGROUND"
# Client-side only: the connection went away (cable pulled, relay killed).
DISCONNECTED = "DISCONNECTED"

RELAY_ERROR_HINTS: dict[str, str] = {
    BAD_FRAME: "The relay and the inspector disagree on the wire format; reinstall the relay.",
    UNSUPPORTED_VERSION: "The relay speaks another protocol version; let the inspector "
    "reinstall the relay it ships.",
    AUTH_FAILED: "The session token was refused; restart the relay from the inspector.",
    UNKNOWN_OP: "This relay does not offer that operation; update the relay.",
    BAD_ARGS: "The request was malformed; this is an inspector bug, please report it.",
    NOT_FOUND: "The package, authority, component or handle does not exist on the device; rescan.",
    SECURITY: "Android refused the call (SecurityException): check the provider's "
    "permission and exported flag.",
    TIMEOUT: "The device did not answer in time; the provider may still be working. "
    "Query or retry with the same request id.",
    IPC_FAILED: "The IPC call failed (dead binder, crash or failed bind); wake or restart "
    "the provider and retry.",
    TOO_LARGE: "The data exceeds the read limit; raise the limit if you trust the source.",
    CANCELLED: "The request was cancelled.",
    BUSY: "The relay is busy; retry shortly.",
    INTERNAL: "The relay failed internally; see the relay log on the device.",
    NEEDS_FOREGROUND: "Unlock the phone and bring the relay screen to the front: adb shell am "
    "start -n org.cetp.inspector.relay/.app.RelayActivity, then retry.",
    DISCONNECTED: "The connection to the device was lost; reconnect (cable, adb) and retry "
    "with the same request id.",
}


class RelayError(Exception):
    """A relay-level failure (not a provider's CETP error)."""

    def __init__(self, code: str, message: str, details: Bundle | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.details = details

    @property
    def hint(self) -> str:
        return RELAY_ERROR_HINTS.get(self.code, "")


@dataclass(frozen=True)
class HelloInfo:
    protocol_version: int
    relay_version_code: int
    relay_version_name: str
    capabilities: tuple[str, ...]
    caller_package: str
    caller_uid: int
    caller_cert_sha256: tuple[str, ...]
    device: dict[str, object] = field(default_factory=dict)
    # optional in the hello (relay versionCode 3+): None when the relay does not report them
    requested_permissions: tuple[str, ...] | None = None
    held_permissions: tuple[str, ...] | None = None

    @property
    def missing_permissions(self) -> tuple[str, ...]:
        """Requested by the relay's manifest but not granted (empty when not reported)."""
        if self.requested_permissions is None or self.held_permissions is None:
            return ()
        held = set(self.held_permissions)
        return tuple(p for p in self.requested_permissions if p not in held)


@dataclass(frozen=True)
class StreamEnd:
    """What the relay reported at the end of a streamed file read."""

    size: int
    sha256: str


@dataclass(frozen=True)
class ActivityResult:
    result_code: int  # -1 RESULT_OK, 0 RESULT_CANCELED
    data: Bundle | None
    # optional (Java relay versionCode 3+, docs/relay-protocol.md §4): "result",
    # "user_cancelled", "cancelled_new_task" (RESULT_CANCELED at once: launched into a new
    # task, the person's answer is unknowable) or "no_result_expected" (not an activity)
    outcome: str | None = None
    elapsed_ms: int | None = None
    detail: str | None = None

    @property
    def ok(self) -> bool:
        return self.result_code == -1


@dataclass(frozen=True)
class TransactReply:
    exception: Bundle | None
    reply: str | None


@dataclass(frozen=True)
class BroadcastReply:
    reply: Bundle | None
    timed_out: bool
    # optional (Java relay versionCode 3+): the per-call action the relay listened on, the
    # target's ApplicationInfo.FLAG_STOPPED when sent, and why a timeout happened
    reply_action: str | None = None
    target_stopped: bool | None = None
    detail: str | None = None


@dataclass(frozen=True)
class ActivityStart:
    launched: bool
    component: str | None


@dataclass(frozen=True)
class ResourceData:
    data: bytes
    name: str | None


@dataclass(frozen=True)
class WakeResult:
    ok: bool
    detail: str


EventHandler = Callable[[Bundle], None]


class RelayApi(Protocol):
    """Typed relay operations (docs/relay-protocol.md §4)."""

    @property
    def hello_info(self) -> HelloInfo: ...

    async def ping(self) -> int: ...

    async def discover(self, package: str | None = None) -> list[Bundle]: ...

    async def call(
        self,
        authority: str,
        method: str,
        extras: Bundle | None,
        *,
        arg: str | None = None,
        timeout_ms: int = 30_000,
    ) -> Bundle | None: ...

    def read_file(
        self, handle: str, max_bytes: int, chunk_size: int | None = None
    ) -> AsyncIterator[bytes | bytearray | StreamEnd]:
        """Yield chunks (bytes-like), then one final StreamEnd. Raises RelayError (TOO_LARGE …).

        Chunks may be reused buffers: consume (hash, write) each before asking for the next.
        """
        ...

    async def close_handle(self, handle: str) -> bool: ...

    async def launch_pending_intent(
        self, handle: str, timeout_ms: int = 120_000
    ) -> ActivityResult: ...

    async def bind_transact(
        self,
        package: str,
        action: str,
        descriptor: str,
        code: int,
        strings: list[str],
        timeout_ms: int = 30_000,
    ) -> TransactReply: ...

    async def broadcast(
        self, package: str, action: str, extras: Bundle, reply_action: str, timeout_ms: int = 30_000
    ) -> BroadcastReply: ...

    async def start_activity(self, package: str, action: str, extras: Bundle) -> ActivityStart: ...

    async def read_resource(
        self, package: str, resource_id: int, max_bytes: int
    ) -> ResourceData: ...

    async def wake_provider(self, authority: str, package: str, mode: str) -> WakeResult: ...

    async def force_stop(self, package: str) -> bool: ...

    async def answer_confirmation(self, confirmation_id: str, approve: bool) -> bool: ...

    async def fault(self, kind: str, **args: object) -> bool: ...

    def add_event_handler(self, handler: EventHandler) -> None: ...

    async def close(self) -> None: ...


# ---------------------------------------------------------------------------------------
# Server side: what a relay implementation (the virtual device) plugs into the server core.


class ServerConnection(Protocol):
    """One authenticated desktop connection, as a backend sees it."""

    @property
    def connection_id(self) -> str: ...

    def emit(self, event: Bundle) -> None:
        """Push an EVENT frame (only delivered when the client asked for events)."""
        ...

    def is_closed(self) -> bool: ...

    def close(self) -> None:
        """Drop the connection now (fault `drop_connection`); pending requests are lost."""
        ...


class FileStream(Protocol):
    """A streamed result: the server core sends CHUNK frames then END {size, sha256}."""

    def __aiter__(self) -> AsyncIterator[bytes]: ...


class RelayBackend(Protocol):
    """A relay's behaviour behind the server core (`inspector.relay.server.RelayServer`).

    The core owns framing, hello/auth, request ids, cancellation, streaming and events;
    the backend answers whitelisted ops. `handle` returns a result Bundle, or a FileStream
    for `read_file`, or raises RelayError. Optional: a `connection_opened(conn)` method is
    called after a successful hello (so events can reach a connection before its first call).
    """

    def hello_info(self, client: str) -> HelloInfo: ...

    async def handle(
        self, op: str, args: Bundle, conn: ServerConnection
    ) -> Bundle | FileStream: ...

    def connection_closed(self, conn: ServerConnection) -> None: ...
