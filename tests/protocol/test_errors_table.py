from __future__ import annotations

import re
from pathlib import Path

import pytest

from inspector.protocol import errors


def test_table_has_every_spec_code():
    assert len(errors.ERRORS) == 19
    assert next(iter(errors.ERRORS)) == "UNSUPPORTED_VERSION"
    assert list(errors.ERRORS)[-1] == "INTERNAL_ERROR"


@pytest.mark.parametrize(("code", "want"), [
    ("UNSUPPORTED_VERSION", False), ("NEGOTIATION_REQUIRED", True), ("AUTH_REQUIRED", None),
    ("USER_ACTION_REQUIRED", None), ("USER_CANCELLED", False), ("CONFLICT", None),
    ("RATE_LIMITED", True), ("DEADLINE_EXCEEDED", None), ("UNAVAILABLE", True),
    ("INTERNAL_ERROR", None), ("RESULT_TOO_LARGE", False), ("NO_SUCH_CODE", None),
])
def test_expected_retryable(code, want):
    assert errors.expected_retryable(code) is want


def test_conditional_and_consistency():
    assert errors.table_retryable("CONFLICT") == errors.CONDITIONAL
    assert errors.retryable_consistent("CONFLICT", True)
    assert errors.retryable_consistent("RATE_LIMITED", True)
    assert not errors.retryable_consistent("INVALID_ARGS", True)
    assert errors.retryable_consistent("MADE_UP", True)


def test_v1_codes():
    assert {"AUTH_REQUIRED", "PERMISSION_DENIED", "TOOL_NOT_FOUND",
                               "INVALID_ARGS", "RATE_LIMITED", "INTERNAL_ERROR"} == errors.V1_CODES
    assert errors.is_known_code("TOOL_NOT_FOUND", v2=False)
    assert not errors.is_known_code("METHOD_NOT_FOUND", v2=False)
    assert errors.is_known_code("METHOD_NOT_FOUND")
    assert not errors.is_known_code("method_not_found")


def test_user_action_codes():
    assert errors.needs_user_action("INVALID_ARGS")
    assert errors.needs_user_action("AUTH_REQUIRED")
    assert not errors.needs_user_action("UNAVAILABLE")
    assert errors.meaning("X") == "Unknown error code"


# A committed copy of the spec text, so this check runs everywhere.
SPEC = Path(__file__).resolve().parent / "fixtures" / "cetp-v2-spec.txt"


def test_table_matches_spec_text():
    rows = re.findall(r"^`([A-Z_]+)`\t(Yes|No|Conditional)\t(.+)$", SPEC.read_text(), re.M)
    assert len(rows) == 19
    for code, r, meaning in rows:
        e = errors.ERRORS[code]
        assert e.retryable == {"Yes": True, "No": False, "Conditional": "conditional"}[r]
        assert e.meaning == meaning.strip()
