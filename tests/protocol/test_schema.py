from __future__ import annotations

import socket

import pytest

from inspector.protocol import schema
from inspector.protocol.cetp import DRAFT_2020_12

from .conftest import load


def test_spec_schemas_have_no_remote_refs():
    t = load("spec_list_tools.json")["tools"][0]
    assert schema.find_remote_refs(t["input_schema"]) == []
    assert schema.find_remote_refs(t["output_schema"]) == []


def test_remote_and_other_document_refs_found():
    s = {
        "type": "object",
        "properties": {
            "a": {"$ref": "https://evil.example/schema.json"},
            "b": {"$ref": "#/$defs/b"},
            "c": {"items": {"$ref": "other.json#/x"}},
            "$ref": {"type": "string"},  # a property *named* $ref
        },
        "$defs": {"b": {"type": "integer", "allOf": [{"$dynamicRef": "http://x/y"}]}},
        "const": {"$ref": "http://not-a-ref.example"},  # data, not a schema
        "examples": [{"$ref": "http://also-data"}],
    }
    found = schema.find_remote_refs(s)
    assert found == [
        ("/$defs/b/allOf/0/$dynamicRef", "http://x/y"),
        ("/properties/a/$ref", "https://evil.example/schema.json"),
        ("/properties/c/items/$ref", "other.json#/x"),
    ]


def test_pointer_escaping():
    assert schema.pointer(["a/b", "c~d", 0]) == "/a~1b/c~0d/0"


def test_validate_ok_and_errors():
    s = load("spec_list_tools.json")["tools"][0]["input_schema"]
    assert schema.validate({"symbol": "ACME", "price": 10}, s) == []
    errs = schema.validate({"symbol": 5, "price": 0, "x": 1}, s)
    ptrs = [p for p, _ in errs]
    assert "/symbol" in ptrs and "/price" in ptrs and "" in ptrs  # additionalProperties
    assert schema.is_valid({"symbol": "A", "price": 1}, s)


def test_validate_never_retrieves(monkeypatch):
    def boom(*a, **k):  # any network use fails the test
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket, "create_connection", boom)
    monkeypatch.setattr(socket.socket, "connect", boom)
    s = {"properties": {"a": {"$ref": "https://evil.example/schema.json"}}}
    errs = schema.validate({"a": 1}, s)
    assert errs and "unresolvable reference" in errs[0][1]
    # the official meta-schemas are bundled: they resolve offline
    s = {"properties": {"a": {"$ref": "https://json-schema.org/draft/2020-12/schema"}}}
    assert schema.validate({"a": {"type": "string"}}, s) == []
    assert schema.validate({"a": 1}, s) == [("/a", "1 is not of type 'object', 'boolean'")]


def test_local_refs_resolve():
    s = {"properties": {"b": {"$ref": "#/$defs/b"}}, "$defs": {"b": {"type": "integer"}}}
    assert schema.validate({"b": 1}, s) == []
    assert schema.validate({"b": "x"}, s) == [("/b", "'x' is not of type 'integer'")]


def test_invalid_schema_is_one_error():
    errs = schema.validate(1, {"type": "bogus"})
    assert len(errs) == 1 and errs[0][1].startswith("schema is invalid")
    assert schema.check_schema({"type": "bogus"})
    assert schema.check_schema({"type": "object"}) == []
    assert schema.validate(1, "not a schema")[0][0] == ""
    assert schema.check_schema([1])


def test_boolean_schemas():
    assert schema.validate(1, True) == []
    assert schema.validate(1, False)


@pytest.mark.parametrize(("uri", "known", "default"), [
    (DRAFT_2020_12, True, True),
    (DRAFT_2020_12 + "#", True, True),
    ("http://json-schema.org/draft-07/schema#", True, False),
    ("https://json-schema.org/draft/2019-09/schema", True, False),
    ("https://example.com/my-dialect", False, False),
    (42, False, False),
])
def test_dialects(uri, known, default):
    d = schema.check_dialect(uri)
    assert d.known is known and d.is_default is default


def test_error_count_bounded():
    s = {"type": "array", "items": {"type": "string"}}
    assert len(schema.validate(list(range(500)), s)) == schema.MAX_ERRORS
