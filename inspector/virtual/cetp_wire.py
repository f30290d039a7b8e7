"""CETP reply envelopes as a provider writes them (spec §4.2, §5; v1 from the reference notes).

Written from the provider's side on purpose, independently of the desktop's parser in
`inspector.protocol`, so that the two implementations check each other.
"""

from __future__ import annotations

import json
from typing import Any

from inspector.protocol.bundle import Bundle, Int, Long

# spec §5: code → retryable (the "Conditional" rows get the value of their common case)
RETRYABLE: dict[str, bool] = {
    "UNSUPPORTED_VERSION": False,
    "UNSUPPORTED_CAPABILITY": False,
    "NEGOTIATION_REQUIRED": True,
    "AUTH_REQUIRED": False,
    "USER_ACTION_REQUIRED": False,
    "USER_CANCELLED": False,
    "PERMISSION_DENIED": False,
    "TOOL_NOT_FOUND": False,
    "METHOD_NOT_FOUND": False,
    "INVALID_ARGS": False,
    "INVALID_REQUEST": False,
    "CONFLICT": False,
    "RATE_LIMITED": True,
    "DEADLINE_EXCEEDED": False,
    "CANCELLED": False,
    "RESULT_TOO_LARGE": False,
    "RESULT_EXPIRED": False,
    "UNAVAILABLE": True,
    "INTERNAL_ERROR": False,
}


def dumps(obj: Any) -> str:
    """Compact JSON, as the SDK's org.json writes it."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


class CetpError(Exception):
    """A structured provider error (spec §5), raised inside provider code."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        retryable: bool | None = None,
        details: dict[str, Any] | None = None,
        retry_after_ms: int | None = None,
        extra: Bundle | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.retryable = RETRYABLE.get(code, False) if retryable is None else retryable
        self.details = details
        self.retry_after_ms = retry_after_ms
        self.extra = extra or Bundle()

    def as_json(self) -> dict[str, Any]:
        """The error object inside a failed operation state."""
        out: dict[str, Any] = {
            "error_code": self.code,
            "error_message": self.message,
            "retryable": self.retryable,
        }
        if self.details is not None:
            out["error_details"] = self.details
        return out


def v2_error(err: CetpError, request_id: str | None) -> Bundle:
    b = Bundle(
        status="error",
        protocol_version=Int(2),
        error_code=err.code,
        error_message=err.message,
        retryable=err.retryable,
    )
    if request_id is not None:
        b["request_id"] = request_id
    if err.details is not None:
        b["error_details"] = dumps(err.details)
    if err.retry_after_ms is not None:
        b["retry_after_ms"] = Long(err.retry_after_ms)
    b.update(err.extra)
    return b


def v2_success(data: Any, request_id: str | None, status: str = "success") -> Bundle:
    b = Bundle(status=status, protocol_version=Int(2), data=dumps(data))
    if request_id is not None:
        b["request_id"] = request_id
    return b


def v1_success(data: Any) -> Bundle:
    return Bundle(status="success", data=dumps(data) if not isinstance(data, str) else data)


def v1_error(code: str, message: str) -> Bundle:
    return Bundle(status="error", error_code=code, error_message=message)
