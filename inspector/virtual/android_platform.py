"""The Android platform of the virtual device: the rules of `inspector.android.rules`
applied to the installed apps and the relay app, under one API-level profile.

The relay's permissions come from its real manifest: by default the binary
AndroidManifest.xml inside the shipped APK (resources/relay/cetp-relay.apk), so a relay
built without `com.clawseed.permission.ACCESS_TOOLS` fails here as it would on a phone.
The relay counts as installed when the first desktop connects (as the inspector installs
it on connect): it is granted the normal permissions defined at that moment (by the
platform or by apps installed before); an app defining a permission later does not grant
it until `reinstall_relay()` (rule install_time_grant).

The device calls the `check_*` methods from its IPC entry points; a blocked IPC raises the
`RelayError` the phone relay would answer, its message naming the rule and its source.
"""

from __future__ import annotations

import functools
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from inspector.android import rules as r
from inspector.android.manifest import (
    ManifestError,
    ManifestFacts,
    facts_from_binary_xml,
    facts_from_xml_text,
)
from inspector.android.profiles import ApiProfile, profile
from inspector.protocol.bundle import Bundle, Int
from inspector.relay.api import RelayError
from inspector.virtual.app import RELAY_PACKAGE, Caller, VirtualApp
from inspector.virtual.manifest import ACCESS_TOOLS_PERMISSION

if TYPE_CHECKING:
    from inspector.virtual.manifest import ProviderDecl

MAX_APK_MANIFEST_BYTES = 2 * 1024 * 1024

CONSUMER_MANIFEST_XML = """<manifest xmlns:android="http://schemas.android.com/apk/res/android"
    package="{package}">
  <uses-permission android:name="com.clawseed.permission.ACCESS_TOOLS"/>
  <queries><intent><action android:name="com.clawseed.action.TOOL_PROVIDER"/></intent></queries>
</manifest>"""
"""What the virtual device's consumer apps (inspector.virtual.callers) declare: what the
ClawSeed consumer SDK asks its apps to declare (shared/reference/real-implementations.md)."""


class RelayManifestError(RuntimeError):
    """The relay APK's manifest cannot be read; says which file and why."""


def read_apk_manifest(apk: Path) -> ManifestFacts:
    """The manifest facts of an APK file (its binary AndroidManifest.xml, size-capped)."""
    try:
        with zipfile.ZipFile(apk) as z:
            info = z.getinfo("AndroidManifest.xml")
            if info.file_size > MAX_APK_MANIFEST_BYTES:
                raise RelayManifestError(f"{apk}: AndroidManifest.xml is {info.file_size} "
                                         "bytes, too large for a relay")
            data = z.read(info)
        return facts_from_binary_xml(data)
    except (OSError, KeyError, zipfile.BadZipFile, ManifestError) as exc:
        raise RelayManifestError(
            f"cannot read the relay manifest from {apk}: {exc}; reinstall the inspector "
            "package (the relay APK ships in resources/relay/)") from exc


@functools.lru_cache(maxsize=1)
def shipped_relay_manifest() -> ManifestFacts:
    """The manifest of the relay APK the inspector ships (read once per process)."""
    from inspector.device.shipped_relay import resources_dir

    return read_apk_manifest(resources_dir() / "relay" / "cetp-relay.apk")


class AndroidPlatform:
    """Per-device Android state the rules need: profile, grants, stopped packages, the
    relay's UI state, cancelled PendingIntents."""

    def __init__(self, api: int | None = None, relay_manifest: ManifestFacts | None = None,
                 *, relay_in_front: bool = True) -> None:
        self.profile: ApiProfile = profile(api)
        self.relay_manifest = relay_manifest or shipped_relay_manifest()
        self.ui = r.RelayUiState(activity_resumed=relay_in_front)
        self.stopped: set[str] = set()
        self.cancelled_handles: set[str] = set()
        self._grants: dict[str, list[r.Grant]] | None = None
        self._consumers: dict[str, ManifestFacts] = {}

    @property
    def api(self) -> int:
        return self.profile.api

    def rules_in_force(self) -> list[r.Rule]:
        return r.rules_in_force(self.api)

    # --- permissions (install_time_grant) ------------------------------------------------------
    def install_relay(self, apps: Iterable[VirtualApp]) -> None:
        """(Re)install the relay and the consumer apps now: grant what is defined now."""
        defined: dict[str, r.PermissionDef] = {}
        for app in apps:
            for p in app.manifest.permissions:
                defined.setdefault(p.name, r.PermissionDef(
                    name=p.name, protection="normal" if p.protection_level == 0 else "signature",
                    defined_by=app.package))
        grants = {self.relay_manifest.package: r.install_grants(
            self.api, self.relay_manifest.uses_permissions, defined)}
        for package, facts in self._consumer_facts().items():
            grants[package] = r.install_grants(self.api, facts.uses_permissions, defined)
        self._grants = grants

    def _consumer_facts(self) -> dict[str, ManifestFacts]:
        from inspector.virtual.callers import CONSUMER_APPS

        for package in CONSUMER_APPS:
            if package not in self._consumers:
                self._consumers[package] = facts_from_xml_text(
                    CONSUMER_MANIFEST_XML.format(package=package))
        return self._consumers

    def ensure_installed(self, apps: Iterable[VirtualApp]) -> None:
        if self._grants is None:
            self.install_relay(apps)

    def grants(self, package: str) -> list[r.Grant]:
        return list((self._grants or {}).get(package, ()))

    def granted(self, package: str) -> frozenset[str]:
        return frozenset(g.permission for g in self.grants(package) if g.granted)

    def relay_held_permissions(self) -> tuple[str, ...]:
        """What the relay's hello reports as held (checkSelfPermission on a phone): the
        install-time grants, plus the runtime/app-op permissions the desktop grants on a
        phone (`pm install -g`, `appops set`) where the API level has them."""
        granted = self.granted(self.relay_manifest.package)
        held = []
        for name in self.relay_manifest.uses_permissions:
            d = r.PLATFORM_PERMISSIONS.get(name)
            granted_by_desktop = (d is not None and d.protection != "normal"
                                  and self.api >= d.min_api)
            if name in granted or granted_by_desktop:
                held.append(name)
        return tuple(held)

    def _manifest_of(self, package: str) -> ManifestFacts | None:
        if package == self.relay_manifest.package:
            return self.relay_manifest
        return self._consumer_facts().get(package)

    # --- checks --------------------------------------------------------------------------------
    def error(self, verdict: r.Verdict, code: str | None = None,
              message: str | None = None) -> RelayError:
        """The relay error a blocked IPC becomes: the message names the rule and its
        source; `details` carries them as fields (rule, android_api, source)."""
        details = Bundle(rule=verdict.rule, android_api=Int(self.api), source=verdict.source)
        return RelayError(code or verdict.error or r.SECURITY,
                          message or verdict.explained(self.api), details)

    def _raise(self, verdict: r.Verdict) -> None:
        if not verdict.allowed:
            raise self.error(verdict)

    def visible(self, caller: Caller, app: VirtualApp) -> r.Verdict:
        """Rule package_visibility for `caller` looking at `app`."""
        facts = self._manifest_of(caller.package)
        if facts is None:
            return r.ALLOWED
        m = app.manifest
        actions = {a for c in (*m.services, *m.receivers, *m.activities) if c.exported
                   for a in c.actions}
        target = r.TargetFacts(package=app.package, actions=frozenset(actions),
                               authorities=frozenset(m.authorities()))
        return r.package_visible(self.api, facts.visibility(self.granted(caller.package)),
                                 target)

    def check_provider(self, caller: Caller, app: VirtualApp, provider: ProviderDecl) -> None:
        """Acquiring `provider` (call, wake_provider acquire): visibility, then
        exported/permission. An invisible provider is an unknown authority, as on a phone."""
        seen = self.visible(caller, app)
        if not seen.allowed:
            raise self.error(seen, r.NOT_FOUND, f"Unknown authority "
                             f"{provider.authority[:120]} ({seen.explained(self.api)})")
        verdict = r.provider_access(self.api, self._caller_facts(caller), r.ProviderFacts(
            package=app.package, uid=app.uid, name=app.manifest.qualify(provider.name),
            authority=provider.authority, exported=provider.exported,
            permission=provider.permission, read_permission=provider.read_permission,
            write_permission=provider.write_permission))
        if not verdict.allowed and verdict.rule == "provider_permission":
            missing = verdict_missing(self.grants(caller.package), provider)
            if missing:
                verdict = verdict.model_copy(update={"message": f"{verdict.message} ({missing})"})
        self._raise(verdict)
        self.started(app.package)

    def _caller_facts(self, caller: Caller) -> r.CallerFacts:
        return r.CallerFacts(package=caller.package, uid=caller.uid,
                             granted=self.granted(caller.package))

    # --- stopped state ---------------------------------------------------------------------------
    def installed(self, package: str, *, stopped: bool) -> None:
        """An app was installed: a fresh install is stopped (rule stopped_state)."""
        if stopped:
            self.stopped.add(package)
        else:
            self.stopped.discard(package)

    def started(self, package: str) -> None:
        """A component of `package` was started explicitly: it leaves the stopped state."""
        self.stopped.discard(package)

    def force_stopped(self, package: str, handles: dict[str, str]) -> None:
        """`package` was force-stopped: stopped again; on 35 its PendingIntents are
        cancelled (`handles` maps PendingIntent handle ids to their creator package)."""
        self.stopped.add(package)
        if r.force_stop_cancels_pending_intents(self.api):
            self.cancelled_handles.update(h for h, p in handles.items() if p == package)

    def check_broadcast(self, package: str, include_stopped: bool) -> r.Verdict:
        return r.broadcast_delivery(self.api, target_stopped=package in self.stopped,
                                    include_stopped=include_stopped)

    def check_activity_start(self) -> None:
        """Rule background_activity_start for a start_activity from the relay."""
        self._raise(r.background_activity_start(self.api, self.ui))

    def pending_intent(self, hid: str, *, kind: str, new_task: bool) -> r.PendingIntentOutcome:
        return r.pending_intent_launch(self.api, r.PendingIntentFacts(
            kind=kind, new_task=new_task, cancelled=hid in self.cancelled_handles))

    def null_binding(self, timeout_ms: int) -> r.Verdict:
        return r.null_binding(self.api, timeout_ms)

    # --- what users see ------------------------------------------------------------------------
    def summary(self) -> dict[str, object]:
        """The profile, the rules in force and the relay's grants (hello, devices)."""
        return {
            "api": self.api,
            "release": self.profile.release,
            "rules": [x.id for x in self.rules_in_force()],
            "relay_manifest_package": self.relay_manifest.package,
            "relay_granted": sorted(self.granted(RELAY_PACKAGE)),
        }


def verdict_missing(grants: list[r.Grant], provider: ProviderDecl) -> str:
    """Why the caller lacks the provider's permission, when the install-time record says."""
    wanted = provider.read_permission or provider.permission
    for g in grants:
        if g.permission == wanted and not g.granted:
            return f"requested but not granted: {g.reason}"
    if wanted == ACCESS_TOOLS_PERMISSION:
        return (f"the relay's manifest has no <uses-permission android:name=\"{wanted}\"/>; "
                "install a relay built with it")
    return f"the caller's manifest does not request {wanted}"


__all__ = ["AndroidPlatform", "RelayManifestError",
           "read_apk_manifest", "shipped_relay_manifest"]
