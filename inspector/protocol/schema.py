"""JSON Schema helpers for provider-supplied (untrusted) schemas.

- `find_remote_refs`: every `$ref` / `$dynamicRef` / `$recursiveRef` that is not a fragment
  of the same document (`#...`) — network or other-document references are forbidden
  (§3.2). The walk knows which keywords hold schemas, so a `"$ref"` inside `const` data or
  a property *named* `$ref` is not mistaken for a reference.
- `validate`: Draft 2020-12 (or the session's known dialect) with a registry that refuses
  every retrieval, so validation never touches the network or the file system (only the
  official meta-schemas, bundled with `jsonschema`, resolve); errors come back as
  (JSON pointer into the instance, message) pairs.
- `check_dialect` / `check_schema`: is the dialect one we know; is the schema itself valid.

Provider schemas are hostile: every walk here is metered (`schema_budget`): regexes run on
RE2 (linear time), and past the step/time/memory budget the answer is one
"schema too costly to validate" error instead of an exponential walk.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema
from jsonschema import exceptions as js_exc
from referencing import Registry
from referencing.exceptions import NoSuchResource, Unresolvable

from inspector.protocol.cetp import DRAFT_2020_12
from inspector.protocol.schema_budget import (
    Budget,
    PatternNotSupported,
    SchemaTooCostly,
    budget_for,
    metered,
    metered_class,
)

REF_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")
_MAP_OF_SCHEMAS = frozenset({"properties", "patternProperties", "$defs", "definitions",
                             "dependentSchemas"})
_LIST_OF_SCHEMAS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_ONE_SCHEMA = frozenset({"additionalProperties", "not", "if", "then", "else", "contains",
                         "propertyNames", "unevaluatedItems", "unevaluatedProperties",
                         "additionalItems", "contentSchema", "items"})

#: Known dialect URIs (normalised: no trailing '#', https) → validator class.
_DIALECTS: dict[str, type] = {
    "https://json-schema.org/draft/2020-12/schema": jsonschema.Draft202012Validator,
    "https://json-schema.org/draft/2019-09/schema": jsonschema.Draft201909Validator,
    "https://json-schema.org/draft-07/schema": jsonschema.Draft7Validator,
    "https://json-schema.org/draft-06/schema": jsonschema.Draft6Validator,
    "https://json-schema.org/draft-04/schema": jsonschema.Draft4Validator,
}

MAX_ERRORS = 50
MAX_MESSAGE = 300
MAX_DEPTH = 64


def _refuse(uri: str) -> Any:
    raise NoSuchResource(ref=uri)


#: A registry that never retrieves anything.
OFFLINE_REGISTRY: Registry = Registry(retrieve=_refuse)  # type: ignore[call-arg]


def pointer(parts: list[str | int] | tuple[str | int, ...]) -> str:
    """RFC 6901 JSON pointer of a path."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def is_fragment_ref(ref: str) -> bool:
    return ref.startswith("#")


def find_remote_refs(schema: Any) -> list[tuple[str, str]]:
    """(JSON pointer to the keyword, reference) for each non-fragment reference."""
    found: list[tuple[str, str]] = []
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(schema, ())]
    while stack:
        node, path = stack.pop()
        if len(path) > 4 * MAX_DEPTH:
            continue
        if isinstance(node, list):  # items as a list (older drafts)
            for i, sub in enumerate(node):
                stack.append((sub, (*path, i)))
            continue
        if not isinstance(node, Mapping):
            continue
        for k, v in node.items():
            p = (*path, k)
            if k in REF_KEYWORDS:
                if isinstance(v, str):
                    if not is_fragment_ref(v):
                        found.append((pointer(p), v))
                else:
                    found.append((pointer(p), repr(v)[:80]))
            elif k in _MAP_OF_SCHEMAS and isinstance(v, Mapping):
                for name, sub in v.items():
                    stack.append((sub, (*p, name)))
            elif k in _LIST_OF_SCHEMAS and isinstance(v, list):
                for i, sub in enumerate(v):
                    stack.append((sub, (*p, i)))
            elif k in _ONE_SCHEMA:
                stack.append((v, p))
            elif k == "dependencies" and isinstance(v, Mapping):
                for name, sub in v.items():
                    if isinstance(sub, Mapping):
                        stack.append((sub, (*p, name)))
    found.sort()
    return found


def _norm_dialect(uri: str) -> str:
    u = uri.strip().rstrip("#")
    if u.startswith("http://"):
        u = "https://" + u[len("http://"):]
    return u


@dataclass(frozen=True)
class DialectCheck:
    dialect: str
    known: bool
    is_default: bool  # Draft 2020-12
    message: str


def check_dialect(dialect: Any) -> DialectCheck:
    """Is `dialect` (a provider's schema_dialect or a schema's `$schema`) one we know?"""
    if not isinstance(dialect, str):
        return DialectCheck(repr(dialect), False, False,
                            f"schema dialect must be a URI string, got {type(dialect).__name__}")
    n = _norm_dialect(dialect)
    if n not in _DIALECTS:
        return DialectCheck(dialect, False, False, f"unknown schema dialect {dialect!r}")
    is_default = n == _norm_dialect(DRAFT_2020_12)
    return DialectCheck(dialect, True, is_default,
                        "Draft 2020-12" if is_default else f"known dialect {dialect}")


def validator_class(dialect: str | None = None) -> type:
    if dialect is None:
        return jsonschema.Draft202012Validator
    return _DIALECTS.get(_norm_dialect(dialect), jsonschema.Draft202012Validator)


def _msg(text: str) -> str:
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


#: Messages that mean "this schema cannot be applied here" (not "the instance is wrong").
TOO_COSTLY = "schema too costly to validate"
PATTERN_UNSUPPORTED = "pattern not supported by the linear-time regex engine"


def _meta_errors(cls: type, schema: Any) -> Any:
    """Errors of `schema` against its dialect's meta-schema, metered like any walk."""
    meta_cls = metered_class(jsonschema.validators.validator_for(
        cls.META_SCHEMA, default=cls))  # type: ignore[attr-defined]
    return meta_cls(cls.META_SCHEMA,  # type: ignore[attr-defined]
                    format_checker=cls.FORMAT_CHECKER).iter_errors(schema)  # type: ignore[attr-defined]


def check_schema(schema: Any, dialect: str | None = None,
                 budget: Budget | None = None) -> list[tuple[str, str]]:
    """Errors of the schema itself against its dialect's meta-schema (pointer into schema)."""
    if not isinstance(schema, Mapping | bool):
        return [("", f"a schema must be an object or a boolean, got {type(schema).__name__}")]
    cls = validator_class(dialect)
    try:
        with metered(budget or Budget()):
            errs = sorted(_meta_errors(cls, schema), key=lambda e: [str(p) for p in e.path])
        return [(pointer(list(e.path)), _msg(e.message)) for e in errs[:MAX_ERRORS]]
    except (SchemaTooCostly, PatternNotSupported) as exc:
        return [("", _msg(str(exc)))]
    except (RecursionError, js_exc._WrappedReferencingError, Unresolvable) as exc:
        return [("", _msg(f"schema cannot be checked: {exc}"))]


def validate(
    instance: Any, schema: Any, dialect: str | None = None, max_errors: int = MAX_ERRORS,
    budget: Budget | None = None, format_checker: Any = None,
) -> list[tuple[str, str]]:
    """Validate `instance`; errors as (JSON pointer into the instance, message).

    Remote references are never retrieved: an unresolvable reference is reported as an
    error at the pointer where it was met. An invalid schema is one error at "". A schema
    past the budget is one error at "" starting with TOO_COSTLY; a regex RE2 cannot run,
    one starting with PATTERN_UNSUPPORTED. `budget` (default: a fresh one) tells the cost.
    """
    if not isinstance(schema, Mapping | bool):
        return [("", f"schema must be an object or a boolean, got {type(schema).__name__}")]
    cls = validator_class(dialect)
    out: list[tuple[str, str]] = []
    with metered(budget or budget_for(instance)):
        try:
            meta = js_exc.best_match(_meta_errors(cls, schema))
            if meta is not None:
                return [("", _msg(f"schema is invalid: {meta.message}"))]
        except (SchemaTooCostly, PatternNotSupported) as exc:
            return [("", _msg(str(exc)))]
        except (RecursionError, js_exc._WrappedReferencingError, Unresolvable) as exc:
            return [("", _msg(f"schema is invalid: {exc}"))]
        try:
            v = metered_class(cls)(schema, registry=OFFLINE_REGISTRY,
                                   format_checker=format_checker)
            for err in v.iter_errors(instance):
                item = (pointer(list(err.absolute_path)), _msg(err.message))
                if item not in out:
                    out.append(item)
                if len(out) >= max_errors:
                    break
        except (SchemaTooCostly, PatternNotSupported) as exc:
            return [("", _msg(str(exc)))]
        except (js_exc._WrappedReferencingError, Unresolvable) as exc:
            out.append(("", _msg(f"unresolvable reference (remote retrieval is disabled): "
                                 f"{exc}")))
        except RecursionError:
            out.append(("", "schema recursion too deep"))
        except (ValueError, TypeError, KeyError, LookupError) as exc:
            out.append(("", _msg(f"schema cannot be applied: {exc}")))
    out.sort()
    return out


def is_valid(instance: Any, schema: Any, dialect: str | None = None) -> bool:
    return not validate(instance, schema, dialect, max_errors=1)


def cannot_apply(errors: list[tuple[str, str]]) -> bool:
    """The errors say the schema could not be applied within bounds (not 'instance wrong')."""
    return any(m.startswith((TOO_COSTLY, PATTERN_UNSUPPORTED)) for _, m in errors)
