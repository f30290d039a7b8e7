"""Device-wide ops of the virtual device: logcat, screencap, input (issue 16) and fault
injection; each delegates to the part of the device that models it."""

from __future__ import annotations

from inspector.protocol.bundle import (
    Bundle,
)
from inspector.relay.api import (
    ServerConnection,
)


class SystemOpsMixin:
    """Mixed into `VirtualDevice` (inspector.virtual.device)."""

    async def _op_logcat(self, args: Bundle, conn: ServerConnection) -> Bundle:
        return self.logcat.op_logcat(args, conn)

    async def _op_screencap(self, args: Bundle, conn: ServerConnection) -> Bundle:
        return await self.screen.op_screencap(args)

    async def _op_input(self, args: Bundle, conn: ServerConnection) -> Bundle:
        return self.screen.op_input(args)

    async def _op_fault(self, args: Bundle, conn: ServerConnection) -> Bundle:
        self.faults.arm(args)
        return Bundle(armed=True)
