"""Tool names: MCP's strictest common charset and length, stable, collision-free."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from inspector.mcp import naming


def test_scheme_is_kind_slug_tool() -> None:
    ns = naming.namespace("p", "com.example.pricealerts", "auth", clash=False)
    assert naming.tool_name(ns, "get_quote") == "p_pricealerts__get_quote"
    assert naming.namespace("x", "hello_world", "org.pkg", clash=False) == "x_hello_world"


def test_clash_suffix_is_stable_and_distinct() -> None:
    a = naming.namespace("p", "com.a.tools", "com.a.tools.auth", clash=True)
    b = naming.namespace("p", "com.b.tools", "com.b.tools.auth", clash=True)
    assert a != b and a.startswith("p_tools_") and len(a) == len("p_tools_") + 6
    assert a == naming.namespace("p", "com.a.tools", "com.a.tools.auth", clash=True)


def test_long_names_are_cut_with_a_hash() -> None:
    ns = naming.namespace("p", "com.example." + "x" * 80, "a", clash=False)
    one = naming.tool_name(ns, "t" * 100)
    two = naming.tool_name(ns, "t" * 99 + "u")
    assert len(one) == 64 and naming.NAME_RE.match(one)
    assert one != two


@given(st.text(max_size=200), st.text(max_size=200))
def test_any_input_gives_a_valid_name(package: str, tool: str) -> None:
    name = naming.tool_name(naming.namespace("p", package, package, clash=False), tool)
    assert naming.NAME_RE.match(name), name
