"""Validating results against a tool's output_schema (Draft 2020-12, no network `$ref`).

The validation itself is `inspector.protocol.schema.validate` (offline registry: a schema
can never make the inspector fetch anything; RE2 regexes; a cost budget), run in the
validation worker process (`schema_worker`); this module turns its errors into findings.
"""

from __future__ import annotations

from typing import Any

from inspector.consumer.findings import finding
from inspector.protocol.exchange import Finding
from inspector.protocol.schema_worker import validate_isolated


def validate(schema: Any, instance: Any) -> list[tuple[str, str]]:
    """(JSON pointer, message) for every schema error; [] when valid. Runs in the
    validation worker process (bounded, killed past its deadline); blocks the caller, so
    the engine calls it from a worker thread."""
    return validate_isolated(instance, schema)


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
