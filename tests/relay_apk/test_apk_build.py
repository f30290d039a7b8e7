"""Build the relay APK from source and validate it the way CI must (issue 4, "Done when").

The build runs from a clean output folder with the toolchain fetched by toolchain.sh; the
result is checked with the Android tools themselves (apksigner, zipalign, aapt) and its
dex with androguard.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.relay_apk.relay_tools import run

pytestmark = pytest.mark.java

PACKAGE = "org.cetp.inspector.relay"
PERMISSIONS = {
    "android.permission.QUERY_ALL_PACKAGES",
    "android.permission.FOREGROUND_SERVICE",
    "android.permission.FOREGROUND_SERVICE_DATA_SYNC",
    "android.permission.POST_NOTIFICATIONS",
    "android.permission.SYSTEM_ALERT_WINDOW",
    # Every real CETP provider protects its ContentProvider with it (issue 10).
    "com.clawseed.permission.ACCESS_TOOLS",
}
QUERIED_ACTIONS = {
    "com.clawseed.action.TOOL_PROVIDER",
    "org.ethereumphone.andyclaw.EXTENSION_SERVICE",
    "org.ethereumphone.andyclaw.EXTENSION_BROADCAST",
    "org.ethereumphone.andyclaw.EXTENSION_ACTION",
}


def test_signature_verifies_with_v2_and_v3(built_apk: Path) -> None:
    out = run(["apksigner", "verify", "--verbose", "--print-certs", str(built_apk)]).stdout
    assert "Verified using v2 scheme (APK Signature Scheme v2): true" in out
    assert "Verified using v3 scheme (APK Signature Scheme v3): true" in out
    assert "Verified using v4 scheme (APK Signature Scheme v4): false" in out
    assert "Number of signers: 1" in out


def test_zip_is_aligned(built_apk: Path) -> None:
    run(["zipalign", "-c", "-p", "4", str(built_apk)])


def test_badging_package_sdks_and_permissions(built_apk: Path) -> None:
    out = run(["aapt", "dump", "badging", str(built_apk)]).stdout
    m = re.search(r"package: name='([^']+)' versionCode='(\d+)' versionName='([^']*)'", out)
    assert m and m.group(1) == PACKAGE
    assert int(m.group(2)) >= 1
    assert "sdkVersion:'26'" in out
    assert "targetSdkVersion:'34'" in out
    assert set(re.findall(r"uses-permission: name='([^']+)'", out)) == PERMISSIONS


def _elements(xmltree: str) -> list[tuple[str, list[str]]]:
    """aapt xmltree → [(element name, its attribute lines)] in document order."""
    elements: list[tuple[str, list[str]]] = []
    for line in xmltree.splitlines():
        s = line.strip()
        if s.startswith("E: "):
            elements.append((s[3:].split(" ")[0], []))
        elif s.startswith("A: ") and elements:
            elements[-1][1].append(s[3:])
    return elements


def test_manifest_components_exported_flags_and_queries(built_apk: Path) -> None:
    tree = run(["aapt", "dump", "xmltree", str(built_apk), "AndroidManifest.xml"]).stdout
    elements = _elements(tree)
    names = [e for e, _ in elements]
    components = [(e, attrs) for e, attrs in elements
                  if e in ("activity", "service", "receiver", "provider")]
    assert [e for e, _ in components] == ["activity", "service"], \
        "the relay must expose exactly its activity and service"
    for kind, attrs in components:
        text = "\n".join(attrs)
        # exported only because shell must start it, and only for holders of DUMP (shell/root)
        assert 'android:permission(0x01010006)="android.permission.DUMP"' in text, kind
        assert "android:exported(0x01010010)=(type 0x12)0xffffffff" in text, kind
    service = "\n".join(components[1][1])
    assert "android:foregroundServiceType" in service
    assert "intent-filter" not in names, "no intent filters: nothing can reach the relay implicitly"
    assert "queries" in names
    actions = set(re.findall(r'android:name\(0x01010003\)="([^"]+)"', tree))
    assert actions >= QUERIED_ACTIONS


def test_dex_holds_the_relay_classes_and_no_host_or_java8_code(built_apk: Path) -> None:
    from androguard.core.apk import APK
    from androguard.core.dex import DEX

    dex = DEX(APK(str(built_apk)).get_dex())
    classes = set(dex.get_classes_names())
    for cls in ("core/ValueCodec", "core/FrameCodec", "core/Connection", "core/Dispatcher",
                "app/RelayService", "app/RelayActivity", "app/AndroidPlatform",
                "app/BundleMapper"):
        assert f"Lorg/cetp/inspector/relay/{cls};" in classes
    assert not any("/host/" in c or c.endswith("Test;") for c in classes), \
        "host-only classes and tests must stay out of the APK"
    strings = set(dex.get_strings())
    java8 = ("Ljava/util/function/", "Ljava/util/stream/", "Ljava/lang/invoke/LambdaMetafactory;")
    for forbidden in java8:
        assert not any(s.startswith(forbidden) for s in strings), (
            f"{forbidden} in the dex: no lambdas or Java 8 library APIs (the relay is built "
            "without desugaring)"
        )
