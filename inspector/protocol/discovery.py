"""From the relay's package records to CETP declarations and AndyClaw extensions.

The relay reports what the package manager says (docs/relay-protocol.md §4.1) and does no
protocol interpretation; this module does it, the way the real consumers do:

- CETP (§2.1): every service with action `com.clawseed.action.TOOL_PROVIDER`; its
  meta-data `authority`, legacy `version` (Android stores `android:value="1"` as an int)
  and `versions` ("1,2", or an int when a single number) — `versions` is authoritative,
  `version` alone is the sole version, neither means v1 (the v1 consumer's getInt default).
- AndyClaw: application meta-data `EXTENSION` (must be boolean true), `EXTENSION_ID`
  (default `apk:<package>`), `EXTENSION_NAME` (default label, then package),
  `EXTENSION_MANIFEST` (a resource id), and the bridge components by action / authority,
  the chosen one by priority service > provider > broadcast > activity.

`discover(records)` never raises for a malformed record: it reports per-package problems.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

from inspector.protocol import andyclaw as ac
from inspector.protocol.bundle import Bundle, BundleArray, to_jsonable, type_name
from inspector.protocol.cetp import (
    ACTION_TOOL_PROVIDER,
    META_AUTHORITY,
    META_VERSION,
    META_VERSIONS,
    parse_versions,
)

Stack = Literal["v1_only", "v2_only", "dual_stack", "other"]


def _plain(value: Any) -> Any:
    """A typed Bundle value as plain JSON-able Python (ints stay ints, Bundles dicts)."""
    if isinstance(value, Bundle):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, str | bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    try:
        return to_jsonable(value)
    except TypeError:
        return repr(value)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _bool(value: Any, default: bool = False) -> bool:
    return value if isinstance(value, bool) else default


def _strs(value: Any) -> list[str]:
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, str)]
    return []


def _bundles(value: Any) -> list[Mapping[str, Any]]:
    if isinstance(value, BundleArray | list | tuple):
        return [v for v in value if isinstance(v, Mapping)]
    return []


class Component(BaseModel):
    """A manifest component as the package manager reports it."""

    kind: Literal["service", "provider", "receiver", "activity"]
    name: str
    exported: bool = False
    enabled: bool = True
    permission: str | None = None
    actions: list[str] = Field(default_factory=list)
    meta_data: dict[str, Any] = Field(default_factory=dict)
    meta_types: dict[str, str] = Field(default_factory=dict)  # Java type per meta-data key
    authorities: list[str] = Field(default_factory=list)  # providers: "a;b" split
    read_permission: str | None = None
    write_permission: str | None = None
    init_order: int | None = None

    @property
    def authority(self) -> str | None:
        return self.authorities[0] if self.authorities else None


def _component(kind: Any, rec: Mapping[str, Any]) -> Component:
    meta = rec.get("meta_data")
    meta_plain: dict[str, Any] = {}
    meta_types: dict[str, str] = {}
    if isinstance(meta, Mapping):
        for k, v in meta.items():
            if isinstance(k, str):
                meta_plain[k] = _plain(v)
                meta_types[k] = type_name(v)
    auth = _str(rec.get("authority")) or ""
    io = rec.get("init_order")
    return Component(
        kind=kind,
        name=_str(rec.get("name")) or "",
        exported=_bool(rec.get("exported")),
        enabled=_bool(rec.get("enabled"), True),
        permission=_str(rec.get("permission")),
        actions=_strs(rec.get("actions")),
        meta_data=meta_plain,
        meta_types=meta_types,
        authorities=[a.strip() for a in auth.split(";") if a.strip()],
        read_permission=_str(rec.get("read_permission")),
        write_permission=_str(rec.get("write_permission")),
        init_order=int(io) if isinstance(io, int) and not isinstance(io, bool) else None,
    )


class PackageInfo(BaseModel):
    """The package-level facts shared by both kinds of declaration."""

    package: str
    label: str = ""
    uid: int | None = None
    version_code: int | None = None
    version_name: str | None = None
    cert_sha256: list[str] = Field(default_factory=list)
    shared_user_id: str | None = None
    launch_activity: str | None = None
    app_meta_data: dict[str, Any] = Field(default_factory=dict)
    app_meta_types: dict[str, str] = Field(default_factory=dict)
    services: list[Component] = Field(default_factory=list)
    providers: list[Component] = Field(default_factory=list)
    receivers: list[Component] = Field(default_factory=list)
    activities: list[Component] = Field(default_factory=list)
    permissions: dict[str, int] = Field(default_factory=dict)  # declared: name → level

    def provider_for(self, authority: str) -> Component | None:
        return next((p for p in self.providers if authority in p.authorities), None)


def package_info(rec: Mapping[str, Any]) -> PackageInfo:
    """One relay package record → PackageInfo (raises ValueError if it has no package)."""
    pkg = _str(rec.get("package"))
    if not pkg:
        raise ValueError("record has no 'package' String")
    meta = rec.get("app_meta_data")
    meta_plain: dict[str, Any] = {}
    meta_types: dict[str, str] = {}
    if isinstance(meta, Mapping):
        for k, v in meta.items():
            if isinstance(k, str):
                meta_plain[k] = _plain(v)
                meta_types[k] = type_name(v)
    uid = rec.get("uid")
    vc = rec.get("version_code")
    perms: dict[str, int] = {}
    for p in _bundles(rec.get("permissions")):
        name = _str(p.get("name"))
        lvl = p.get("protection_level")
        if name:
            perms[name] = int(lvl) if isinstance(lvl, int) and not isinstance(lvl, bool) else -1
    return PackageInfo(
        package=pkg,
        label=_str(rec.get("label")) or "",
        uid=int(uid) if isinstance(uid, int) and not isinstance(uid, bool) else None,
        version_code=int(vc) if isinstance(vc, int) and not isinstance(vc, bool) else None,
        version_name=_str(rec.get("version_name")),
        cert_sha256=_strs(rec.get("cert_sha256")),
        shared_user_id=_str(rec.get("shared_user_id")),
        launch_activity=_str(rec.get("launch_activity")),
        app_meta_data=meta_plain,
        app_meta_types=meta_types,
        services=[_component("service", r) for r in _bundles(rec.get("services"))],
        providers=[_component("provider", r) for r in _bundles(rec.get("providers"))],
        receivers=[_component("receiver", r) for r in _bundles(rec.get("receivers"))],
        activities=[_component("activity", r) for r in _bundles(rec.get("activities"))],
        permissions=perms,
    )


# --------------------------------------------------------------------------------------
# CETP
# --------------------------------------------------------------------------------------


class CetpDeclaration(BaseModel):
    """One CETP provider service as declared in a manifest (§2.1)."""

    package: str
    label: str = ""
    uid: int | None = None
    version_code: int | None = None
    cert_sha256: list[str] = Field(default_factory=list)
    shared_user_id: str | None = None
    service: str  # component class name
    exported: bool = False
    enabled: bool = True
    permission: str | None = None
    authority: str | None = None
    version_raw: Any = None  # meta-data value as given (None = absent)
    versions_raw: Any = None
    version: int | None = None  # legacy field parsed (None = absent or unparsable)
    declared_versions: tuple[int, ...] | None = None  # `versions` parsed (None = absent/bad)
    versions: tuple[int, ...] = (1,)  # effective set, highest first
    stack: Stack = "v1_only"
    provider: Component | None = None  # the ContentProvider of `authority` in this package
    authority_owner: str | None = None  # package that owns `authority` among discovered ones
    problems: list[str] = Field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.package}/{self.service}"

    @property
    def supports_v1(self) -> bool:
        return 1 in self.versions

    @property
    def supports_v2(self) -> bool:
        return 2 in self.versions

    @property
    def same_package(self) -> bool | None:
        """Service and authority's provider in one package (§2.1); None if unknown."""
        if self.provider is not None:
            return True
        if self.authority_owner is not None:
            return self.authority_owner == self.package
        return None

    @property
    def legacy_visible(self) -> bool:
        """Whether a v1 consumer would use it (legacy version absent or 1)."""
        return self.version_raw is None or self.version == 1


def _legacy_version(raw: Any) -> int | None:
    if isinstance(raw, bool) or raw is None:
        return None
    if isinstance(raw, int):
        return int(raw)
    if isinstance(raw, str) and raw.strip().isdigit():
        return int(raw.strip())
    if isinstance(raw, float) and raw.is_integer():
        return int(raw)
    return None


def _stack(versions: tuple[int, ...]) -> Stack:
    s = set(versions)
    if {1, 2} <= s:
        return "dual_stack"
    if s == {1}:
        return "v1_only"
    if s == {2}:
        return "v2_only"
    return "other"


def cetp_declarations(info: PackageInfo) -> list[CetpDeclaration]:
    out: list[CetpDeclaration] = []
    for svc in info.services:
        if ACTION_TOOL_PROVIDER not in svc.actions:
            continue
        problems: list[str] = []
        authority = svc.meta_data.get(META_AUTHORITY)
        if authority is None:
            problems.append(f"meta-data {META_AUTHORITY} is missing")
        elif not isinstance(authority, str) or not authority:
            problems.append(f"meta-data {META_AUTHORITY} is not a non-empty String "
                            f"({svc.meta_types.get(META_AUTHORITY)})")
            authority = None
        version_raw = svc.meta_data.get(META_VERSION)
        versions_raw = svc.meta_data.get(META_VERSIONS)
        version = _legacy_version(version_raw)
        if version_raw is not None and version is None:
            problems.append(f"meta-data {META_VERSION} = {version_raw!r} is not an integer")
        declared = None
        if versions_raw is not None:
            declared = parse_versions(versions_raw)
            if declared is None:
                problems.append(f"meta-data {META_VERSIONS} = {versions_raw!r} is not a "
                                "comma-separated list of versions")
        if declared is not None:
            versions = declared
        elif version is not None:
            versions = (version,)
        else:
            versions = (1,)
        if not svc.exported:
            problems.append("the service is not exported: other apps cannot discover it")
        if not svc.enabled:
            problems.append("the service is disabled")
        provider = info.provider_for(authority) if authority else None
        if provider is not None and not provider.exported:
            problems.append(f"the provider of {authority} is not exported")
        out.append(CetpDeclaration(
            package=info.package, label=info.label, uid=info.uid,
            version_code=info.version_code, cert_sha256=info.cert_sha256,
            shared_user_id=info.shared_user_id,
            service=svc.name, exported=svc.exported, enabled=svc.enabled,
            permission=svc.permission, authority=authority,
            version_raw=version_raw, versions_raw=versions_raw, version=version,
            declared_versions=declared, versions=versions, stack=_stack(versions),
            provider=provider, authority_owner=info.package if provider else None,
            problems=problems,
        ))
    return out


# --------------------------------------------------------------------------------------
# AndyClaw
# --------------------------------------------------------------------------------------


class BridgeComponent(BaseModel):
    bridge: ac.Bridge
    component: str
    exported: bool = False
    enabled: bool = True
    permission: str | None = None
    authority: str | None = None  # provider bridge: the declared authority


class ExtensionDeclaration(BaseModel):
    """One AndyClaw extension as the host would register it."""

    package: str
    label: str = ""
    uid: int | None = None
    version_code: int | None = None
    cert_sha256: list[str] = Field(default_factory=list)
    shared_user_id: str | None = None
    flag_raw: Any = None  # EXTENSION meta-data value as given
    enabled: bool = False  # the host registers it (EXTENSION is boolean true)
    id: str
    id_declared: bool = False
    name: str
    name_declared: bool = False
    manifest_resource_id: int | None = None
    bridges: list[BridgeComponent] = Field(default_factory=list)
    bridge: ac.Bridge | None = None  # chosen by priority
    host_authority: str  # what the host calls for the provider bridge
    problems: list[str] = Field(default_factory=list)

    def component(self, bridge: ac.Bridge) -> BridgeComponent | None:
        return next((b for b in self.bridges if b.bridge == bridge), None)


def _bridges(info: PackageInfo) -> list[BridgeComponent]:
    found: list[BridgeComponent] = []
    for comps, bridge in ((info.services, ac.Bridge.SERVICE),
                          (info.receivers, ac.Bridge.BROADCAST),
                          (info.activities, ac.Bridge.ACTIVITY)):
        action = bridge.action
        for c in comps:
            if action in c.actions:
                found.append(BridgeComponent(bridge=bridge, component=c.name,
                                             exported=c.exported, enabled=c.enabled,
                                             permission=c.permission))
    for p in info.providers:
        for a in p.authorities:
            if a.endswith(ac.AUTHORITY_SUFFIX):
                found.append(BridgeComponent(bridge=ac.Bridge.PROVIDER, component=p.name,
                                             exported=p.exported, enabled=p.enabled,
                                             permission=p.permission, authority=a))
                break
    found.sort(key=lambda b: b.bridge.priority)
    return found


def extension_declaration(info: PackageInfo) -> ExtensionDeclaration | None:
    """The extension of a package, or None when it is not one (no flag and no bridge)."""
    meta = info.app_meta_data
    types = info.app_meta_types
    bridges = _bridges(info)
    if ac.META_EXTENSION not in meta and not bridges:
        return None
    problems: list[str] = []
    flag = meta.get(ac.META_EXTENSION)
    enabled = flag is True
    if flag is None:
        problems.append(f"application meta-data {ac.META_EXTENSION} is missing: the host "
                        "ignores these bridge components")
    elif flag is not True:
        problems.append(f"application meta-data {ac.META_EXTENSION} is "
                        f"{types.get(ac.META_EXTENSION)} {flag!r}; the host reads getBoolean "
                        "and needs boolean true")
    raw_id = meta.get(ac.META_EXTENSION_ID)
    ext_id = raw_id if isinstance(raw_id, str) and raw_id else None
    if raw_id is not None and not isinstance(raw_id, str):
        # Android stores a numeric value as an int; getString() then returns null
        problems.append(f"{ac.META_EXTENSION_ID} is {types.get(ac.META_EXTENSION_ID)} "
                        f"{raw_id!r}, not a String: the host falls back to the default id")
    elif raw_id is None:
        problems.append(f"{ac.META_EXTENSION_ID} is missing (the guide requires it); "
                        f"the host uses {ac.default_extension_id(info.package)}")
    raw_name = meta.get(ac.META_EXTENSION_NAME)
    name = raw_name if isinstance(raw_name, str) and raw_name else None
    if raw_name is None:
        problems.append(f"{ac.META_EXTENSION_NAME} is missing (the guide requires it)")
    raw_manifest = meta.get(ac.META_EXTENSION_MANIFEST)
    manifest_id: int | None = None
    if isinstance(raw_manifest, int) and not isinstance(raw_manifest, bool) and raw_manifest:
        manifest_id = int(raw_manifest)
    elif raw_manifest is None:
        problems.append(f"{ac.META_EXTENSION_MANIFEST} is missing: the host sees no functions")
    else:
        problems.append(f"{ac.META_EXTENSION_MANIFEST} is {types.get(ac.META_EXTENSION_MANIFEST)}"
                        f" {raw_manifest!r}, not a resource reference (android:resource)")
    if not bridges:
        problems.append("no bridge component (service, provider, receiver or activity)")
    for b in bridges:
        if not b.exported:
            problems.append(f"{b.bridge.value} bridge {b.component} is not exported: "
                            "the host cannot reach it")
        if not b.enabled:
            problems.append(f"{b.bridge.value} bridge {b.component} is disabled")
    # the host picks by priority only; the inspector picks the best bridge that can work
    # (exported and enabled) and says when the host's choice differs
    usable = [b for b in bridges if b.exported and b.enabled]
    chosen = usable[0] if usable else (bridges[0] if bridges else None)
    if bridges and chosen is not None and chosen is not bridges[0]:
        problems.append(f"the host would pick the {bridges[0].bridge.value} bridge (highest "
                        f"priority), which cannot work; the inspector uses the "
                        f"{chosen.bridge.value} bridge instead")
    host_auth = ac.host_authority(info.package)
    prov = next((b for b in bridges if b.bridge == ac.Bridge.PROVIDER), None)
    if prov is not None and prov.authority != host_auth:
        problems.append(f"the provider authority {prov.authority} differs from "
                        f"{host_auth}, which is the authority the host calls")
    return ExtensionDeclaration(
        package=info.package, label=info.label, uid=info.uid,
        version_code=info.version_code, cert_sha256=info.cert_sha256,
        shared_user_id=info.shared_user_id, flag_raw=flag, enabled=enabled,
        id=ext_id or ac.default_extension_id(info.package), id_declared=ext_id is not None,
        name=name or info.label or info.package, name_declared=name is not None,
        manifest_resource_id=manifest_id, bridges=bridges,
        bridge=chosen.bridge if chosen else None,
        host_authority=host_auth, problems=problems,
    )


# --------------------------------------------------------------------------------------
# Everything
# --------------------------------------------------------------------------------------


class Discovery(BaseModel):
    packages: list[PackageInfo] = Field(default_factory=list)
    cetp: list[CetpDeclaration] = Field(default_factory=list)
    extensions: list[ExtensionDeclaration] = Field(default_factory=list)
    problems: dict[str, list[str]] = Field(default_factory=dict)  # package → problems

    def package(self, name: str) -> PackageInfo | None:
        return next((p for p in self.packages if p.package == name), None)

    def authority_owner(self, authority: str) -> str | None:
        for p in self.packages:
            if p.provider_for(authority) is not None:
                return p.package
        return None

    def find_cetp(self, name: str) -> list[CetpDeclaration]:
        """Declarations matching a package name or authority."""
        return [d for d in self.cetp if name in (d.package, d.authority, d.key)]

    def find_extension(self, name: str) -> list[ExtensionDeclaration]:
        return [e for e in self.extensions if name in (e.id, e.package)]


def discover(records: Iterable[Mapping[str, Any]]) -> Discovery:
    """Derive CETP declarations and AndyClaw extensions from relay package records."""
    d = Discovery()
    try:
        recs = list(records)
    except TypeError:
        d.problems[""] = ["the package records are not a list"]
        return d
    for i, rec in enumerate(recs):
        if not isinstance(rec, Mapping):
            d.problems.setdefault("", []).append(f"record {i} is {type_name(rec)}, not a Bundle")
            continue
        try:
            info = package_info(rec)
        except (ValueError, TypeError) as exc:
            d.problems.setdefault("", []).append(f"record {i}: {exc}")
            continue
        if d.package(info.package) is not None:
            d.problems.setdefault(info.package, []).append("listed twice; the first is used")
            continue
        d.packages.append(info)
    for info in d.packages:
        try:
            decls = cetp_declarations(info)
            ext = extension_declaration(info)
        except (ValueError, TypeError, AttributeError) as exc:  # pragma: no cover - defensive
            d.problems.setdefault(info.package, []).append(f"cannot interpret: {exc}")
            continue
        for decl in decls:
            if decl.authority and decl.provider is None:
                owner = d.authority_owner(decl.authority)
                decl.authority_owner = owner
                if owner is None:
                    decl.problems.append(f"no installed package declares the provider "
                                         f"{decl.authority}")
                else:
                    decl.problems.append(f"the authority {decl.authority} belongs to {owner}, "
                                         f"not to {decl.package} (§2.1)")
            d.cetp.append(decl)
        if ext is not None:
            d.extensions.append(ext)
        probs = [p for decl in decls for p in decl.problems]
        if ext is not None:
            probs += ext.problems
        if probs:
            d.problems.setdefault(info.package, []).extend(probs)
    return d
