"""The JSON report: writing it and its JSON Schema (documented in docs/conformance.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspector.conformance.model import REPORT_SCHEMA_VERSION, ConformanceReport


def report_json(report: ConformanceReport, indent: int | None = 2) -> str:
    return json.dumps(report.model_dump(mode="json"), indent=indent, ensure_ascii=False)


def write_json(report: ConformanceReport, path: str | Path) -> None:
    Path(path).write_text(report_json(report), encoding="utf-8")


def load_report(text: str) -> ConformanceReport:
    """Parse a JSON report (validated against the model)."""
    return ConformanceReport.model_validate_json(text)


def report_schema() -> dict[str, Any]:
    """The JSON Schema (Draft 2020-12) every report validates against."""
    schema = ConformanceReport.model_json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://cetp-inspector.invalid/conformance-report/v{REPORT_SCHEMA_VERSION}"
    schema["title"] = "CETP conformance report"
    return schema
