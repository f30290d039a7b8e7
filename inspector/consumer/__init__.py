"""The headless consumer engine: CETP v2 (and v1) consumer and AndyClaw host, user-driven.

Talks only through `inspector.relay.api.RelayApi`; records every call as an `Exchange`.
Entry points (see each module):

- `open_provider` / `open_declaration` → `ProviderSession` (v2) or `V1ProviderSession` (v1)
- `ProviderSession`: negotiate, get_provider_info, list_tools, execute_tool / run / resume,
  launch_resolution, wait_operation / refresh_operation / cancel_operation, fetch_file
- `ExtensionHost`: AndyClaw manifests, the four bridges, security checks
- `Recorder`: the exchange log with listeners; `EngineOptions`; `FakeClock` for tests
"""

from inspector.consumer.andyclaw_host import (
    CheckResult,
    ExtensionHost,
    SecurityCheck,
    manifest_drift,
    security_checks,
)
from inspector.consumer.clock import Clock, FakeClock, SystemClock
from inspector.consumer.engine import ProviderSession, open_declaration, open_provider
from inspector.consumer.errors import (
    ConsumerError,
    MalformedReply,
    NegotiationFailed,
    ProviderError,
    RequestRefused,
    TransportFailure,
)
from inspector.consumer.execution import Attempt, CancelOutcome, ExecState, Execution
from inspector.consumer.large_results import CheckStatus, FileCheck, FileVerdict
from inspector.consumer.negotiation import Session, ToolChange, ToolListDiff, choose_protocol
from inspector.consumer.options import EngineOptions
from inspector.consumer.recorder import Recorder
from inspector.consumer.v1 import V1ProviderSession

__all__ = [
    "Attempt",
    "CancelOutcome",
    "CheckResult",
    "CheckStatus",
    "Clock",
    "ConsumerError",
    "EngineOptions",
    "ExecState",
    "Execution",
    "ExtensionHost",
    "FakeClock",
    "FileCheck",
    "FileVerdict",
    "MalformedReply",
    "NegotiationFailed",
    "ProviderError",
    "ProviderSession",
    "Recorder",
    "RequestRefused",
    "SecurityCheck",
    "Session",
    "SystemClock",
    "ToolChange",
    "ToolListDiff",
    "TransportFailure",
    "V1ProviderSession",
    "choose_protocol",
    "manifest_drift",
    "open_declaration",
    "open_provider",
    "security_checks",
]
