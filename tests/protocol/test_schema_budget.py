"""Issue 12: validation of hostile provider schemas has a bounded cost.

Bounds asserted here (docs/architecture.md, Issue 12): every validation stops within the
step budget (MAX_STEPS + STEPS_PER_NODE per instance node) and MAX_SECONDS; regexes run on
RE2, so `^(a+)+$` costs the same at 30 and 10 000 characters.
"""

from __future__ import annotations

import time

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.protocol import schema
from inspector.protocol.hostile_schemas import (
    NESTED_QUANTIFIER,
    doubling_chain,
    evil_string,
    pattern_properties_schema,
    pattern_schema,
)
from inspector.protocol.schema_budget import (
    MAX_SECONDS,
    MAX_STEPS,
    Budget,
    budget_for,
    linear_regex_installed,
)

SLACK_S = 3.0  # a loaded 2-core test machine; the budget itself is MAX_SECONDS


def _timed(instance, sch, budget=None):
    b = budget or budget_for(instance)
    t0 = time.monotonic()
    errs = schema.validate(instance, sch, budget=b)
    return errs, time.monotonic() - t0, b


def test_jsonschema_regex_calls_go_to_re2():
    assert linear_regex_installed()


def test_doubling_chain_stops_at_the_step_budget():
    for depth in (18, 20, 28):
        errs, took, b = _timed(0, doubling_chain(depth))
        assert len(errs) == 1 and errs[0][0] == ""
        assert errs[0][1].startswith(schema.TOO_COSTLY), errs
        assert b.steps <= b.max_steps + 1
        assert took < MAX_SECONDS + SLACK_S
        assert schema.cannot_apply(errs)


def test_doubling_chain_that_is_cheap_is_validated_normally():
    # depth 6 = 64 paths: within budget, a real verdict either way
    assert schema.validate(0, doubling_chain(6)) != []
    assert not schema.cannot_apply(schema.validate(0, doubling_chain(6)))
    assert schema.validate("s", doubling_chain(6)) == []


def test_a_nested_dollar_schema_cannot_escape_the_meter():
    s = doubling_chain(24)
    s["$defs"]["d3"]["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    errs, took, _ = _timed(0, s)
    assert errs[0][1].startswith(schema.TOO_COSTLY)
    assert took < MAX_SECONDS + SLACK_S


def test_time_budget_stops_a_walk_too():
    b = Budget(max_steps=10**9, max_seconds=0.2)
    errs, took, _ = _timed(0, doubling_chain(30), b)
    assert errs[0][1].startswith(schema.TOO_COSTLY) and "s;" in errs[0][1]
    assert took < 0.2 + SLACK_S


def test_nested_quantifier_is_linear():
    # Python's re needs ~2^n steps here; 10 000 characters would never finish.
    for n in (30, 64, 10_000):
        errs, took, b = _timed(evil_string(n), pattern_schema())
        assert len(errs) == 1 and not schema.cannot_apply(errs)  # a real "no match"
        assert took < 1.0 + SLACK_S and b.steps < 100
    assert schema.validate("aaaa", pattern_schema()) == []


def test_pattern_properties_and_additional_properties_use_re2():
    s = pattern_properties_schema()
    errs, took, _ = _timed({evil_string(64): 1}, s)
    assert errs and "does not match any of the regexes" in errs[0][1]
    assert took < 1.0 + SLACK_S
    assert schema.validate({"aaa": 1}, s) == []
    assert schema.validate({"aaa": "x"}, s)[0][0] == "/aaa"


def test_unevaluated_properties_use_re2():
    s = {"patternProperties": {NESTED_QUANTIFIER: True}, "unevaluatedProperties": False}
    errs, took, _ = _timed({evil_string(64): 1}, s)
    assert errs and took < 1.0 + SLACK_S


def test_look_around_gets_a_clear_unsupported_verdict():
    for pat in ("^(?=a)a$", "(a)\\1", "a{1001}"):
        errs = schema.validate("a", pattern_schema(pat))
        assert len(errs) == 1, (pat, errs)
        assert errs[0][1].startswith(schema.PATTERN_UNSUPPORTED), errs
        assert schema.cannot_apply(errs)


def test_large_legitimate_instance_gets_more_steps():
    s = {"type": "array", "items": {"type": "object", "properties": {
        "a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["a"]}}
    inst = [{"a": i, "b": "x"} for i in range(5000)]
    assert budget_for(inst).max_steps > MAX_STEPS
    assert schema.validate(inst, s) == []


def test_error_messages_are_charged_against_memory():
    big = "x" * 100_000
    s = {"anyOf": [{"type": "integer"}] * 400}
    b = Budget(max_message_bytes=10_000_000)
    errs, _, _ = _timed(big, s, b)
    assert errs[0][1].startswith(schema.TOO_COSTLY) and "MiB" in errs[0][1]


_leaf = st.sampled_from([{"type": "string"}, {"type": "integer"}, {"pattern": NESTED_QUANTIFIER},
                         {"minimum": 3}, True, False])


@st.composite
def hostile(draw):
    """Chains of anyOf/oneOf/allOf doubling through $refs, random depth and leaves."""
    depth = draw(st.integers(10, 26))
    kw = draw(st.sampled_from(["anyOf", "oneOf", "allOf"]))
    width = draw(st.integers(2, 3))
    defs = {}
    for i in range(depth):
        defs[f"d{i}"] = {kw: [{"$ref": f"#/$defs/d{i + 1}"} for _ in range(width)]}
    defs[f"d{depth}"] = draw(_leaf)
    return {"$defs": defs, "$ref": "#/$defs/d0"}


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sch=hostile(), inst=st.one_of(st.integers(), st.text(max_size=40), st.just(evil_string(40))))
def test_any_hostile_chain_finishes_within_the_budget(sch, inst):
    errs, took, b = _timed(inst, sch)
    assert took < MAX_SECONDS + SLACK_S
    assert b.steps <= b.max_steps + 1
    assert all(isinstance(p, str) and isinstance(m, str) for p, m in errs)


def test_plain_jsonschema_is_untouched_for_valid_data():
    # the shim keeps jsonschema's own behaviour for ordinary patterns
    assert jsonschema.Draft202012Validator({"pattern": "^a+$"}).is_valid("aaa")
    assert not jsonschema.Draft202012Validator({"pattern": "^a+$"}).is_valid("b")
