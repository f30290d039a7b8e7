"""Arguments for probing tools, derived from their input schemas (best effort).

`valid_args` builds the smallest arguments the schema accepts (defaults, enums, examples,
minimums); `invalid_args` builds arguments the schema rejects (a missing required property,
a wrong type, an unexpected property, a non-object); `alt_args` changes valid arguments
into other valid ones. Every candidate is checked with the real validator, so a result is
never a guess: None means "could not derive one", and the suite then asks for setup.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from inspector.protocol import schema as schemas

_BROKEN = ("unresolvable reference", "schema is invalid", "schema cannot be applied",
           "schema recursion", schemas.TOO_COSTLY, schemas.PATTERN_UNSUPPORTED)


_USABLE: dict[str, bool] = {}


def _usable(schema: Any) -> bool:
    """The schema can be applied locally (no unresolvable $ref, valid, within the cost
    budget: a too-costly schema gets no derived arguments, issue 12)."""
    try:
        key = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):
        key = None
    if key is not None and key in _USABLE:
        return _USABLE[key]
    errs = schemas.validate({}, schema)
    ok = not any(m.startswith(_BROKEN) for _, m in errs) and not schemas.find_remote_refs(
        schema)
    if key is not None:
        if len(_USABLE) > 256:
            _USABLE.clear()
        _USABLE[key] = ok  # a hostile schema costs its budget once, not once per probe
    return ok


def _first_type(s: dict[str, Any]) -> str | None:
    t = s.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), None)
    if t is None and "properties" in s:
        return "object"
    return t if isinstance(t, str) else None


def sample(s: Any, depth: int = 0) -> Any:
    """A plausible value for subschema `s` (not guaranteed valid)."""
    if not isinstance(s, dict) or depth > 8:
        return None
    for key in ("const", "default"):
        if key in s:
            return copy.deepcopy(s[key])
    if isinstance(s.get("examples"), list) and s["examples"]:
        return copy.deepcopy(s["examples"][0])
    if isinstance(s.get("enum"), list) and s["enum"]:
        return copy.deepcopy(s["enum"][0])
    t = _first_type(s)
    if t == "string":
        n = s.get("minLength", 1)
        return "x" * (n if isinstance(n, int) and 0 <= n <= 64 else 1)
    if t in ("integer", "number"):
        lo = s.get("minimum")
        if isinstance(lo, int | float) and not isinstance(lo, bool):
            return int(lo) if t == "integer" and float(lo).is_integer() else lo
        ex = s.get("exclusiveMinimum")
        if isinstance(ex, int | float) and not isinstance(ex, bool):
            return int(ex) + 1
        return 1
    if t == "boolean":
        return False
    if t == "array":
        n = s.get("minItems", 0)
        item = sample(s.get("items"), depth + 1)
        return [item] * (n if isinstance(n, int) and 0 < n <= 8 else 0)
    if t == "object":
        props = s.get("properties") if isinstance(s.get("properties"), dict) else {}
        req = s.get("required") if isinstance(s.get("required"), list) else []
        return {k: sample(props.get(k), depth + 1) for k in req if isinstance(k, str)}
    return None


def valid_args(schema: Any) -> Any | None:
    """Arguments the schema accepts, or None."""
    if not isinstance(schema, dict) or not _usable(schema):
        return None
    for cand in ({}, sample(schema)):
        if cand is not None and schemas.is_valid(cand, schema):
            return cand
    return None


def invalid_args(schema: Any, base: Any = None) -> tuple[Any, str] | None:
    """(arguments the schema rejects, how), or None when none can be derived."""
    if not isinstance(schema, dict) or not _usable(schema):
        return None
    start = base if isinstance(base, dict) else (sample(schema) if
                                                 _first_type(schema) == "object" else None)
    cands: list[tuple[Any, str]] = []
    req = schema.get("required") if isinstance(schema.get("required"), list) else []
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    if isinstance(start, dict):
        for k in req:
            if k in start:
                c = dict(start)
                del c[k]
                cands.append((c, f"required property {k!r} left out"))
        for k, sub in props.items():
            t = _first_type(sub) if isinstance(sub, dict) else None
            wrong = {"string": 12345, "integer": "not-a-number", "number": "not-a-number",
                     "boolean": "not-a-boolean", "array": "not-an-array",
                     "object": "not-an-object"}.get(t or "")
            if wrong is not None:
                c = dict(start)
                c[k] = wrong
                cands.append((c, f"property {k!r} has the wrong type"))
        if schema.get("additionalProperties") is False:
            c = dict(start)
            c["cetp_inspector_unexpected"] = True
            cands.append((c, "an unexpected property was added"))
    if _first_type(schema) == "object":
        cands.append(([], "an array where the schema wants an object"))
    for cand, how in cands:
        if not schemas.is_valid(cand, schema):
            return cand, how
    return None


def alt_args(schema: Any, args: Any) -> Any | None:
    """Other arguments the schema accepts, different from `args`, or None."""
    if not isinstance(args, dict) or not isinstance(schema, dict) or not _usable(schema):
        return None
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    cands: list[Any] = []
    for k, v in args.items():
        sub = props.get(k) if isinstance(props.get(k), dict) else {}
        if isinstance(v, bool):
            cands.append({**args, k: not v})
        elif isinstance(v, int | float):
            cands += [{**args, k: v + 1}, {**args, k: v - 1}, {**args, k: v * 1.01}]
        elif isinstance(v, str):
            enum = sub.get("enum") if isinstance(sub.get("enum"), list) else []
            cands += [{**args, k: e} for e in enum if e != v]
            cands.append({**args, k: v + "x"})
    for c in cands:
        if c != args and schemas.is_valid(c, schema):
            return c
    return None


def probe_args(schema: Any) -> tuple[Any, str] | None:
    """Arguments for a read probe: valid ones, or — when the schema cannot be applied
    locally (an unresolvable $ref) — a best-effort sample; None when neither exists."""
    v = valid_args(schema)
    if v is not None:
        return v, "valid arguments"
    if isinstance(schema, dict) and not _usable(schema):
        s = sample(schema)
        if isinstance(s, dict):
            return s, "best-effort arguments (the schema cannot be applied locally)"
    return None
