"""Recorded exchanges: every call the inspector makes, as a serialisable record.

Like mitmproxy's flows, one `Exchange` holds what was sent and what came back (raw typed
Bundles in their loss-free JSON form, see `inspector.protocol.bundle.to_jsonable`), the
decoded outcome, timings, sizes and verification findings. The traffic log, the session
journal, bug-report bundles, replay and the conformance evidence all read these records.
"""

from __future__ import annotations

import itertools
import time
import uuid
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from inspector.protocol.logs import CrashReport, LogLine


class ExchangeKind(StrEnum):
    CETP = "cetp"  # ContentResolver.call on a CETP provider (any method)
    EXTENSION = "extension"  # an AndyClaw bridge call
    FILE = "file"  # a streamed file-descriptor read
    RESOLUTION = "resolution"  # a PendingIntent launch
    RELAY = "relay"  # relay housekeeping (discover, wake, force_stop …)


class ExchangeStatus(StrEnum):
    PENDING = "pending"
    SUCCESS = "success"  # provider said success
    ACCEPTED = "accepted"  # async operation accepted
    PROVIDER_ERROR = "provider_error"  # structured provider error (status=error)
    MALFORMED = "malformed"  # reply broke the protocol (null bundle, bad JSON, missing field)
    TRANSPORT_ERROR = "transport_error"  # relay/device failure, timeout, disconnect
    REFUSED = "refused"  # the inspector refused to send (size limit, unnegotiated capability)


class Finding(BaseModel):
    """A spec-rule verdict attached to an exchange or a descriptor."""

    model_config = ConfigDict(frozen=True)

    rule_id: str
    section: str
    level: str  # "MUST" | "SHOULD" | "INFO"
    ok: bool
    message: str
    path: str = ""


_seq = itertools.count(1)


def _now_ms() -> float:
    return time.time() * 1000.0


class Exchange(BaseModel):
    """One request/response pair, recorded as it happens."""

    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    seq: int = Field(default_factory=lambda: next(_seq))
    kind: ExchangeKind
    device: str = ""  # device serial ("virtual" for the virtual device)
    target: str  # authority, extension id, handle …
    package: str = ""
    method: str  # CETP method, bridge name, relay op
    tool: str | None = None
    request_id: str | None = None  # CETP request_id when there is one
    started_ms: float = Field(default_factory=_now_ms)
    finished_ms: float | None = None
    status: ExchangeStatus = ExchangeStatus.PENDING
    request: Any = None  # JSON form of the typed request Bundle (or op args)
    response: Any = None  # JSON form of the typed reply Bundle (or None)
    decoded: Any = None  # decoded JSON payload (data, operation state …) when parseable
    error_code: str | None = None
    error_message: str | None = None
    request_bytes: int = 0
    response_bytes: int = 0
    findings: list[Finding] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    parent_id: str | None = None  # e.g. a resume or poll belongs to an execution
    attempt: int = 1
    # What the called provider logged while this call ran, and its crash if it died
    # (issue 16; `inspector.session.provider_logs`). Optional: older journals have neither.
    logs: list[LogLine] = Field(default_factory=list)
    logs_dropped: int = 0  # lines past the per-exchange bound, counted not kept
    crash: CrashReport | None = None

    @property
    def duration_ms(self) -> float | None:
        if self.finished_ms is None:
            return None
        return self.finished_ms - self.started_ms

    @property
    def logged_errors(self) -> bool:
        """The provider logged an error (E/F) or crashed during this call."""
        return self.crash is not None or any(ln.is_error for ln in self.logs)

    def finish(self, status: ExchangeStatus) -> None:
        self.status = status
        self.finished_ms = _now_ms()
