"""Vendor ROMs, told apart by their build properties (no imports: models and diagnostics
both use it)."""

from __future__ import annotations

from collections.abc import Mapping

# -- vendor ROMs that refuse shell grants ---------------------------------------------------
# MIUI/HyperOS: Developer options → "USB debugging (Security settings)" lets adb grant
# permissions and set appops; ColorOS/OxygenOS (OPPO, OnePlus, realme): Developer options →
# "Disable permission monitoring". Without them the shell gets a SecurityException from
# PermissionManagerService.grantRuntimePermission / AppOpsService.setMode. Only a real
# phone shows the exact text; both ROMs are identified by their build properties.
MIUI_SETTING = 'Developer options → "USB debugging (Security settings)"'
COLOROS_SETTING = 'Developer options → "Disable permission monitoring"'


def vendor_grant_setting(props: Mapping[str, str]) -> str | None:
    """The developer-options switch that lets adb grant permissions on this ROM."""
    maker = props.get("ro.product.manufacturer", "").lower()
    if props.get("ro.miui.ui.version.name") or props.get("ro.mi.os.version.name") or maker in (
        "xiaomi", "redmi", "poco"
    ):
        return MIUI_SETTING
    if (
        props.get("ro.build.version.oplusrom")
        or props.get("ro.build.version.opporom")
        or props.get("ro.oxygen.version")
        or maker in ("oppo", "oneplus", "realme")
    ):
        return COLOROS_SETTING
    return None
