"""The relay-protocol server core: framing, hello/auth, dispatch, streams, cancel, events.

Any `RelayBackend` (the virtual device, test fakes) plugs in behind it and only answers
whitelisted operations; everything a peer could get wrong on the wire is handled here with
protocol errors — a garbage peer gets `ERROR BAD_FRAME` and a closed connection, never a
crash of the server or a hang of the other connections.

The core answers `ping` itself; every other op must be listed in the backend's
`hello_info().capabilities`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
import logging
import os
import socket
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from inspector.digest_sink import DigestSink
from inspector.protocol.bundle import Bundle, Int, Long
from inspector.relay.api import (
    AUTH_FAILED,
    BAD_ARGS,
    BAD_FRAME,
    BUSY,
    CANCELLED,
    INTERNAL,
    TIMEOUT,
    TOO_LARGE,
    UNKNOWN_OP,
    UNSUPPORTED_VERSION,
    RelayBackend,
    RelayError,
)
from inspector.relay.codec import CodecError, EncodeError, decode_bundle, encode_value
from inspector.relay.frames import (
    DEFAULT_CHUNK,
    MAX_CHUNK,
    FrameType,
    TruncatedFrame,
    pack_header,
    read_frame,
    write_frame,
)
from inspector.relay.hello import (
    OPS,
    PROTOCOL_VERSION,
    hello_result,
    unsupported_version_details,
)
from inspector.tasks import Spawner

if TYPE_CHECKING:
    from inspector.relay.client import RelayClient

log = logging.getLogger(__name__)

HELLO_TIMEOUT_S = 10.0
MAX_IN_FLIGHT = 64
DEFAULT_TIMEOUT_MS = 30_000
MAX_TIMEOUT_MS = 120_000
STREAM_LIMIT = 4 * 1024 * 1024
"""asyncio StreamReader buffer limit: well above one frame so reads are not chopped up."""
SOCKET_BUFFER = 4 * 1024 * 1024
"""Requested SO_SNDBUF (the kernel caps it at net.core.wmem_max)."""
BACKEND_GRACE_S = 2.0
"""Added to an op's `timeout_ms` before the server gives up on the backend with TIMEOUT.

A backend that honours `timeout_ms` itself reports the expiry in its own result (a silent
`broadcast` is `timed_out: true`, not an error); the grace lets that result win. It stays
below the client's own grace (`inspector.relay.client.TIMEOUT_GRACE_S`), so the relay's
TIMEOUT still reaches the client before the client gives up.
"""
def error_payload(code: str, message: str, details: Bundle | None = None) -> bytes:
    b = Bundle(code=code, message=message)
    if details is not None:
        b["details"] = details
    return encode_value(b)


def _timeout_ms(args: Bundle) -> int:
    t = args.get("timeout_ms")
    if t is None:
        return DEFAULT_TIMEOUT_MS
    if not isinstance(t, Int) or not 1 <= t <= MAX_TIMEOUT_MS:
        raise RelayError(BAD_ARGS, f"timeout_ms must be an int in 1…{MAX_TIMEOUT_MS}, got {t!r}")
    return int(t)


def _stream_limits(args: Bundle) -> tuple[int, int]:
    max_bytes = args.get("max_bytes")
    if not isinstance(max_bytes, Int | Long) or isinstance(max_bytes, bool) or max_bytes < 0:
        raise RelayError(BAD_ARGS, f"read_file needs max_bytes: long ≥ 0, got {max_bytes!r}")
    chunk = args.get("chunk_size")
    if chunk is None:
        chunk = DEFAULT_CHUNK
    elif not isinstance(chunk, Int) or not 1 <= chunk <= MAX_CHUNK:
        raise RelayError(BAD_ARGS, f"chunk_size must be an int in 1…{MAX_CHUNK}, got {chunk!r}")
    return int(max_bytes), int(chunk)


class _Connection:
    """One desktop connection: implements `ServerConnection` for the backend."""

    def __init__(
        self,
        server: RelayServer,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        self._server = server
        self._backend = server.backend
        self._reader = reader
        self._writer = writer
        self._id = uuid.uuid4().hex[:12]
        self._closed = False
        self._events = False
        self._capabilities: frozenset[str] = frozenset()
        self._inflight: dict[int, asyncio.Task[None]] = {}
        self._cancel_requested: set[int] = set()
        self._started: set[asyncio.Task[None]] = set()  # tasks whose _run coroutine began
        self._spawner = Spawner()
        self._authenticated = False

    # -- ServerConnection ---------------------------------------------------------------
    @property
    def connection_id(self) -> str:
        return self._id

    def emit(self, event: Bundle) -> None:
        if self._closed or not self._events:
            return
        if not isinstance(event, Bundle) or not isinstance(event.get("event"), str):
            raise TypeError("an event is a Bundle with an 'event' String")
        self._write(FrameType.EVENT, 0, encode_value(event))

    def is_closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Drop the connection now (fault injection `drop_connection`, server shutdown)."""
        self._closed = True
        transport = self._writer.transport
        if transport is not None and not transport.is_closing():
            transport.abort()

    # -- writing ------------------------------------------------------------------------
    def _write(self, ftype: FrameType, rid: int, payload: bytes | memoryview = b"") -> None:
        if self._closed or self._writer.transport.is_closing():
            return
        write_frame(self._writer, ftype, rid, payload)

    async def _send(self, ftype: FrameType, rid: int, payload: bytes | memoryview = b"") -> None:
        self._write(ftype, rid, payload)
        if not self._closed:
            await self._writer.drain()

    async def _send_error(self, rid: int, err: RelayError) -> None:
        await self._send(FrameType.ERROR, rid, error_payload(err.code, err.message, err.details))

    async def _fatal(self, rid: int, err: RelayError) -> None:
        """Send ERROR and close: the peer is not speaking the protocol (or not allowed to)."""
        with contextlib.suppress(ConnectionError, OSError):
            await asyncio.wait_for(self._send_error(rid, err), 5.0)
        self._closed = True

    # -- main loop ----------------------------------------------------------------------
    async def serve(self) -> None:
        try:
            if await self._hello():
                await self._loop()
        except TruncatedFrame as exc:
            log.debug("relay connection %s: %s", self._id, exc.message)
        except RelayError as exc:
            await self._fatal(0, exc)
        except (ConnectionError, OSError, asyncio.IncompleteReadError) as exc:
            log.debug("relay connection %s lost: %s", self._id, exc)
        finally:
            await self._teardown()

    async def _hello(self) -> bool:
        try:
            frame = await asyncio.wait_for(read_frame(self._reader), HELLO_TIMEOUT_S)
        except TimeoutError:
            await self._fatal(0, RelayError(AUTH_FAILED, "no hello within 10 s"))
            return False
        if frame is None:
            return False
        if frame.type is not FrameType.REQUEST:
            raise RelayError(BAD_FRAME, f"expected a hello REQUEST, got {frame.type.name}")
        rid = frame.request_id
        if rid == 0:
            raise RelayError(BAD_FRAME, "REQUEST with request id 0")
        try:
            req = decode_bundle(frame.payload)
        except CodecError as exc:
            await self._fatal(rid, RelayError(BAD_FRAME, str(exc)))
            return False
        if req.get("op") != "hello":
            await self._fatal(rid, RelayError(AUTH_FAILED, "the first request must be hello"))
            return False
        args = req.get("args")
        args = args if isinstance(args, Bundle) else Bundle()
        version = args.get("protocol_version")
        if not isinstance(version, Int) or version != PROTOCOL_VERSION:
            await self._fatal(
                rid,
                RelayError(
                    UNSUPPORTED_VERSION,
                    f"protocol version {version!r} is not supported (this relay speaks "
                    f"{PROTOCOL_VERSION})",
                    unsupported_version_details(),
                ),
            )
            return False
        token = args.get("token")
        given = token.encode("utf-8", "surrogatepass") if isinstance(token, str) else b""
        if not hmac.compare_digest(given, self._server.token_bytes) or not isinstance(token, str):
            await self._fatal(rid, RelayError(AUTH_FAILED, "wrong session token"))
            return False
        client = args.get("client")
        try:
            info = self._backend.hello_info(client if isinstance(client, str) else "")
            result = hello_result(info)
        except Exception as exc:  # a backend bug must not take the server down
            log.exception("relay backend hello_info failed")
            await self._fatal(rid, RelayError(INTERNAL, f"hello failed: {type(exc).__name__}"))
            return False
        self._capabilities = frozenset(info.capabilities)
        self._events = args.get("events") is True
        self._authenticated = True
        await self._send(FrameType.RESPONSE, rid, encode_value(result))
        opened = getattr(self._backend, "connection_opened", None)  # optional hook
        if opened is not None:
            try:
                opened(self)
            except Exception:
                log.exception("relay backend connection_opened failed")
        return True

    async def _loop(self) -> None:
        while not self._closed:
            frame = await read_frame(self._reader)
            if frame is None:
                return
            if frame.type is FrameType.REQUEST:
                await self._start_request(frame.request_id, frame.payload)
            elif frame.type is FrameType.CANCEL:
                rid = frame.request_id
                task = self._inflight.get(rid)
                if task is not None and not task.done():
                    task.cancel()
                    if task in self._started:
                        self._cancel_requested.add(rid)  # _run answers CANCELLED
                    else:
                        # Read in the same write as its REQUEST: the task never ran, so
                        # nothing of _run will execute. Free the id and answer now (a
                        # burst of such pairs must not fill MAX_IN_FLIGHT, issue 12).
                        del self._inflight[rid]
                        self._write(FrameType.ERROR, rid, error_payload(
                            CANCELLED, "the request was cancelled before it started"))
            else:
                raise RelayError(BAD_FRAME, f"{frame.type.name} frames only travel relay → desktop")

    async def _start_request(self, rid: int, payload: bytes) -> None:
        if rid == 0:
            raise RelayError(BAD_FRAME, "REQUEST with request id 0")
        if rid in self._inflight:
            raise RelayError(BAD_FRAME, f"request id {rid} is already in flight")
        try:
            req = decode_bundle(payload)
        except CodecError as exc:
            await self._send_error(rid, RelayError(BAD_FRAME, str(exc)))
            return
        op, args = req.get("op"), req.get("args")
        if args is None:
            args = Bundle()
        if not isinstance(op, str) or not isinstance(args, Bundle):
            await self._send_error(
                rid, RelayError(BAD_ARGS, "a REQUEST is {op: String, args: Bundle}")
            )
            return
        if op == "hello":
            await self._send_error(rid, RelayError(BAD_ARGS, "already authenticated"))
            return
        if op not in OPS or (op != "ping" and op not in self._capabilities):
            await self._send_error(
                rid, RelayError(UNKNOWN_OP, f"this relay does not offer {op!r:.80}")
            )
            return
        if len(self._inflight) >= MAX_IN_FLIGHT:
            await self._send_error(
                rid, RelayError(BUSY, f"more than {MAX_IN_FLIGHT} requests in flight")
            )
            return
        task = self._spawner.spawn(self._run(rid, op, args), f"relay-{op}-{rid}")
        self._inflight[rid] = task
        task.add_done_callback(functools.partial(self._request_done, rid))

    def _request_done(self, rid: int, task: asyncio.Task[None]) -> None:
        """Free the id whatever happened — also for a task cancelled before it ran, whose
        `_run` (and so its `finally`) never executes (issue 12)."""
        if self._inflight.get(rid) is task:
            del self._inflight[rid]
        self._started.discard(task)

    async def _run(self, rid: int, op: str, args: Bundle) -> None:
        me = asyncio.current_task()
        if me is not None:
            self._started.add(me)
        try:
            try:
                timeout_ms = _timeout_ms(args)
                if op == "ping":
                    result: Any = Bundle(time_ms=Long(int(time.time() * 1000)))
                else:
                    # no extra task, unlike wait_for; the grace lets the backend's own
                    # timeout result (e.g. broadcast timed_out) arrive first
                    async with asyncio.timeout(timeout_ms / 1000.0 + BACKEND_GRACE_S):
                        result = await self._backend.handle(op, args, self)
                if isinstance(result, Bundle):
                    await self._send(FrameType.RESPONSE, rid, encode_value(result))
                elif op == "read_file" and hasattr(result, "__aiter__"):
                    await self._stream(rid, args, result)
                else:
                    raise RelayError(INTERNAL, f"backend returned {type(result).__name__} for {op}")
            except TimeoutError:
                await self._send_error(
                    rid,
                    RelayError(
                        TIMEOUT,
                        f"{op} did not finish within its timeout_ms ({timeout_ms} ms) plus "
                        f"{BACKEND_GRACE_S:g} s; retry with a larger timeout_ms or check the app",
                    ),
                )
            except RelayError as exc:
                await self._send_error(rid, exc)
            except EncodeError as exc:
                log.error("relay backend produced an unencodable %s result: %s", op, exc)
                await self._send_error(rid, RelayError(INTERNAL, f"unencodable result: {exc}"))
            except (ConnectionError, OSError):
                self._closed = True
            except Exception as exc:
                log.exception("relay backend failed on %s", op)
                await self._send_error(
                    rid, RelayError(INTERNAL, f"{op} failed: {type(exc).__name__}: {exc}")
                )
        except asyncio.CancelledError:
            if rid in self._cancel_requested and not self._closed:
                with contextlib.suppress(ConnectionError, OSError):
                    await self._send_error(rid, RelayError(CANCELLED, f"{op} was cancelled"))
        except (ConnectionError, OSError):
            self._closed = True
        finally:
            if self._inflight.get(rid) is me:
                del self._inflight[rid]
            self._cancel_requested.discard(rid)

    async def _stream(self, rid: int, args: Bundle, stream: Any) -> None:
        """CHUNK… END for a backend's byte stream, re-cut to `chunk_size`, hashed here.

        Copy-free: a frame whose payload spans several backend pieces is written as its
        header and the slices back to back (no join). The END digest is computed by a
        worker thread (`inspector.digest_sink.DigestSink`) while this task keeps sending.
        """
        max_bytes, chunk = _stream_limits(args)
        hasher = DigestSink()
        size = 0
        pending: deque[memoryview] = deque()
        pending_len = 0
        it: AsyncIterator[bytes] = stream.__aiter__()
        try:
            async for data in it:
                n = len(data)
                if not n:
                    continue
                if size + n > max_bytes:
                    raise RelayError(
                        TOO_LARGE, f"the file is larger than max_bytes ({max_bytes} bytes)"
                    )
                size += n
                view = memoryview(data).cast("B")
                await hasher.feed(view)
                pending.append(view)
                pending_len += n
                while pending_len >= chunk:
                    if not await self._send_frame_from(rid, pending, chunk):
                        return
                    pending_len -= chunk
            if pending_len and not await self._send_frame_from(rid, pending, pending_len):
                return
            end = Bundle(size=Long(size), sha256=await hasher.finish())
            await self._send(FrameType.END, rid, encode_value(end))
        finally:
            hasher.abort()  # after finish() a no-op; otherwise drop the backlog
            aclose = getattr(it, "aclose", None)
            if aclose is not None:
                with contextlib.suppress(Exception):
                    await aclose()

    async def _send_frame_from(self, rid: int, pending: deque[memoryview], n: int) -> bool:
        """One CHUNK of `n` bytes taken off the front of `pending`; False once closed."""
        if self._closed or self._writer.transport.is_closing():
            self._closed = True
            return False
        # synchronous from header to last slice, so frames of other requests never interleave
        self._writer.write(pack_header(FrameType.CHUNK, rid, n))
        need = n
        while need:
            head = pending[0]
            if len(head) <= need:
                self._writer.write(head)
                need -= len(head)
                pending.popleft()
            else:
                self._writer.write(head[:need])
                pending[0] = head[need:]
                need = 0
        await self._writer.drain()
        return not self._closed

    async def _teardown(self) -> None:
        self._closed = True
        await self._spawner.cancel_all()
        if self._authenticated:
            try:
                self._backend.connection_closed(self)
            except Exception:
                log.exception("relay backend connection_closed failed")
        self._server._connections.discard(self)
        with contextlib.suppress(Exception):
            self._writer.close()
            await asyncio.wait_for(self._writer.wait_closed(), 2.0)


def _grow_send_buffer(writer: asyncio.StreamWriter) -> None:
    """A send buffer of several chunks lets a stream flow without a wake-up per packet."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SOCKET_BUFFER)


@dataclass
class ServerHandle:
    """A listening relay server: `address` is the socket path or (host, port)."""

    server: asyncio.AbstractServer
    relay: RelayServer
    address: Any
    _path: str | None = field(default=None, repr=False)

    def close(self) -> None:
        """Stop listening and drop every open connection."""
        self.server.close()
        self.relay.close_connections()
        if self._path:
            with contextlib.suppress(OSError):
                os.unlink(self._path)

    async def wait_closed(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.server.wait_closed(), 5.0)


class RelayServer:
    """Serves the relay protocol for one `RelayBackend` on any number of connections."""

    def __init__(self, backend: RelayBackend, token: str) -> None:
        self.backend = backend
        self.token_bytes = token.encode("utf-8")
        self._connections: set[_Connection] = set()

    async def serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """Serve one connection until it closes (the `start_server` callback)."""
        _grow_send_buffer(writer)
        conn = _Connection(self, reader, writer)
        self._connections.add(conn)
        await conn.serve()

    def close_connections(self) -> None:
        for conn in list(self._connections):
            conn.close()

    async def serve_unix(self, path: str) -> ServerHandle:
        """Listen on a Unix socket at `path` (an existing stale socket file is replaced)."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        server = await asyncio.start_unix_server(self.serve_connection, path, limit=STREAM_LIMIT)
        return ServerHandle(server, self, path, path)

    async def serve_tcp(self, host: str = "127.0.0.1", port: int = 0) -> ServerHandle:
        """Listen on TCP; port 0 picks a free port (see `handle.address`)."""
        server = await asyncio.start_server(self.serve_connection, host, port, limit=STREAM_LIMIT)
        address = server.sockets[0].getsockname()[:2]
        return ServerHandle(server, self, (address[0], address[1]))


async def connect_in_process(
    backend: RelayBackend,
    token: str = "in-process",
    *,
    spawner: Spawner | None = None,
    **client_kwargs: Any,
) -> RelayClient:
    """A `RelayClient` connected to a new `RelayServer(backend)` over a real socketpair.

    Used by tests and the embedded virtual device: the full protocol runs (framing, codec,
    hello) with no listening socket. Closing the client ends the server side too.
    """
    from inspector.relay.client import RelayClient  # the client never imports the server

    server = RelayServer(backend, token)
    a, b = socket.socketpair()
    for s in (a, b):
        s.setblocking(False)
    sreader, swriter = await asyncio.open_connection(sock=a, limit=STREAM_LIMIT)
    owner = spawner or _in_process_spawner
    owner.spawn(server.serve_connection(sreader, swriter), "relay-in-process-server")
    try:
        return await RelayClient.open_socket(b, token, **client_kwargs)
    except BaseException:
        b.close()
        raise


_in_process_spawner = Spawner()
"""Server halves of in-process connections: kept apart from the app's spawner, so waiting
for the app to be idle does not wait for connections that live as long as their client."""


async def close_in_process_servers() -> None:
    """Cancel every in-process server half (at application exit)."""
    await _in_process_spawner.cancel_all()
