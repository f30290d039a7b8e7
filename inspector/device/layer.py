"""The device layer as the session/CLI see it: a live adb device list with change events,
and `connect_relay(serial)` doing install → grant → start → connect → handshake.

The session's `DeviceManager` merges this with the virtual device (serial `virtual`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from inspector.device.adb_server import AdbEndpoint
from inspector.device.devices import AdbDevices, DeviceTracker, Listener
from inspector.device.diagnostics import Diagnostic, PhoneChecks, gather_checks
from inspector.device.errors import (
    DEVICE_BOOTING,
    DEVICE_NOT_FOUND,
    DEVICE_NOT_READY,
    INSTALL_NEEDS_CONFIRMATION,
    RELAY_NOT_OURS,
    RELAY_START_FAILED,
    RELAY_UNREACHABLE,
    DeviceError,
)
from inspector.device.models import DeviceInfo, DeviceState, parse_state
from inspector.device.relay_lifecycle import (
    InstallOutcome,
    InstallResult,
    Notify,
    RelayLifecycle,
    booting_error,
)
from inspector.device.relay_link import ConnectMode, Handshake, RelayLink, relay_client_handshake
from inspector.device.session_pin import SessionPin
from inspector.device.shipped_relay import ShippedRelay
from inspector.relay.api import AUTH_FAILED, RelayApi, RelayError
from inspector.tasks import Spawner

log = logging.getLogger(__name__)

# Asked when an upgrade needs an uninstall; gets the explanation, returns the user's answer.
ConfirmUninstall = Callable[[str], Awaitable[bool]]

# A phone still booting gets this long to finish before the connect gives up.
BOOT_WAIT_S = 60.0


class AdbDeviceLayer:
    """adb devices + relay links, one object per inspector process."""

    def __init__(
        self,
        endpoint: AdbEndpoint | None = None,
        *,
        spawner: Spawner | None = None,
        shipped: ShippedRelay | None = None,
        mode: ConnectMode = ConnectMode.FORWARD,
        handshake: Handshake = relay_client_handshake,
        notify: Notify | None = None,
    ) -> None:
        self.devices = AdbDevices(endpoint)
        self.tracker = DeviceTracker(self.devices, spawner)
        self.lifecycle = RelayLifecycle(self.devices, shipped, notify=notify)
        self.mode = mode
        self._handshake = handshake
        self.links: dict[str, RelayLink] = {}
        self.last_install: dict[str, InstallOutcome] = {}
        #: what the last connect found wrong on each phone (grants refused, locked, …)
        self.diagnostics: dict[str, list[Diagnostic]] = {}
        self.pins: dict[str, SessionPin] = {}
        self.boot_wait_s = BOOT_WAIT_S
        self.open_timeout_s = 15.0  # how long a started relay gets to accept the connection
        # One connect per phone at a time: two at once (a double click, a reconnect racing a
        # connect) would install twice and start the relay twice with different tokens.
        self._connecting: dict[str, asyncio.Lock] = {}

    @property
    def grant_warnings(self) -> dict[str, list[str]]:
        """Refused grants per phone, as text (older callers)."""
        return {
            s: [d.text() for d in ds if d.code == "GRANT_REFUSED"]
            for s, ds in self.diagnostics.items()
        }

    def notify(self, text: str) -> None:
        if self.lifecycle.notify is not None:
            self.lifecycle.notify(text)

    # -- device list ----------------------------------------------------------------------
    def start(self) -> None:
        """Start tracking (starts the adb server if needed)."""
        self.tracker.start()

    async def stop(self) -> None:
        for serial in list(self.links):
            await self.disconnect_relay(serial)
        await self.tracker.stop()

    def snapshot(self) -> list[DeviceInfo]:
        return self.tracker.snapshot()

    def add_listener(self, listener: Listener) -> None:
        self.tracker.add_listener(listener)

    def remove_listener(self, listener: Listener) -> None:
        self.tracker.remove_listener(listener)

    async def _require_online(self, serial: str) -> DeviceInfo:
        states = dict(await self.devices.list_states())
        if serial not in states:
            raise DeviceError(
                DEVICE_NOT_FOUND,
                f"{serial} is not attached.",
                "Plug it in (or `adb connect` it) and refresh.",
            )
        info = await self.devices.describe(serial, states[serial])
        if parse_state(states[serial]) is not DeviceState.DEVICE:
            raise DeviceError(DEVICE_NOT_READY, f"{serial} is {info.raw_state}.", info.hint)
        if info.booted is False:
            info = await self._wait_for_boot(serial, states[serial])
        return info

    async def _wait_for_boot(self, serial: str, raw_state: str) -> DeviceInfo:
        """A phone still starting: say so, then go on once `sys.boot_completed` is 1."""
        self.notify(f"{serial} is still starting up; waiting for it to finish booting.")
        deadline = time.monotonic() + self.boot_wait_s
        while time.monotonic() < deadline:
            await asyncio.sleep(1.0)
            with contextlib.suppress(DeviceError):
                info = await self.devices.describe(serial, raw_state)
                if info.booted:
                    return info
        err = booting_error(serial)
        raise DeviceError(
            DEVICE_BOOTING, f"{err.message[:-1]} after {self.boot_wait_s:g} s.", err.hint
        )

    async def phone_diagnostics(self, serial: str, sdk_int: int | None) -> list[Diagnostic]:
        """What explains trouble on this phone now: locked, relay not foreground, overlay
        not granted, the relay's last death (`devices` and the device view show these)."""
        checks = PhoneChecks(self.devices, serial, sdk_int)
        pkg = self.lifecycle.shipped.package
        return await gather_checks(
            [
                checks.keyguard,
                lambda: checks.relay_foreground(pkg),
                lambda: checks.overlay(pkg),
                lambda: checks.last_exit(pkg),
            ],
            timeout=6.0,
        )

    # -- relay ----------------------------------------------------------------------------
    async def connect_relay(
        self, serial: str, *, confirm_uninstall: ConfirmUninstall | None = None
    ) -> RelayApi:
        """Install/upgrade (asking before any uninstall), grant, start, connect, handshake.

        The session token goes only to a relay signed with the shipped relay's certificate:
        `install` never keeps another signer's relay (it asks for the uninstall instead).
        A second connect to the same phone waits for the first, then replaces its session.
        """
        async with self._connecting.setdefault(serial, asyncio.Lock()):
            return await self._connect_relay(serial, confirm_uninstall)

    async def _connect_relay(
        self, serial: str, confirm_uninstall: ConfirmUninstall | None
    ) -> RelayApi:
        await self.disconnect_relay(serial)
        info = await self._require_online(serial)
        outcome = await self.lifecycle.install(serial)
        if outcome.result is InstallResult.NEEDS_CONFIRMATION:
            if confirm_uninstall is None or not await confirm_uninstall(outcome.message):
                self.last_install[serial] = outcome
                raise DeviceError(
                    INSTALL_NEEDS_CONFIRMATION,
                    outcome.message,
                    "Confirm the uninstall to continue (CLI: --allow-uninstall; window: the "
                    "uninstall question), or uninstall org.cetp.inspector.relay on the phone "
                    "yourself.",
                )
            outcome = await self.lifecycle.install(serial, confirm_uninstall=True)
        self.last_install[serial] = outcome
        if not self.lifecycle.trusted(outcome):  # the last gate before the token leaves
            raise DeviceError(
                RELAY_NOT_OURS,
                self.lifecycle.foreign_message(outcome.before),
                "Rerun with --allow-uninstall (window: accept the uninstall question), or "
                "uninstall org.cetp.inspector.relay on the phone yourself.",
            )
        found = await self.lifecycle.grant(serial, info.sdk_int, info.grant_setting)
        checks = PhoneChecks(self.devices, serial, info.sdk_int)
        locked = await _quick(checks.keyguard())
        found += locked
        pin = SessionPin(self.devices, serial, self.lifecycle.shipped.package, info.sdk_int)
        await pin.apply()
        self.pins[serial] = pin
        self.diagnostics[serial] = found
        try:
            # Locked: `am start -W` would wait for a launch the lock screen holds back; the
            # service alone takes the session (confirmations wait for the unlock).
            launch = await self.lifecycle.start(serial, headless=bool(locked))
            link = RelayLink(self.devices, launch, self.mode, self._handshake)
            client = await link.open(self.open_timeout_s)
        except DeviceError as e:
            await self._unpin(serial)
            raise await self._explained(e, serial, info.sdk_int) from None
        except Exception:  # AUTH_FAILED, UNSUPPORTED_VERSION …: the phone is put back too
            await self._unpin(serial)
            raise
        self.links[serial] = link
        fg = await _quick(checks.relay_foreground(self.lifecycle.shipped.package))
        self.diagnostics[serial] = found + fg
        return client

    async def app_diagnostics(
        self, serial: str, package: str, sdk_int: int | None = None
    ) -> list[Diagnostic]:
        """Why a target app may not answer: stopped state (broadcasts skip it) or a
        restricted standby bucket. For callers explaining a timeout (docs/devices.md)."""
        from inspector.device.relay_lifecycle import check_package_name

        package = check_package_name(package)  # untrusted (from a provider): before any shell
        checks = PhoneChecks(self.devices, serial, sdk_int)
        return await gather_checks([lambda: checks.app_state(package)], 6.0)

    async def _explained(self, e: DeviceError, serial: str, sdk_int: int | None) -> DeviceError:
        """A relay that did not start or answer: add what the phone says about why."""
        if e.code not in (RELAY_START_FAILED, RELAY_UNREACHABLE):
            return e
        found = await self.phone_diagnostics(serial, sdk_int)
        self.diagnostics[serial] = self.diagnostics.get(serial, []) + found
        if not found:
            return e
        why = " ".join(d.message for d in found)
        hints = " ".join(d.hint for d in found if d.hint)
        return DeviceError(e.code, f"{e.message} On the phone: {why}", f"{hints} {e.hint}")

    async def _unpin(self, serial: str) -> None:
        pin = self.pins.pop(serial, None)
        if pin is not None:
            await pin.undo()

    async def reconnect_relay(
        self,
        serial: str,
        timeout: float = 30.0,
        *,
        reopen_timeout: float = 5.0,
        confirm_uninstall: ConfirmUninstall | None = None,
    ) -> RelayApi:
        """After a cable pull: same relay, new forward, new handshake.

        When the old relay no longer answers once the device is back (its process was
        killed, the phone rebooted), the relay is started again with a new token.
        Without an earlier link this is `connect_relay`.
        """
        link = self.links.get(serial)
        if link is None:
            return await self.connect_relay(serial, confirm_uninstall=confirm_uninstall)
        await link.close_client()
        await link.wait_for_device(timeout)
        try:
            return await link.open(reopen_timeout)
        except RelayError as e:
            if e.code != AUTH_FAILED:
                raise
            reason = e.message
        except DeviceError as e:
            if e.code != RELAY_UNREACHABLE:
                raise
            reason = e.message
        log.info(
            "relay on %s did not answer on its old socket (%s); starting it again", serial, reason
        )
        # Why it died (Android 11+ exit-info), told now and kept with the new session's
        # diagnostics so the user learns it was killed, not just that it came back.
        info = self.tracker.get(serial)
        checks = PhoneChecks(self.devices, serial, info.sdk_int if info else None)
        killed = await _quick(checks.last_exit(self.lifecycle.shipped.package))
        for d in killed:
            self.notify(f"The relay on {serial} had stopped; starting it again. {d.message}")
        client = await self.connect_relay(serial, confirm_uninstall=confirm_uninstall)
        self.diagnostics[serial] = killed + self.diagnostics.get(serial, [])
        return client

    async def disconnect_relay(self, serial: str) -> None:
        link = self.links.pop(serial, None)
        if link is not None:
            await link.close()
        await self._unpin(serial)

    # -- provider process control -----------------------------------------------------------
    async def force_stop(self, serial: str, package: str) -> None:
        await self.lifecycle.force_stop(serial, package)

    async def restart_app(self, serial: str, package: str) -> str:
        return await self.lifecycle.restart(serial, package)


async def _quick(check: Awaitable[list[Diagnostic]]) -> list[Diagnostic]:
    """A diagnostic that must not hold up the connect: skipped when it cannot answer."""
    try:
        return await asyncio.wait_for(check, 6.0)
    except (DeviceError, TimeoutError):
        return []
