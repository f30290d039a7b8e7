"""CETP provider ops of the virtual device: `call` routed by authority, and reading and
closing the file descriptor handles a reply carries (docs/relay-protocol.md §4)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from inspector.protocol.bundle import (
    Bundle,
)
from inspector.relay.api import (
    BAD_ARGS,
    TOO_LARGE,
    RelayError,
    ServerConnection,
)
from inspector.virtual.app import (
    FileSource,
)
from inspector.virtual.device_args import arg_int, arg_str


class CetpOpsMixin:
    """Mixed into `VirtualDevice` (inspector.virtual.device)."""

    async def _op_call(self, args: Bundle, conn: ServerConnection) -> Bundle:
        authority = arg_str(args, "authority")
        method = arg_str(args, "method")
        arg = arg_str(args, "arg", optional=True)
        extras = args.get("extras")
        if extras is not None and not isinstance(extras, Bundle):
            raise RelayError(BAD_ARGS, "extras must be a Bundle or null")
        app = self._provider_app(authority, conn)
        self.faults.check_cold(app, authority)
        ctx = self._ctx(app, conn)
        reply = await self._in_process(
            app, app.call(ctx, authority, method, arg, extras), f"call {method[:40]}", conn
        )
        return Bundle(reply=reply)

    async def _op_read_file(self, args: Bundle, conn: ServerConnection) -> AsyncIterator[bytes]:
        source: FileSource = self._handle(args, conn, FileSource)
        max_bytes = arg_int(args, "max_bytes")
        chunk = arg_int(args, "chunk_size", 262_144)
        if source.size > max_bytes:
            raise RelayError(
                TOO_LARGE, f"the file is {source.size} bytes, more than max_bytes ({max_bytes})"
            )
        return source.read(chunk)

    async def _op_close_handle(self, args: Bundle, conn: ServerConnection) -> Bundle:
        hid = arg_str(args, "handle")
        h = self._handles.get(hid)
        closed = h is not None and h.connection_id == conn.connection_id
        if closed:
            del self._handles[hid]
        return Bundle(closed=closed)
