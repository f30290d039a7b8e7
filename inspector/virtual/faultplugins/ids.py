"""Planted faults in the ids a provider issues: guessable operation ids (§4.4) and resume
tokens (§4.3). Both stay bound to their caller, so only the unpredictability checks (SHOULD
level) notice them."""

from __future__ import annotations

import itertools

from inspector.virtual.cetp_model import ToolCall
from inspector.virtual.faultplugins import FaultyAlerts, planted


@planted("P-090", "async.operation_id_unpredictable")
class SequentialOperationIds(FaultyAlerts):
    """Numbers operations with a counter (`op_1`, `op_2`, …) as the spec's example does."""

    FAULT_ID = "sequential_operation_ids"

    def __init__(self, broken: bool = True, **kw: object) -> None:
        super().__init__(broken, **kw)  # type: ignore[arg-type]
        self._ops = itertools.count(1000)

    def new_operation_id(self, call: ToolCall) -> str:
        if self.broken:
            return f"op_{next(self._ops)}"
        return super().new_operation_id(call)


@planted("P-091", "confirmation.resume_token_unpredictable")
class ResumeTokenFromRequestId(FaultyAlerts):
    """Builds the resume_token from the request_id the consumer chose (random-looking, and
    still known to anyone who saw the call)."""

    FAULT_ID = "resume_token_from_request_id"

    def new_resume_token(self, call: ToolCall) -> str:
        if self.broken:
            return "rt_" + call.request_id.replace("-", "")
        return super().new_resume_token(call)
