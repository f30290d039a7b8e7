"""Bounded-cost JSON Schema validation of provider-supplied (hostile) schemas.

Two attacks made validation unbounded (issue 12):

- `pattern` / `patternProperties` ran on Python's backtracking `re`: `^(a+)+$` doubles its
  time per input character. Every regex of a schema now runs on RE2 (`google-re2`, linear
  time in the input, bounded memory); a pattern RE2 cannot express (look-around,
  back-references, huge counted repetitions) raises `PatternNotSupported`, reported as a
  verdict — never retried on `re`.
- An `anyOf`/`$ref` doubling chain costs 2^depth keyword applications. Every keyword
  application is counted against a `Budget` (steps, wall-clock deadline, bytes of error
  messages kept): past it `SchemaTooCostly` stops the walk.

jsonschema calls `re.search` from three private modules (`_keywords`, `_legacy_keywords`
for `pattern`/`patternProperties`, `_utils` for `additionalProperties` and
`unevaluatedProperties`). `install_linear_regex` replaces their module-level `re` with a
shim whose `search` is RE2 and whose other attributes are the real `re`; a test checks the
shim stays installed if jsonschema moves code around.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import attrs
import jsonschema
import re2

#: Documented defaults (docs/architecture.md, "Issue 12"): a provider schema gets at most
#: MAX_STEPS keyword applications plus STEPS_PER_NODE per node of the instance (a long
#: legitimate result needs more steps; an exponential schema needs more than any of it),
#: MAX_SECONDS of wall time and MAX_MESSAGE_BYTES of error messages.
MAX_STEPS = 50_000
STEPS_PER_NODE = 32
MAX_SECONDS = 5.0
MAX_MESSAGE_BYTES = 32 * 1024 * 1024
#: RE2's own memory cap per compiled pattern (RE2 fails cleanly past it).
RE2_MAX_MEM = 8 * 1024 * 1024
_CHECK_EVERY = 256  # look at the clock every N steps


class PatternNotSupported(Exception):
    """A schema regex that the linear-time engine cannot run."""

    def __init__(self, pattern: str, reason: str) -> None:
        self.pattern = pattern
        self.reason = reason
        shown = pattern if len(pattern) <= 80 else pattern[:79] + "…"
        super().__init__(
            f"pattern not supported by the linear-time regex engine (RE2): {shown!r} "
            f"({reason}); the inspector never runs provider patterns on a backtracking "
            "engine — rewrite it without look-around or back-references")


class SchemaTooCostly(Exception):
    """The validation walk went past its budget."""

    def __init__(self, what: str) -> None:
        self.what = what
        super().__init__(
            f"schema too costly to validate: {what}; the schema (e.g. an anyOf/$ref chain "
            "that doubles at each level) makes validation exponential — flatten it")


@dataclass
class Budget:
    """Limits of one validation; `spent` tells what it used (for benchmarks/tests)."""

    max_steps: int = MAX_STEPS
    max_seconds: float = MAX_SECONDS
    max_message_bytes: int = MAX_MESSAGE_BYTES
    steps: int = 0
    message_bytes: int = 0
    started: float = field(default_factory=time.monotonic)

    def tick(self) -> None:
        self.steps += 1
        if self.steps > self.max_steps:
            raise SchemaTooCostly(f"more than {self.max_steps:,} keyword applications")
        if self.steps % _CHECK_EVERY == 0 and self.elapsed() > self.max_seconds:
            raise SchemaTooCostly(f"more than {self.max_seconds:g} s")

    def charge(self, message: str) -> None:
        self.message_bytes += len(message)
        if self.message_bytes > self.max_message_bytes:
            raise SchemaTooCostly(
                f"more than {self.max_message_bytes // (1024 * 1024)} MiB of error messages")

    def elapsed(self) -> float:
        return time.monotonic() - self.started


def budget_for(instance: Any, node_cap: int = 1_000_000) -> Budget:
    """The default budget for validating `instance` (steps grow with its size)."""
    nodes, stack = 0, [instance]
    while stack and nodes < node_cap:
        node = stack.pop()
        nodes += 1
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return Budget(max_steps=MAX_STEPS + STEPS_PER_NODE * nodes)


_current: ContextVar[Budget | None] = ContextVar("schema_budget", default=None)


class metered:
    """Context manager: validations inside it count against `budget`."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self._token: Any = None

    def __enter__(self) -> Budget:
        self.budget.started = time.monotonic()
        self._token = _current.set(self.budget)
        return self.budget

    def __exit__(self, *exc: object) -> None:
        _current.reset(self._token)


# -- linear-time regex -----------------------------------------------------------------------
def _options() -> Any:
    o = re2.Options()
    o.log_errors = False  # RE2 otherwise prints every rejected pattern on stderr
    o.max_mem = RE2_MAX_MEM
    return o


_OPTIONS = _options()


@lru_cache(maxsize=512)
def compile_linear(pattern: str) -> Any:
    """The RE2 program of `pattern`, or PatternNotSupported."""
    if not isinstance(pattern, str):
        raise PatternNotSupported(repr(pattern), "not a string")
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else str(exc)
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise PatternNotSupported(pattern, str(reason)) from None


def linear_search(pattern: str, string: str, flags: int = 0) -> Any:
    """`re.search` with RE2 semantics (no flags are used by jsonschema)."""
    b = _current.get()
    if b is not None:
        b.tick()
    return compile_linear(pattern).search(string)


class _LinearRe:
    """Stands in for the `re` module inside jsonschema: `search` is RE2."""

    search = staticmethod(linear_search)

    def __getattr__(self, name: str) -> Any:
        return getattr(re, name)


LINEAR_RE = _LinearRe()
_PATCHED_MODULES = ("jsonschema._keywords", "jsonschema._legacy_keywords", "jsonschema._utils")


def install_linear_regex() -> None:
    """Make jsonschema's `pattern`, `patternProperties`, `additionalProperties` and
    `unevaluatedProperties` match with RE2 (idempotent)."""
    import importlib

    for name in _PATCHED_MODULES:
        mod = importlib.import_module(name)
        if getattr(mod, "re", None) is not None:
            mod.re = LINEAR_RE  # type: ignore[attr-defined]


def linear_regex_installed() -> bool:
    import importlib

    return all(getattr(importlib.import_module(n), "re", None) is LINEAR_RE
               for n in _PATCHED_MODULES)


# -- metered validator classes ---------------------------------------------------------------
def _counted(fn: Callable[..., Any]) -> Callable[..., Iterator[Any]]:
    def keyword(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
        b = _current.get()
        if b is not None:
            b.tick()
        errors = fn(validator, value, instance, schema)
        if not errors:
            return
        for err in errors:
            if b is not None:
                b.charge(err.message)
            yield err

    keyword.__name__ = getattr(fn, "__name__", "keyword")
    return keyword


_METERED: dict[type, type] = {}
_METERED_SET: set[type] = set()


def metered_class(cls: type) -> type:
    """`cls` with every keyword counted against the current Budget."""
    got = _METERED.get(cls)
    if got is None:
        counted = {k: _counted(v) for k, v in cls.VALIDATORS.items()}  # type: ignore[attr-defined]
        got = jsonschema.validators.extend(cls, counted)
        plain_evolve = got.evolve

        def evolve(self: Any, **changes: Any) -> Any:
            # A subschema with its own `$schema` makes jsonschema switch to that dialect's
            # (unmetered) class: switch to its metered twin so the budget still counts.
            new = plain_evolve(self, **changes)
            if type(new) in _METERED_SET:
                return new
            twin = metered_class(type(new))
            return twin(**{f.alias: getattr(new, f.name)
                           for f in attrs.fields(type(new)) if f.init})

        got.evolve = evolve  # type: ignore[attr-defined]
        _METERED[cls] = got
        _METERED_SET.add(got)
    return got


install_linear_regex()
