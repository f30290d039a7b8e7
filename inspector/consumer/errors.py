"""Engine-level failures, each with a code, a readable message and what to try next.

These are the inspector's own verdicts about a call (refused before sending, transport
lost, reply broke the protocol); a provider's structured CETP error is not an exception
but an outcome (see `execution.ExecutionOutcome`), except for the session-level calls
(negotiate, info, list) where it is raised as `ProviderError`.
"""

from __future__ import annotations

from typing import Any

# Codes of requests the inspector refuses to send.
REQUEST_TOO_LARGE = "REQUEST_TOO_LARGE"
CAPABILITY_NOT_NEGOTIATED = "CAPABILITY_NOT_NEGOTIATED"
NOT_NEGOTIATED = "NOT_NEGOTIATED"
NO_COMMON_VERSION = "NO_COMMON_VERSION"
INVALID_ARGS_JSON = "INVALID_ARGS_JSON"
WRONG_STATE = "WRONG_STATE"
V1_FORBIDDEN = "V1_FORBIDDEN"
MALFORMED_REPLY = "MALFORMED_REPLY"
NEGOTIATION_FAILED = "NEGOTIATION_FAILED"
AUTHORITY_MISMATCH = "AUTHORITY_MISMATCH"


class ConsumerError(Exception):
    """Base: `code`, `message`, `hint` and the recorded exchange (if any)."""

    def __init__(
        self, code: str, message: str, hint: str = "", exchange_id: str | None = None
    ) -> None:
        super().__init__(f"{code}: {message}" + (f" — {hint}" if hint else ""))
        self.code = code
        self.message = message
        self.hint = hint
        self.exchange_id = exchange_id


class RequestRefused(ConsumerError):
    """The inspector did not send the request (size limit, unnegotiated capability …)."""


class NegotiationFailed(ConsumerError):
    """v2 negotiation did not succeed; the provider must not be used over v1 instead."""


class MalformedReply(ConsumerError):
    """The reply broke the protocol (null Bundle, bad JSON, missing field …)."""


class TransportFailure(ConsumerError):
    """The relay or device failed; `relay_code` is the relay error code."""

    def __init__(self, relay_code: str, message: str, hint: str = "",
                 exchange_id: str | None = None) -> None:
        super().__init__(relay_code, message, hint, exchange_id)
        self.relay_code = relay_code


class ProviderError(ConsumerError):
    """A structured CETP error from a session-level call; `info` is the parsed ErrorInfo."""

    def __init__(self, info: Any, exchange_id: str | None = None, hint: str = "") -> None:
        super().__init__(str(info.error_code), str(info.error_message), hint, exchange_id)
        self.info = info
