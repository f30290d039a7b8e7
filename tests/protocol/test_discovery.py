from __future__ import annotations

import pytest

from inspector.protocol import andyclaw as ac
from inspector.protocol.bundle import Bundle, BundleArray, Int, StringArray
from inspector.protocol.discovery import discover

from .records import (
    cetp_record,
    component,
    hello_world_record,
    provider,
    record,
    service,
)


def test_dual_stack_provider():
    d = discover([cetp_record()])
    (c,) = d.cetp
    assert c.package == "com.example.app" and c.service == ".cetp.ToolProviderService"
    assert c.authority == "com.example.app.clawseed.tools"
    assert c.versions == (2, 1) and c.stack == "dual_stack"
    assert c.version == 1 and c.versions_raw == "1,2"
    assert c.same_package is True and c.provider is not None
    assert c.uid == 10100 and c.version_code == 7 and c.cert_sha256 == ["ab" * 32]
    assert c.supports_v1 and c.supports_v2 and c.legacy_visible
    assert d.problems == {}
    assert d.extensions == []


@pytest.mark.parametrize(("version", "versions", "effective", "stack"), [
    (Int(1), None, (1,), "v1_only"),
    (None, None, (1,), "v1_only"),          # getInt default 1
    (Int(2), "2", (2,), "v2_only"),
    (Int(2), Int(2), (2,), "v2_only"),       # Android stores versions="2" as an int
    (Int(2), None, (2,), "v2_only"),         # only version: the sole version
    (Int(1), "2,1", (2, 1), "dual_stack"),
    (Int(2), "1,2", (2, 1), "dual_stack"),   # versions is authoritative
    ("1", "1, 2", (2, 1), "dual_stack"),
    (Int(3), "3", (3,), "other"),
])
def test_versions(version, versions, effective, stack):
    (c,) = discover([cetp_record(version=version, versions=versions)]).cetp
    assert c.versions == effective and c.stack == stack


def test_bad_versions_reported():
    d = discover([cetp_record(versions="one,two")])
    (c,) = d.cetp
    assert c.declared_versions is None and c.versions == (1,)
    assert any("versions" in p for p in d.problems["com.example.app"])


def test_authority_in_another_package():
    a = cetp_record("com.evil.app", authority="com.bank.app.clawseed.tools",
                    provider_in_package=False)
    b = record("com.bank.app", providers=[provider(".P", "com.bank.app.clawseed.tools")])
    d = discover([a, b])
    (c,) = d.cetp
    assert c.same_package is False and c.authority_owner == "com.bank.app"
    assert any("belongs to com.bank.app" in p for p in d.problems["com.evil.app"])


def test_authority_nowhere():
    d = discover([cetp_record(provider_in_package=False)])
    assert d.cetp[0].same_package is None
    assert any("no installed package" in p for p in d.problems["com.example.app"])


def test_missing_authority_and_unexported():
    r = cetp_record(authority=None)
    r["services"][0]["exported"] = False
    d = discover([r])
    c = d.cetp[0]
    assert c.authority is None and not c.exported
    probs = d.problems["com.example.app"]
    assert any("authority" in p for p in probs) and any("not exported" in p for p in probs)


def test_multiple_authorities_split():
    r = cetp_record()
    r["providers"][0]["authority"] = "x.y;com.example.app.clawseed.tools"
    assert discover([r]).cetp[0].provider is not None


def test_hello_world_extension():
    d = discover([hello_world_record()])
    (e,) = d.extensions
    assert e.id == "hello_world" and e.name == "Hello World Extension"
    assert e.manifest_resource_id == 0x7F0F0000 and e.enabled
    assert e.bridge == ac.Bridge.SERVICE
    assert [b.bridge for b in e.bridges] == [ac.Bridge.SERVICE]
    assert e.host_authority == "org.ethereumphone.extensionexample.andyclaw.extension"
    assert d.cetp == [] and d.problems == {}
    assert d.find_extension("hello_world") == [e]
    assert d.find_extension("org.ethereumphone.extensionexample") == [e]


def test_extension_defaults():
    r = hello_world_record()
    meta = r["app_meta_data"]
    del meta[ac.META_EXTENSION_ID]
    del meta[ac.META_EXTENSION_NAME]
    (e,) = discover([r]).extensions
    assert e.id == "apk:org.ethereumphone.extensionexample" and not e.id_declared
    assert e.name == "Extension Example"  # the label
    r["label"] = ""
    (e,) = discover([r]).extensions
    assert e.name == "org.ethereumphone.extensionexample"


def test_extension_flag_must_be_boolean_true():
    r = hello_world_record(app_meta={ac.META_EXTENSION: "yes"})
    (e,) = discover([r]).extensions
    assert not e.enabled and any("getBoolean" in p for p in e.problems)


def test_numeric_extension_id_falls_back():
    (e,) = discover([hello_world_record(app_meta={ac.META_EXTENSION_ID: Int(42)})]).extensions
    assert e.id == "apk:org.ethereumphone.extensionexample"
    assert any("not a String" in p for p in e.problems)


def test_bridge_priority_and_provider_authority():
    pkg = "com.example.ext"
    r = record(pkg, app_meta={ac.META_EXTENSION: True, ac.META_EXTENSION_MANIFEST: Int(1)},
               receivers=[component(".R", [ac.ACTION_EXTENSION_BROADCAST])],
               activities=[component(".A", [ac.ACTION_EXTENSION_ACTION])],
               providers=[provider(".P", "com.other.andyclaw.extension")])
    (e,) = discover([r]).extensions
    assert [b.bridge for b in e.bridges] == [ac.Bridge.PROVIDER, ac.Bridge.BROADCAST,
                                             ac.Bridge.ACTIVITY]
    assert e.bridge == ac.Bridge.PROVIDER
    assert any("differs from com.example.ext.andyclaw.extension" in p for p in e.problems)
    r["providers"] = BundleArray([])
    (e,) = discover([r]).extensions
    assert e.bridge == ac.Bridge.BROADCAST


def test_bridge_without_flag_is_reported():
    r = record("com.example.half", services=[service(".S", [ac.ACTION_EXTENSION_SERVICE])])
    (e,) = discover([r]).extensions
    assert not e.enabled and any("missing" in p for p in e.problems)


def test_plain_app_is_neither():
    d = discover([record("com.example.plain")])
    assert d.cetp == [] and d.extensions == [] and len(d.packages) == 1


def test_malformed_records_never_raise():
    d = discover([None, Bundle(), Bundle(package=Int(3)), "x",
                  Bundle(package="p", services="nope", app_meta_data=Int(1)),
                  Bundle(package="p")])
    assert len(d.problems[""]) == 4
    assert "listed twice" in d.problems["p"][0]
    assert discover(5).problems  # type: ignore[arg-type]


def test_service_meta_types_kept():
    r = cetp_record(version=Int(1), versions=StringArray(["1", "2"]))
    d = discover([r])
    c = d.cetp[0]
    assert c.versions == (1,) and any("comma-separated" in p for p in c.problems)
