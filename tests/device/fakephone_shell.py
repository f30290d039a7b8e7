"""The fake phone's shell: the built-in command table (getprop, pm, am, appops, cmd,
dumpsys, rm, echo) behind the handlers tests register with `FakePhone.on_shell`
(tests/device/fakephone.py)."""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Awaitable, Callable

from tests.device.fakephone_state import (
    ForceStopHook,
    Install,
    InstalledPackage,
    PhoneState,
    RelayStarter,
    ShellHandler,
)

EXIT_MARKER = "; echo X4EXIT:$?"  # adbutils' shell2 (v1) appends this to learn the exit code


class ShellMixin:
    """Mixed into `FakePhone` (tests/device/fakephone.py)."""

    state: PhoneState
    shell_handlers: dict[str, list[ShellHandler]]
    relay_starter: RelayStarter | None
    force_stop_hook: ForceStopHook | None

    async def _shell(self, line: str) -> bytes:
        with_exit = line.endswith(EXIT_MARKER)
        if with_exit:
            line = line[: -len(EXIT_MARKER)]
        self.state.commands.append(line)
        try:
            argv = shlex.split(line)
        except ValueError:
            argv = []
        try:
            out, code = await self._run(argv)
        except _ShellFailure as e:
            out, code = e.output, e.code
        if with_exit:
            out += f"X4EXIT:{code}\n"
        if self.state.crlf:  # a pty's onlcr turns "\n" into "\r\n"
            out = out.replace("\r\n", "\n").replace("\n", "\r\n")
        return out.encode()

    async def _run(self, argv: list[str]) -> tuple[str, int]:
        if not argv:
            return "", 0
        for custom in list(self.shell_handlers.get(argv[0], ())):
            answer = await custom(self, argv[1:])
            if answer is not None:
                return answer
        handler = _COMMANDS.get(argv[0])
        if handler is None:
            return f"/system/bin/sh: {argv[0]}: inaccessible or not found\n", 127
        return await handler(self, argv[1:])

    async def _getprop(self, args: list[str]) -> tuple[str, int]:
        props = self.state.props
        if args:
            return props.get(args[0], "") + "\n", 0
        return "".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items())), 0

    async def _pm(self, args: list[str]) -> tuple[str, int]:
        st = self.state
        sub, rest = (args[0], args[1:]) if args else ("", [])
        if sub == "list" and rest[:1] == ["packages"]:
            opts = [a for a in rest[1:] if a.startswith("-")]
            filt = next((a for a in rest[1:] if not a.startswith("-")), "")
            lines = []
            for name, pkg in sorted(st.packages.items()):
                if filt in name:
                    show = "--show-versioncode" in opts
                    extra = f" versionCode:{pkg.version_code}" if show else ""
                    lines.append(f"package:{name}{extra}\n")
            return "".join(lines), 0
        if sub == "path":
            pkg = st.packages.get(rest[0]) if rest else None
            return (f"package:{pkg.path}\n", 0) if pkg else ("", 1)
        if sub == "install":
            return self._install([a for a in rest if a.startswith("-")], rest[-1] if rest else "")
        if sub == "uninstall":
            name = rest[-1] if rest else ""
            if st.packages.pop(name, None) is None:
                return "Failure [DELETE_FAILED_INTERNAL_ERROR]\n", 1
            return "Success\n", 0
        if sub == "grant":
            if len(rest) < 2 or rest[0] not in st.packages:
                pkg = rest[0] if rest else ""
                raise _ShellFailure(
                    "Exception occurred while executing 'grant':\n"
                    f"java.lang.IllegalArgumentException: Unknown package: {pkg}\n",
                    255,
                )
            st.grants.append((rest[0], rest[1]))
            return "", 0
        return f"Unknown command: pm {sub}\n", 255

    def _install(self, flags: list[str], path: str) -> tuple[str, int]:
        st = self.state
        apk = st.files.get(path)
        if apk is None:
            return f"Failure [INSTALL_FAILED_INVALID_URI: Path {path} not found]\n", 1
        result = self._install_result(flags, apk)
        st.installs.append(Install(path, flags, apk, result))
        return result + "\n", 0 if result == "Success" else 1

    def _install_result(self, flags: list[str], apk: bytes) -> str:
        st = self.state
        if st.next_install_failure is not None:
            failure, st.next_install_failure = st.next_install_failure, None
            return failure
        info = st.known_apks.get(hashlib.sha256(apk).hexdigest())
        if info is None:
            return "Failure [INSTALL_PARSE_FAILED_NOT_APK: Failed to parse APK]"
        old = st.packages.get(info.package)
        if old is not None:
            if "-r" not in flags:
                return "Failure [INSTALL_FAILED_ALREADY_EXISTS]"
            if old.cert_sha256 != info.cert_sha256:
                return (
                    f"Failure [INSTALL_FAILED_UPDATE_INCOMPATIBLE: Existing package "
                    f"{info.package} signatures do not match newer version; ignoring!]"
                )
            if old.version_code > info.version_code and "-d" not in flags:
                return "Failure [INSTALL_FAILED_VERSION_DOWNGRADE]"
        st.packages[info.package] = InstalledPackage(
            info.package,
            info.version_code,
            info.version_name,
            info.cert_sha256,
            apk,
            launch_activity=old.launch_activity if old else None,
        )
        return "Success"

    async def _am(self, args: list[str]) -> tuple[str, int]:
        st = self.state
        sub = args[0] if args else ""
        if sub == "force-stop":
            st.force_stopped.append(args[-1])
            if self.force_stop_hook is not None:
                await self.force_stop_hook(args[-1])
            return "", 0
        comp = args[args.index("-n") + 1] if "-n" in args else None
        extras = {args[i + 1]: args[i + 2] for i, a in enumerate(args[:-2]) if a == "--es"}
        if sub in ("start-foreground-service", "startservice", "start-service", "start"):
            if comp is None or comp.split("/")[0] not in st.packages:
                if sub == "start":
                    return (
                        f"Starting: Intent {{ cmp={comp} }}\nError type 3\n"
                        f"Error: Activity class {{{comp}}} does not exist.\n"
                    ), 0
                return "Error: Not found; no service started.\n", 0
            st.started.append(comp)
            name = next((v for k, v in extras.items() if k.lower().endswith("socket")), None)
            token = next((v for k, v in extras.items() if k.lower().endswith("token")), "")
            if self.relay_starter is not None and name is not None:
                address = await self.relay_starter(name, token)
                if address is not None:
                    st.abstract_sockets[name] = address
            if sub == "start":
                wait = "Status: ok\nLaunchState: COLD\nComplete\n" if "-W" in args else ""
                return f"Starting: Intent {{ cmp={comp} }}\n{wait}", 0
            return f"Starting service: Intent {{ cmp={comp} }}\n", 0
        return f"Unknown command: am {sub}\n", 255

    async def _appops(self, args: list[str]) -> tuple[str, int]:
        if len(args) >= 4 and args[0] == "set":
            self.state.appops.append((args[1], args[2], args[3]))
            return "", 0
        return "Error: bad appops arguments\n", 255

    async def _cmd(self, args: list[str]) -> tuple[str, int]:
        if args[:3] == ["package", "resolve-activity", "--brief"] and len(args) >= 4:
            pkg = self.state.packages.get(args[-1])
            if pkg is None or pkg.launch_activity is None:
                return "No activity found\n", 0
            return (
                f"priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true\n"
                f"{pkg.package}/{pkg.launch_activity}\n",
                0,
            )
        return f"Unknown command: cmd {' '.join(args[:2])}\n", 255

    async def _dumpsys(self, args: list[str]) -> tuple[str, int]:
        if args[:1] == ["package"] and len(args) >= 2:
            pkg = self.state.packages.get(args[1])
            if pkg is None:
                return f"Unable to find package: {args[1]}\n", 0
            return (
                f"Packages:\n  Package [{pkg.package}] (fake):\n"
                f"    versionCode={pkg.version_code} minSdk=26 targetSdk=34\n"
                f"    versionName={pkg.version_name}\n"
                f"    codePath={pkg.path.rsplit('/', 1)[0]}\n"
            ), 0
        return "", 0

    async def _rm(self, args: list[str]) -> tuple[str, int]:
        for a in args:
            if not a.startswith("-"):
                self.state.files.pop(a, None)
        return "", 0

    async def _echo(self, args: list[str]) -> tuple[str, int]:
        return " ".join(args) + "\n", 0


class _ShellFailure(Exception):
    def __init__(self, output: str, code: int) -> None:
        super().__init__(output)
        self.output = output
        self.code = code


_COMMANDS: dict[str, Callable[[ShellMixin, list[str]], Awaitable[tuple[str, int]]]] = {
    "getprop": ShellMixin._getprop,
    "pm": ShellMixin._pm,
    "am": ShellMixin._am,
    "appops": ShellMixin._appops,
    "cmd": ShellMixin._cmd,
    "dumpsys": ShellMixin._dumpsys,
    "rm": ShellMixin._rm,
    "echo": ShellMixin._echo,
}
