"""Planted faults the suite missed before: behaviour an author wired into the one tool they
tested and forgot in the next (dedup, the deadline), and an advertised limit kept too
tightly (the request size measured on more than the args)."""

from __future__ import annotations

import sqlite3
from typing import Any

from inspector.protocol.bundle import Bundle
from inspector.virtual.cetp_model import ToolCall
from inspector.virtual.cetp_provider import Session
from inspector.virtual.cetp_wire import CetpError
from inspector.virtual.faultplugins import FaultyAlerts, planted


@planted("P-070", "dedup.every_mutating_tool")
class DedupOnlyCreateAlert(FaultyAlerts):
    """Deduplicates create_alert (the tool the author tested, and the suite's `mutation`
    scenario) but no other synchronous side-effecting tool: share_watchlist shares again on
    every replay."""

    FAULT_ID = "dedup_only_create_alert"

    def _skips(self, call: ToolCall) -> bool:
        return self.broken and call.spec.name != "create_alert" \
            and not self.runs_as_operation(call.spec)

    def lookup_dedup(self, call: ToolCall) -> Bundle | None:
        return None if self._skips(call) else super().lookup_dedup(call)

    def store_outcome(self, db: sqlite3.Connection, call: ToolCall, outcome: dict[str, Any]
                      ) -> None:
        if not self._skips(call):
            super().store_outcome(db, call, outcome)


@planted("P-046", "deadline.every_mutating_tool")
class DeadlineOnlySynchronous(FaultyAlerts):
    """Checks deadline_at_ms inside the synchronous mutation path only: a background
    operation (sync_watchlist) whose deadline passed still starts and commits."""

    FAULT_ID = "deadline_only_synchronous"

    def check_deadline(self, deadline_at_ms: int | None) -> None:
        if not self.broken:
            super().check_deadline(deadline_at_ms)

    def run_mutation(self, call: ToolCall) -> Bundle:
        if self.broken:
            super().check_deadline(call.deadline_at_ms)
        return super().run_mutation(call)


@planted("P-092", "limits.request_size_honoured")
class RequestLimitCountsEnvelope(FaultyAlerts):
    """Measures the whole request (args plus an estimated envelope) against
    max_request_bytes: arguments near the advertised limit are refused although allowed,
    while anything above it is still refused, so limits.request_size_enforced passes."""

    FAULT_ID = "request_limit_counts_envelope"
    ENVELOPE_BYTES = 512

    def check_request_size(self, session: Session, args_text: str) -> None:
        limit = session.limits["max_request_bytes"]
        if self.broken and len(args_text.encode()) + self.ENVELOPE_BYTES > limit:
            raise CetpError("INVALID_REQUEST", f"request exceeds max_request_bytes ({limit})")
        super().check_request_size(session, args_text)


@planted("P-010", "negotiate.token_after_restart")
class LostSessionIsInternalError(FaultyAlerts):
    """Keeps the tokens it issued in a durable table but the sessions in memory: after a
    restart a known token whose session is gone answers INTERNAL_ERROR instead of
    NEGOTIATION_REQUIRED (a made-up token still gets NEGOTIATION_REQUIRED)."""

    FAULT_ID = "lost_session_internal_error"

    def __init__(self, broken: bool = True, **kw: object) -> None:
        super().__init__(broken, **kw)  # type: ignore[arg-type]
        self._issued: set[str] = set()  # survives on_process_death, like a database

    def check_envelope(self, ctx: Any, extras: Bundle) -> Session:
        tok = extras.get("session_token")
        try:
            session = super().check_envelope(ctx, extras)
        except CetpError as err:
            if self.broken and err.code == "NEGOTIATION_REQUIRED" and tok in self._issued:
                raise CetpError("INTERNAL_ERROR", "session state missing") from None
            raise
        self._issued.add(session.token)
        return session
