"""A recorded provider played back as a virtual app (issue 7, "replay as a virtual provider").

`ReplayedApp` serves one package's recorded CETP providers from the virtual device, so a
teammate without the phone or the app can explore the exact behaviour that was reported:

- `discover` lists the package with the declarations that were recorded (a relay package
  record, or the CLI's parsed CETP declaration); without any, a plausible manifest is
  synthesized from the authority and marked with app meta-data `SYNTHESIZED_META`.
- `call` answers from the recording. A request matches a recorded one by method, protocol
  family (v1 / v2), tool name, arguments (compared as JSON, so key order does not matter)
  and operation id; session tokens, request ids, deadlines and resume tokens never take
  part (tokens are redacted in a bundle, and the recording is the truth whatever token
  comes back). Repeated matching calls walk through the recorded answers in order and then
  repeat the last one, so a poll sees `running` then `succeeded` as it did. The incoming
  request id is echoed. Descriptor reads (negotiate, get_provider_info, list_tools) fall
  back to the latest recorded answer of that method and protocol family (v1 / v2) when the
  request differs; a v1 read is never answered with a v2 recording.
- Nothing recorded answers a CETP error, never a crash: `METHOD_NOT_FOUND` for a method
  the recording never saw, `UNAVAILABLE` with `retryable=false` for a known method whose
  tool, arguments or operation were not recorded (retrying cannot help: the recording never
  changes; the consumer must not loop). Both messages say "not in the recording" and
  `error_details` holds `{"replay": "not_recorded", ...}`.
- The only rewritten value is a recorded negotiate `expires_at`: it is moved to now plus
  the recorded session lifetime, so a consumer does not see a session that expired before
  the replay started (the same reason `Replayer` refreshes deadlines).

Recorded AndyClaw extensions are played back by the same app (`extension=`): the package
record as recorded (application meta-data and bridge components; synthesized from the
recorded calls and marked with `SYNTHESIZED_META` when missing), the raw manifest resource
(rebuilt from the functions parsed when it was read) and GET_MANIFEST if they were
recorded, and each bridge answering the recorded reply of the same bridge, function and
params (params compared as JSON). Anything else gets a clear error that says "not in the
recording": an `error` reply (service: a `{"error": ...}` result string; provider and
broadcast: the `error` extra); the activity bridge refuses the start with a relay error
carrying that message (the device has no way yet for an app to answer launched=false).

A PendingIntent in a recorded reply (a `USER_ACTION_REQUIRED` resolution) is replaced by a
live one showing a "Replayed confirmation" screen: approving resumes into the recorded
resumed call, denying cancels. File results are served as recorded; their bytes are not
in a recording, so reading one fails with NOT_FOUND unless the bundle carries the bytes
(issue 16: `inspector.virtual.replayed_files` serves them, digest checked).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from inspector.protocol import andyclaw as ac
from inspector.protocol.bundle import Bundle, PendingIntentHandle, from_jsonable, to_jsonable
from inspector.protocol.exchange import ExchangeKind, ExchangeStatus
from inspector.relay.api import NOT_FOUND, RelayError
from inspector.session.journal import JournalContents
from inspector.session.replay import (
    RecordedCall,
    RecordedExtension,
    RecordedExtensionCall,
    RecordedProvider,
    params_value,
    recorded_extensions,
    recorded_providers,
)
from inspector.virtual.app import (
    CallContext,
    ConfirmationScreen,
    PendingActivity,
    TransactResult,
    VirtualApp,
)
from inspector.virtual.cetp_wire import CetpError, dumps, v1_error, v2_error
from inspector.virtual.logcat import replay_lines
from inspector.virtual.manifest import (
    ACCESS_TOOLS_DECL,
    EXT_ACTIVITY_ACTION,
    EXT_BROADCAST_ACTION,
    EXT_META,
    EXT_META_ID,
    EXT_META_MANIFEST,
    EXT_META_NAME,
    EXT_SERVICE_ACTION,
    META_AUTHORITY,
    META_VERSION,
    META_VERSIONS,
    TOOL_PROVIDER_ACTION,
    ComponentDecl,
    MetaValue,
    PackageManifest,
    PermissionDecl,
    ProviderDecl,
    ServiceDecl,
    cetp_provider,
    cetp_service,
)
from inspector.virtual.replayed_files import fresh_file_handles, load_with_files

if TYPE_CHECKING:
    from inspector.virtual.device import VirtualDevice

log = logging.getLogger(__name__)

RESULT_OK = -1  # Activity.RESULT_OK
RESULT_CANCELED = 0

SYNTHESIZED_META = "org.cetp.inspector.replay.SYNTHESIZED_MANIFEST"
"""App meta-data set (true) on a replayed package whose manifest was not recorded."""
DESCRIPTOR_METHODS = frozenset({"negotiate", "get_provider_info", "list_tools"})
OPERATION_METHODS = frozenset({"get_operation", "cancel_operation"})
IGNORED_KEYS = frozenset(
    {"session_token", "request_id", "deadline_at_ms", "resume_token", "expires_at"}
)
"""Request keys that never take part in matching (run-specific or redacted secrets)."""
DEFAULT_SESSION_LIFETIME_MS = 3_600_000
DEFAULT_MANIFEST_RESOURCE_ID = 0x7F0F0000
"""The raw manifest resource id of a synthesized extension whose read did not record one."""


class ReplayLoadError(Exception):
    """A bundle or journal that cannot be replayed; the message says why."""


# ---------------------------------------------------------------------------------------
# Matching


def _plain_request(call_request: Any) -> dict[str, Any]:
    """A recorded (typed JSON) request as plain comparable values."""
    if not isinstance(call_request, Mapping) or call_request.get("t") != "Bundle":
        return {}
    return dict(call_request.get("v") or {})


def _args_value(text: Any) -> Any:
    if isinstance(text, str):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def _typed_str(value: Any) -> Any:
    """The Python value of a typed-JSON scalar (`{"t": "String", "v": "x"}` → "x")."""
    if isinstance(value, Mapping) and "t" in value:
        return value.get("v")
    return value


def request_key(method: str, fields: Mapping[str, Any]) -> str:
    """What identifies a request for matching (see the module docstring)."""
    v2 = method == "negotiate" or fields.get("protocol_version") is not None
    rest: dict[str, Any] = {}
    for k, v in fields.items():
        if k in IGNORED_KEYS or v is None:
            continue
        rest[k] = _args_value(v) if k == "args" else v
    has_resume = fields.get("resume_token") is not None
    return json.dumps([method, v2, has_resume, rest], sort_keys=True, default=str)


def _incoming_fields(extras: Bundle | None) -> dict[str, Any]:
    """Incoming extras in the same shape as a recorded request's fields."""
    if extras is None:
        return {}
    return _plain_request(to_jsonable(extras))


def _recorded_fields(call: RecordedCall) -> dict[str, Any]:
    return _plain_request(call.request)


def _unwrap(fields: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _typed_str(v) for k, v in fields.items()}


class _PlayedProvider:
    """One recorded authority with a cursor per distinct request."""

    def __init__(self, recorded: RecordedProvider, lifetime_ms: int | None) -> None:
        self.recorded = recorded
        self.lifetime_ms = lifetime_ms
        self._cursor: dict[str, int] = {}
        usable = [
            c for c in recorded.calls
            if c.response is not None or c.status == ExchangeStatus.MALFORMED
        ]
        self.by_key: dict[str, list[RecordedCall]] = {}
        for c in usable:
            key = request_key(c.method, _unwrap(_recorded_fields(c)))
            self.by_key.setdefault(key, []).append(c)
        self.by_method: dict[str, list[RecordedCall]] = {}
        for c in usable:
            self.by_method.setdefault(c.method, []).append(c)

    def choose(self, method: str, fields: dict[str, Any]) -> RecordedCall | CetpError:
        plain = _unwrap(fields)
        key = request_key(method, plain)
        same = self.by_key.get(key)
        if same:
            i = self._cursor.get(key, 0)
            self._cursor[key] = i + 1
            return same[min(i, len(same) - 1)]
        recorded = self.by_method.get(method)
        authority = self.recorded.authority
        if not recorded:
            return CetpError(
                "METHOD_NOT_FOUND",
                f"{method[:64]!r} is not in the recording of {authority}",
                details={"replay": "not_recorded", "method": method[:64]},
            )
        if method in DESCRIPTOR_METHODS:
            # only within the protocol family asked for: a v1 list_tools answered with the
            # recorded v2 one would make the v1 view list v2's side-effecting tools (§2.1)
            v2 = method == "negotiate" or plain.get("protocol_version") is not None
            family = [c for c in recorded if c.method == "negotiate"
                      or (_unwrap(_recorded_fields(c)).get("protocol_version") is not None) == v2]
            if family:
                return family[-1]
            return CetpError(
                "METHOD_NOT_FOUND",
                f"a {'v2' if v2 else 'v1'} {method[:64]} is not in the recording of {authority}",
                details={"replay": "not_recorded", "method": method[:64]},
            )
        what: dict[str, Any] = {"replay": "not_recorded", "method": method[:64]}
        if method == "execute_tool":
            tool = plain.get("tool_name")
            tool_calls = [c for c in recorded if c.tool == tool]
            what["tool"] = str(tool)[:128]
            if not tool_calls:
                msg = (f"a call of tool {str(tool)[:64]!r} is not in the recording of "
                       f"{authority}")
            else:
                shown = sorted({str(_typed_str(_recorded_fields(c).get("args")))[:200]
                                for c in tool_calls})[:5]
                what["recorded_args"] = shown
                msg = (f"{str(tool)[:64]} with these arguments is not in the recording of "
                       f"{authority} (recorded: {'; '.join(shown)})")
        elif method in OPERATION_METHODS:
            op = plain.get("operation_id")
            what["operation_id"] = str(op)[:128]
            msg = f"{method} of operation {str(op)[:64]!r} is not in the recording of {authority}"
        else:
            msg = f"this {method[:64]} request is not in the recording of {authority}"
        return CetpError("UNAVAILABLE", msg, retryable=False, details=what)

    def reply(self, method: str, extras: Bundle | None, ctx: CallContext | None = None
              ) -> Bundle | None:
        fields = _incoming_fields(extras)
        rid = extras.get("request_id") if extras is not None else None
        chosen = self.choose(method, fields)
        v2 = method == "negotiate" or _unwrap(fields).get("protocol_version") is not None
        if isinstance(chosen, CetpError):
            if v2:
                return v2_error(chosen, rid if isinstance(rid, str) else None)
            return v1_error(chosen.code, chosen.message)
        if chosen.response is None:
            return None  # recorded as a null reply (a malformed provider): played back as one
        if ctx is not None:
            replay_lines(ctx.app, chosen.logs)  # the recorded log beside the answer (issue 16)
        reply = from_jsonable(chosen.response)
        if not isinstance(reply, Bundle):
            return None
        if isinstance(rid, str) and "request_id" in reply:
            reply["request_id"] = rid
        if method == "negotiate":
            self._refresh_expiry(reply)
        if ctx is not None:
            tool = _unwrap(fields).get("tool_name")
            _fresh_pending_intents(reply, ctx, self.recorded.authority, tool)
            fresh_file_handles(reply, ctx, getattr(ctx.app, "file_bytes", {}))  # issue 16
        return reply

    def _refresh_expiry(self, reply: Bundle) -> None:
        data = reply.get("data")
        if not isinstance(data, str):
            return
        try:
            doc = json.loads(data)
        except ValueError:
            return
        if not isinstance(doc, dict) or not isinstance(doc.get("expires_at"), str):
            return
        lifetime = self.lifetime_ms or DEFAULT_SESSION_LIFETIME_MS
        expires = datetime.now(UTC).timestamp() + lifetime / 1000.0
        doc["expires_at"] = (
            datetime.fromtimestamp(expires, UTC).isoformat(timespec="seconds").replace(
                "+00:00", "Z")
        )
        reply["data"] = dumps(doc)


def _fresh_pending_intents(reply: Bundle, ctx: CallContext, authority: str,
                           tool: Any) -> None:
    """A recorded PendingIntent's id belonged to the recording's relay connection: replace
    it by a live one whose screen says it is a replay. Approving gives RESULT_OK and the
    consumer resumes (answered by the recorded resumed call); denying, RESULT_CANCELED."""
    for key, value in list(reply.items()):
        if isinstance(value, Bundle):
            _fresh_pending_intents(value, ctx, authority, tool)
        elif isinstance(value, PendingIntentHandle):
            reply[key] = ctx.pending_intent(_replayed_activity(ctx, value, authority, tool))


def _replayed_activity(ctx: CallContext, recorded: PendingIntentHandle, authority: str,
                       tool: Any) -> PendingActivity:
    async def on_result(approved: bool) -> tuple[int, Bundle | None]:
        return (RESULT_OK if approved else RESULT_CANCELED), None

    screen = ConfirmationScreen(
        title="Replayed confirmation",
        target=authority,
        action=str(tool or "resolution")[:128],
        parameters={"recorded_creator": recorded.creator_package[:200]},
        consequences="This is a recording: nothing happens on any device. Approve to get "
        "the recorded answer of the resumed call, deny to cancel.",
    )
    return PendingActivity(
        package=ctx.app.package,
        component=f"{ctx.app.package}/.ReplayedResolutionActivity",
        screen=screen,
        on_result=on_result,
        immutable=recorded.immutable is not False,
    )


# ---------------------------------------------------------------------------------------
# AndyClaw extensions


def extension_key(bridge: str, function: str, params: Any) -> str:
    """Bridge + function + params as canonical JSON (key order does not matter)."""
    return json.dumps([bridge, function, params_value(params)], sort_keys=True, default=str)


class _PlayedExtension:
    """One recorded extension with a cursor per distinct call (like `_PlayedProvider`)."""

    def __init__(self, recorded: RecordedExtension) -> None:
        self.recorded = recorded
        self._cursor: dict[str, int] = {}
        self.by_key: dict[str, list[RecordedExtensionCall]] = {}
        for c in recorded.calls:
            self.by_key.setdefault(extension_key(c.bridge, c.function, c.params), []).append(c)

    def choose(self, bridge: ac.Bridge, function: Any, params: Any
               ) -> RecordedExtensionCall | str:
        """The recorded call, or the message saying it is not in the recording."""
        fn = function if isinstance(function, str) else ""
        key = extension_key(bridge.value, fn, params)
        same = self.by_key.get(key)
        if same:
            i = self._cursor.get(key, 0)
            self._cursor[key] = i + 1
            return same[min(i, len(same) - 1)]
        pkg = self.recorded.package
        recorded = [c for c in self.recorded.calls if c.bridge == bridge.value and c.function == fn]
        if not recorded:
            return (f"a call of {fn[:64]!r} through the {bridge.value} bridge is not in the "
                    f"recording of {pkg}")
        shown = sorted({json.dumps(c.params, sort_keys=True, default=str)[:200]
                        for c in recorded})[:5]
        return (f"{fn[:64]} with these params is not in the recording of {pkg} "
                f"(recorded params: {'; '.join(shown)})")


def _extension_meta(ext: RecordedExtension) -> dict[str, MetaValue]:
    meta: dict[str, MetaValue] = {EXT_META: True, EXT_META_NAME: ext.package}
    if ext.extension_id and ext.extension_id != ac.default_extension_id(ext.package):
        meta[EXT_META_ID] = ext.extension_id
    if ext.manifest_functions is not None or ext.manifest_resource_id is not None:
        meta[EXT_META_MANIFEST] = ext.manifest_resource_id or DEFAULT_MANIFEST_RESOURCE_ID
    return meta


def _with_extension(m: PackageManifest, ext: RecordedExtension) -> tuple[PackageManifest, bool]:
    """`m` plus whatever the recorded extension needs that `m` does not declare (meta-data,
    bridge components); True when something had to be added (synthesized)."""
    bridges = {c.bridge for c in ext.calls}
    if ext.service_manifest is not None:
        bridges.add(ac.Bridge.SERVICE.value)
    update: dict[str, Any] = {}
    meta = {k: v for k, v in _extension_meta(ext).items() if k not in m.app_meta_data}
    if EXT_META in meta or EXT_META_MANIFEST in meta:
        update["app_meta_data"] = {**m.app_meta_data, **meta}
    if ac.Bridge.SERVICE.value in bridges and not any(
            EXT_SERVICE_ACTION in s.actions for s in m.services):
        update["services"] = (
            *m.services,
            ServiceDecl(name=".ReplayedExtensionService", actions=(EXT_SERVICE_ACTION,)))
    authority = ac.host_authority(ext.package)
    if ac.Bridge.PROVIDER.value in bridges and authority not in _authorities(m):
        update["providers"] = (
            *m.providers, ProviderDecl(name=".ReplayedExtensionProvider", authority=authority))
    if ac.Bridge.BROADCAST.value in bridges and not any(
            EXT_BROADCAST_ACTION in r.actions for r in m.receivers):
        update["receivers"] = (
            *m.receivers,
            ComponentDecl(name=".ReplayedExtensionReceiver", actions=(EXT_BROADCAST_ACTION,)))
    if ac.Bridge.ACTIVITY.value in bridges and not any(
            EXT_ACTIVITY_ACTION in a.actions for a in m.activities):
        update["activities"] = (
            *m.activities,
            ComponentDecl(name=".ReplayedExtensionActivity", actions=(EXT_ACTIVITY_ACTION,)))
    if not update:
        return m, False
    update["app_meta_data"] = {**update.get("app_meta_data", m.app_meta_data),
                               SYNTHESIZED_META: True}
    return m.model_copy(update=update), True


def _not_recorded_reply(message: str) -> str:
    return dumps({"error": message})


# ---------------------------------------------------------------------------------------
# Declarations


def _plain_record(record: Any) -> Any:
    """A package record given as typed JSON (a relay reply) or as plain JSON."""
    if isinstance(record, Mapping) and record.get("t") == "Bundle":
        try:
            return from_jsonable(record)
        except (TypeError, ValueError, KeyError):
            return None
    return record


def _meta(values: Mapping[str, Any]) -> dict[str, MetaValue]:
    return {k: v for k, v in values.items() if isinstance(v, bool | int | str | float)}


def _from_package_record(record: Mapping[str, Any], uid: int) -> PackageManifest:
    """A §4.1 package record (as the relay reported it) → the manifest that reproduces it
    (the recorded uid included: `discover` shows what the phone reported)."""
    from inspector.protocol.discovery import package_info

    info = package_info(record)
    return PackageManifest(
        package=info.package,
        label=info.label or info.package,
        uid=info.uid if info.uid is not None else uid,
        version_code=info.version_code or 1,
        version_name=info.version_name,
        cert_sha256=tuple(info.cert_sha256),
        shared_user_id=info.shared_user_id,
        launch_activity=info.launch_activity,
        app_meta_data=_meta(info.app_meta_data),
        services=tuple(
            ServiceDecl(name=s.name, exported=s.exported, enabled=s.enabled,
                        permission=s.permission, actions=tuple(s.actions),
                        meta_data=_meta(s.meta_data))
            for s in info.services
        ),
        providers=tuple(
            ProviderDecl(name=p.name, authority=";".join(p.authorities), exported=p.exported,
                         enabled=p.enabled, permission=p.permission,
                         read_permission=p.read_permission, write_permission=p.write_permission,
                         init_order=p.init_order or 0)
            for p in info.providers
        ),
        receivers=tuple(
            ComponentDecl(name=c.name, exported=c.exported, enabled=c.enabled,
                          permission=c.permission, actions=tuple(c.actions))
            for c in info.receivers
        ),
        activities=tuple(
            ComponentDecl(name=c.name, exported=c.exported, enabled=c.enabled,
                          permission=c.permission, actions=tuple(c.actions))
            for c in info.activities
        ),
        permissions=tuple(
            PermissionDecl(name=n, protection_level=lvl)
            for n, lvl in info.permissions.items() if lvl >= 0
        ),
    )


def _from_cetp_declaration(decls: list[Mapping[str, Any]], package: str, uid: int
                           ) -> PackageManifest:
    """The CLI journals parsed CETP declarations (`CetpDeclaration` dumps), not raw records:
    rebuild the service meta-data and provider they were parsed from."""
    first = decls[0]
    services: list[ServiceDecl] = []
    providers: dict[str, ProviderDecl] = {}
    for d in decls:
        meta: dict[str, MetaValue] = {}
        if d.get("authority") is not None:
            meta[META_AUTHORITY] = str(d["authority"])
        raws = ((META_VERSION, d.get("version_raw")), (META_VERSIONS, d.get("versions_raw")))
        for key, raw in raws:
            if isinstance(raw, bool | int | str | float):
                meta[key] = raw
        services.append(ServiceDecl(
            name=str(d.get("service") or ".cetp.ToolProviderService"),
            exported=bool(d.get("exported", True)), enabled=bool(d.get("enabled", True)),
            permission=d.get("permission"), actions=(TOOL_PROVIDER_ACTION,), meta_data=meta,
        ))
        p = d.get("provider")
        if isinstance(p, Mapping) and p.get("authorities"):
            authority = ";".join(str(a) for a in p["authorities"])
            providers[authority] = ProviderDecl(
                name=str(p.get("name") or ".cetp.ToolContentProvider"), authority=authority,
                exported=bool(p.get("exported", True)), enabled=bool(p.get("enabled", True)),
                permission=p.get("permission"), read_permission=p.get("read_permission"),
                write_permission=p.get("write_permission"),
                init_order=int(p.get("init_order") or 0),
            )
    vc = first.get("version_code")
    recorded_uid = first.get("uid")
    return PackageManifest(
        package=package,
        label=str(first.get("label") or package),
        uid=recorded_uid if isinstance(recorded_uid, int) else uid,
        version_code=int(vc) if isinstance(vc, int) else 1,
        cert_sha256=tuple(str(c) for c in first.get("cert_sha256") or ()),
        shared_user_id=first.get("shared_user_id"),
        services=tuple(services),
        providers=tuple(providers.values()),
        permissions=(ACCESS_TOOLS_DECL,),
    )


def _recorded_versions(provider: RecordedProvider) -> str | None:
    """The `versions` meta-data a synthesized manifest declares, from what was called."""
    def is_v2(c: RecordedCall) -> bool:
        return _unwrap(_recorded_fields(c)).get("protocol_version") is not None

    v2 = any(c.method == "negotiate" or is_v2(c) for c in provider.calls)
    v1 = any(c.method != "negotiate" and not is_v2(c) for c in provider.calls)
    if v2 and v1:
        return "1,2"
    return "2" if v2 else None


def declarations_for(discovery: Any, package: str) -> Any:
    """The recorded declarations of `package` in a `discovery` record (either form): a
    package record (dict), a list of CETP declaration dicts, or None."""
    if not isinstance(discovery, Mapping):
        items = discovery if isinstance(discovery, list) else []
        discovery = {"packages": items}
    for rec in discovery.get("packages") or []:
        plain = _plain_record(rec)
        if isinstance(plain, Mapping) and plain.get("package") == package:
            return plain
    cetp = [d for d in discovery.get("cetp") or [] if isinstance(d, Mapping)
            and d.get("package") == package]
    return cetp or None


# ---------------------------------------------------------------------------------------
# The app


class ReplayedApp(VirtualApp):
    """Plays back the recorded CETP providers and AndyClaw extension of one package (see the
    module docstring)."""

    #: file-result bytes by sha256 from the bundle (`inspector.virtual.replayed_files`)
    file_bytes: Mapping[str, bytes] = MappingProxyType({})

    def __init__(
        self,
        providers: Iterable[RecordedProvider] = (),
        *,
        declarations: Any = None,
        package: str | None = None,
        session_lifetimes_ms: Mapping[str, int] | None = None,
        extension: RecordedExtension | None = None,
    ) -> None:
        """`declarations`: the package record or CETP declaration dicts recorded for the
        package (None: synthesize). `session_lifetimes_ms`: authority → recorded
        negotiate lifetime (expires_at minus the negotiate time). `extension`: the
        package's recorded AndyClaw extension, if any."""
        provs = list(providers)
        if not provs and extension is None:
            raise ValueError("a replayed app needs at least one recorded provider or extension")
        pkg = package or (provs[0].package or provs[0].authority if provs
                          else extension.package if extension is not None else "")
        super().__init__(package=pkg, label=pkg)
        self.extension = _PlayedExtension(extension) if extension is not None else None
        self.launches: list[tuple[str, Any]] = []  # activity starts played back
        lifetimes = dict(session_lifetimes_ms or {})
        self.recorded = {p.authority: p for p in provs}
        self.played = {
            p.authority: _PlayedProvider(p, lifetimes.get(p.authority)) for p in provs
        }
        self.declarations = declarations if declarations is not None else next(
            (p.package_record for p in provs if p.package_record is not None),
            extension.package_record if extension is not None else None)
        self.synthesized = False

    def build_manifest(self) -> PackageManifest:
        m = self._cetp_manifest()
        if self.extension is not None:
            m, added = _with_extension(m, self.extension.recorded)
            self.synthesized = self.synthesized or added
        return m

    def _cetp_manifest(self) -> PackageManifest:
        m: PackageManifest | None = None
        decl = _plain_record(self.declarations)
        try:
            if isinstance(decl, Mapping) and (decl.get("services") or decl.get("providers")):
                m = _from_package_record(decl, self.uid)
            elif isinstance(decl, list) and decl:
                m = _from_cetp_declaration(decl, self.package, self.uid)
        except (ValueError, TypeError) as exc:
            log.info("recorded declarations of %s unusable (%s); synthesizing", self.package, exc)
            m = None
        if m is None:
            return self._synthesized()
        missing = [a for a in self.recorded if a not in _authorities(m)]
        if missing:  # the calls need a provider to route to, whatever was recorded
            m = m.model_copy(update={
                "providers": m.providers + tuple(cetp_provider(a) for a in missing)})
        return m

    def _synthesized(self) -> PackageManifest:
        self.synthesized = True
        services = tuple(
            cetp_service(a, _recorded_versions(p), name=f".cetp.ToolProviderService{i or ''}")
            for i, (a, p) in enumerate(self.recorded.items())
        )
        providers = tuple(
            cetp_provider(a, name=f".cetp.ToolContentProvider{i or ''}")
            for i, a in enumerate(self.recorded)
        )
        return PackageManifest(
            package=self.package,
            label=f"{self.package} (replayed)",
            uid=self.uid,
            app_meta_data={SYNTHESIZED_META: True},
            services=services,
            providers=providers,
            permissions=(ACCESS_TOOLS_DECL,),
        )

    async def call(
        self, ctx: CallContext, authority: str, method: str, arg: str | None, extras: Bundle | None
    ) -> Bundle | None:
        if self.extension is not None and authority == ac.host_authority(self.package):
            return self._provider_bridge(method, extras)
        played = self.played.get(authority)
        if played is None:
            return v2_error(CetpError(
                "METHOD_NOT_FOUND", f"{authority[:120]} is not in the recording",
                details={"replay": "not_recorded"}), None)
        return played.reply(method, extras, ctx)


    # --- AndyClaw bridges ------------------------------------------------------------------
    def raw_resources(self) -> dict[int, tuple[str, bytes]]:
        ext = self.extension.recorded if self.extension is not None else None
        if ext is None or ext.manifest_functions is None:
            return {}
        rid = ext.manifest_resource_id or DEFAULT_MANIFEST_RESOURCE_ID
        data = json.dumps(ext.manifest_functions, indent=2).encode("utf-8")
        return {rid: ("raw/extension_manifest", data)}

    async def transact(
        self, ctx: CallContext, action: str, descriptor: str, code: int, strings: list[str | None]
    ) -> TransactResult:
        if self.extension is None or action != EXT_SERVICE_ACTION:
            raise NotImplementedError
        if descriptor != ac.DESCRIPTOR:
            return TransactResult(exception_class="java.lang.SecurityException",
                                  exception_message="Binder invocation to an incorrect interface")
        ext = self.extension.recorded
        if code == ac.TRANSACTION_GET_MANIFEST:
            if ext.service_manifest is None:
                return TransactResult(reply=_not_recorded_reply(
                    f"GET_MANIFEST is not in the recording of {self.package}"))
            return TransactResult(reply=ext.service_manifest)
        if code != ac.TRANSACTION_EXECUTE:
            return TransactResult()  # super.onTransact → false: an empty reply parcel
        function = strings[0] if strings else None
        params = strings[1] if len(strings) > 1 else None
        chosen = self.extension.choose(ac.Bridge.SERVICE, function, params)
        if isinstance(chosen, str):
            return TransactResult(reply=_not_recorded_reply(chosen))
        decoded = chosen.decoded if isinstance(chosen.decoded, Mapping) else {}
        if decoded.get("outcome") == "exception":
            return TransactResult(exception_class=str(decoded.get("exception_class") or ""),
                                  exception_message=decoded.get("exception_message"))
        reply = chosen.response
        return TransactResult(reply=reply if isinstance(reply, str) else None)

    def _recorded_bundle(self, chosen: RecordedExtensionCall | str) -> Bundle | None:
        if isinstance(chosen, str):
            return Bundle({ac.REPLY_ERROR: chosen})
        reply = from_jsonable(chosen.response) if chosen.response is not None else None
        return reply if isinstance(reply, Bundle) else None

    def _provider_bridge(self, method: str, extras: Bundle | None) -> Bundle | None:
        assert self.extension is not None
        if method != ac.PROVIDER_METHOD_EXECUTE:
            return Bundle({ac.REPLY_ERROR: f"method {method[:64]!r} is not in the recording of "
                           f"{self.package}"})
        extras = extras or Bundle()
        chosen = self.extension.choose(ac.Bridge.PROVIDER, extras.get(ac.EXTRA_FUNCTION),
                                       extras.get(ac.EXTRA_PARAMS))
        return self._recorded_bundle(chosen)

    async def on_broadcast(
        self, ctx: CallContext, action: str, extras: Bundle
    ) -> tuple[str, Bundle] | None:
        response_action = extras.get(ac.EXTRA_RESPONSE_ACTION)
        if self.extension is None or action != EXT_BROADCAST_ACTION:
            return None
        if not isinstance(response_action, str):
            return None  # as the guide's receiver: nowhere to answer
        chosen = self.extension.choose(ac.Bridge.BROADCAST, extras.get(ac.EXTRA_FUNCTION),
                                       extras.get(ac.EXTRA_PARAMS))
        reply = self._recorded_bundle(chosen)
        return None if reply is None else (response_action, reply)

    async def on_activity_start(self, ctx: CallContext, action: str, extras: Bundle) -> None:
        if self.extension is None or action != EXT_ACTIVITY_ACTION:
            return
        function, params = extras.get(ac.EXTRA_FUNCTION), extras.get(ac.EXTRA_PARAMS)
        chosen = self.extension.choose(ac.Bridge.ACTIVITY, function, params)
        if isinstance(chosen, str):
            raise RelayError(NOT_FOUND, f"{chosen}; the replayed activity was not launched")
        decoded = chosen.decoded if isinstance(chosen.decoded, Mapping) else {}
        if decoded.get("launched") is False:
            raise RelayError(NOT_FOUND, f"{chosen.function[:64]} was recorded as not launched "
                             f"on {self.package}; the replayed activity was not launched")
        self.launches.append((chosen.function, chosen.params))


def _authorities(m: PackageManifest) -> set[str]:
    out: set[str] = set()
    for p in m.providers:
        out.update(a for a in p.authority.split(";") if a)
    return out


# ---------------------------------------------------------------------------------------
# Loading a bundle or a journal


def _lifetimes(session: JournalContents) -> dict[str, int]:
    """authority → recorded session lifetime (expires_at − negotiate time), in ms."""
    from inspector.consumer.negotiation import parse_expires_at

    out: dict[str, int] = {}
    for ex in session.exchanges:
        if ex.kind != ExchangeKind.CETP or ex.method != "negotiate":
            continue
        if ex.status != ExchangeStatus.SUCCESS or not isinstance(ex.decoded, dict):
            continue
        exp = ex.decoded.get("expires_at")
        ms = parse_expires_at(exp) if isinstance(exp, str) else None
        if ms is not None and ms > ex.started_ms:
            out[ex.target] = int(ms - ex.started_ms)
    return out


def replayed_apps(session: JournalContents, declarations: Any = None) -> list[ReplayedApp]:
    """One `ReplayedApp` per package with recorded CETP or AndyClaw extension calls."""
    discovery = declarations if declarations is not None else session.latest("discovery")
    lifetimes = _lifetimes(session)
    by_package: dict[str, list[RecordedProvider]] = {}
    for p in recorded_providers(session):
        by_package.setdefault(p.package or p.authority, []).append(p)
    extensions = {e.package: e for e in recorded_extensions(session)}
    for pkg in extensions:
        by_package.setdefault(pkg, [])
    return [
        ReplayedApp(provs, package=pkg, declarations=declarations_for(discovery, pkg),
                    session_lifetimes_ms=lifetimes, extension=extensions.get(pkg))
        for pkg, provs in by_package.items()
    ]


def load_session(path: Path | str) -> tuple[JournalContents, Any]:
    """A bundle (`.cetpbundle`) or a session journal → (session, recorded declarations)."""
    from inspector.session.bundle_file import BundleError, open_bundle
    from inspector.session.journal import JournalError, read_journal

    p = Path(path)
    if not p.is_file():
        raise ReplayLoadError(f"{p} does not exist (give a .cetpbundle file or a journal)")
    try:
        with p.open("rb") as f:
            is_zip = f.read(4) == b"PK\x03\x04"
    except OSError as exc:
        raise ReplayLoadError(f"cannot read {p}: {exc}") from exc
    try:
        if is_zip:
            report = open_bundle(p)
            return report.session, report.declarations
        session = read_journal(p)
        return session, session.latest("discovery")
    except (BundleError, JournalError) as exc:
        raise ReplayLoadError(str(exc)) from exc


def install_bundle(device: VirtualDevice, path_or_bugreport: Any, *, notify: bool = True
                   ) -> list[str]:
    """Install the recorded providers of a bundle file, a journal file, an opened
    `BugReport` or a `JournalContents` into `device`; returns the packages installed.

    An installed package of the same name (e.g. the reference app the session was recorded
    on) is replaced, as a reinstall would."""
    from inspector.session.bundle_file import BugReport

    files: Mapping[str, bytes] = {}  # file-result bytes a bundle carries (issue 16)
    if isinstance(path_or_bugreport, BugReport):
        session, decl = path_or_bugreport.session, path_or_bugreport.declarations
        files = path_or_bugreport.files
    elif isinstance(path_or_bugreport, JournalContents):
        session, decl = path_or_bugreport, path_or_bugreport.latest("discovery")
    else:
        session, decl, files = load_with_files(path_or_bugreport)
    apps = replayed_apps(session, decl)
    if not apps:
        raise ReplayLoadError(
            "the recording holds no CETP provider or AndyClaw extension call to replay "
            "(record a session that talks to a provider, e.g. with --record NAME)")
    for app in apps:
        # a recorded app was in use on the recorded phone: not in the stopped state
        app.file_bytes = files
        device.install(app, notify=notify, stopped=False)
    return [a.package for a in apps]
