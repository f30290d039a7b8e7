"""Builders of relay package records (docs/relay-protocol.md §4.1) for tests."""

from __future__ import annotations

from typing import Any

from inspector.protocol import andyclaw as ac
from inspector.protocol.bundle import Bundle, BundleArray, Int, Long, StringArray
from inspector.protocol.cetp import (
    ACTION_TOOL_PROVIDER,
    META_AUTHORITY,
    META_VERSION,
    META_VERSIONS,
)

_ABSENT: Any = object()


def service(name: str, actions: list[str], meta: dict[str, Any] | None = None,
            exported: bool = True, enabled: bool = True, permission: str | None = None
            ) -> Bundle:
    return Bundle(name=name, exported=exported, enabled=enabled, permission=permission,
                  actions=StringArray(actions), meta_data=Bundle(meta or {}))


def provider(name: str, authority: str, exported: bool = True, enabled: bool = True) -> Bundle:
    return Bundle(name=name, authority=authority, exported=exported, enabled=enabled,
                  permission=None, init_order=Int(100))


def component(name: str, actions: list[str], exported: bool = True) -> Bundle:
    return Bundle(name=name, exported=exported, enabled=True, permission=None,
                  actions=StringArray(actions))


def record(package: str, *, label: str = "", services=(), providers=(), receivers=(),
           activities=(), app_meta: dict[str, Any] | None = None, uid: int = 10100,
           certs=("ab" * 32,), shared_user_id: str | None = None) -> Bundle:
    return Bundle(
        package=package, label=label or package.rsplit(".", 1)[-1], uid=Int(uid),
        version_code=Long(7), version_name="1.0", cert_sha256=StringArray(list(certs)),
        shared_user_id=shared_user_id, launch_activity=None,
        app_meta_data=Bundle(app_meta or {}),
        services=BundleArray(services), providers=BundleArray(providers),
        receivers=BundleArray(receivers), activities=BundleArray(activities),
        permissions=BundleArray([]),
    )


def cetp_record(package: str = "com.example.app", *, version: Any = _ABSENT,
                versions: Any = "1,2", authority: Any = _ABSENT, provider_in_package=True,
                **kw: Any) -> Bundle:
    if version is _ABSENT:
        version = Int(1)
    auth = f"{package}.clawseed.tools" if authority is _ABSENT else authority
    meta: dict[str, Any] = {}
    if auth is not None:
        meta[META_AUTHORITY] = auth
    if version is not None:
        meta[META_VERSION] = version
    if versions is not None:
        meta[META_VERSIONS] = versions
    provs = [provider(".cetp.ToolContentProvider", auth)] if provider_in_package and auth \
        else []
    return record(package, services=[service(".cetp.ToolProviderService",
                                             [ACTION_TOOL_PROVIDER], meta)],
                  providers=provs, **kw)


def hello_world_record(**kw: Any) -> Bundle:
    """The reference extension: org.ethereumphone.extensionexample, bound-service bridge."""
    meta = {ac.META_EXTENSION: True, ac.META_EXTENSION_ID: "hello_world",
            ac.META_EXTENSION_NAME: "Hello World Extension",
            ac.META_EXTENSION_MANIFEST: Int(0x7F0F0000)}
    meta.update(kw.pop("app_meta", {}))
    return record("org.ethereumphone.extensionexample", label="Extension Example",
                  services=[service(".ExtensionService", [ac.ACTION_EXTENSION_SERVICE])],
                  app_meta=meta, **kw)
