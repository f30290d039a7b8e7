"""AndyClaw extensions whose manifests and replies attack the inspector (issue 12's sweep):
odd JSON shapes, deep nesting, 1 MB names, HTML/control characters, wrong meta-data types.
Package `com.example.hx.<case>`; `CASES` lists them."""

from __future__ import annotations

import json
from typing import Any

from inspector.protocol.bundle import Int
from inspector.virtual.apps.extensions import UnitConverterExtension
from inspector.virtual.manifest import EXT_META_ID, EXT_META_MANIFEST, EXT_META_NAME

EVIL = "<img width=40000 height=40000>\u202e\x1b[2J\x00"
DEEP = "[" * 100_000 + "]" * 100_000
FN = {"name": "f", "description": "d", "inputSchema": {"type": "object"}}

#: case → raw manifest bytes (or None: keep the stock one) and meta-data overrides
CASES: dict[str, tuple[bytes | None, dict[str, Any]]] = {
    "manifest_object": (b'{"name": "f"}', {}),
    "manifest_number": (b"42", {}),
    "manifest_not_json": (b"\xff\xfe<html>" + EVIL.encode(), {}),
    "manifest_deep": (DEEP.encode(), {}),
    "manifest_empty": (b"", {}),
    "manifest_items_odd": (json.dumps([1, None, "x", [FN]]).encode(), {}),
    "manifest_fields_odd": (json.dumps([{"name": 5, "description": ["x"],
                                         "inputSchema": "object"}]).encode(), {}),
    "manifest_schema_refs": (json.dumps([{**FN, "inputSchema": {
        "$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}}},
        {**FN, "name": "g", "inputSchema": {"$ref": "https://evil.example/s.json"}}]).encode(),
        {}),
    "manifest_evil_text": (json.dumps([{**FN, "name": "f" + EVIL,
                                        "description": EVIL * 1000}]).encode(), {}),
    "manifest_1mb_name": (json.dumps([{**FN, "name": "n" * 1_000_000}]).encode(), {}),
    "manifest_many": (json.dumps([{**FN, "name": f"f{i}"} for i in range(10_000)]).encode(),
                      {}),
    "meta_types": (None, {EXT_META_ID: Int(5), EXT_META_NAME: Int(7), EXT_META_MANIFEST: "raw/x"}),
    "meta_id_evil": (None, {EXT_META_ID: EVIL * 100, EXT_META_NAME: EVIL}),
    "meta_resource_missing": (None, {EXT_META_MANIFEST: 0x7F0F0999}),
}


def _make(case: str, raw: bytes | None, meta: dict[str, Any]) -> type:
    class Hostile(UnitConverterExtension):
        PACKAGE = f"com.example.hx.{case}"
        LABEL = f"HX {case}"
        EXTENSION_ID = f"hx_{case}"

        def raw_manifest(self) -> bytes:
            return raw if raw is not None else super().raw_manifest()

        def app_meta(self) -> dict[str, Any]:
            return {**super().app_meta(), **meta}

    Hostile.__name__ = f"HostileExt_{case}"
    return Hostile


def install(device, *cases: str) -> None:  # type: ignore[no-untyped-def]
    """Install the given cases (all by default): discovery reads every manifest, so a test
    installs only the case it drives."""
    for case in cases or tuple(CASES):
        raw, meta = CASES[case]
        device.install(_make(case, raw, meta)())


def register(device):  # type: ignore[no-untyped-def]
    install(device)
