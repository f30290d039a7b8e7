"""The Android rules the virtual device and the host-JVM fake platform enforce.

Each rule is a pure function of plain facts (API level, the caller's granted permissions,
the target's manifest declaration, process/UI state) returning a `Verdict`; nothing here
does I/O or knows about the relay protocol beyond the error code a blocked IPC becomes.
Every rule names the AOSP code (or Android documentation) whose behaviour it models, in
its docstring and in `RULES` (shown to users by `cetp-inspector devices` and in
docs/virtual-device.md). Where only a real phone can tell, the docstring says so.

The same cases run against this module, the virtual device and the Java FakePlatform
(tests/vectors/android_rules/cases.json).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from pydantic import BaseModel, ConfigDict

# Relay protocol error codes a blocked IPC becomes (docs/relay-protocol.md §6).
SECURITY = "SECURITY"
NOT_FOUND = "NOT_FOUND"
TIMEOUT = "TIMEOUT"
IPC_FAILED = "IPC_FAILED"
NEEDS_FOREGROUND = "NEEDS_FOREGROUND"
"""A background activity start Android would drop: the relay must be brought to the front
(`adb shell am start`, the shell is exempt) and the start retried (issue 10 part 1)."""

RESULT_OK = -1
RESULT_CANCELED = 0

QUERY_ALL_PACKAGES = "android.permission.QUERY_ALL_PACKAGES"
SYSTEM_ALERT_WINDOW = "android.permission.SYSTEM_ALERT_WINDOW"


class Rule(BaseModel):
    """One modelled platform behaviour: where it applies and where it comes from."""

    model_config = ConfigDict(frozen=True)

    id: str
    title: str
    min_api: int = 1
    max_api: int | None = None
    effect: str
    """What the virtual device does (docs/virtual-device.md's table)."""
    source: str
    """The AOSP file/class or documentation page the behaviour is taken from."""

    def applies(self, api: int) -> bool:
        return api >= self.min_api and (self.max_api is None or api <= self.max_api)

    @property
    def api_range(self) -> str:
        if self.max_api is not None:
            return f"{self.min_api}–{self.max_api}" if self.min_api > 1 else f"≤ {self.max_api}"
        return f"{self.min_api}+" if self.min_api > 1 else "all"


_CPH = ("frameworks/base services/core/java/com/android/server/am/ContentProviderHelper.java "
        "checkContentProviderPermission (ActivityManagerService."
        "checkContentProviderPermissionLocked before API 31)")

RULES: tuple[Rule, ...] = (
    Rule(
        id="provider_permission",
        title="ContentProvider permission / readPermission / writePermission",
        effect="opening a provider whose read and write permissions are both set needs one "
        "of them granted to the caller; otherwise SecurityException → relay SECURITY naming "
        "the permission",
        source=_CPH,
    ),
    Rule(
        id="provider_exported",
        title="ContentProvider exported",
        effect="a provider with exported=false opens only for its own UID; others get "
        "SecurityException → SECURITY",
        source=_CPH,
    ),
    Rule(
        id="install_time_grant",
        title="normal permissions are granted at install, if defined then",
        effect="the relay holds a normal permission it requests only if the platform or an "
        "app installed before it defines it; an app defining it later does not grant it "
        "(reinstall the relay)",
        source="frameworks/base services/core/java/com/android/server/pm/permission/"
        "PermissionManagerServiceImpl.java (updatePermissions: UPDATE_PERMISSIONS_REPLACE_PKG "
        "re-evaluates only the installed package); nextcloud/Android-SingleSignOn#27",
    ),
    Rule(
        id="package_visibility",
        title="package visibility (<queries>, QUERY_ALL_PACKAGES)",
        min_api=30,
        effect="packages the relay cannot see are missing from discover and their "
        "authorities resolve to nothing (NOT_FOUND \"Unknown authority\")",
        source="frameworks/base services/core/java/com/android/server/pm/AppsFilterImpl.java; "
        "developer.android.com/training/package-visibility",
    ),
    Rule(
        id="stopped_state",
        title="stopped state after install and after force-stop",
        effect="an app installed after the device started, or force-stopped, is stopped until "
        "one of its components is started explicitly (provider, service, activity)",
        source="frameworks/base commit e7f972122db8 \"Introduce application stopped state\"; "
        "PackageManagerService.setPackageStoppedState",
    ),
    Rule(
        id="stopped_package_broadcast",
        title="broadcasts skip stopped packages",
        effect="a broadcast to a stopped package is not delivered unless sent with "
        "FLAG_INCLUDE_STOPPED_PACKAGES (include_stopped); the relay waits and times out",
        source="android.content.Intent FLAG_EXCLUDE_STOPPED_PACKAGES / "
        "FLAG_INCLUDE_STOPPED_PACKAGES (0x20); ActivityManagerService.broadcastIntentLocked "
        "adds FLAG_EXCLUDE_STOPPED_PACKAGES",
    ),
    Rule(
        id="background_activity_start",
        title="background activity starts",
        min_api=29,
        effect="start_activity from the relay is blocked unless the relay activity is "
        "resumed, or it holds SYSTEM_ALERT_WINDOW (on 35 only with a visible overlay "
        "window); Android drops it silently, the relay answers NEEDS_FOREGROUND",
        source="frameworks/base services/core/java/com/android/server/wm/"
        "BackgroundActivityStartController.java (ActivityStarter.shouldAbortBackground"
        "ActivityStart before 34); developer.android.com/guide/components/activities/"
        "background-starts",
    ),
    Rule(
        id="pending_intent_new_task",
        title="startActivityForResult with NEW_TASK",
        effect="a PendingIntent whose activity launches as a new task gives RESULT_CANCELED "
        "at once, before any screen is answered",
        source="frameworks/base services/core/java/com/android/server/wm/ActivityStarter.java "
        "sendNewTaskResultRequestIfNeeded",
    ),
    Rule(
        id="pending_intent_non_activity",
        title="non-activity PendingIntent",
        effect="a service or broadcast PendingIntent runs but never returns an activity "
        "result (PendingIntent.isActivity() tells it from API 31)",
        source="android.app.PendingIntent (isActivity, send(..., OnFinished)); "
        "frameworks/base core/java/android/app/PendingIntent.java",
    ),
    Rule(
        id="force_stop_cancels_pending_intents",
        title="force-stop cancels the app's PendingIntents",
        min_api=35,
        effect="after force_stop every PendingIntent the app created is cancelled: "
        "launching a held handle fails (NOT_FOUND, CanceledException)",
        source="developer.android.com/about/versions/15/behavior-changes-all "
        "(Changes to package stopped state)",
    ),
    Rule(
        id="null_binding",
        title="a service returning null from onBind",
        effect="from API 28 ServiceConnection.onNullBinding fires and the relay answers "
        "IPC_FAILED at once; before 28 no callback comes, the bind waits out its "
        "timeout and the relay answers IPC_FAILED naming a likely null binding",
        source="android.content.ServiceConnection.onNullBinding (added API 28); "
        "frameworks/base core/java/android/app/LoadedApk.java ServiceDispatcher.doConnected",
    ),
    Rule(
        id="andyclaw_required_permissions",
        title="AndyClaw requiredPermissions granted to the host",
        effect="an extension function whose requiredPermissions the host does not hold is "
        "refused by the AndyClaw host before any IPC",
        source="AndyClaw host extension security checks "
        "(shared/reference/real-implementations.md, \"requiredPermissions granted to the host\")",
    ),
)

RULES_BY_ID: dict[str, Rule] = {r.id: r for r in RULES}


def rule(rule_id: str) -> Rule:
    return RULES_BY_ID[rule_id]


def rules_in_force(api: int) -> list[Rule]:
    """The rules a device of this API level enforces (in `RULES` order)."""
    return [r for r in RULES if r.applies(api)]


class Verdict(BaseModel):
    """What Android does with one IPC: allowed, or blocked by a rule (with the relay error
    the block becomes and a message naming the rule and its source)."""

    model_config = ConfigDict(frozen=True)

    allowed: bool
    rule: str | None = None
    error: str | None = None
    message: str = ""

    @property
    def source(self) -> str:
        return RULES_BY_ID[self.rule].source if self.rule else ""

    def explained(self, api: int) -> str:
        """The message plus the rule that decided it, for an error a user reads."""
        if self.rule is None:
            return self.message
        return f"{self.message} [Android rule {self.rule}, API {api}; {self.source}]"


ALLOWED = Verdict(allowed=True)


def _blocked(rule_id: str | None, error: str | None, message: str) -> Verdict:
    return Verdict(allowed=False, rule=rule_id, error=error, message=message)


class CallerFacts(BaseModel):
    """The calling app as the system server sees it (Binder.getCallingUid())."""

    model_config = ConfigDict(frozen=True)

    package: str
    uid: int
    granted: frozenset[str] = frozenset()


class ProviderFacts(BaseModel):
    """A <provider> declaration, as ProviderInfo holds it (android:permission fills both
    readPermission and writePermission unless they are given: PackageParser)."""

    model_config = ConfigDict(frozen=True)

    package: str
    uid: int
    name: str
    authority: str
    exported: bool = True
    permission: str | None = None
    read_permission: str | None = None
    write_permission: str | None = None

    @property
    def effective_read(self) -> str | None:
        return self.read_permission or self.permission

    @property
    def effective_write(self) -> str | None:
        return self.write_permission or self.permission


def provider_access(api: int, caller: CallerFacts, provider: ProviderFacts) -> Verdict:
    """May `caller` open (acquire) `provider`? Rules provider_exported, provider_permission.

    Models ContentProviderHelper.checkContentProviderPermission: the provider's own UID
    always may; a non-exported provider refuses every other UID; otherwise the caller needs
    readPermission OR writePermission (a null one counts as granted, so a provider that
    sets only one of them stays open to everyone). The check happens when the relay
    acquires the provider, before `call()` reaches the provider (ContentProvider.Transport.
    call enforces nothing itself), so the provider never sees the call. URI grants and
    path-permissions are not modelled (CETP uses neither)."""
    del api  # the same on every modelled level
    who = f"{caller.package} (uid={caller.uid})"
    if caller.uid == provider.uid:
        return ALLOWED
    if not provider.exported:
        return _blocked(
            "provider_exported", SECURITY,
            f"Permission Denial: opening provider {provider.name} from {who} that is not "
            f"exported from UID {provider.uid}")
    read, write = provider.effective_read, provider.effective_write
    if read is None or read in caller.granted or write is None or write in caller.granted:
        return ALLOWED
    return _blocked(
        "provider_permission", SECURITY,
        f"Permission Denial: opening provider {provider.name} from {who} requires {read} or "
        f"{write}; the caller does not hold {read}")


class PermissionDef(BaseModel):
    """A permission definition known to the device (the platform's or an app's)."""

    model_config = ConfigDict(frozen=True)

    name: str
    protection: str = "normal"  # normal | dangerous | signature | appop
    defined_by: str = "android"
    min_api: int = 1


PLATFORM_PERMISSIONS: dict[str, PermissionDef] = {
    p.name: p
    for p in (
        # frameworks/base core/res/AndroidManifest.xml (protectionLevel of each)
        PermissionDef(name="android.permission.INTERNET"),
        PermissionDef(name="android.permission.FOREGROUND_SERVICE", min_api=28),
        PermissionDef(name="android.permission.FOREGROUND_SERVICE_DATA_SYNC", min_api=34),
        PermissionDef(name=QUERY_ALL_PACKAGES, min_api=30),
        PermissionDef(name="android.permission.POST_NOTIFICATIONS", protection="dangerous",
                      min_api=33),
        PermissionDef(name=SYSTEM_ALERT_WINDOW, protection="appop"),
        PermissionDef(name="android.permission.CAMERA", protection="dangerous"),
        PermissionDef(name="android.permission.ACCESS_FINE_LOCATION", protection="dangerous"),
        PermissionDef(name="android.permission.DUMP", protection="signature"),
    )
}


class Grant(BaseModel):
    """The install-time outcome of one requested permission."""

    model_config = ConfigDict(frozen=True)

    permission: str
    granted: bool
    reason: str


def install_grants(
    api: int,
    requested: Iterable[str],
    defined_by_installed: dict[str, PermissionDef],
) -> list[Grant]:
    """What the package installer grants an app at install (rule install_time_grant).

    `defined_by_installed` holds the permissions defined by apps installed *before* this
    one. Normal permissions are granted if known now; a custom permission defined by an app
    installed later stays ungranted until this app is reinstalled or updated
    (PermissionManagerServiceImpl re-evaluates only the package being installed).
    Dangerous permissions need a runtime grant (`pm grant`, `install -g`), appop ones
    (SYSTEM_ALERT_WINDOW) an app-op grant, signature ones the platform certificate: none of
    these is granted here. Whether every vendor build keeps the install-order behaviour
    only a real phone can tell (docs/virtual-device.md)."""
    out: list[Grant] = []
    for name in dict.fromkeys(requested):
        d = PLATFORM_PERMISSIONS.get(name) or defined_by_installed.get(name)
        if d is None:
            out.append(Grant(permission=name, granted=False,
                             reason="no installed app defines it at install time "
                             "(install_time_grant): install the defining app first, then "
                             "reinstall the relay"))
        elif api < d.min_api:
            out.append(Grant(permission=name, granted=False,
                             reason=f"does not exist before API {d.min_api}"))
        elif d.protection == "normal":
            out.append(Grant(permission=name, granted=True,
                             reason=f"normal permission defined by {d.defined_by}"))
        else:
            out.append(Grant(permission=name, granted=False,
                             reason=f"{d.protection} permission: needs a grant beyond install"))
    return out


class VisibilityFacts(BaseModel):
    """What an app declares that widens its package visibility (API 30+)."""

    model_config = ConfigDict(frozen=True)

    package: str
    granted: frozenset[str] = frozenset()
    query_actions: frozenset[str] = frozenset()
    query_packages: frozenset[str] = frozenset()
    query_authorities: frozenset[str] = frozenset()


class TargetFacts(BaseModel):
    """What of a target package visibility matching looks at."""

    model_config = ConfigDict(frozen=True)

    package: str
    actions: frozenset[str] = frozenset()
    """Intent-filter actions of its exported services, receivers and activities."""
    authorities: frozenset[str] = frozenset()


def package_visible(api: int, caller: VisibilityFacts, target: TargetFacts) -> Verdict:
    """Can `caller` see `target` at all? Rule package_visibility (API 30+).

    Models AppsFilterImpl.shouldFilterApplication for the cases the relay meets: before
    API 30 everything is visible; QUERY_ALL_PACKAGES sees everything; otherwise a package is
    visible when a <queries> <intent> action matches one of its components, a <package>
    names it, or a <provider> authority matches. (Visibility granted because the target
    itself interacted with the caller is not modelled.) Invisible packages are absent from
    PackageManager answers and `acquireContentProviderClient` returns null."""
    if api < 30 or caller.package == target.package or QUERY_ALL_PACKAGES in caller.granted:
        return ALLOWED
    if (target.package in caller.query_packages
            or target.actions & caller.query_actions
            or target.authorities & caller.query_authorities):
        return ALLOWED
    return _blocked(
        "package_visibility", NOT_FOUND,
        f"{target.package} is not visible to {caller.package}: no <queries> entry matches "
        f"it and {QUERY_ALL_PACKAGES} is not granted")


def broadcast_delivery(api: int, *, target_stopped: bool, include_stopped: bool) -> Verdict:
    """Does an explicit broadcast reach the target's receiver? Rule
    stopped_package_broadcast: a stopped package receives only broadcasts sent with
    FLAG_INCLUDE_STOPPED_PACKAGES (the AndyClaw host does not set it). Not delivered means
    silence: the relay waits out its timeout (timed_out=true)."""
    del api
    if target_stopped and not include_stopped:
        return _blocked(
            "stopped_package_broadcast", TIMEOUT,
            "the target package is in the stopped state (never launched since install, or "
            "force-stopped) and the broadcast did not include stopped packages")
    return ALLOWED


class RelayUiState(BaseModel):
    """What background-activity-start exemptions look at, for the relay app."""

    model_config = ConfigDict(frozen=True)

    activity_resumed: bool = True
    """RelayActivity is resumed (in front): after `am start`, until the user leaves it."""
    overlay_granted: bool = False
    """SYSTEM_ALERT_WINDOW app-op granted (the desktop's `appops set`)."""
    overlay_window_visible: bool = False
    """A visible overlay window (what API 35 requires for the SAW exemption)."""


def background_activity_start(api: int, ui: RelayUiState) -> Verdict:
    """May the relay start another app's activity now? Rule background_activity_start.

    Models BackgroundActivityStartController (API 34+; ActivityStarter before) for the
    exemptions the relay can have: a resumed (foreground) activity; SYSTEM_ALERT_WINDOW,
    which from API 35 counts only with a visible overlay window (FGS/BAL SAW restrictions).
    Android drops a blocked start silently (startActivity returns normally, nothing shows);
    the grace period after the app's own activity finished and OEM restrictions (MIUI's
    "display pop-up windows while running in the background") are not modelled — only a
    phone shows those."""
    if api < 29 or ui.activity_resumed:
        return ALLOWED
    if ui.overlay_granted and (api < 35 or ui.overlay_window_visible):
        return ALLOWED
    why = ("SYSTEM_ALERT_WINDOW is granted but from API 35 it exempts only with a visible "
           "overlay window" if ui.overlay_granted else "it holds no exemption")
    return _blocked(
        "background_activity_start", NEEDS_FOREGROUND,
        f"background activity start blocked: the relay activity is not in front and {why}; "
        "bring the relay forward (adb shell am start -n "
        "org.cetp.inspector.relay/.app.RelayActivity) and retry")


class PendingIntentFacts(BaseModel):
    """What a PendingIntent resolves to when the relay launches it for a result."""

    model_config = ConfigDict(frozen=True)

    kind: str = "activity"  # activity | service | broadcast
    new_task: bool = False
    """The target activity launches as a new task (FLAG_ACTIVITY_NEW_TASK or singleTask)."""
    cancelled: bool = False
    """Cancelled by its creator or by a force-stop on API 35."""


class PendingIntentOutcome(BaseModel):
    """How the launch ends: `result` (the screen answers), `cancelled_new_task`,
    `no_result` (never an activity result), `cancelled` (CanceledException)."""

    model_config = ConfigDict(frozen=True)

    outcome: str
    verdict: Verdict


def pending_intent_launch(api: int, pi: PendingIntentFacts) -> PendingIntentOutcome:
    """What launching a PendingIntent for a result gives (rules pending_intent_new_task,
    pending_intent_non_activity, force_stop_cancels_pending_intents)."""
    if pi.cancelled:
        by_stop = api >= 35
        return PendingIntentOutcome(outcome="cancelled", verdict=_blocked(
            "force_stop_cancels_pending_intents" if by_stop else None, NOT_FOUND,
            "PendingIntent.CanceledException: the PendingIntent was cancelled "
            + ("(its app was force-stopped)" if by_stop else "by its creator")
            + "; ask the provider again for a fresh resolution"))
    if pi.kind != "activity":
        return PendingIntentOutcome(outcome="no_result", verdict=_blocked(
            "pending_intent_non_activity", None,
            f"the PendingIntent starts a {pi.kind}, not an activity: it ran, but no activity "
            "result will ever come"))
    if pi.new_task:
        return PendingIntentOutcome(outcome="cancelled_new_task", verdict=_blocked(
            "pending_intent_new_task", None,
            "Activity is launching as a new task, so cancelling activity result: "
            "RESULT_CANCELED came at once, before the user answered"))
    return PendingIntentOutcome(outcome="result", verdict=ALLOWED)


def force_stop_cancels_pending_intents(api: int) -> bool:
    """Whether a force-stop cancels the app's PendingIntents on this level (API 35+)."""
    return rule("force_stop_cancels_pending_intents").applies(api)


def null_binding(api: int, timeout_ms: int) -> Verdict:
    """A bound service returned null from onBind (rule null_binding): from API 28
    onNullBinding lets the relay answer at once; before 28 nothing is called back, so the
    bind looks like a service that never connects: after the timeout the relay (core
    Bindings.noConnection) answers IPC_FAILED naming a likely null binding, not a bare TIMEOUT."""
    if api >= 28:
        return _blocked("null_binding", IPC_FAILED,
                        "the service returned no binder (onNullBinding)")
    return _blocked("null_binding", IPC_FAILED,
                    f"the service was bound but never connected within {timeout_ms} ms; before "
                    "Android 9 a null binder looks exactly like this (there is no onNullBinding "
                    "callback), so it most likely offers no binder")


def andyclaw_required_permissions(
    required: Collection[str], host_granted: Collection[str]
) -> Verdict:
    """Does the AndyClaw host hold every permission an extension function requires?"""
    missing = sorted(set(required) - set(host_granted))
    if not missing:
        return ALLOWED
    return _blocked("andyclaw_required_permissions", SECURITY,
                    f"the host does not hold {', '.join(missing)} required by the function")


def explain_broadcast_timeout(target_stopped: bool | None, include_stopped: bool,
                              timeout_ms: int) -> str:
    """Why a broadcast got no reply, in the words of the Java relay's
    `Broadcasts.explainTimeout` (relay_apk/src/core), so both devices say the same."""
    base = f"no reply within {timeout_ms} ms"
    if target_stopped is None:
        return base + " (the target's stopped state is unknown)"
    if target_stopped and not include_stopped:
        return (base + ": the target is in the stopped state (never launched since install,"
                " or force-stopped) and Android does not deliver broadcasts to stopped"
                " apps; the real host would time out too. Launch the app once, or retry"
                " with include_stopped to deliver anyway")
    state = "stopped but include_stopped was set" if target_stopped else "not stopped"
    return (base + f": the target is {state}, so Android delivered the broadcast (unless"
            " its receiver is disabled or missing), but nothing answered on the reply action")
