"""Every `org.cetp.inspector.relay/.X` the relay tells people to run names a class that is in
the APK and an activity its manifest declares (issue 10, finding 2: the hint said
`/.RelayActivity`, the class is `.app.RelayActivity`, so `am start` failed with "Activity class
does not exist"). Read from the shipped APK's classes.dex string table and `aapt dump xmltree`.
"""

from __future__ import annotations

import re
import struct
import zipfile
from pathlib import Path

import pytest

from inspector.device.relay_lifecycle import RELAY_ACTIVITY_CLASS
from tests.relay_apk.host_jvm import REPO
from tests.relay_apk.relay_tools import require, run

pytestmark = pytest.mark.java

APK = REPO / "resources" / "relay" / "cetp-relay.apk"
PACKAGE = "org.cetp.inspector.relay"
COMPONENT = re.compile(re.escape(PACKAGE) + r"/(\.[A-Za-z0-9_.$]*[A-Za-z0-9_$])")


def _uleb128(data: bytes, off: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = data[off]
        off += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, off
        shift += 7


def dex_strings(dex: bytes) -> list[str]:
    """The string_ids table of a dex file (header: string_ids_size @0x38, offset @0x3C)."""
    assert dex[:4] == b"dex\n", "not a dex file"
    count, table = struct.unpack_from("<II", dex, 0x38)
    out = []
    for i in range(count):
        (data_off,) = struct.unpack_from("<I", dex, table + 4 * i)
        _, start = _uleb128(dex, data_off)
        end = dex.index(b"\x00", start)
        out.append(dex[start:end].decode("utf-8", "replace"))  # MUTF-8; ASCII here
    return out


def _strings(apk: Path) -> list[str]:
    with zipfile.ZipFile(apk) as z:
        return dex_strings(z.read("classes.dex"))


def _declared_activities(apk: Path) -> set[str]:
    require("aapt")
    tree = run(["aapt", "dump", "xmltree", str(apk), "AndroidManifest.xml"]).stdout
    names: set[str] = set()
    in_activity = False
    for ln in tree.splitlines():
        s = ln.strip()
        if s.startswith("E: "):
            in_activity = s.startswith("E: activity ")
        m = re.match(r'A: android:name\(0x01010003\)="([^"]+)"', s)
        if in_activity and m:
            name = m.group(1)
            names.add(PACKAGE + name if name.startswith(".") else name)
    return names


def test_every_component_hint_in_the_apk_names_a_real_activity() -> None:
    strings = _strings(APK)
    descriptors = {s for s in strings if s.startswith("L") and s.endswith(";")}
    hints = {m.group(1) for s in strings for m in COMPONENT.finditer(s)}
    assert hints, "the relay no longer tells people which activity to bring forward"
    activities = _declared_activities(APK)
    for short in hints:
        cls = PACKAGE + short
        assert "L" + cls.replace(".", "/") + ";" in descriptors, f"{cls} is not in classes.dex"
        assert cls in activities, f"{cls} is not an activity in the relay manifest"


def test_the_desktop_brings_forward_the_same_activity() -> None:
    assert PACKAGE + RELAY_ACTIVITY_CLASS in _declared_activities(APK)
    assert any(f"{PACKAGE}/{RELAY_ACTIVITY_CLASS}" in s for s in _strings(APK))


def test_the_old_wrong_hint_would_be_caught() -> None:
    """The check itself: `/.RelayActivity` is no class in the APK."""
    descriptors = {s for s in _strings(APK) if s.startswith("L")}
    assert f"L{PACKAGE.replace('.', '/')}/RelayActivity;" not in descriptors
