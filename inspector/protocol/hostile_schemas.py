"""The hostile schemas of issue 12, as data: shared by tests, benchmarks/schema_cost.py and
fakes. Each is small on the wire and exponential for a naive validator."""

from __future__ import annotations

from typing import Any

#: `^(a+)+$`: exponential backtracking on Python's `re` for "aaaa…b".
NESTED_QUANTIFIER = "^(a+)+$"


def doubling_chain(depth: int, leaf: dict[str, Any] | None = None) -> dict[str, Any]:
    """`$defs/d0 … d{depth}`, each an anyOf of two `$ref`s to the next: 2^depth paths.

    With an instance the leaf rejects (default leaf: a string; pass a number), a naive
    validator walks every path (depth 18 ≈ 1.4 KB of schema: 22 s / 1.5 GB before)."""
    defs: dict[str, Any] = {}
    for i in range(depth):
        nxt = {"$ref": f"#/$defs/d{i + 1}"}
        defs[f"d{i}"] = {"anyOf": [nxt, dict(nxt)]}
    defs[f"d{depth}"] = leaf if leaf is not None else {"type": "string"}
    return {"$defs": defs, "$ref": "#/$defs/d0"}


def pattern_schema(pattern: str = NESTED_QUANTIFIER) -> dict[str, Any]:
    return {"type": "string", "pattern": pattern}


def pattern_properties_schema(pattern: str = NESTED_QUANTIFIER) -> dict[str, Any]:
    return {"type": "object", "patternProperties": {pattern: {"type": "integer"}},
            "additionalProperties": False}


def evil_string(n: int = 32) -> str:
    """`a`×n then a mismatching character: the worst input for NESTED_QUANTIFIER."""
    return "a" * n + "!"


def input_schema_with_evil_default(n: int = 32) -> dict[str, Any]:
    """An input schema whose pre-filled default hits the nested quantifier."""
    return {"type": "object", "properties": {
        "q": {"type": "string", "pattern": NESTED_QUANTIFIER, "default": evil_string(n)}},
        "required": ["q"]}
