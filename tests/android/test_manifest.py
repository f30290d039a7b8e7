"""Manifest facts from the APK's binary AndroidManifest.xml (checked against androguard)
and from manifest text; damaged input is a ManifestError, never a crash."""

from __future__ import annotations

import contextlib
import struct
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.android.manifest import (
    ManifestError,
    facts_from_binary_xml,
    facts_from_xml_text,
)

REPO = Path(__file__).resolve().parents[2]
SHIPPED_APK = REPO / "resources" / "relay" / "cetp-relay.apk"
SOURCE_MANIFEST = REPO / "relay_apk" / "AndroidManifest.xml"
ACCESS_TOOLS = "com.clawseed.permission.ACCESS_TOOLS"


def shipped_binary_manifest() -> bytes:
    with zipfile.ZipFile(SHIPPED_APK) as z:
        return z.read("AndroidManifest.xml")


def test_binary_manifest_matches_androguard_on_the_shipped_relay() -> None:
    from androguard.core.apk import APK

    apk = APK(str(SHIPPED_APK))
    facts = facts_from_binary_xml(shipped_binary_manifest())
    assert facts.package == apk.get_package()
    assert facts.version_code == int(apk.get_androidversion_code())
    assert facts.version_name == apk.get_androidversion_name()
    assert facts.min_sdk == int(apk.get_min_sdk_version())
    assert facts.target_sdk == int(apk.get_target_sdk_version())
    assert sorted(facts.uses_permissions) == sorted(apk.get_permissions())
    queried = {a.get("{http://schemas.android.com/apk/res/android}name")
               for a in apk.get_android_manifest_xml().iter("action")}
    assert set(facts.query_actions) == queried


def test_the_shipped_relay_requests_access_tools_and_agrees_with_its_source() -> None:
    binary = facts_from_binary_xml(shipped_binary_manifest())
    text = facts_from_xml_text(SOURCE_MANIFEST.read_text("utf-8"))
    assert ACCESS_TOOLS in binary.uses_permissions
    assert binary == text


def test_the_relay_before_issue_10_did_not_request_access_tools() -> None:
    old = facts_from_xml_text((Path(__file__).parent / "fixtures"
                               / "relay-manifest-before-issue10.xml").read_text("utf-8"))
    assert old.package == "org.cetp.inspector.relay"
    assert ACCESS_TOOLS not in old.uses_permissions
    assert "android.permission.QUERY_ALL_PACKAGES" in old.uses_permissions


def test_text_manifest_reads_permission_definitions_and_queries() -> None:
    facts = facts_from_xml_text("""<manifest
        xmlns:android="http://schemas.android.com/apk/res/android" package="com.p">
      <permission android:name="com.p.X" android:protectionLevel="0"/>
      <permission android:name="com.p.S" android:protectionLevel="2"/>
      <queries><package android:name="com.q"/>
        <provider android:authorities="a.one;a.two"/></queries>
    </manifest>""")
    assert [(d.name, d.protection, d.defined_by) for d in facts.defined_permissions] == [
        ("com.p.X", "normal", "com.p"), ("com.p.S", "signature", "com.p")]
    assert facts.query_packages == ("com.q",)
    assert facts.query_authorities == ("a.one", "a.two")


@pytest.mark.parametrize("data", [b"", b"\x03\x00", b"PK\x03\x04" + b"\x00" * 40,
                                  b"\x03\x00\x08\x00\xff\xff\x00\x00" + b"\x01" * 24])
def test_garbage_is_a_manifest_error(data: bytes) -> None:
    with pytest.raises(ManifestError):
        facts_from_binary_xml(data)


def test_a_string_pool_claiming_too_many_strings_is_refused() -> None:
    pool = struct.pack("<HHIIIIII", 0x0001, 28, 28, 10_000_000, 0, 0, 28, 0)
    data = struct.pack("<HHI", 0x0003, 8, 8 + len(pool)) + pool
    with pytest.raises(ManifestError, match="cap"):
        facts_from_binary_xml(data)


def test_text_that_is_not_xml_is_a_manifest_error() -> None:
    with pytest.raises(ManifestError, match="not XML"):
        facts_from_xml_text("<manifest")
    with pytest.raises(ManifestError, match="package"):
        facts_from_xml_text("<manifest/>")


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=0, max_value=2000), st.binary(min_size=1, max_size=8))
def test_corrupting_the_shipped_manifest_never_crashes(offset: int, junk: bytes) -> None:
    data = bytearray(shipped_binary_manifest())
    offset %= len(data)
    data[offset:offset + len(junk)] = junk
    with contextlib.suppress(ManifestError):
        facts_from_binary_xml(bytes(data[: len(data) - (offset % 7)]))
