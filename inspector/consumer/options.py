"""User-tunable engine settings (one object shared by a session's providers)."""

from __future__ import annotations

from pydantic import BaseModel

from inspector.protocol.cetp import CAP_ASYNC, CAP_CANCEL, CAP_LARGE, SUPPORTED_VERSIONS


class EngineOptions(BaseModel):
    #: capabilities the inspector asks for in negotiate (a user may turn some off to test
    #: a provider's behaviour without them)
    capabilities: tuple[str, ...] = (CAP_ASYNC, CAP_CANCEL, CAP_LARGE)
    #: versions offered in negotiate (sent in descending order)
    consumer_versions: tuple[int, ...] = SUPPORTED_VERSIONS
    #: deadline_at_ms = now + this, for each attempt
    deadline_ms: int = 30_000
    #: relay-side timeout of one ContentResolver.call
    call_timeout_ms: int = 30_000
    #: automatic retries of one logical execution (retryable errors, lost replies)
    max_auto_retries: int = 3
    #: a retry_after_ms above this is not waited for automatically: the user decides
    max_auto_wait_ms: int = 60_000
    #: pause before re-sending after a transport timeout/disconnect (same request_id)
    transport_retry_delay_ms: int = 500
    #: poll interval when the provider gives no poll_after_ms
    default_poll_ms: int = 1_000
    #: safety bound on get_operation calls of one wait
    max_polls: int = 500
    #: safety bound on the total time one wait sleeps (a provider answering "running" with a
    #: 59 s poll_after_ms forever would otherwise hold a call for 500 × 59 s)
    max_wait_total_ms: int = 600_000
    #: local cap on a streamed file result (the effective limit is the min with any
    #: negotiated allowance)
    read_cap_bytes: int = 64 * 1024 * 1024
    #: a JSON file result up to this size is parsed for the output_schema check
    parse_limit_bytes: int = 4 * 1024 * 1024
    #: a verified file result up to this size is also kept as `Execution.value`
    keep_value_bytes: int = 1024 * 1024
    #: on "Unknown authority" (relay NOT_FOUND), wake the provider (acquire, then launch)
    #: and retry, like the ClawSeed consumer does
    wake_and_retry: bool = False
    #: pause after a wake-up before retrying (ClawSeed sleeps ~300-500 ms)
    wake_delay_ms: int = 400
