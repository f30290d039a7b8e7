"""The CETP error table (§5) and the v1 error codes.

`ERRORS[code].retryable` is True, False or "conditional" exactly as the spec's table says;
`expected_retryable(code)` gives what a provider's `retryable` flag must be (None when the
table allows either value or the code is unknown).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Retryable = bool | Literal["conditional"]
CONDITIONAL: Literal["conditional"] = "conditional"

UNSUPPORTED_VERSION = "UNSUPPORTED_VERSION"
UNSUPPORTED_CAPABILITY = "UNSUPPORTED_CAPABILITY"
NEGOTIATION_REQUIRED = "NEGOTIATION_REQUIRED"
AUTH_REQUIRED = "AUTH_REQUIRED"
USER_ACTION_REQUIRED = "USER_ACTION_REQUIRED"
USER_CANCELLED = "USER_CANCELLED"
PERMISSION_DENIED = "PERMISSION_DENIED"
TOOL_NOT_FOUND = "TOOL_NOT_FOUND"
METHOD_NOT_FOUND = "METHOD_NOT_FOUND"
INVALID_ARGS = "INVALID_ARGS"
INVALID_REQUEST = "INVALID_REQUEST"
CONFLICT = "CONFLICT"
RATE_LIMITED = "RATE_LIMITED"
DEADLINE_EXCEEDED = "DEADLINE_EXCEEDED"
CANCELLED = "CANCELLED"
RESULT_TOO_LARGE = "RESULT_TOO_LARGE"
RESULT_EXPIRED = "RESULT_EXPIRED"
UNAVAILABLE = "UNAVAILABLE"
INTERNAL_ERROR = "INTERNAL_ERROR"


@dataclass(frozen=True)
class ErrorSpec:
    code: str
    retryable: Retryable
    meaning: str
    v1: bool = False  # also a v1 code
    #: the user (not a retry) must act: authorization, confirmation or argument errors
    needs_user_action: bool = False


_TABLE: list[ErrorSpec] = [
    ErrorSpec(UNSUPPORTED_VERSION, False, "No common protocol version"),
    ErrorSpec(UNSUPPORTED_CAPABILITY, False, "Request uses an unnegotiated capability"),
    ErrorSpec(NEGOTIATION_REQUIRED, True,
              "Session is absent, expired, or lost after Provider restart"),
    ErrorSpec(AUTH_REQUIRED, CONDITIONAL, "User must log in or grant scopes", v1=True,
              needs_user_action=True),
    ErrorSpec(USER_ACTION_REQUIRED, CONDITIONAL, "This call needs Provider-side confirmation",
              needs_user_action=True),
    ErrorSpec(USER_CANCELLED, False, "User denied or cancelled confirmation",
              needs_user_action=True),
    ErrorSpec(PERMISSION_DENIED, False, "Caller is not allowed access", v1=True,
              needs_user_action=True),
    ErrorSpec(TOOL_NOT_FOUND, False, "Tool does not exist or is hidden from this caller",
              v1=True),
    ErrorSpec(METHOD_NOT_FOUND, False, "Method does not exist"),
    ErrorSpec(INVALID_ARGS, False, "Arguments do not match the input schema", v1=True,
              needs_user_action=True),
    ErrorSpec(INVALID_REQUEST, False, "Envelope, token, or request ID use is invalid"),
    ErrorSpec(CONFLICT, CONDITIONAL, "Current state prevents execution or cancellation"),
    ErrorSpec(RATE_LIMITED, True, "Provider rate limit exceeded", v1=True),
    ErrorSpec(DEADLINE_EXCEEDED, CONDITIONAL, "Deadline elapsed; query the same request ID first"),
    ErrorSpec(CANCELLED, False, "Operation is confirmed cancelled"),
    ErrorSpec(RESULT_TOO_LARGE, False,
              "Large result transport was not negotiated and inline is impossible"),
    ErrorSpec(RESULT_EXPIRED, False, "Operation result exceeded retention"),
    ErrorSpec(UNAVAILABLE, True, "Provider is temporarily unavailable"),
    ErrorSpec(INTERNAL_ERROR, CONDITIONAL,
              "Internal failure without stacks or sensitive details", v1=True),
]

#: The full v2 table, keyed by code, in the spec's order.
ERRORS: dict[str, ErrorSpec] = {e.code: e for e in _TABLE}

#: The codes a v1 provider uses (v1 answers an unknown method with TOOL_NOT_FOUND).
V1_CODES: frozenset[str] = frozenset(e.code for e in _TABLE if e.v1)


def is_known_code(code: str, *, v2: bool = True) -> bool:
    """True when `code` is in the v2 table (or, with v2=False, a v1 code)."""
    return code in ERRORS if v2 else code in V1_CODES


def spec_for(code: str) -> ErrorSpec | None:
    return ERRORS.get(code)


def table_retryable(code: str) -> Retryable | None:
    """The table's entry: True, False, "conditional", or None for an unknown code."""
    e = ERRORS.get(code)
    return e.retryable if e else None


def expected_retryable(code: str) -> bool | None:
    """The value `retryable` must have for `code`; None when conditional or unknown."""
    r = table_retryable(code)
    return r if isinstance(r, bool) else None


def retryable_consistent(code: str, retryable: bool | None) -> bool:
    """Whether a provider's `retryable` flag agrees with the table (unknown codes pass)."""
    want = expected_retryable(code)
    return want is None or retryable is None or retryable == want


def meaning(code: str) -> str:
    e = ERRORS.get(code)
    return e.meaning if e else "Unknown error code"


def needs_user_action(code: str) -> bool:
    """Errors a consumer must not loop on without user action or changed input (§5)."""
    e = ERRORS.get(code)
    return bool(e and e.needs_user_action)
