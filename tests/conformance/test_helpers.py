from __future__ import annotations

import pytest

from inspector.conformance import argsgen
from inspector.conformance.context import effect_size, effect_vector, from_findings
from inspector.conformance.model import Outcome
from inspector.conformance.registry import CHECKS, _load, catalogue, selected, unknown_patterns
from inspector.protocol import rules as R

CREATE = {
    "type": "object",
    "properties": {"symbol": {"type": "string", "pattern": "^[A-Z]{1,8}$"},
                   "price": {"type": "number", "exclusiveMinimum": 0},
                   "direction": {"type": "string", "enum": ["above", "below"]}},
    "required": ["symbol", "price"],
    "additionalProperties": False,
}


def test_effect_vector() -> None:
    a = {"alerts": [{"id": 1}], "count": 3, "name": "x", "ts": 5}
    b = {"alerts": [{"id": 1}, {"id": 2}], "count": 5, "name": "y", "ts": 5}
    assert effect_vector(a, b) == {"len(.alerts)": 1, ".count": 2, ".name": 1}
    assert effect_vector(a, a) == {} and effect_size(a, a) == 0
    two = {"alerts": [{"id": 1}, {"id": 2}, {"id": 3}], "count": 7, "name": "y", "ts": 5}
    assert effect_vector(b, two) == {"len(.alerts)": 1, ".count": 2}
    assert effect_vector(a, two) != effect_vector(a, b)  # two executions ≠ one
    assert effect_vector({"a": []}, {"a": [1]}) == {"len(.a)": 1}


def test_args_generation() -> None:
    assert argsgen.valid_args(CREATE) is None  # the pattern defeats the sampler
    bad = argsgen.invalid_args(CREATE)
    assert bad is not None and "symbol" in bad[1]
    good = {"symbol": "ACME", "price": 100}
    assert argsgen.alt_args(CREATE, good) == {"symbol": "ACME", "price": 101}
    assert argsgen.valid_args({"type": "object", "properties": {}}) == {}
    s = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 3}},
         "required": ["n"]}
    assert argsgen.valid_args(s) == {"n": 3}
    inv = argsgen.invalid_args(s)
    assert inv is not None
    remote = {"type": "object", "properties": {"k": {"$ref": "https://x.example/k.json"}},
              "required": ["k"]}
    assert argsgen.valid_args(remote) is None and argsgen.invalid_args(remote) is None
    assert argsgen.probe_args(remote) == ({"k": None}, argsgen.probe_args(remote)[1])


def test_from_findings() -> None:
    ok = R.R_LIMITS.ok("fine")
    bad = R.R_TEXT_LIMITS.fail("long")
    assert from_findings([ok]).outcome == Outcome.PASS
    assert from_findings([ok, R.R_LIMITS.fail("x")]).outcome == Outcome.FAIL
    assert from_findings([bad]).outcome == Outcome.WARNING
    assert from_findings([]).outcome == Outcome.NOT_APPLICABLE


def test_registry() -> None:
    _load()
    ids = set(CHECKS)
    assert len(ids) == len(catalogue())
    for c in CHECKS.values():
        assert c.section.startswith("§") and c.level in ("MUST", "SHOULD", "INFO")
        assert c.doc, c.id
        for rid in c.rule_ids:
            assert rid in R.RULES
    # every CETP rule is applied by some check (AndyClaw rules belong to extensions)
    applied = {rid for c in CHECKS.values() for rid in c.rule_ids} | ids
    cetp_rules = {rid for rid, r in R.RULES.items() if r.spec == "CETP v2"}
    assert cetp_rules - applied == set()


@pytest.mark.parametrize(("select", "skip", "some", "none"), [
    (["errors"], None, "errors.method_not_found", "negotiate.success"),
    (["negotiate.*"], ["negotiate.token_unique"], "negotiate.success",
     "negotiate.token_unique"),
    (None, ["confirmation"], "errors.envelope", "confirmation.deny"),
    (["idempotency.replay"], None, "idempotency.replay", "idempotency.concurrent"),
])
def test_selection(select, skip, some, none) -> None:
    _load()
    chosen = selected(select, skip)
    assert chosen[some] and not chosen[none]


def test_unknown_patterns() -> None:
    _load()
    assert unknown_patterns(["errors", "bogus.*", "nope"]) == ["bogus.*", "nope"]
