"""What every command gets: parsed options, the device manager, the session, output helpers."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TextIO

from inspector.cli.output import print_json
from inspector.cli.terminal_text import safe_text
from inspector.consumer.options import EngineOptions
from inspector.protocol.cetp import KNOWN_CAPABILITIES
from inspector.protocol.exchange import Exchange, ExchangeKind
from inspector.session.devices import VIRTUAL_SERIAL, DeviceManager, VirtualConfig
from inspector.session.errors import ExitCode, InspectorError
from inspector.session.phone_logs import start_phone_logs
from inspector.session.screenshots import keep_confirmation_screenshots
from inspector.session.session import Session

#: set to 1 to never talk to adb (CI, tests, machines without adb)
NO_ADB_ENV = "CETP_INSPECTOR_NO_ADB"


def split_list(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [p.strip() for p in text.split(",") if p.strip()]


def engine_options(args: argparse.Namespace) -> EngineOptions:
    """EngineOptions from --capabilities, --versions, --deadline-ms, --max-read-bytes, --wake."""
    opts = EngineOptions()
    update: dict[str, Any] = {}
    if getattr(args, "wake", False):
        update["wake_and_retry"] = True
    caps = split_list(getattr(args, "capabilities", None))
    if caps is not None:
        unknown = [c for c in caps if c not in KNOWN_CAPABILITIES]
        if unknown:
            raise InspectorError(
                "BAD_CAPABILITY", f"unknown capability {unknown[0]!r}",
                hint="known capabilities: " + ", ".join(sorted(KNOWN_CAPABILITIES)))
        update["capabilities"] = tuple(caps)
    versions = split_list(getattr(args, "versions", None))
    if versions is not None:
        try:
            update["consumer_versions"] = tuple(int(v) for v in versions)
        except ValueError:
            raise InspectorError("BAD_VERSIONS", f"--versions must be integers, got "
                                 f"{args.versions!r}", hint="e.g. --versions 2,1") from None
    deadline = getattr(args, "deadline_ms", None)
    if deadline is not None:
        if deadline <= 0:
            raise InspectorError("BAD_DEADLINE", "--deadline-ms must be positive")
        update["deadline_ms"] = deadline
    cap = getattr(args, "max_read_bytes", None)
    if cap is not None:
        if cap <= 0:
            raise InspectorError("BAD_LIMIT", "--max-read-bytes must be positive")
        update["read_cap_bytes"] = cap
    return opts.model_copy(update=update)


def android_api(args: argparse.Namespace) -> int | None:
    """--android-api, checked against the profiles there are (a usage error otherwise)."""
    api = getattr(args, "android_api", None)
    if api is None:
        return None
    from inspector.android.profiles import UnknownApiLevel, profile

    try:
        return profile(api).api
    except UnknownApiLevel as exc:
        raise InspectorError("BAD_ANDROID_API", str(exc), hint="e.g. --android-api 29",
                             exit_code=ExitCode.USAGE) from None


@dataclass
class Ctx:
    """One command invocation."""

    args: argparse.Namespace
    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)
    manager: DeviceManager | None = None
    session: Session | None = None
    serial: str = ""
    journal: Any = None  # inspector.session.journal.JournalWriter with --record
    #: set when no -d was given and no phone is attached: why the virtual device is used
    fallback_note: str = ""
    #: progress notes from the device layer (install prompt waiting, phone booting)
    notes: list[str] = field(default_factory=list)
    #: after a failed command on a phone: why its target app may not answer
    failure_diagnostics: list[dict[str, str]] = field(default_factory=list)

    @property
    def json(self) -> bool:
        return bool(self.args.json)

    @property
    def command(self) -> str:
        cmd = self.args.command or ""
        sub = (getattr(self.args, "ops_command", None)
               or getattr(self.args, "virtual_command", None)
               or getattr(self.args, "bundle_command", None))
        return f"{cmd} {sub}" if sub else cmd

    def device_manager(self) -> DeviceManager:
        if self.manager is None:
            a = self.args
            bundles = list(getattr(a, "virtual_bundle", None) or [])
            if bundles and a.relay_socket:
                raise InspectorError(
                    "BAD_DEVICE", "--virtual-bundle serves a recording on the in-process "
                    "virtual device; --relay-socket attaches to another one",
                    hint="drop one of them (serve a bundle on a socket with `bundle serve`)",
                    exit_code=ExitCode.USAGE)
            config = VirtualConfig(state_dir=a.virtual_state, plugins=list(a.virtual_plugin or []),
                                   relay_socket=a.relay_socket, token=a.token, bundles=bundles,
                                   android_api=android_api(a),
                                   relay_in_front=not getattr(a, "virtual_relay_background",
                                                              False))
            use_adb = os.environ.get(NO_ADB_ENV, "") not in ("1", "true", "yes")
            allow = bool(getattr(a, "allow_uninstall", False))

            async def confirm_uninstall(explanation: str) -> bool:
                if not allow:
                    self.err.write(f"{safe_text(explanation, 1000)}\nrerun with "
                                   "--allow-uninstall to allow it\n")
                return allow

            self.manager = DeviceManager(config, use_adb=use_adb and not a.relay_socket,
                                         confirm_uninstall=confirm_uninstall,
                                         notify=self.note)
        return self.manager

    def note(self, text: str) -> None:
        """A progress note from the device layer: on stderr at once for a person (a prompt
        on the phone must not wait for the command to end), in `notes` with --json."""
        self.notes.append(text)
        if not self.json:
            self.err.write(f"note: {safe_text(text, 500, one_line=True)}\n")
            self.err.flush()

    async def choose_serial(self) -> str:
        if self.args.device:
            return str(self.args.device)
        if self.args.relay_socket or getattr(self.args, "virtual_bundle", None):
            return VIRTUAL_SERIAL
        serial, note = await self.device_manager().choose_default()
        if note:
            self.fallback_note = note
            if not self.json:
                self.err.write(f"note: {safe_text(note, 500, one_line=True)}\n")
                self.err.flush()
        return serial

    async def open_session(self, *, options: EngineOptions | None = None,
                           discover: bool = True) -> Session:
        """Connect to the chosen device (and discover, unless told not to)."""
        if self.session is not None:
            return self.session
        manager = self.device_manager()
        self.serial = await self.choose_serial()
        if self.args.relay_socket and self.serial != VIRTUAL_SERIAL:
            raise InspectorError(
                "BAD_DEVICE", "--relay-socket attaches to one relay; -d cannot pick another",
                hint="drop -d, or drop --relay-socket to use adb devices")
        self.session = Session(self.serial, manager.connector(self.serial),
                               options=options or engine_options(self.args))
        if self.args.record:
            self.journal = open_journal(self.args.record, self.serial)
            torn = getattr(self.journal, "torn", None)
            if torn is not None and torn.kept_in:  # said, never silently cut (issue 12)
                self.err.write(f"note: session {self.args.record!r} ended with a torn line "
                               f"({torn.bytes} bytes); kept in {torn.kept_in}\n")
            self.session.add_exchange_listener(self.journal.on_exchange)
        if discover:
            await self.session.open()
        else:
            await self.session.connect()
        self.print_diagnostics()
        # the phone's logcat next to each call (issue 16; nothing for the virtual device)
        await start_phone_logs(self.session, manager.adb_device_getter(self.serial))
        if self.journal is not None:  # confirmation screenshots kept with the recording
            keep_confirmation_screenshots(self.session, manager.adb_device_getter(self.serial),
                                          self.journal.path)
        if self.journal is not None:
            record_facts(self.journal, self.session)
        return self.session

    async def close(self) -> None:
        try:
            if self.session is not None and not self.json and getattr(self.args, "wake", False):
                self.print_wake_steps()
            if self.session is not None:
                await self.session.close()
            if self.manager is not None:
                await self.manager.close()
        finally:
            if self.journal is not None:
                self.journal.close()

    @property
    def diagnostics(self) -> list[dict[str, str]]:
        """What the connect found on the phone (grants refused, locked, relay not in front)."""
        if self.manager is None or not self.serial:
            return []
        return self.manager.diagnostics(self.serial)

    def target_package(self) -> str | None:
        """The package of the PROVIDER/EXTENSION argument, when discovery knows it."""
        wanted = getattr(self.args, "provider", None) or getattr(self.args, "extension", None)
        discovery = self.session.discovery if self.session is not None else None
        if not wanted or discovery is None:
            return None
        for d in [*discovery.cetp, *discovery.extensions]:
            if wanted in (d.package, getattr(d, "authority", None), getattr(d, "id", None)):
                return str(d.package)
        return None

    async def explain_failure(self) -> None:
        """A command on a phone failed: is its target app stopped (broadcasts skip it) or
        in a restricted standby bucket? (issue 10 part 3; best effort, a few seconds)"""
        package = self.target_package()
        if self.manager is None or not package or self.serial in ("", VIRTUAL_SERIAL):
            return
        try:
            self.failure_diagnostics = await asyncio.wait_for(
                self.manager.app_diagnostics(self.serial, package), 8)
        except Exception as exc:  # the command's own error is what matters
            import logging

            logging.getLogger(__name__).info("could not diagnose %s: %s", package, exc)

    def error_extra(self) -> dict[str, Any]:
        """Fields the --json error document adds (what the phone says about the failure)."""
        return {"device_diagnostics": self.failure_diagnostics} if self.failure_diagnostics \
            else {}

    def print_failure_diagnostics(self) -> None:
        for d in self.failure_diagnostics:
            text = f"{d.get('message', '')} {d.get('hint', '')}".strip()
            self.err.write(f"warning: on the phone: {safe_text(text, 600, one_line=True)}\n")
        self.err.flush()

    def print_diagnostics(self) -> None:
        """Human mode: each phone diagnostic as a warning on stderr (--json: in the doc)."""
        if self.json:
            return
        for d in self.diagnostics:
            text = f"{d.get('message', '')} {d.get('hint', '')}".strip()
            self.err.write(f"warning: {safe_text(text, 600, one_line=True)}\n")
        self.err.flush()

    def print_wake_steps(self) -> None:
        """--wake without --json: one stderr line per recovery step (the GUI shows them as
        exchanges in the traffic log)."""
        assert self.session is not None
        for st in wake_steps(self.session.recorder.exchanges):
            what = f"{st['step']:<11} {st['method']}"
            if st.get("mode"):
                what += f"({st['mode']})"
            tail = st.get("detail") or st.get("error_message") or ""
            self.err.write(f"wake: {what} {st['status']}"
                           f"{': ' + safe_text(tail, 300, one_line=True) if tail else ''}\n")
        self.err.flush()

    def base_doc(self, ok: bool = True) -> dict[str, Any]:
        """The keys every --json document starts with (docs/cli.md)."""
        doc: dict[str, Any] = {"ok": ok, "command": self.command, "device": self.serial or None}
        if self.fallback_note:
            doc["device_fallback"] = self.fallback_note
        if self.notes:
            doc["notes"] = list(self.notes)
        if self.diagnostics or self.failure_diagnostics:
            doc["device_diagnostics"] = self.diagnostics + self.failure_diagnostics
        if self.journal is not None:
            doc["journal"] = self.journal.session_id
        if getattr(self.args, "wake", False) and self.session is not None:
            doc["wake_steps"] = wake_steps(self.session.recorder.exchanges)
        android = android_profile_doc(self.session)
        if android is not None:
            doc["android"] = android
        return doc

    def emit(self, doc: dict[str, Any]) -> None:
        """Print the command's JSON document (only with --json)."""
        if self.json:
            full = self.base_doc()
            full.update(doc)
            print_json(full, self.out)


def android_profile_doc(session: Session | None) -> dict[str, Any] | None:
    """The virtual device's Android profile from its hello (API level, the rules it
    enforces, the relay's granted permissions); None for a phone or no session."""
    try:
        device = session.link.hello_info.device if session is not None else None
    except Exception:  # not connected
        return None
    if not device or "android_rules" not in device:
        return None
    rules = str(device.get("android_rules") or "")
    granted = str(device.get("granted_permissions") or "")
    return {"api": device.get("sdk_int"), "release": device.get("release"),
            "rules": [r for r in rules.split(",") if r],
            "relay_granted_permissions": [p for p in granted.split(",") if p]}


def wake_steps(exchanges: Iterable[Exchange]) -> list[dict[str, Any]]:
    """Every step of each --wake recovery, in order: the call that failed with "Unknown
    authority", each wake_provider (acquire, launch) and the retried call."""
    exchanges = list(exchanges)
    woken_parents = {x.parent_id for x in exchanges
                     if x.kind == ExchangeKind.RELAY and x.method == "wake_provider"}
    steps: list[dict[str, Any]] = []
    for x in exchanges:
        is_wake = x.kind == ExchangeKind.RELAY and x.method == "wake_provider"
        retried = any(n.startswith("retried after wake_provider") for n in x.notes)
        if not (is_wake or retried or x.id in woken_parents):
            continue
        step: dict[str, Any] = {
            "step": "wake" if is_wake else ("retry" if retried else "failed_call"),
            "exchange_id": x.id, "method": x.method, "status": x.status.value,
            "request_id": x.request_id, "error_code": x.error_code,
            "error_message": x.error_message,
        }
        if is_wake:
            request = x.request if isinstance(x.request, dict) else {}
            decoded = x.decoded if isinstance(x.decoded, dict) else {}
            step["mode"] = request.get("mode")
            step["detail"] = decoded.get("detail", x.error_message)
        steps.append(step)
    return steps


def open_journal(name: str, serial: str) -> Any:
    """The journal for --record NAME: continue the session with that name or id, else
    start one (one session can span several commands)."""
    from inspector.session import journal as j

    try:
        for summary in j.list_sessions():
            if name in (summary.name, summary.session_id):
                return j.JournalWriter.reopen(summary.path)
        return j.JournalWriter.create(name=name, device={"serial": serial})
    except (OSError, j.JournalError) as exc:
        raise InspectorError("JOURNAL", f"cannot record into session {name!r}: {exc}",
                             hint="check $CETP_INSPECTOR_HOME (or the XDG data folder)",
                             exit_code=ExitCode.DEVICE) from exc


def record_facts(journal: Any, session: Session) -> None:
    """Device facts and discovered declarations, which bug-report bundles include."""
    try:
        hello = session.link.hello_info
        device = dict(hello.device)
        device.update(serial=session.serial, relay_version_name=hello.relay_version_name,
                      relay_version_code=hello.relay_version_code,
                      relay_capabilities=list(hello.capabilities))
        journal.record("device", device)
        if session.discovery is not None:
            journal.record("discovery", {
                "cetp": [d.model_dump(mode="json") for d in session.discovery.cetp],
                "extensions": [e.model_dump(mode="json") for e in session.discovery.extensions],
                "problems": session.discovery.problems,
            })
    except Exception as exc:  # facts are a bonus; the command itself must go on
        import logging

        logging.getLogger(__name__).info("could not journal device facts: %s", exc)


def require(value: Any, message: str, hint: str = "") -> Any:
    if value is None:
        raise InspectorError("BAD_INPUT", message, hint=hint, exit_code=ExitCode.USAGE)
    return value
