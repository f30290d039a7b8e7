"""Fault injection on the virtual device (relay protocol §6, `fault` op).

Faults are armed by the desktop (or a test) and fire on the next matching IPC: `delay`
slows the next calls, `drop_connection` lets the app finish the next call and then drops
the socket before the reply (the consumer must retry with the same request_id),
`restart_process` kills an app's process now or right after its next committed mutation,
`corrupt_digest` makes the next file result's bytes differ from the digest the app declared,
`cold_start` makes an app's provider answer "Unknown authority" while its process is not
running (some ROMs do not start a provider's process for `ContentResolver.call`), until
`wake_provider` starts it (`mode`: `acquire`, or `launch` for the harshest ROMs; `off`
disarms it). A stopped process (`restart_process`, `force_stop`) is cold again.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from inspector.protocol.bundle import Bundle, Int, Long
from inspector.relay.api import BAD_ARGS, NOT_FOUND, RelayError
from inspector.virtual.app import FileSource, ProcessKilled

if TYPE_CHECKING:
    from inspector.virtual.app import CallContext, VirtualApp
    from inspector.virtual.device import VirtualDevice

FAULT_KINDS = ("delay", "drop_connection", "restart_process", "corrupt_digest", "cold_start",
               "crash")
#: what wakes a cold provider: `acquire` (acquireContentProviderClient) or only `launch`
COLD_MODES = ("acquire", "launch")


@dataclass
class Faults:
    device: VirtualDevice
    delays: list[tuple[float, str | None]] = field(default_factory=list)
    drop_next: bool = False
    restart_after_commit: set[str] = field(default_factory=set)
    corrupt: set[str] = field(default_factory=set)
    #: package → the wake mode that starts its provider (the `cold_start` fault)
    cold: dict[str, str] = field(default_factory=dict)

    def arm(self, args: Bundle) -> None:
        kind = args.get("kind")
        package = args.get("package")
        if package is not None and not isinstance(package, str):
            raise RelayError(BAD_ARGS, "fault package must be a String")
        if kind == "delay":
            ms = args.get("ms")
            if not isinstance(ms, Int | Long) or isinstance(ms, bool) or not 0 <= ms <= 600_000:
                raise RelayError(BAD_ARGS, "delay needs ms: int in 0…600000")
            count = args.get("count", Int(1))
            if not isinstance(count, Int) or count < 1:
                raise RelayError(BAD_ARGS, "delay count must be an int ≥ 1")
            self.delays.extend([(ms / 1000.0, package)] * int(count))
        elif kind == "drop_connection":
            self.drop_next = True
        elif kind == "restart_process":
            pkg = self._need_package(package)
            when = args.get("when", "now")
            if when == "now":
                self.device.app(pkg).kill_process()
            elif when == "after_commit":
                self.restart_after_commit.add(pkg)
            else:
                raise RelayError(BAD_ARGS, "restart_process when must be 'now' or 'after_commit'")
        elif kind == "corrupt_digest":
            self.corrupt.add(self._need_package(package))
        elif kind == "cold_start":
            self._arm_cold(self._need_package(package), args.get("mode", "acquire"))
        elif kind == "crash":  # inspector.virtual.logcat (issue 16)
            self.device.logcat.arm_crash(args)
        else:
            raise RelayError(
                BAD_ARGS, f"unknown fault kind {kind!r:.40}; known: {', '.join(FAULT_KINDS)}"
            )

    def _arm_cold(self, package: str, mode: object) -> None:
        """Arm (or with mode `off` disarm); arming stops the process so it starts cold."""
        if mode == "off":
            self.cold.pop(package, None)
            return
        if mode not in COLD_MODES:
            raise RelayError(BAD_ARGS, "cold_start mode must be 'acquire', 'launch' or 'off'")
        self.cold[package] = str(mode)
        self.device.app(package).kill_process()

    def check_cold(self, app: VirtualApp, authority: str) -> None:
        """Fail a `call` to a cold provider exactly as the phone relay reports the
        IllegalArgumentException ContentResolver.call throws (AndroidPlatform.call)."""
        if app.package in self.cold and not app.process_running:
            raise RelayError(
                NOT_FOUND, f"provider rejected the call: Unknown authority {authority[:120]}"
            )

    def wakes(self, package: str, mode: str) -> bool:
        """Whether `wake_provider(mode)` starts this app's provider process."""
        return self.cold.get(package, mode) in (mode, "acquire")

    def _need_package(self, package: str | None) -> str:
        if package is None:
            raise RelayError(BAD_ARGS, "this fault needs package: String")
        if package not in self.device.apps:
            raise RelayError(NOT_FOUND, f"package {package!r} is not installed")
        return package

    async def before_ipc(self, package: str) -> None:
        for i, (seconds, pkg) in enumerate(self.delays):
            if pkg is None or pkg == package:
                del self.delays[i]
                await asyncio.sleep(seconds)
                return

    def take_drop(self) -> bool:
        drop, self.drop_next = self.drop_next, False
        return drop

    def check_after_commit(self, ctx: CallContext) -> None:
        pkg = ctx.app.package
        if pkg in self.restart_after_commit:
            self.restart_after_commit.discard(pkg)
            ctx.app.kill_process(spare=asyncio.current_task())
            raise ProcessKilled(f"{pkg} died right after committing")

    def wrap_file(self, package: str, source: FileSource) -> FileSource:
        if package not in self.corrupt:
            return source
        self.corrupt.discard(package)

        async def chunks(chunk_size: int):  # type: ignore[no-untyped-def]
            first = True
            async for c in source.read(chunk_size):
                if first and c:
                    c = bytes([c[0] ^ 0xFF]) + c[1:]
                    first = False
                yield c

        return FileSource(source.size, chunks, source.sha256)
