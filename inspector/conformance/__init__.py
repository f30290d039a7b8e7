"""The CETP conformance suite: checks with spec references, a plan shown before anything
runs, per-tool mutation safety, a JSON report with a documented schema and JUnit XML.

Entry points for front ends:
- `run_conformance(session_or_relay, provider, *, setup, allow_mutations, select, skip,
  progress, approve_plan, ...) -> ConformanceReport`
- `plan_conformance(...) -> Plan` (read-only calls only)
- `write_junit(report, path)`, `report_json(report)`, `report_schema()`,
  `catalogue()` (every check), `ConformanceSetup` (JSON-loadable `--setup FILE`)
"""

from inspector.conformance.junit import to_junit_xml, write_junit
from inspector.conformance.model import (
    CheckResult,
    ConformanceReport,
    ConformanceSetup,
    Observer,
    Outcome,
    Plan,
    Scenario,
    ToolCall,
)
from inspector.conformance.registry import CHECKS, catalogue
from inspector.conformance.report import report_json, report_schema, write_json
from inspector.conformance.runner import (
    ConformanceError,
    ProgressEvent,
    plan_conformance,
    run_conformance,
)

__all__ = [
    "CHECKS",
    "CheckResult",
    "ConformanceError",
    "ConformanceReport",
    "ConformanceSetup",
    "Observer",
    "Outcome",
    "Plan",
    "ProgressEvent",
    "Scenario",
    "ToolCall",
    "catalogue",
    "plan_conformance",
    "report_json",
    "report_schema",
    "run_conformance",
    "to_junit_xml",
    "write_json",
    "write_junit",
]
