"""Factories for the Android-rules tests: a strict virtual device under an API profile
with a chosen relay manifest, and small apps exercising PendingIntent and bind rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspector.android.manifest import ManifestFacts, facts_from_xml_text
from inspector.protocol.bundle import Bundle, Int
from inspector.virtual.app import CallContext, PendingActivity, VirtualApp
from inspector.virtual.device import RESULT_OK, VirtualDevice
from inspector.virtual.manifest import (
    PackageManifest,
    PermissionDecl,
    ProviderDecl,
    ServiceDecl,
)
from tests.virtual.phones import FakeConnection

FIXTURES = Path(__file__).resolve().parents[1] / "android" / "fixtures"
OLD_RELAY_MANIFEST = FIXTURES / "relay-manifest-before-issue10.xml"
ACCESS_TOOLS = "com.clawseed.permission.ACCESS_TOOLS"
RELAY = "org.cetp.inspector.relay"
CETP_AUTHORITIES = {
    "com.example.pricealerts": "com.example.pricealerts.clawseed.tools",
    "com.example.finance": "com.example.finance.clawseed.tools",
    "com.example.badprovider": "com.example.badprovider.clawseed.tools",
}


def old_relay_manifest() -> ManifestFacts:
    """The relay as it was before issue 10 (no ACCESS_TOOLS), from its manifest text."""
    return facts_from_xml_text(OLD_RELAY_MANIFEST.read_text("utf-8"))


def relay_manifest(*uses: str, queries: tuple[str, ...] = ()) -> ManifestFacts:
    return ManifestFacts(package=RELAY, uses_permissions=uses, query_actions=queries)


def strict_device(tmp_path: Path, api: int | None = None, **kw: Any) -> VirtualDevice:
    return VirtualDevice(tmp_path / f"state-{api}", android_api=api, **kw)


async def op(device: VirtualDevice, name: str, conn: FakeConnection | None = None,
             **args: Any) -> Any:
    """One relay op on the backend (ints typed as the wire types them)."""
    typed = {k: Int(v) if isinstance(v, int) and not isinstance(v, bool) else v
             for k, v in args.items()}
    return await device.handle(name, Bundle(typed), conn or FakeConnection())


class RulesProbeApp(VirtualApp):
    """A provider whose methods hand out PendingIntents of each kind, and a service whose
    onBind returns null. Its provider is protected like the reference providers, unless
    `provider` overrides the declaration."""

    PACKAGE = "com.example.rulesprobe"
    LABEL = "Rules probe"
    AUTHORITY = "com.example.rulesprobe.tools"
    NULL_ACTION = "com.example.rulesprobe.NULL_BIND"
    null_binding_actions = frozenset({NULL_ACTION})

    def __init__(self, provider: ProviderDecl | None = None,
                 defines: tuple[str, ...] = (ACCESS_TOOLS,)) -> None:
        super().__init__()
        self.provider = provider or ProviderDecl(name=".Tools", authority=self.AUTHORITY,
                                                 permission=ACCESS_TOOLS)
        self.defines = defines
        self.answers: list[bool] = []

    def build_manifest(self) -> PackageManifest:
        return PackageManifest(
            package=self.package, label=self.label, uid=self.uid,
            providers=(self.provider,),
            services=(ServiceDecl(name=".NullService", actions=(self.NULL_ACTION,)),),
            permissions=tuple(PermissionDecl(name=n) for n in self.defines))

    async def call(self, ctx: CallContext, authority: str, method: str, arg: str | None,
                   extras: Bundle | None) -> Bundle | None:
        if method == "ping":
            return Bundle(status="success")
        kind, _, task = method.partition(":")

        async def on_result(approved: bool) -> tuple[int, Bundle | None]:
            self.answers.append(approved)
            return RESULT_OK, Bundle(approved=approved)

        pi = ctx.pending_intent(PendingActivity(
            package=self.package, component=f"{self.package}/.Confirm", screen=None,
            on_result=on_result, kind=kind, new_task=task == "new_task"))
        return Bundle(status="error", resolution=pi)
