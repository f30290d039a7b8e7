"""The device layer as the session/CLI see it: a live adb device list with change events,
and `connect_relay(serial)` doing install → grant → start → connect → handshake.

The session's `DeviceManager` merges this with the virtual device (serial `virtual`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from inspector.device.adb_server import AdbEndpoint
from inspector.device.devices import AdbDevices, DeviceTracker, Listener
from inspector.device.errors import (
    DEVICE_NOT_FOUND,
    DEVICE_NOT_READY,
    INSTALL_NEEDS_CONFIRMATION,
    RELAY_UNREACHABLE,
    DeviceError,
)
from inspector.device.models import DeviceInfo, DeviceState, parse_state
from inspector.device.relay_lifecycle import InstallOutcome, InstallResult, RelayLifecycle
from inspector.device.relay_link import ConnectMode, Handshake, RelayLink, relay_client_handshake
from inspector.device.shipped_relay import ShippedRelay
from inspector.relay.api import AUTH_FAILED, RelayApi, RelayError
from inspector.tasks import Spawner

log = logging.getLogger(__name__)

# Asked when an upgrade needs an uninstall; gets the explanation, returns the user's answer.
ConfirmUninstall = Callable[[str], Awaitable[bool]]


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
    ) -> None:
        self.devices = AdbDevices(endpoint)
        self.tracker = DeviceTracker(self.devices, spawner)
        self.lifecycle = RelayLifecycle(self.devices, shipped)
        self.mode = mode
        self._handshake = handshake
        self.links: dict[str, RelayLink] = {}
        self.last_install: dict[str, InstallOutcome] = {}
        self.grant_warnings: dict[str, list[str]] = {}

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
        return info

    # -- relay ----------------------------------------------------------------------------
    async def connect_relay(
        self, serial: str, *, confirm_uninstall: ConfirmUninstall | None = None
    ) -> RelayApi:
        """Install/upgrade (asking before any uninstall), grant, start, connect, handshake."""
        await self.disconnect_relay(serial)
        info = await self._require_online(serial)
        outcome = await self.lifecycle.install(serial)
        if outcome.result is InstallResult.NEEDS_CONFIRMATION:
            if confirm_uninstall is None or not await confirm_uninstall(outcome.message):
                self.last_install[serial] = outcome
                raise DeviceError(
                    INSTALL_NEEDS_CONFIRMATION,
                    outcome.message,
                    "Confirm the uninstall to continue, or uninstall the relay "
                    "on the phone yourself.",
                )
            outcome = await self.lifecycle.install(serial, confirm_uninstall=True)
        self.last_install[serial] = outcome
        self.grant_warnings[serial] = await self.lifecycle.grant(serial, info.sdk_int)
        launch = await self.lifecycle.start(serial)
        link = RelayLink(self.devices, launch, self.mode, self._handshake)
        client = await link.open()
        self.links[serial] = link
        return client

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
        return await self.connect_relay(serial, confirm_uninstall=confirm_uninstall)

    async def disconnect_relay(self, serial: str) -> None:
        link = self.links.pop(serial, None)
        if link is not None:
            await link.close()

    # -- provider process control -----------------------------------------------------------
    async def force_stop(self, serial: str, package: str) -> None:
        await self.lifecycle.force_stop(serial, package)

    async def restart_app(self, serial: str, package: str) -> str:
        return await self.lifecycle.restart(serial, package)
