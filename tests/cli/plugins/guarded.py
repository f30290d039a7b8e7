"""A virtual-device plugin: a CETP provider guarded by a signature permission of its own,
which the relay cannot hold (the Android rule provider_permission blocks every call)."""

from inspector.virtual.apps.pricealerts import PriceAlertsProvider
from inspector.virtual.manifest import PackageManifest, PermissionDecl

PRIVATE = "com.example.guarded.permission.PRIVATE"
SIGNATURE = 2


class GuardedAlerts(PriceAlertsProvider):
    PACKAGE = "com.example.guarded"
    LABEL = "Guarded"

    def build_manifest(self) -> PackageManifest:
        m = super().build_manifest()
        provider = m.providers[0].model_copy(update={"permission": PRIVATE})
        return m.model_copy(update={
            "providers": (provider,),
            "permissions": (*m.permissions, PermissionDecl(name=PRIVATE,
                                                           protection_level=SIGNATURE)),
        })


def register(device):  # type: ignore[no-untyped-def]
    device.install(GuardedAlerts())
