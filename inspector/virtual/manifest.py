"""Manifest declarations of a virtual app, and their package record (relay protocol §4.1).

The virtual device answers `discover` from these models exactly as the phone relay answers
it from PackageManager, so the desktop's discovery code cannot tell the two apart.
"""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from inspector.protocol.bundle import Bundle, BundleArray, Int, Long, StringArray

TOOL_PROVIDER_ACTION = "com.clawseed.action.TOOL_PROVIDER"
ACCESS_TOOLS_PERMISSION = "com.clawseed.permission.ACCESS_TOOLS"
META_AUTHORITY = "com.clawseed.tools.authority"
META_VERSION = "com.clawseed.tools.version"
META_VERSIONS = "com.clawseed.tools.versions"
EXT_META = "org.ethereumphone.andyclaw.EXTENSION"
EXT_META_ID = "org.ethereumphone.andyclaw.EXTENSION_ID"
EXT_META_NAME = "org.ethereumphone.andyclaw.EXTENSION_NAME"
EXT_META_MANIFEST = "org.ethereumphone.andyclaw.EXTENSION_MANIFEST"
EXT_SERVICE_ACTION = "org.ethereumphone.andyclaw.EXTENSION_SERVICE"
EXT_BROADCAST_ACTION = "org.ethereumphone.andyclaw.EXTENSION_BROADCAST"
EXT_ACTIVITY_ACTION = "org.ethereumphone.andyclaw.EXTENSION_ACTION"
PROTECTION_NORMAL = 0

MetaValue = bool | int | str | float


class ServiceDecl(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    exported: bool = True
    enabled: bool = True
    permission: str | None = None
    actions: tuple[str, ...] = ()
    meta_data: dict[str, MetaValue] = Field(default_factory=dict)


class ProviderDecl(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    authority: str
    exported: bool = True
    enabled: bool = True
    permission: str | None = None
    read_permission: str | None = None
    write_permission: str | None = None
    init_order: int = 0


class ComponentDecl(BaseModel):
    """A receiver or an activity."""

    model_config = ConfigDict(frozen=True)

    name: str
    exported: bool = True
    enabled: bool = True
    permission: str | None = None
    actions: tuple[str, ...] = ()


class PermissionDecl(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    protection_level: int = PROTECTION_NORMAL


class PackageManifest(BaseModel):
    """What PackageManager knows about one installed package."""

    model_config = ConfigDict(frozen=True)

    package: str
    label: str
    uid: int
    version_code: int = 1
    version_name: str | None = "1.0"
    cert_sha256: tuple[str, ...] = ()
    shared_user_id: str | None = None
    launch_activity: str | None = None
    app_meta_data: dict[str, MetaValue] = Field(default_factory=dict)
    services: tuple[ServiceDecl, ...] = ()
    providers: tuple[ProviderDecl, ...] = ()
    receivers: tuple[ComponentDecl, ...] = ()
    activities: tuple[ComponentDecl, ...] = ()
    permissions: tuple[PermissionDecl, ...] = ()

    def qualify(self, name: str) -> str:
        """PackageManager reports fully qualified class names (".Foo" → "pkg.Foo")."""
        return self.package + name if name.startswith(".") else name

    def authorities(self) -> set[str]:
        return {p.authority for p in self.providers if p.enabled}

    def to_record(self) -> Bundle:
        """The §4.1 package record."""
        certs = self.cert_sha256 or (fake_cert_sha256(self.package),)
        return Bundle(
            package=self.package,
            label=self.label,
            uid=Int(self.uid),
            version_code=Long(self.version_code),
            version_name=self.version_name,
            cert_sha256=StringArray(certs),
            shared_user_id=self.shared_user_id,
            launch_activity=self.qualify(self.launch_activity) if self.launch_activity else None,
            app_meta_data=_meta(self.app_meta_data),
            services=BundleArray(
                _opt(
                    name=self.qualify(s.name),
                    exported=s.exported,
                    enabled=s.enabled,
                    permission=s.permission,
                    actions=StringArray(s.actions),
                    meta_data=_meta(s.meta_data),
                )
                for s in self.services
            ),
            providers=BundleArray(
                _opt(
                    name=self.qualify(p.name),
                    authority=p.authority,
                    exported=p.exported,
                    enabled=p.enabled,
                    permission=p.permission,
                    read_permission=p.read_permission,
                    write_permission=p.write_permission,
                    init_order=Int(p.init_order),
                )
                for p in self.providers
            ),
            receivers=BundleArray(_component(c, self.qualify(c.name)) for c in self.receivers),
            activities=BundleArray(_component(c, self.qualify(c.name)) for c in self.activities),
            permissions=BundleArray(
                Bundle(name=p.name, protection_level=Int(p.protection_level))
                for p in self.permissions
            ),
        )


def fake_cert_sha256(package: str) -> str:
    """A stable stand-in for the signing certificate digest of a virtual app."""
    return hashlib.sha256(f"virtual-signing-cert:{package}".encode()).hexdigest()


def _meta(values: dict[str, MetaValue]) -> Bundle:
    out = Bundle()
    for k, v in values.items():
        out[k] = Int(v) if isinstance(v, int) and not isinstance(v, bool) else v
    return out


def _opt(**items: Any) -> Bundle:
    """Optional (`?`) fields are omitted when null, as the relay does."""
    return Bundle({k: v for k, v in items.items() if v is not None})


def _component(c: ComponentDecl, name: str) -> Bundle:
    return _opt(
        name=name,
        exported=c.exported,
        enabled=c.enabled,
        permission=c.permission,
        actions=StringArray(c.actions),
    )


def cetp_service(
    authority: str,
    versions: str | None,
    *,
    version: int = 1,
    name: str = ".cetp.ToolProviderService",
) -> ServiceDecl:
    """The discovery service a CETP provider declares (spec §2.1)."""
    meta: dict[str, MetaValue] = {META_AUTHORITY: authority, META_VERSION: version}
    if versions is not None:
        meta[META_VERSIONS] = versions
    return ServiceDecl(name=name, actions=(TOOL_PROVIDER_ACTION,), meta_data=meta)


def cetp_provider(authority: str, name: str = ".cetp.ToolContentProvider") -> ProviderDecl:
    return ProviderDecl(
        name=name, authority=authority, permission=ACCESS_TOOLS_PERMISSION, init_order=100
    )


ACCESS_TOOLS_DECL = PermissionDecl(name=ACCESS_TOOLS_PERMISSION)
