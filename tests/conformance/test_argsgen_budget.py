"""Argument generation on hostile input schemas stays within the validation budget (issue 12)."""

from __future__ import annotations

import time

from inspector.conformance import argsgen
from inspector.protocol.hostile_schemas import doubling_chain, input_schema_with_evil_default


def test_doubling_chain_input_schema_gives_no_arguments_quickly():
    s = doubling_chain(28, leaf={"type": "string"})
    s["type"] = "object"
    t0 = time.monotonic()
    assert argsgen.valid_args(s) is None
    assert argsgen.invalid_args(s) is None
    assert argsgen.alt_args(s, {"a": 1}) is None
    assert time.monotonic() - t0 < 10  # one budget (the verdict is cached), not three


def test_evil_default_pattern_is_cheap():
    t0 = time.monotonic()
    # the default "aaa…!" does not match ^(a+)+$, so the derived sample is rejected
    assert argsgen.valid_args(input_schema_with_evil_default(40)) is None
    inv = argsgen.invalid_args(input_schema_with_evil_default(40))
    assert inv is not None
    assert time.monotonic() - t0 < 3
