"""Live argument checks for the call composer (pure Python; always run off the UI thread).

Validates a JSON document against a tool's input schema, listing every error with the JSON
pointer where it happened. Schemas are untrusted: `inspector.protocol.schema.validate` never
retrieves anything (a `$ref` only reaches fragments of the same document), runs regexes on
RE2 and stops at its cost budget with a "schema too costly to validate" issue.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from inspector.protocol import schema as proto_schema
from inspector.protocol.schema_worker import validate_isolated
from inspector.ui.text import bound

MAX_ERRORS = 200
OFF_THREAD_BYTES = 64 * 1024  # a "big" document (every document validates off the UI thread)


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


#: Messages of `proto_schema.validate` meaning the schema itself cannot be applied.
_SCHEMA_BROKEN = ("schema is invalid", "schema cannot be", "schema recursion",
                  "unresolvable reference", proto_schema.TOO_COSTLY,
                  proto_schema.PATTERN_UNSUPPORTED)


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
    """Every error of `value`, through the bounded validator (RE2 regexes, step budget) in
    the validation worker process: a hostile schema gives one "schema-invalid" issue saying
    why, never a long walk. Blocks: call it from a worker thread."""
    if not isinstance(schema, dict | bool):
        return [
            Issue(pointer="", kind="schema-invalid", message="the input schema is not an object")
        ]
    dialect = schema.get("$schema") if isinstance(schema, dict) else None
    errors = validate_isolated(value, schema, dialect if isinstance(dialect, str) else None,
                               MAX_ERRORS, formats=True)
    out: list[Issue] = []
    for ptr, msg in errors:
        if ptr == "" and msg.startswith(_SCHEMA_BROKEN):
            out.append(Issue(pointer="", kind="schema-invalid",
                             message=f"the tool's input schema cannot be applied: "
                                     f"{bound(msg, 300)}"))
        else:
            out.append(Issue(pointer=ptr or "/", message=bound(msg, 300)))
    out.sort(key=lambda i: i.pointer)
    return out
