"""Validating results against a tool's output_schema (Draft 2020-12, no network `$ref`).

ADAPTER: delegates to `inspector.protocol.schema` when it offers `validate_instance`;
until then (and as a fallback) uses jsonschema directly with a registry that refuses every
retrieval, so a schema can never make the inspector fetch anything.
"""

from __future__ import annotations

from typing import Any

from inspector.consumer.findings import finding
from inspector.protocol.exchange import Finding


def _fallback_validate(schema: Any, instance: Any) -> list[tuple[str, str]]:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError
    from referencing import Registry
    from referencing.exceptions import NoSuchResource, Unresolvable

    def refuse(uri: str) -> Any:
        raise NoSuchResource(ref=uri)

    if isinstance(schema, bool):
        return [] if schema else [("", "the output_schema `false` accepts nothing")]
    try:
        validator = Draft202012Validator(schema, registry=Registry(retrieve=refuse))
        return [("/" + "/".join(str(p) for p in e.absolute_path), e.message)
                for e in validator.iter_errors(instance)]
    except SchemaError as exc:
        return [("#schema", f"the output_schema itself is invalid: {exc.message}")]
    except Unresolvable as exc:
        return [("#schema", f"unresolvable $ref (only same-document fragments allowed): {exc}")]
    except Exception as exc:  # provider schemas are untrusted input
        return [("#schema", f"the output_schema cannot be used: {exc}")]


def validate(schema: Any, instance: Any) -> list[tuple[str, str]]:
    """(JSON pointer, message) for every schema error; [] when valid."""
    try:
        from inspector.protocol import schema as proto_schema
    except ImportError:
        proto_schema = None  # type: ignore[assignment]
    fn = getattr(proto_schema, "validate_instance", None) if proto_schema else None
    if fn is not None:
        return list(fn(schema, instance))
    return _fallback_validate(schema, instance)


def output_findings(schema: Any, instance: Any, tool: str) -> list[Finding]:
    """A pass or fail finding for an output checked against output_schema (§4.2)."""
    if schema is None:
        return []
    errors = validate(schema, instance)
    if not errors:
        return [finding("result.output_schema", "§4.2", f"{tool}: output matches output_schema",
                        ok=True)]
    return [finding("result.output_schema", "§4.2",
                    f"{tool}: output does not match output_schema at {p or '/'}: {m}", path=p)
            for p, m in errors[:20]]
