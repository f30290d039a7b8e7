"""The validation worker process: verdicts cross the process boundary, a child past its
deadline is killed and replaced (issue 12)."""

from __future__ import annotations

import time

from inspector.protocol import schema as schemas
from inspector.protocol import schema_worker
from inspector.protocol.hostile_schemas import doubling_chain, evil_string, pattern_schema


def test_verdicts_match_in_process_validation():
    s = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    assert schema_worker.validate_isolated({"a": 1}, s) == []
    assert schema_worker.validate_isolated({"a": "x"}, s) == schemas.validate({"a": "x"}, s)
    errs = schema_worker.validate_isolated(evil_string(5000), pattern_schema())
    assert len(errs) == 1 and not schemas.cannot_apply(errs)


def test_formats_are_checked_when_asked():
    s = {"type": "string", "format": "date"}
    assert schema_worker.validate_isolated("not a date", s) == []
    assert schema_worker.validate_isolated("not a date", s, formats=True)


def test_a_child_past_its_deadline_is_killed_and_replaced(monkeypatch):
    schema_worker.validate_isolated(1, {"type": "integer"})  # warm
    monkeypatch.setattr(schema_worker, "DEADLINE_S", 0.05)
    t0 = time.monotonic()
    errs = schema_worker.validate_isolated(0, doubling_chain(28))
    assert time.monotonic() - t0 < 3
    assert errs[0][1].startswith(schemas.TOO_COSTLY) and "worker was stopped" in errs[0][1]
    monkeypatch.undo()
    assert schema_worker.validate_isolated("s", {"type": "string"}) == []  # a fresh child


def test_queued_calls_are_not_mistaken_for_runaways():
    from concurrent.futures import ThreadPoolExecutor

    schema_worker.validate_isolated(1, {"type": "integer"})  # warm
    with ThreadPoolExecutor(6) as ex:
        results = list(ex.map(lambda _: schema_worker.validate_isolated(0, doubling_chain(24)),
                              range(6)))
    for errs in results:  # every one got the budget's own verdict (steps or time, as the
        # shared machine allows), none was killed as a runaway
        assert errs[0][1].startswith(schemas.TOO_COSTLY), errs
        assert "worker was stopped" not in errs[0][1], errs
