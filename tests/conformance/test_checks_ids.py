"""The guessability judgement behind the operation-id and resume-token checks: random ids
(the stock provider's) pass; counters, clocks, time-based UUIDs and ids built from the
request_id do not."""

from __future__ import annotations

import secrets
import uuid

from inspector.conformance.checks_ids import predictability_problem


def _rids(n: int) -> list[str]:
    return [str(uuid.uuid4()) for _ in range(n)]


def test_random_ids_pass() -> None:
    for _ in range(200):
        ops = [("op_" + secrets.token_hex(8), r) for r in _rids(3)]
        toks = [(secrets.token_urlsafe(32), r) for r in _rids(3)]
        assert predictability_problem(ops) is None, ops
        assert predictability_problem(toks) is None, toks


def test_a_counter_is_a_sequence() -> None:
    why = predictability_problem([(f"op_{n}", r)
                                  for n, r in zip((7, 8, 9), _rids(3), strict=True)])
    assert why is not None and "vary" in why


def test_a_long_counter_and_a_clock_are_caught() -> None:
    counter = [(f"operation-{n:020d}", r) for n, r in zip((1000, 1001, 1002), _rids(3),
                                                                strict=True)]
    assert "vary" in (predictability_problem(counter) or "")
    # a clock under a random-looking prefix per process: many characters vary overall
    clock = [(f"a1b2c3d4e5f6-{t}", r)
             for t, r in zip((1764612345678, 1764612345901, 1764699999999), _rids(3),
                             strict=True)]
    assert predictability_problem(clock) is not None


def test_time_based_uuids_are_caught() -> None:
    ids = [(str(uuid.uuid1()), r) for r in _rids(3)]
    assert predictability_problem(ids) is not None


def test_an_id_built_from_the_request_id_is_caught() -> None:
    rids = _rids(3)
    why = predictability_problem([("rt_" + r.replace("-", ""), r) for r in rids])
    assert why is not None and "request_id" in why


def test_the_same_value_twice_is_caught() -> None:
    v = secrets.token_hex(16)
    assert "same value" in (predictability_problem([(v, r) for r in _rids(2)]) or "")


def test_consecutive_values_close_as_text_or_as_numbers_are_caught() -> None:
    other = "op_" + secrets.token_hex(8)
    base = "op_" + secrets.token_hex(5)
    near_text = [(base + "00a1b2", _rids(1)[0]), (base + "00a1b3", _rids(1)[0]),
                 (other, _rids(1)[0])]
    assert "sequence" in (predictability_problem(near_text) or "")
    near_number = [(base + "0fffff", _rids(1)[0]), (base + "100000", _rids(1)[0]),
                   (other, _rids(1)[0])]
    assert "counter or a clock" in (predictability_problem(near_number) or "")


async def test_counter_operation_ids_warn_with_the_ids_shown(device, client, tmp_path) -> None:
    """The planted fault (op_1000, op_1001, …): a warning, not a failure, showing the ids
    and saying why it is only a SHOULD."""
    from inspector.conformance import Outcome, run_conformance
    from inspector.virtual.faultplugins import plugin_source

    from .conftest import full_setup

    path = tmp_path / "fault.py"
    path.write_text(plugin_source("sequential_operation_ids"), encoding="utf-8")
    [package] = device.load_plugin(path, notify=False)
    check = "async.operation_id_unpredictable"
    report = await run_conformance(client, package, setup=full_setup(poll_timeout_ms=3000),
                                   select=[check])
    r = report.result(check)
    assert r.outcome == Outcome.WARNING and report.by_outcome(Outcome.FAIL) == []
    assert r.evidence.observed["operation_ids"][:2] == ["op_1000", "op_1001"]
    assert "guessable operation ids" in r.message and "warning, not a failure" in r.message
