"""Validating results against a tool's output_schema (Draft 2020-12, no network `$ref`).

The validation itself is `inspector.protocol.schema.validate` (offline registry: a schema
can never make the inspector fetch anything); this module turns its errors into findings.
"""

from __future__ import annotations

from typing import Any

from inspector.consumer.findings import finding
from inspector.protocol import schema as proto_schema
from inspector.protocol.exchange import Finding


def validate(schema: Any, instance: Any) -> list[tuple[str, str]]:
    """(JSON pointer, message) for every schema error; [] when valid."""
    return proto_schema.validate(instance, schema)


def output_findings(schema: Any, instance: Any, tool: str) -> list[Finding]:
    """A pass finding, or one fail finding per error, for an output vs output_schema (§4.2)."""
    if schema is None:
        return []
    errors = validate(schema, instance)
    if not errors:
        return [finding("result.output_schema", "§4.2", f"{tool}: output matches output_schema",
                        ok=True)]
    return [finding("result.output_schema", "§4.2",
                    f"{tool}: output does not match output_schema at {p or '/'}: {m}", path=p)
            for p, m in errors[:20]]
