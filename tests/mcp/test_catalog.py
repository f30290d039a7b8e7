"""CETP descriptors and AndyClaw functions mapped onto MCP tools."""

from __future__ import annotations

from typing import Any

from inspector.mcp.catalog import META_KEY, Catalog, map_extension, map_v1, map_v2
from inspector.protocol import andyclaw as ac
from inspector.protocol.cetp import ToolDescriptor, V1Tool

OBJ = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


def v2(name: str = "get", *, effect: str = "read", destructive: bool = False,
       input_schema: Any = None, output_schema: Any = None, risk: str = "low",
       **ann: Any) -> ToolDescriptor:
    return ToolDescriptor.model_validate({
        "name": name, "description": "d", "title": "T",
        "input_schema": OBJ if input_schema is None else input_schema,
        "output_schema": output_schema, "scopes": ["s.read"],
        "annotations": {"effect": effect, "risk": risk, "idempotent": True,
                        "confirmation": "never", "destructive": destructive, **ann}})


def test_read_tool_maps_hints_and_keeps_the_rest_in_meta() -> None:
    bt = map_v2("p_x", "com.x", "com.x.auth", v2(open_world=True), "rev1", [])
    a = bt.tool.annotations
    assert (a.readOnlyHint, a.destructiveHint, a.idempotentHint, a.openWorldHint) == \
        (True, False, True, True)
    meta = bt.tool.meta[META_KEY]
    assert meta["effect"] == "read" and meta["risk"] == "low" and meta["revision"] == "rev1"
    assert meta["defaulted"] == ["execution"]  # destructive/open_world were given
    assert bt.tool.inputSchema == OBJ and bt.allowed and not bt.gated
    assert "effect=read" in bt.tool.description


def test_delete_is_destructive_gated_until_allowed() -> None:
    d = v2("delete", effect="delete", confirmation="always")
    refused = map_v2("p_x", "com.x", "a", d, "r", [])
    assert refused.gated and not refused.allowed
    assert refused.tool.annotations.destructiveHint and not refused.tool.annotations.readOnlyHint
    assert "--allow-mutations p_x__delete" in refused.tool.description
    for pattern in ("p_x__delete", "delete", "com.x:delete", "*"):
        assert map_v2("p_x", "com.x", "a", d, "r", [pattern]).allowed, pattern
    assert not map_v2("p_x", "com.x", "a", d, "r", ["other"]).allowed


def test_high_risk_read_is_gated() -> None:
    assert map_v2("p_x", "com.x", "a", v2(risk="high"), "r", []).gated


def test_invalid_input_schema_is_reported_not_dropped() -> None:
    bad = {"type": "object", "properties": {"q": {"type": "strin"}}}
    bt = map_v2("p_x", "com.x", "a", v2(input_schema=bad), "r", [])
    assert bt.tool.inputSchema == {"type": "object"}
    assert any("input schema not usable" in p for p in bt.problems)
    assert "Problem: input schema not usable" in bt.tool.description
    assert bt.tool.meta[META_KEY]["provider_input_schema"] == bad
    cat = Catalog()
    cat.add(bt)
    assert cat.problems and cat.problems[0].startswith("p_x__get: ")


def test_non_object_input_schema_is_reported() -> None:
    bt = map_v2("p_x", "com.x", "a", v2(input_schema={"type": "array"}), "r", [])
    assert bt.tool.inputSchema == {"type": "object"}
    assert "MCP needs \"type\": \"object\"" in bt.tool.description


def test_output_schema_passed_through_when_valid_else_meta() -> None:
    ok = map_v2("p_x", "com.x", "a", v2(output_schema=OBJ), "r", [])
    assert ok.tool.outputSchema == OBJ and ok.output_schema == OBJ
    scalar = map_v2("p_x", "com.x", "a", v2(output_schema={"type": "number"}), "r", [])
    assert scalar.tool.outputSchema is None
    assert scalar.tool.meta[META_KEY]["provider_output_schema"] == {"type": "number"}
    assert any("output_schema kept in _meta" in p for p in scalar.problems)


def test_v1_tools_claim_no_hint_and_are_gated() -> None:
    bt = map_v1("v1_f", "com.f", "a", V1Tool(name="get_x", parameters=OBJ), [])
    assert bt.tool.annotations is None and bt.gated and not bt.allowed
    assert "CETP v1 declares no effect" in bt.tool.description
    assert map_v1("v1_f", "com.f", "a", V1Tool(name="get_x"), ["get_x"]).allowed


def test_extension_requires_approval_is_gated() -> None:
    fn = ac.ExtensionFunction(name="wipe", description="d", inputSchema=OBJ,
                              requiresApproval=True)
    bt = map_extension("x_e", "e", "com.e", fn, "service", [])
    assert bt.gated and not bt.allowed
    assert map_extension("x_e", "e", "com.e", fn, "service", ["e:wipe"]).allowed
    free = ac.ExtensionFunction(name="greet", description="d", inputSchema=OBJ)
    assert map_extension("x_e", "e", "com.e", free, "service", []).allowed


def test_folded_name_collision_gets_a_distinct_name() -> None:
    cat = Catalog()
    cat.add(map_v2("p_x", "com.x", "a", v2("a.b"), "r", []))
    cat.add(map_v2("p_x", "com.x", "a", v2("a_b"), "r", []))
    assert len(cat.tools) == 2
    assert all(t.tool.name == n for n, t in cat.tools.items())
