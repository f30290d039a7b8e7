"""Real-phone behaviours for the fake phone, built from `FakePhone.on_shell` handlers.

Each function teaches one phone one behaviour seen on real Android 8–15 phones and vendor
ROMs; the texts are what the platform prints (sources named per function). Combine them
freely; every one only adds handlers or state, so they stack.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from tests.device.fakephone import FakePhone

# API level → (release, what else differs); used by `android_version`.
RELEASES = {26: "8.0.0", 27: "8.1.0", 28: "9", 29: "10", 30: "11", 31: "12", 33: "13",
            34: "14", 35: "15"}


def android_version(phone: FakePhone, api: int) -> FakePhone:
    """Set the build properties of an API level, and the `pm list packages` of that level:
    `--show-versioncode` exists only from API 28 (AOSP PackageManagerShellCommand
    `runListPackages`, added in Android 9); before, pm answers "Error: Unknown option" and
    exit code 255 (the shell command returns -1)."""
    phone.state.props["ro.build.version.sdk"] = str(api)
    phone.state.props["ro.build.version.release"] = RELEASES.get(api, str(api))

    async def pm(p: FakePhone, args: list[str]) -> tuple[str, int] | None:
        if args[:2] == ["list", "packages"] and "--show-versioncode" in args and api < 28:
            return "Error: Unknown option: --show-versioncode\n", 255
        return None

    phone.on_shell("pm", pm)
    return phone


def dumpsys_silent_on_missing(phone: FakePhone) -> FakePhone:
    """`dumpsys package PKG` of a package that is not installed prints the service's other
    sections and no "Unable to find package" line (seen on 8.x builds and vendor dumps)."""

    async def dumpsys(p: FakePhone, args: list[str]) -> tuple[str, int] | None:
        if args[:1] == ["package"] and len(args) > 1 and args[1] not in p.state.packages:
            return ("Database versions:\n  Internal:\n    sdkVersion=27 databaseVersion=3\n"
                    "\nKey Set Manager:\n\nPackage Changes:\n  Sequence number=12\n"), 0
        return None

    phone.on_shell("dumpsys", dumpsys)
    return phone


def pty_shell(phone: FakePhone) -> FakePhone:
    """Shell output through a pty, as adbd gives it without shell_v2 on older builds and
    some vendor adbds: every line ends "\r\n" (system/core adb/daemon/shell_service.cpp
    uses a pty for `SubprocessType::kPty`; the tty's onlcr adds the "\r")."""
    phone.state.crlf = True
    return phone


def am_start_wait_hangs(phone: FakePhone) -> FakePhone:
    """`am start -W` starts the activity but never answers (screen off, launch held back:
    ActivityManagerShellCommand waits in `startActivityAndWait` for a launch result)."""

    async def am(p: FakePhone, args: list[str]) -> tuple[str, int] | None:
        if args[:1] == ["start"] and "-W" in args:
            await p._am(args)  # the activity is on its way …
            await asyncio.Event().wait()  # … but -W never reports it
        return None

    phone.on_shell("am", am)
    return phone


def getprop_slow_first(phone: FakePhone, seconds: float) -> FakePhone:
    """A sleepy phone: the first `getprop` takes `seconds` (the CPU wakes from deep sleep,
    vendor power savers hold the shell), later ones answer at once."""
    calls: list[int] = []

    async def slow(p: FakePhone, args: list[str]) -> tuple[str, int] | None:
        calls.append(1)
        if len(calls) == 1:
            await asyncio.sleep(seconds)
        return None

    phone.on_shell("getprop", slow)
    return phone


def getprop_hangs(phone: FakePhone) -> FakePhone:
    """`getprop` never answers (a wedged phone, seen on some MediaTek builds)."""

    async def hang(p: FakePhone, args: list[str]) -> tuple[str, int] | None:
        await asyncio.Event().wait()
        return None

    phone.on_shell("getprop", hang)
    return phone


def vanishes_on_getprop(phone: FakePhone) -> FakePhone:
    """The cable comes out while the desktop reads the phone's properties."""

    async def vanish(p: FakePhone, args: list[str]) -> tuple[str, int] | None:
        p.plugged = False
        await p._drop_transports()
        await asyncio.Event().wait()
        return None

    phone.on_shell("getprop", vanish)
    return phone


def pulls_cable_on(phone: FakePhone, command: str, sub: str = "") -> FakePhone:
    """The cable comes out while `command [sub …]` runs (e.g. during `am start`)."""

    async def vanish(p: FakePhone, args: list[str]) -> tuple[str, int] | None:
        if sub and args[:1] != [sub]:
            return None
        p.plugged = False
        await p._drop_transports()
        await asyncio.Event().wait()
        return None

    phone.on_shell(command, vanish)
    return phone


def booting(phone: FakePhone) -> FakePhone:
    """A phone still booting: the package service is not up yet. `pm` is `cmd package`
    since Android 7 and `cmd` prints "cmd: Can't find service: package" (exit 20,
    frameworks/native/cmds/cmd/cmd.cpp); `sys.boot_completed` is not yet 1."""
    phone.state.props["sys.boot_completed"] = ""

    async def pm(p: FakePhone, args: list[str]) -> tuple[str, int] | None:
        if p.state.props.get("sys.boot_completed") != "1":
            return "cmd: Can't find service: package\n", 20
        return None

    phone.on_shell("pm", pm)
    return phone


def finish_booting(phone: FakePhone) -> None:
    phone.state.props["sys.boot_completed"] = "1"


def install_prompt(phone: FakePhone, seconds: float) -> FakePhone:
    """Vendor ROMs (MIUI, ColorOS, Vivo) hold `pm install` until the user confirms an
    "Install via USB" prompt on the phone; the command answers only then."""

    async def pm(p: FakePhone, args: list[str]) -> tuple[str, int] | None:
        if args[:1] == ["install"]:
            await asyncio.sleep(seconds)
        return None

    phone.on_shell("pm", pm)
    return phone


def no_space(phone: FakePhone) -> FakePhone:
    """The data partition is full: adbd answers a sync SEND with FAIL and errno text
    (adb daemon/file_sync_service.cpp `handle_send_file` → SendSyncFailErrno)."""
    phone.state.sync_send_failure = "write failed: No space left on device"
    return phone


MIUI_GRANT_REFUSAL = (
    "Exception occurred while executing 'grant':\n"
    "java.lang.SecurityException: grantRuntimePermission: Neither user 2000 nor current "
    "process has android.permission.GRANT_RUNTIME_PERMISSIONS.\n"
    "\tat android.app.ContextImpl.enforce(ContextImpl.java:2240)\n"
)


def vendor(phone: FakePhone, rom: str) -> FakePhone:
    """A vendor ROM's identifying properties; "miui"/"hyperos" and "coloros" also refuse
    `pm grant` (and appops) until the developer-options setting is turned on."""
    props = phone.state.props
    if rom in ("miui", "hyperos"):
        props["ro.product.manufacturer"] = "Xiaomi"
        props["ro.miui.ui.version.name"] = "V140"
        if rom == "hyperos":
            props["ro.mi.os.version.name"] = "OS1.0"
    elif rom in ("coloros", "oxygenos"):
        props["ro.product.manufacturer"] = "OPPO" if rom == "coloros" else "OnePlus"
        props["ro.build.version.oplusrom"] = "V13.1"
    else:
        raise ValueError(rom)

    async def pm(p: FakePhone, args: list[str]) -> tuple[str, int] | None:
        if args[:1] == ["grant"]:
            return MIUI_GRANT_REFUSAL, 255
        return None

    async def appops(p: FakePhone, args: list[str]) -> tuple[str, int] | None:
        if args[:1] == ["set"]:
            return "Error: java.lang.SecurityException: uid 2000 does not have "\
                "android.permission.MANAGE_APP_OPS_MODES.\n", 255
        return None

    phone.on_shell("pm", pm)
    phone.on_shell("appops", appops)
    return phone


@dataclass
class PhoneScreen:
    """What `dumpsys` tells about the screen, the relay's service and its past deaths."""

    keyguard: bool = False
    relay_task_open: bool = False  # the relay's screen is already the top task
    foreground: bool = True  # the relay service runs as a foreground service
    exit_info: list[str] = field(default_factory=list)  # ApplicationExitInfo lines
    buckets: dict[str, int] = field(default_factory=dict)  # package → standby bucket
    stopped: set[str] = field(default_factory=set)  # packages in the stopped state
    overlay: dict[str, str] = field(default_factory=dict)  # package → SAW mode
    idle_allowlist: set[str] = field(default_factory=set)


def screen(phone: FakePhone, scr: PhoneScreen | None = None) -> PhoneScreen:
    """`dumpsys activity activities|services|exit-info`, `dumpsys window`, `dumpsys
    package` (stopped), `am get/set-standby-bucket`, `appops get/set`, `cmd deviceidle
    whitelist`, and `am start` on an already open relay task, as Android 11–15 print them:
    - keyguard: ActivityTaskManager's KeyguardController dump, "mKeyguardShowing=true"
      (services/core/java/com/android/server/wm/KeyguardController.java `dump`).
    - foreground service: ActiveServices dump, "isForeground=true"
      (services/core/java/com/android/server/am/ServiceRecord.java `dump`).
    - exit-info: "ApplicationExitInfo #0:" records with "reason=" (AppExitInfoTracker).
    - `am start` on an open task without NEW intent delivery: "Warning: Activity not
      started, its current task has been brought to the front" (Am.java, START_TASK_TO_FRONT).
    """
    scr = scr or PhoneScreen()
    st = phone.state

    async def dumpsys(p: FakePhone, args: list[str]) -> tuple[str, int] | None:
        if args[:2] == ["activity", "activities"]:
            return (
                "ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\n"
                "  KeyguardController:\n"
                f"    mKeyguardShowing={str(scr.keyguard).lower()}\n"
                "    mAodShowing=false\n"
            ), 0
        if args[:2] == ["activity", "services"]:
            pkg = args[2] if len(args) > 2 else ""
            if pkg not in st.packages or not any(c.startswith(pkg + "/") for c in st.started):
                return "ACTIVITY MANAGER SERVICES (dumpsys activity services)\n  (nothing)\n", 0
            return (
                "ACTIVITY MANAGER SERVICES (dumpsys activity services)\n"
                "  User 0 active services:\n"
                f"  * ServiceRecord{{1a2b3c u0 {pkg}/.app.RelayService}}\n"
                f"    isForeground={str(scr.foreground).lower()} foregroundId=1\n"
            ), 0
        if args[:2] == ["activity", "exit-info"]:
            pkg = args[2] if len(args) > 2 else ""
            lines = [f"package: {pkg}\n"]
            for i, reason in enumerate(scr.exit_info):
                lines.append(f"  ApplicationExitInfo #{i}:\n    timestamp=2026-12-01 10:0{i}:00 "
                             f"pid=4242 realUid=10234 packageUid=10234 definingUid=10234 "
                             f"user=0\n    process={pkg}\n    reason={reason}\n")
            return "".join(lines), 0
        if args[:1] == ["package"] and len(args) >= 2 and args[1] in st.packages:
            pkg = st.packages[args[1]]
            stopped = str(args[1] in scr.stopped).lower()
            return (
                f"Packages:\n  Package [{pkg.package}] (fake):\n"
                f"    versionCode={pkg.version_code} minSdk=26 targetSdk=34\n"
                f"    versionName={pkg.version_name}\n"
                f"    User 0: ceDataInode=1 installed=true hidden=false suspended=false "
                f"distractionFlags=0 stopped={stopped} notLaunched=false enabled=0\n"
            ), 0
        return None

    async def am(p: FakePhone, args: list[str]) -> tuple[str, int] | None:
        if args[:1] == ["get-standby-bucket"] and len(args) > 1:
            return f"{scr.buckets.get(args[1], 10)}\n", 0
        if args[:1] == ["set-standby-bucket"] and len(args) > 2:
            names = {"active": 10, "working_set": 20, "frequent": 30, "rare": 40,
                     "restricted": 45}
            value = args[2]
            scr.buckets[args[1]] = names[value] if value in names else int(value)
            return "", 0
        if args[:1] == ["start"] and scr.relay_task_open and "-n" in args:
            comp = args[args.index("-n") + 1]
            if comp.split("/")[0] in st.packages:
                return (
                    f"Starting: Intent {{ cmp={comp} (has extras) }}\n"
                    "Warning: Activity not started, its current task has been brought to "
                    "the front\n"
                ), 0
        if args[:1] == ["start"] and scr.keyguard and "-W" in args:
            await asyncio.sleep(3600)  # `am start -W` waits for a launch the lock screen holds
        return None

    async def appops(p: FakePhone, args: list[str]) -> tuple[str, int] | None:
        if args[:1] == ["get"] and len(args) >= 3:
            set_modes = [m for pkg, op, m in st.appops if (pkg, op) == (args[1], args[2])]
            mode = set_modes[-1] if set_modes else scr.overlay.get(args[1], "default")
            return f"{args[2]}: {mode}\n", 0
        return None

    async def cmd(p: FakePhone, args: list[str]) -> tuple[str, int] | None:
        if args == ["deviceidle", "whitelist"]:
            rows = ["system-excidle,com.android.shell,2000"]
            rows += [f"user,{pkg},10234" for pkg in sorted(scr.idle_allowlist)]
            return "".join(r + "\n" for r in rows), 0
        if args[:2] == ["deviceidle", "whitelist"] and len(args) > 2:
            op, pkg = args[2][0], args[2][1:]
            if op == "+":
                scr.idle_allowlist.add(pkg)
                return f"Added: {pkg}\n", 0
            scr.idle_allowlist.discard(pkg)
            return f"Removed: {pkg}\n", 0
        return None

    phone.on_shell("dumpsys", dumpsys)
    phone.on_shell("am", am)
    phone.on_shell("appops", appops)
    phone.on_shell("cmd", cmd)
    return scr
