"""What a fake phone knows and records (tests/device/fakephone.py): its properties,
installed packages, files and every command, install and grant it saw, plus the hook types
tests plug into it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.device.fakephone import FakePhone


@dataclass
class ApkInfo:
    """What `pm install` learns from an APK (the fake cannot parse APKs: tests declare it)."""

    package: str
    version_code: int
    version_name: str
    cert_sha256: str = "c0ffee"


@dataclass
class InstalledPackage:
    package: str
    version_code: int
    version_name: str
    cert_sha256: str
    apk: bytes
    launch_activity: str | None = None

    @property
    def path(self) -> str:
        return f"/data/app/~~fake==/{self.package}-1/base.apk"


@dataclass
class Install:
    """One `pm install` the phone ran (recorded for assertions)."""

    path: str
    flags: list[str]
    apk: bytes
    result: str


# A relay starter runs on the phone's loop when `am start-foreground-service` starts the
# relay; it returns the TCP address that backs the abstract socket it was asked to open, or
# None when it registers that address in `state.abstract_sockets` itself later (a relay
# that starts listening a moment after `am` returned, as on a real phone).
RelayStarter = Callable[[str, str], Awaitable[tuple[str, int] | None]]
# Runs on the phone's loop when `am force-stop PACKAGE` kills an app's processes (a test
# relay uses it to stop the process behind the abstract socket, as Android would).
ForceStopHook = Callable[[str], Awaitable[None]]
# A shell command handler registered with `FakePhone.on_shell(name, handler)`: gets the
# phone and the arguments after the command name, returns (output, exit code), or None to
# let the built-in command answer. tests/device/fakephone_android.py builds real-phone
# behaviours (Android versions, vendor ROMs, prompts) out of these.
ShellHandler = Callable[["FakePhone", list[str]], Awaitable[tuple[str, int] | None]]


@dataclass
class PhoneState:
    props: dict[str, str] = field(
        default_factory=lambda: {
            "ro.product.manufacturer": "Fakeco",
            "ro.product.model": "Fake Phone 7",
            "ro.product.name": "fakephone",
            "ro.product.device": "fake7",
            "ro.build.version.sdk": "34",
            "ro.build.version.release": "14",
            "ro.product.cpu.abi": "arm64-v8a",
            "ro.serialno": "FAKE0001",
            "sys.boot_completed": "1",
        }
    )
    packages: dict[str, InstalledPackage] = field(default_factory=dict)
    known_apks: dict[str, ApkInfo] = field(default_factory=dict)  # sha256 -> info
    files: dict[str, bytes] = field(default_factory=dict)
    dirs: set[str] = field(default_factory=lambda: {"/", "/data", "/data/local", "/data/local/tmp"})
    abstract_sockets: dict[str, tuple[str, int]] = field(default_factory=dict)
    abstract_opens: list[str] = field(default_factory=list)  # every localabstract: attempt
    commands: list[str] = field(default_factory=list)
    installs: list[Install] = field(default_factory=list)
    grants: list[tuple[str, str]] = field(default_factory=list)
    appops: list[tuple[str, str, str]] = field(default_factory=list)
    started: list[str] = field(default_factory=list)  # activity/service components started
    force_stopped: list[str] = field(default_factory=list)
    next_install_failure: str | None = None
    # The phone's reason when a `sync:` SEND cannot be written (e.g. "write failed: No
    # space left on device", as adbd's handle_send_file answers with FAIL).
    sync_send_failure: str | None = None
    # Shell output through a pty (old adbd without shell_v2): every "\n" arrives as "\r\n".
    crlf: bool = False
