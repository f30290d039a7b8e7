"""devices / providers / negotiate / info / tools / extensions against the virtual device."""

from __future__ import annotations

from tests.cli.conftest import Cli


def test_devices_lists_the_virtual_device(cli: Cli) -> None:
    r = cli("devices")
    assert r.code == 0
    doc = r.doc
    assert doc["ok"] is True and doc["command"] == "devices"
    assert doc["default"] == "virtual"
    assert [d["serial"] for d in doc["devices"]] == ["virtual"]
    assert doc["devices"][0]["kind"] == "relay"


def test_providers_with_versions_and_problems(cli: Cli) -> None:
    r = cli("providers")
    assert r.code == 0
    by_pkg = {p["package"]: p for p in r.doc["providers"]}
    price = by_pkg["com.example.pricealerts"]
    assert price["stack"] == "v1+v2" and price["versions"] == [2, 1]
    finance = by_pkg["com.example.finance"]
    assert finance["authority"] == "com.example.finance.clawseed.tools"
    assert finance["stack"] == "v1" and finance["problems"] == []
    bad = [p for p in r.doc["providers"] if p["package"] == "com.example.badprovider"]
    assert any("belongs to com.example.finance" in msg for p in bad for msg in p["problems"])


def test_negotiate_v2(cli: Cli) -> None:
    r = cli("negotiate", "com.example.pricealerts")
    assert r.code == 0, r.out
    neg = r.doc["negotiation"]
    assert neg["selected_version"] == 2
    assert neg["provider_id"] == "com.example.pricealerts"
    assert set(neg["capabilities"]) == {"async_operations", "cancellation", "large_results"}
    assert neg["limits"]["max_request_bytes"] >= 65536
    assert "session_token" not in neg and "chars" in neg["session_token_masked"]


def test_negotiate_with_fewer_capabilities_gets_the_intersection(cli: Cli) -> None:
    r = cli("negotiate", "pricealerts", "--capabilities", "cancellation")
    assert r.code == 0
    assert r.doc["negotiation"]["usable_capabilities"] == ["cancellation"]


def test_negotiate_finds_the_provider_by_authority_and_rejects_v1_only(cli: Cli) -> None:
    assert cli("negotiate", "com.example.pricealerts.clawseed.tools").code == 0
    r = cli("negotiate", "com.example.finance")
    assert r.code == 2 and r.doc["error"]["code"] == "V1_ONLY"


def test_v1_provider_tools_and_info(cli: Cli) -> None:
    r = cli("tools", "com.example.finance")
    assert r.code == 0
    assert r.doc["protocol_version"] == 1
    assert {t["name"] for t in r.doc["tools"]} == {"get_portfolio_holdings", "get_transactions"}
    info = cli("info", "finance")
    assert info.code == 0 and info.doc["info"]["provider_name"]


def test_dual_stack_v1_view_has_only_read_tools(cli: Cli) -> None:
    v2 = cli("tools", "pricealerts")
    v1 = cli("tools", "pricealerts", "--v1")
    assert v2.code == 0 and v1.code == 0
    v2_tools = {t["name"]: t for t in v2.doc["tools"]}
    v1_names = {t["name"] for t in v1.doc["tools"]}
    assert v2.doc["protocol_version"] == 2 and v2.doc["revision"]
    assert {"create_alert", "delete_alert", "sync_watchlist"} <= set(v2_tools)
    assert v1_names and v1_names < set(v2_tools)
    assert all(v2_tools[n]["annotations"]["effect"] == "read" for n in v1_names)


def test_provider_info_v2_scopes(cli: Cli) -> None:
    r = cli("info", "pricealerts")
    assert r.code == 0
    scopes = {s["name"]: s for s in r.doc["info"]["scopes"]}
    assert scopes["alerts.write"]["access"] == "write"


def test_extensions_one_per_bridge(cli: Cli) -> None:
    r = cli("extensions")
    assert r.code == 0
    bridges = {e["id"]: e["bridge"] for e in r.doc["extensions"]}
    assert bridges["hello_world"] == "service"
    assert {"service", "provider", "broadcast", "activity"} <= set(bridges.values())


def test_extension_manifest_shows_both_forms(cli: Cli) -> None:
    r = cli("ext-manifest", "hello_world")
    assert r.code == 0, r.out
    assert [f["name"] for f in r.doc["raw_manifest"]] == ["greet"]
    assert r.doc["service_manifest"]["form"] == "object"


def test_human_output_is_a_table(cli: Cli) -> None:
    r = cli("providers", json_out=False)
    assert r.code == 0
    assert r.out.splitlines()[0].split()[:3] == ["PACKAGE", "AUTHORITY", "VERSIONS"]
