"""The relay client: `RelayApi` over asyncio streams (docs/relay-protocol.md).

One reader task demultiplexes replies by request id, so many calls can be in flight and
replies may come back in any order. Every pending call ends: with its reply, a per-call
timeout (the relay is told with CANCEL), a cancellation of the awaiting task (CANCEL again)
or a lost connection (`RelayError(DISCONNECTED)`); nothing can wait forever.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from inspector.protocol.bundle import (
    Bundle,
    BundleArray,
    Int,
    Long,
    StringArray,
    Value,
)
from inspector.relay.api import (
    BAD_FRAME,
    DISCONNECTED,
    NEEDS_FOREGROUND,
    TIMEOUT,
    ActivityResult,
    ActivityStart,
    BroadcastReply,
    EventHandler,
    HelloInfo,
    RelayError,
    ResourceData,
    StreamEnd,
    TransactReply,
    WakeResult,
)
from inspector.relay.codec import CodecError, decode_bundle, encode_value
from inspector.relay.frame_protocol import FrameProtocol, TransportWriter
from inspector.relay.frames import Frame, FrameType, read_frame, write_frame
from inspector.relay.hello import hello_args, parse_hello_result
from inspector.tasks import Spawner
from inspector.tasks import spawner as default_spawner

log = logging.getLogger(__name__)

CLIENT_NAME = "cetp-inspector/0.1.0"
STREAM_LIMIT = 4 * 1024 * 1024
SOCKET_BUFFER = 4 * 1024 * 1024
"""Requested SO_RCVBUF (the kernel caps it at net.core.rmem_max)."""
DEFAULT_CALL_TIMEOUT_S = 60.0
"""Client-side bound for ops without `timeout_ms` (ping, discover, close_handle …)."""
TIMEOUT_GRACE_S = 5.0
"""Added to an op's `timeout_ms`: the relay reports its own TIMEOUT first when it can."""
STREAM_QUEUE_CHUNKS = 16
"""Chunks buffered per stream (4 MiB at 256 KiB); a slow consumer then slows the relay."""


@dataclass(frozen=True, slots=True)
class FrameRecord:
    """What the `on_frame` hook sees for every frame, both ways (for the traffic log)."""

    direction: str  # "out" (desktop → relay) or "in"
    type: str  # FrameType name
    request_id: int
    op: str | None  # the op of the request this frame belongs to, when known
    value: Value | None  # decoded payload; None for CHUNK (raw bytes) and CANCEL
    size: int  # payload bytes


FrameHook = Callable[[FrameRecord], None]


class _Stream:
    """Receiving side of one streamed result: a bounded queue fed by the reader task."""

    __slots__ = ("closed", "queue")

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes | StreamEnd | RelayError] = asyncio.Queue(
            STREAM_QUEUE_CHUNKS
        )
        self.closed = False

    def abandon(self) -> None:
        """Stop receiving: empty the queue so a reader blocked on `put` moves on."""
        self.closed = True
        while True:
            try:
                self.queue.get_nowait()
            except asyncio.QueueEmpty:
                return


class RelayClient:
    """`RelayApi` implementation over one stream connection to a relay."""

    def __init__(
        self,
        reader: asyncio.StreamReader | FrameProtocol,
        writer: asyncio.StreamWriter | TransportWriter,
        *,
        on_frame: FrameHook | None = None,
        spawner: Spawner | None = None,
        call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self.on_frame = on_frame
        self._spawner = spawner or default_spawner()
        self.call_timeout_s = call_timeout_s
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Bundle] | _Stream] = {}
        self._ops: dict[int, str] = {}
        self._handlers: list[EventHandler] = []
        self._close_handlers: list[Callable[[RelayError], None]] = []
        self._hello: HelloInfo | None = None
        self._closed_error: RelayError | None = None
        self._reader_task: asyncio.Task[None] | None = None
        # Set by the device layer on a phone: brings the relay activity to the front
        # (`am start -n …/.app.RelayActivity`); an op answered NEEDS_FOREGROUND is retried once.
        self.bring_forward: Callable[[], Awaitable[None]] | None = None

    # -- construction -------------------------------------------------------------------
    @classmethod
    async def connect(
        cls,
        reader: asyncio.StreamReader | FrameProtocol,
        writer: asyncio.StreamWriter | TransportWriter,
        token: str,
        *,
        client_name: str = CLIENT_NAME,
        events: bool = True,
        hello_timeout_s: float = 10.0,
        **kwargs: Any,
    ) -> RelayClient:
        """Start the reader and perform the hello; raise RelayError when refused."""
        client = cls(reader, writer, **kwargs)
        client._start()
        try:
            reply = await client._request(
                "hello", hello_args(token, client_name, events), hello_timeout_s
            )
            client._hello = parse_hello_result(reply)
        except BaseException:
            await client.close()
            raise
        return client

    @classmethod
    async def open_unix(cls, path: str, token: str, **kwargs: Any) -> RelayClient:
        loop = asyncio.get_running_loop()
        try:
            transport, proto = await loop.create_unix_connection(FrameProtocol, path)
        except OSError as exc:
            raise RelayError(DISCONNECTED, f"cannot connect to the relay at {path}: {exc}") from exc
        _grow_receive_buffer(transport)
        return await cls.connect(proto, TransportWriter(transport, proto), token, **kwargs)

    @classmethod
    async def open_socket(cls, sock: socket.socket, token: str, **kwargs: Any) -> RelayClient:
        """Connect over an already connected stream socket (socketpair, adb forward …)."""
        loop = asyncio.get_running_loop()
        transport, proto = await loop.create_connection(FrameProtocol, sock=sock)
        _grow_receive_buffer(transport)
        return await cls.connect(proto, TransportWriter(transport, proto), token, **kwargs)

    @classmethod
    async def open_tcp(cls, host: str, port: int, token: str, **kwargs: Any) -> RelayClient:
        loop = asyncio.get_running_loop()
        try:
            transport, proto = await loop.create_connection(FrameProtocol, host, port)
        except OSError as exc:
            raise RelayError(
                DISCONNECTED, f"cannot connect to the relay at {host}:{port}: {exc}"
            ) from exc
        _grow_receive_buffer(transport)
        return await cls.connect(proto, TransportWriter(transport, proto), token, **kwargs)

    def _start(self) -> None:
        self._reader_task = self._spawner.spawn(self._read_loop(), "relay-client-reader")

    # -- state --------------------------------------------------------------------------
    @property
    def hello_info(self) -> HelloInfo:
        if self._hello is None:
            raise RelayError(DISCONNECTED, "the relay connection has not completed its hello")
        return self._hello

    @property
    def closed(self) -> bool:
        return self._closed_error is not None

    def add_event_handler(self, handler: EventHandler) -> None:
        self._handlers.append(handler)

    def remove_event_handler(self, handler: EventHandler) -> None:
        with contextlib.suppress(ValueError):
            self._handlers.remove(handler)

    async def close(self) -> None:
        """Close the connection; pending calls fail with DISCONNECTED."""
        self._fail_all(RelayError(DISCONNECTED, "the connection was closed by the inspector"))
        task = self._reader_task
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        with contextlib.suppress(Exception):
            self._writer.close()
            await asyncio.wait_for(self._writer.wait_closed(), 2.0)

    # -- frames -------------------------------------------------------------------------
    def _hook(
        self, direction: str, frame_type: FrameType, rid: int, value: Value, size: int
    ) -> None:
        if self.on_frame is None:
            return
        try:
            self.on_frame(
                FrameRecord(direction, frame_type.name, rid, self._ops.get(rid), value, size)
            )
        except Exception:
            log.exception("relay on_frame hook failed")

    def _send(self, ftype: FrameType, rid: int, value: Value | None = None) -> None:
        if self._closed_error is not None:
            raise RelayError(DISCONNECTED, self._closed_error.message)
        payload = b"" if ftype is FrameType.CANCEL else encode_value(value)
        try:
            write_frame(self._writer, ftype, rid, payload)
        except (ConnectionError, OSError, RuntimeError) as exc:
            raise RelayError(DISCONNECTED, f"cannot write to the relay: {exc}") from exc
        self._hook("out", ftype, rid, value, len(payload))

    def _cancel_remote(self, rid: int) -> None:
        """Tell the relay to abandon `rid` (best effort) and forget it locally."""
        entry = self._pending.pop(rid, None)
        if isinstance(entry, _Stream):
            entry.abandon()
        if entry is not None and self._closed_error is None:
            with contextlib.suppress(RelayError):
                self._send(FrameType.CANCEL, rid)
        self._ops.pop(rid, None)

    def _next_id(self) -> int:
        while True:
            rid = next(self._ids)
            if rid > 0xFFFFFFFF:
                self._ids = itertools.count(1)
            elif rid not in self._pending:
                return rid

    async def _read_loop(self) -> None:
        error = RelayError(DISCONNECTED, "the relay closed the connection")
        reader = self._reader
        try:
            while True:
                if isinstance(reader, FrameProtocol):
                    frame = await reader.read_frame()
                else:
                    frame = await read_frame(reader)
                if frame is None:
                    break
                await self._dispatch(frame)
        except RelayError as exc:  # garbage from the relay: nothing more can be trusted
            error = RelayError(DISCONNECTED, f"connection lost: {exc.message}")
        except (ConnectionError, OSError) as exc:
            error = RelayError(DISCONNECTED, f"connection lost: {exc}")
        except asyncio.CancelledError:
            error = RelayError(DISCONNECTED, "the connection was closed by the inspector")
            raise
        finally:
            self._fail_all(error)
            with contextlib.suppress(Exception):
                self._writer.close()

    async def _dispatch(self, frame: Frame) -> None:
        rid, ftype = frame.request_id, frame.type
        if ftype is FrameType.CHUNK:
            self._hook("in", ftype, rid, None, len(frame.payload))
            entry = self._pending.get(rid)
            if isinstance(entry, _Stream) and not entry.closed:
                # not copied: the payload buffer is handed over (FrameProtocol reuses it only
                # once nothing references it any more)
                await entry.queue.put(frame.payload)
            elif entry is not None:
                self._fail_one(
                    rid, RelayError(BAD_FRAME, "CHUNK for a request that is not a stream")
                )
            return
        try:
            value: Bundle = decode_bundle(frame.payload)
        except CodecError as exc:
            raise RelayError(BAD_FRAME, f"undecodable {ftype.name} payload: {exc}") from exc
        self._hook("in", ftype, rid, value, len(frame.payload))
        if ftype is FrameType.EVENT:
            for handler in list(self._handlers):
                try:
                    handler(value)
                except Exception:
                    log.exception("relay event handler failed")
            return
        if ftype is FrameType.ERROR:
            err = _error_from(value)
            if rid == 0:
                self._fail_all(err)
                self._closed_error = err
                return
            self._fail_one(rid, err)
            return
        if ftype in (FrameType.REQUEST, FrameType.CANCEL):
            raise RelayError(BAD_FRAME, f"the relay sent a {ftype.name} frame")
        entry = self._pending.get(rid)
        if entry is None:
            return  # a late reply to a cancelled or timed-out call
        if ftype is FrameType.RESPONSE:
            if isinstance(entry, _Stream):
                self._fail_one(rid, RelayError(BAD_FRAME, "RESPONSE to a stream request"))
            else:
                self._pending.pop(rid, None)
                self._ops.pop(rid, None)
                if not entry.done():
                    entry.set_result(value)
        elif ftype is FrameType.END:
            if not isinstance(entry, _Stream):
                self._fail_one(rid, RelayError(BAD_FRAME, "END for a request that is not a stream"))
                return
            size, sha = value.get("size"), value.get("sha256")
            if not isinstance(size, Long) or not isinstance(sha, str):
                end: StreamEnd | RelayError = RelayError(BAD_FRAME, "END without size/sha256")
            else:
                end = StreamEnd(int(size), sha)
            self._pending.pop(rid, None)
            self._ops.pop(rid, None)
            if not entry.closed:
                await entry.queue.put(end)

    def _fail_one(self, rid: int, err: RelayError) -> None:
        entry = self._pending.pop(rid, None)
        self._ops.pop(rid, None)
        if isinstance(entry, _Stream):
            if not entry.closed:
                # never block the reader: make room for the error, the stream ends with it
                entry.abandon()
                entry.closed = False
                entry.queue.put_nowait(err)
        elif entry is not None and not entry.done():
            entry.set_exception(err)

    def _fail_all(self, err: RelayError) -> None:
        first = self._closed_error is None
        if first:
            self._closed_error = err
        for rid in list(self._pending):
            self._fail_one(rid, err)
        if first:
            self._notify_closed(err)

    def add_close_handler(self, handler: Callable[[RelayError], None]) -> None:
        """Call `handler(error)` once when the connection ends, even while idle.

        A session uses it to show a pulled cable at once instead of at the next call.
        """
        if self._closed_error is not None:
            handler(self._closed_error)
            return
        self._close_handlers.append(handler)

    def _notify_closed(self, err: RelayError) -> None:
        handlers, self._close_handlers = self._close_handlers, []
        for handler in handlers:
            try:
                handler(err)
            except Exception:
                log.exception("relay close handler failed")

    # -- requests -----------------------------------------------------------------------
    async def _request(self, op: str, args: Bundle, timeout_s: float | None = None) -> Bundle:
        if self._closed_error is not None:
            raise RelayError(DISCONNECTED, self._closed_error.message)
        rid = self._next_id()
        fut: asyncio.Future[Bundle] = asyncio.get_running_loop().create_future()
        self._pending[rid] = fut
        self._ops[rid] = op
        try:
            self._send(FrameType.REQUEST, rid, Bundle(op=op, args=args))
            return await asyncio.wait_for(
                fut, timeout_s if timeout_s is not None else self.call_timeout_s
            )
        except TimeoutError:
            self._cancel_remote(rid)
            raise RelayError(TIMEOUT, f"the relay did not answer {op} in time") from None
        except asyncio.CancelledError:
            self._cancel_remote(rid)
            raise
        finally:
            self._pending.pop(rid, None)
            self._ops.pop(rid, None)
            if fut.done() and not fut.cancelled():
                fut.exception()  # mark retrieved

    async def _in_front(self, op: str, args: Bundle, timeout_ms: int | None = None) -> Bundle:
        """An op that starts an activity: on NEEDS_FOREGROUND bring the relay forward, retry once.

        Safe to retry: the relay answers NEEDS_FOREGROUND before starting anything."""
        for attempt in (1, 2):
            try:
                if timeout_ms is None:
                    return await self._request(op, Bundle(args))
                return await self._timed(op, Bundle(args), timeout_ms)
            except RelayError as e:
                if e.code != NEEDS_FOREGROUND or self.bring_forward is None or attempt == 2:
                    raise
                log.info("%s needs the relay in front; bringing it forward and retrying", op)
                await self.bring_forward()
        raise AssertionError("unreachable")

    async def _timed(self, op: str, args: Bundle, timeout_ms: int) -> Bundle:
        args["timeout_ms"] = Int(timeout_ms)
        return await self._request(op, args, timeout_ms / 1000.0 + TIMEOUT_GRACE_S)

    # -- RelayApi -----------------------------------------------------------------------
    async def ping(self) -> int:
        return int(_field(await self._request("ping", Bundle()), "time_ms", Long))

    async def discover(self, package: str | None = None) -> list[Bundle]:
        args = Bundle() if package is None else Bundle(package=package)
        packages = _field(await self._request("discover", args), "packages", BundleArray)
        return [p for p in packages if p is not None]

    async def call(
        self,
        authority: str,
        method: str,
        extras: Bundle | None,
        *,
        arg: str | None = None,
        timeout_ms: int = 30_000,
    ) -> Bundle | None:
        args = Bundle(authority=authority, method=method, arg=arg, extras=extras)
        reply = (await self._timed("call", args, timeout_ms)).get("reply")
        if reply is not None and not isinstance(reply, Bundle):
            raise RelayError(BAD_FRAME, "call reply must be a Bundle or null")
        return reply

    def read_file(self, handle: str, max_bytes: int, chunk_size: int | None = None) -> FileRead:
        args = Bundle(handle=handle, max_bytes=Long(max_bytes))
        if chunk_size is not None:
            args["chunk_size"] = Int(chunk_size)
        return FileRead(self, args)

    async def close_handle(self, handle: str) -> bool:
        return _field(await self._request("close_handle", Bundle(handle=handle)), "closed", bool)

    async def launch_pending_intent(self, handle: str, timeout_ms: int = 120_000) -> ActivityResult:
        r = await self._in_front("launch_pending_intent", Bundle(handle=handle), timeout_ms)
        elapsed = r.get("elapsed_ms")
        return ActivityResult(int(_field(r, "result_code", Int)), _opt_bundle(r, "data"),
                              outcome=_opt_str(r, "outcome"),
                              elapsed_ms=int(elapsed) if isinstance(elapsed, Long) else None,
                              detail=_opt_str(r, "detail"))

    async def bind_transact(
        self,
        package: str,
        action: str,
        descriptor: str,
        code: int,
        strings: list[str],
        timeout_ms: int = 30_000,
    ) -> TransactReply:
        args = Bundle(
            package=package,
            action=action,
            descriptor=descriptor,
            code=Int(code),
            strings=StringArray(strings),
        )
        r = await self._timed("bind_transact", args, timeout_ms)
        reply = r.get("reply")
        if reply is not None and not isinstance(reply, str):
            raise RelayError(BAD_FRAME, "bind_transact reply must be a String or null")
        return TransactReply(_opt_bundle(r, "exception"), reply)

    async def broadcast(
        self,
        package: str,
        action: str,
        extras: Bundle,
        reply_action: str,
        timeout_ms: int = 30_000,
        *,
        include_stopped: bool = False,
    ) -> BroadcastReply:
        """`include_stopped` adds FLAG_INCLUDE_STOPPED_PACKAGES (the real host does not)."""
        args = Bundle(package=package, action=action, extras=extras, reply_action=reply_action)
        if include_stopped:
            args["include_stopped"] = True
        r = await self._timed("broadcast", args, timeout_ms)
        stopped = r.get("target_stopped")
        return BroadcastReply(_opt_bundle(r, "reply"), _field(r, "timed_out", bool),
                              reply_action=_opt_str(r, "reply_action"),
                              target_stopped=stopped if isinstance(stopped, bool) else None,
                              detail=_opt_str(r, "detail"))

    async def start_activity(self, package: str, action: str, extras: Bundle) -> ActivityStart:
        r = await self._in_front(
            "start_activity", Bundle(package=package, action=action, extras=extras)
        )
        return ActivityStart(_field(r, "launched", bool), _opt_str(r, "component"))

    async def read_resource(self, package: str, resource_id: int, max_bytes: int) -> ResourceData:
        args = Bundle(package=package, resource_id=Int(resource_id), max_bytes=Int(max_bytes))
        r = await self._request("read_resource", args)
        return ResourceData(_field(r, "data", bytes), _opt_str(r, "name"))

    async def wake_provider(self, authority: str, package: str, mode: str) -> WakeResult:
        args = Bundle(authority=authority, package=package, mode=mode)
        r = await self._in_front("wake_provider", args)
        return WakeResult(_field(r, "ok", bool), _field(r, "detail", str))

    async def force_stop(self, package: str) -> bool:
        return _field(await self._request("force_stop", Bundle(package=package)), "stopped", bool)

    async def answer_confirmation(self, confirmation_id: str, approve: bool) -> bool:
        args = Bundle(confirmation_id=confirmation_id, approve=approve)
        return _field(await self._request("answer_confirmation", args), "accepted", bool)

    async def logcat(self, after_seq: int = 0, max_lines: int = 500,
                     follow: bool = False) -> Bundle:
        """The virtual device's log buffer after `after_seq` (§4.2); `follow` streams `log`
        EVENTs from now on. Phones have no such op: the desktop reads adb logcat."""
        args = Bundle(after_seq=Long(after_seq), max_lines=Int(max_lines), follow=follow)
        return await self._request("logcat", args)

    async def screencap(self) -> Bundle:
        """The virtual device's screen: `{png: byte[], width, height, version}` (§4.3)."""
        return await self._request("screencap", Bundle())

    async def input(self, kind: str, **args: object) -> Bundle:
        """Tap / swipe / text / key on the virtual device's screen (§4.3)."""
        b = Bundle(kind=kind)
        for k, v in args.items():
            b[k] = Int(v) if isinstance(v, int) and not isinstance(v, bool | Int | Long) else v
        return await self._request("input", b)

    async def fault(self, kind: str, **args: object) -> bool:
        """Arm a virtual-device fault; plain ints are sent as Java ints."""
        b = Bundle(kind=kind)
        for k, v in args.items():
            b[k] = Int(v) if isinstance(v, int) and not isinstance(v, bool | Int | Long) else v
        return _field(await self._request("fault", b), "armed", bool)


def _grow_receive_buffer(transport: asyncio.BaseTransport) -> None:
    """A receive buffer of several chunks keeps a large stream flowing (TCP / adb forward)."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SOCKET_BUFFER)


class FileRead:
    """Async iterator over a streamed `read_file`: byte chunks, then one `StreamEnd`.

    A chunk is bytes-like (a `bytearray` on the fast receive path, handed over without a
    copy); it belongs to the caller, and its buffer is only reused for a later frame once
    nothing references it any more.

    The request goes out on the first `__anext__`. Closing it early (`aclose()`, leaving an
    `async with`, garbage collection) or cancelling the awaiting task sends CANCEL.
    """

    def __init__(
        self, client: RelayClient, args: Bundle, idle_timeout_s: float | None = None
    ) -> None:
        self._client = client
        self._args = args
        self._rid: int | None = None
        self._stream: _Stream | None = None
        self._done = False
        self._received = 0
        self.idle_timeout_s = (
            idle_timeout_s if idle_timeout_s is not None else client.call_timeout_s
        )

    def __aiter__(self) -> FileRead:
        return self

    async def __aenter__(self) -> FileRead:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _open(self) -> _Stream:
        c = self._client
        if c._closed_error is not None:
            raise RelayError(DISCONNECTED, c._closed_error.message)
        rid = c._next_id()
        stream = _Stream()
        c._pending[rid] = stream
        c._ops[rid] = "read_file"
        self._rid, self._stream = rid, stream
        try:
            c._send(FrameType.REQUEST, rid, Bundle(op="read_file", args=self._args))
        except RelayError:
            c._pending.pop(rid, None)
            self._done = True
            raise
        return stream

    async def __anext__(self) -> bytes | StreamEnd:
        if self._done:
            raise StopAsyncIteration
        stream = self._stream or self._open()
        try:
            try:  # a busy stream has chunks waiting: no timer, no task per chunk
                item = stream.queue.get_nowait()
            except asyncio.QueueEmpty:
                async with asyncio.timeout(self.idle_timeout_s):
                    item = await stream.queue.get()
        except TimeoutError:
            self._abandon()
            raise RelayError(TIMEOUT, "the relay stopped sending the file") from None
        except asyncio.CancelledError:
            self._abandon()
            raise
        if isinstance(item, RelayError):
            self._done = True
            raise RelayError(item.code, item.message, item.details)
        if isinstance(item, StreamEnd):
            self._done = True
            if item.size != self._received:
                raise RelayError(
                    BAD_FRAME,
                    f"stream END says {item.size} bytes but {self._received} arrived",
                )
            return item
        self._received += len(item)
        return item

    def _abandon(self) -> None:
        if not self._done and self._rid is not None:
            self._client._cancel_remote(self._rid)
        self._done = True

    async def aclose(self) -> None:
        self._abandon()

    def __del__(self) -> None:
        if not self._done and self._rid is not None:
            with contextlib.suppress(Exception):
                self._abandon()


def _error_from(value: Bundle) -> RelayError:
    code = value.get("code")
    message = value.get("message")
    details = value.get("details")
    return RelayError(
        code if isinstance(code, str) else "INTERNAL",
        message if isinstance(message, str) else "(no message)",
        details if isinstance(details, Bundle) else None,
    )


def _field(b: Bundle, key: str, t: type) -> Any:
    v = b.get(key)
    if not isinstance(v, t) or (t is not bool and isinstance(v, bool)):
        raise RelayError(BAD_FRAME, f"relay reply field {key!r} missing or not {t.__name__}")
    return v


def _opt_bundle(b: Bundle, key: str) -> Bundle | None:
    v = b.get(key)
    if v is not None and not isinstance(v, Bundle):
        raise RelayError(BAD_FRAME, f"relay reply field {key!r} must be a Bundle or null")
    return v


def _opt_str(b: Bundle, key: str) -> str | None:
    v = b.get(key)
    if v is not None and not isinstance(v, str):
        raise RelayError(BAD_FRAME, f"relay reply field {key!r} must be a String or null")
    return v
