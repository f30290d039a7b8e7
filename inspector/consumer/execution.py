"""Logical executions: one stable request_id across attempts, resumes and polls (§4.1, §6).

An `Execution` is what the user started; each send is an `Attempt`. The request_id never
changes within an execution — retries, the resume after a confirmation and every
get_operation/cancel_operation reuse it. A new id only comes from a new Execution, which
only the user creates (`ProviderSession.new_execution` / `Execution.again`).
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from inspector.consumer.large_results import FileVerdict
from inspector.protocol.bundle import FileDescriptorHandle, PendingIntentHandle
from inspector.protocol.cetp import ErrorInfo, FileResult, OperationState, new_request_id
from inspector.protocol.exchange import Finding


class ExecState(StrEnum):
    NEW = "new"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"  # provider error (see `error`)
    TRANSPORT_FAILED = "transport_failed"  # relay/device failed before the provider was
    # reached (e.g. negotiation lost twice): nothing was sent; run again, same id is safe
    NEEDS_RESOLUTION = "needs_resolution"  # AUTH_REQUIRED / USER_ACTION_REQUIRED
    RESOLUTION_DECLINED = "resolution_declined"  # the user denied/backed out in provider UI
    USER_CANCELLED = "user_cancelled"  # provider answered USER_CANCELLED
    ACCEPTED = "accepted"  # async operation running: poll it
    CANCELLED = "cancelled"  # a queried terminal state said cancelled
    OUTCOME_UNKNOWN = "outcome_unknown"  # transport lost the reply: retry/query, same id
    MALFORMED = "malformed"  # the reply broke the protocol
    REFUSED = "refused"  # the inspector did not send it

    @property
    def is_final(self) -> bool:
        return self in {ExecState.SUCCEEDED, ExecState.FAILED, ExecState.USER_CANCELLED,
                        ExecState.CANCELLED, ExecState.MALFORMED, ExecState.REFUSED}


class Attempt(BaseModel):
    """One send of the logical execution (execute_tool, its retries and resumes)."""

    number: int
    exchange_id: str
    resumed: bool = False
    outcome: str = ""  # success | accepted | error:<CODE> | transport:<CODE> | malformed
    retry_after_ms: int | None = None
    waited_ms: int = 0  # how long the engine waited before this attempt


class CancelOutcome(BaseModel):
    """cancel_operation: an acknowledgement is not a cancellation (§4.4)."""

    acknowledged: bool = False  # provider answered cancellation_requested
    conflict: bool = False  # CONFLICT: already committed, not cancelled
    confirmed_cancelled: bool = False  # a queried terminal state is `cancelled`
    final_state: str | None = None  # the terminal state queried afterwards, if any
    message: str = ""


class Execution(BaseModel):
    """One logical tool execution as the user sees it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    request_id: str = Field(default_factory=new_request_id)
    tool_name: str
    args_json: str
    protocol_version: int = 2
    state: ExecState = ExecState.NEW
    message: str = ""  # what happened and what to try, for people
    attempts: list[Attempt] = Field(default_factory=list)
    exchange_ids: list[str] = Field(default_factory=list)
    error: ErrorInfo | None = None
    value: Any = None  # inline result value (untrusted data)
    has_value: bool = False
    file: FileResult | None = None
    result_fd: FileDescriptorHandle | None = None
    file_verdict: FileVerdict | None = None
    output_findings: list[Finding] = Field(default_factory=list)
    resolution: PendingIntentHandle | None = None
    resume_token: str | None = None
    resolution_result: str | None = None  # approved | declined | cancelled_new_task
    operation_id: str | None = None
    operation: OperationState | None = None
    poll_after_ms: int | None = None
    cancel: CancelOutcome | None = None
    renegotiated: int = 0

    @property
    def last_exchange_id(self) -> str | None:
        return self.exchange_ids[-1] if self.exchange_ids else None

    @property
    def args(self) -> Any:
        try:
            return json.loads(self.args_json)
        except ValueError:
            return None

    @property
    def args_bytes(self) -> int:
        return len(self.args_json.encode("utf-8"))

    def again(self) -> Execution:
        """A NEW logical execution of the same tool and args, with a NEW request_id —
        only when the user explicitly asks for it."""
        return Execution(tool_name=self.tool_name, args_json=self.args_json,
                         protocol_version=self.protocol_version)
