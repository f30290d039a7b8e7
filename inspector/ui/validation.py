"""Live argument checks for the call composer (pure Python; runs off the UI thread when big).

Validates a JSON document against a tool's input schema with jsonschema, listing every
error with the JSON pointer where it happened. Schemas are untrusted: the registry refuses
to retrieve anything, so a `$ref` can only reach fragments of the same document.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
from jsonschema.exceptions import SchemaError
from pydantic import BaseModel
from referencing import Registry
from referencing.exceptions import NoSuchResource, Unresolvable

from inspector.ui.text import bound

MAX_ERRORS = 200
OFF_THREAD_BYTES = 64 * 1024  # documents bigger than this validate in a worker thread


class Issue(BaseModel):
    """One problem with the arguments: where (JSON pointer) and what."""

    pointer: str
    message: str
    kind: str = "schema"  # "syntax" | "schema" | "schema-invalid" | "size"


class Verdict(BaseModel):
    issues: list[Issue]
    size_bytes: int
    parsed: bool

    @property
    def ok(self) -> bool:
        return not self.issues


def _no_retrieve(uri: str) -> Any:
    raise NoSuchResource(ref=uri)


_REGISTRY: Registry = Registry(retrieve=_no_retrieve)  # type: ignore[call-arg]


def pointer(path: Any) -> str:
    """RFC 6901 pointer from a jsonschema path deque."""
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
    return "/" + "/".join(parts) if parts else "/"


def validate_text(text: str, schema: Any, max_bytes: int | None = None) -> Verdict:
    """Parse and validate `text`; every problem listed with its pointer."""
    size = len(text.encode("utf-8"))
    issues: list[Issue] = []
    if max_bytes is not None and size > max_bytes:
        issues.append(
            Issue(
                pointer="/",
                kind="size",
                message=(
                    f"arguments are {size:,} bytes; the negotiated max_request_bytes is "
                    f"{max_bytes:,}. "
                    "Shorten them — the inspector will not send an oversized request."
                ),
            )
        )
    try:
        value = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        issues.append(
            Issue(
                pointer="",
                kind="syntax",
                message=f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}",
            )
        )
        return Verdict(issues=issues, size_bytes=size, parsed=False)
    issues.extend(validate_value(value, schema))
    return Verdict(issues=issues, size_bytes=size, parsed=True)


def validate_value(value: Any, schema: Any) -> list[Issue]:
    if not isinstance(schema, dict | bool):
        return [
            Issue(pointer="", kind="schema-invalid", message="the input schema is not an object")
        ]
    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(schema)
        validator = cls(schema, registry=_REGISTRY, format_checker=cls.FORMAT_CHECKER)
        out: list[Issue] = []
        for err in validator.iter_errors(value):
            out.append(Issue(pointer=pointer(err.absolute_path), message=bound(err.message, 300)))
            if len(out) >= MAX_ERRORS:
                break
        out.sort(key=lambda i: i.pointer)
        return out
    except SchemaError as exc:
        return [
            Issue(
                pointer=pointer(exc.absolute_path),
                kind="schema-invalid",
                message=f"the tool's input schema is invalid: {bound(exc.message, 200)}",
            )
        ]
    except Unresolvable as exc:
        return [
            Issue(
                pointer="",
                kind="schema-invalid",
                message=f"the schema has a $ref that cannot be resolved inside the "
                f"document ({bound(str(exc), 120)}); external references are never fetched",
            )
        ]
    except RecursionError:
        return [Issue(pointer="", kind="schema-invalid", message="the schema recurses too deeply")]
