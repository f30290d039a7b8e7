"""How the virtual device runs app code for an op: the per-connection handle table
(PendingIntents, file descriptors), each IPC inside the app's process (a kill mid-call is a
dead binder; injected delays, crashes and dropped connections) and provider lookup as the
caller would be allowed it."""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Coroutine
from typing import Any

from inspector.protocol.bundle import (
    Bundle,
    FileDescriptorHandle,
    PendingIntentHandle,
)
from inspector.relay.api import (
    IPC_FAILED,
    NOT_FOUND,
    RelayError,
    ServerConnection,
)
from inspector.virtual.app import (
    CallContext,
    Caller,
    FileSource,
    PendingActivity,
    ProcessKilled,
    VirtualApp,
)
from inspector.virtual.device_args import arg_str
from inspector.virtual.device_types import (
    Handle,
)

# the logger name the device used before the split, so log filters keep working
log = logging.getLogger("inspector.virtual.device")


class IpcMixin:
    """Mixed into `VirtualDevice` (inspector.virtual.device)."""

    # --- helpers for apps -----------------------------------------------------------------------
    def register_pending_intent(
        self, ctx: CallContext, activity: PendingActivity
    ) -> PendingIntentHandle:
        hid = "pi_" + secrets.token_hex(8)
        self._handles[hid] = Handle(ctx.connection_id, activity)
        # PendingIntent.isImmutable()/isActivity() exist from API 31: below, the relay
        # cannot tell, and reports both as unknown (docs/relay-protocol.md)
        flags = 0
        if self.android.api >= 31:
            flags = PendingIntentHandle.IMMUTABLE_KNOWN | PendingIntentHandle.KIND_KNOWN
            if activity.kind == "activity":
                flags |= PendingIntentHandle.ACTIVITY
            if activity.immutable:
                flags |= PendingIntentHandle.IMMUTABLE
        return PendingIntentHandle(hid, activity.package, flags)

    def register_file(self, ctx: CallContext, source: FileSource) -> FileDescriptorHandle:
        source = self.faults.wrap_file(ctx.app.package, source)
        hid = "fd_" + secrets.token_hex(8)
        self._handles[hid] = Handle(ctx.connection_id, source)
        return FileDescriptorHandle(hid, source.size)

    def _handle(self, args: Bundle, conn: ServerConnection, kind: type) -> Any:
        hid = arg_str(args, "handle")
        h = self._handles.get(hid)
        if h is None or h.connection_id != conn.connection_id or not isinstance(h.target, kind):
            raise RelayError(NOT_FOUND, f"no such handle {hid[:40]!r} on this connection")
        return h.target

    async def _in_process(
        self, app: VirtualApp, coro: Coroutine[Any, Any, Any], what: str, conn: ServerConnection
    ) -> Any:
        """Run app code inside its process: a kill during the call is a dead binder.

        `coro` is always either awaited or closed: a request cancelled during an injected
        delay (or an app that cannot start) must not leave a never-awaited coroutine."""
        try:
            if self.faults.delays:
                await self.faults.before_ipc(app.package)
            app.ensure_process()
            self.logcat.crash_if_armed(app, what)
        except BaseException:
            coro.close()
            raise
        # The app code runs inline in this request's task (no extra task per IPC: small calls
        # stay cheap); the task is registered with the app so a process kill interrupts it.
        # Background work an app starts (operations) lives in its own tasks and outlives a
        # cancelled request, as on Android.
        task = asyncio.current_task()
        assert task is not None
        app.ipc_tasks.add(task)
        try:
            result = await coro
        except asyncio.CancelledError:
            if task not in app.killed_ipc:
                raise
            app.killed_ipc.discard(task)
            task.uncancel()
            raise RelayError(
                IPC_FAILED, f"{app.package} died during {what} (DeadObjectException)"
            ) from None
        except ProcessKilled:
            raise RelayError(
                IPC_FAILED, f"{app.package} died during {what} (DeadObjectException)"
            ) from None
        except RelayError:
            raise
        except NotImplementedError:
            raise RelayError(NOT_FOUND, f"{app.package} has no component for {what}") from None
        except Exception as exc:
            log.warning("virtual app %s crashed in %s: %r", app.package, what, exc)
            raise RelayError(
                IPC_FAILED, f"{app.package} crashed during {what}: {type(exc).__name__}"
            ) from None
        finally:
            app.ipc_tasks.discard(task)
        if self.faults.take_drop():
            close = getattr(conn, "close", None)
            if close is not None:
                close()
            raise RelayError(IPC_FAILED, "connection dropped by fault injection")
        return result

    def _ctx(self, app: VirtualApp, conn: ServerConnection) -> CallContext:
        return CallContext(self, app, self.caller_of(conn), conn.connection_id)

    def _provider_app(self, authority: str, conn: ServerConnection | None = None) -> VirtualApp:
        """The app serving `authority`, acquired as the connection's caller would: package
        visibility, exported and permission rules (inspector/android/rules.py)."""
        for app in self.apps.values():
            for p in app.manifest.providers:
                if p.authority == authority and p.enabled:
                    caller = self.caller_of(conn) if conn is not None else Caller()
                    self.platform().check_provider(caller, app, p)
                    return app
        raise RelayError(NOT_FOUND, f"Unknown authority {authority[:120]}")
