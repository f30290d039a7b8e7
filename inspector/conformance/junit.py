"""JUnit XML for CI: one <testsuite> per check category, one <testcase> per check.

Mapping: fail → <failure>, error → <error>, needs_setup / not_applicable / skipped →
<skipped> (with the reason), warning → a passing test case whose <system-out> starts with
"WARNING:" and whose `outcome` property says warning (JUnit has no warning state, and a
SHOULD must not fail a build). Every test case carries properties `check_id`, `level`,
`section`, `outcome` and the evidence exchange ids.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

from inspector.conformance.model import CheckResult, ConformanceReport, Outcome

_SKIPPED = (Outcome.NEEDS_SETUP, Outcome.NOT_APPLICABLE, Outcome.SKIPPED)


def _clean(text: str) -> str:
    """XML 1.0 cannot carry most control characters; provider text may contain them."""
    return "".join(ch if ch in "\t\n\r" or (ord(ch) >= 0x20 and ch not in "\ufffe\uffff"
                                            and not 0xD800 <= ord(ch) <= 0xDFFF)
                   else f"\\u{{{ord(ch):04x}}}" for ch in text)


def _case(parent: ET.Element, r: CheckResult) -> None:
    case = ET.SubElement(parent, "testcase", {
        "classname": f"cetp.conformance.{r.category.value}",
        "name": _clean(f"{r.check_id} [{r.level} {r.section}]"),
        "time": f"{r.duration_ms / 1000:.3f}",
    })
    props = ET.SubElement(case, "properties")
    for k, v in (("check_id", r.check_id), ("level", r.level), ("section", r.section),
                 ("outcome", r.outcome.value),
                 ("exchanges", ",".join(r.evidence.exchange_ids))):
        ET.SubElement(props, "property", {"name": k, "value": _clean(v)})
    detail = _clean("\n".join(_detail_lines(r)))
    msg = _clean(r.message[:500])
    if r.outcome == Outcome.FAIL:
        el = ET.SubElement(case, "failure", {"message": msg, "type": r.level})
        el.text = detail
    elif r.outcome == Outcome.ERROR:
        el = ET.SubElement(case, "error", {"message": msg, "type": "error"})
        el.text = detail
    elif r.outcome in _SKIPPED:
        ET.SubElement(case, "skipped", {"message": _clean(f"{r.outcome.value}: {r.message}")})
    elif r.outcome == Outcome.WARNING:
        out = ET.SubElement(case, "system-out")
        out.text = "WARNING: " + detail


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _detail_lines(r: CheckResult) -> list[str]:
    """What a CI reader acts on: the message, what was sent, what came back, the rule (quoted
    with its section), the cause when this is a consequence, then the values judged."""
    lines = [r.message]
    if r.sent is not None:
        lines.append("sent: " + _json(r.sent))
    if r.received is not None:
        lines.append("got: " + _json(r.received))
    for q in r.requirements[:2]:
        lines.append(f"rule: {q.id} {q.section} {q.keyword}: \u201c{q.quote}\u201d")
    if r.caused_by:
        lines.append(f"consequence of: {r.caused_by}")
    if r.evidence.observed:
        lines.append(json.dumps(r.evidence.observed, ensure_ascii=False, default=str, indent=1))
    return lines


def to_junit_xml(report: ConformanceReport) -> str:
    """The report as a JUnit XML document (a string)."""
    root = ET.Element("testsuites",
                      {"name": _clean(f"CETP conformance: {report.target.package}")})
    by_cat: dict[str, list[CheckResult]] = {}
    for r in report.results:
        by_cat.setdefault(r.category.value, []).append(r)
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    stamp = datetime.fromtimestamp((report.started_ms or 0) / 1000, UTC).strftime(
        "%Y-%m-%dT%H:%M:%S")
    for cat, results in by_cat.items():
        counts = {
            "tests": len(results),
            "failures": sum(r.outcome == Outcome.FAIL for r in results),
            "errors": sum(r.outcome == Outcome.ERROR for r in results),
            "skipped": sum(r.outcome in _SKIPPED for r in results),
        }
        for k, v in counts.items():
            totals[k] += v
        suite = ET.SubElement(root, "testsuite", {
            "name": _clean(f"{report.target.package}.{cat}"),
            "timestamp": stamp,
            "hostname": _clean(report.target.device or "device"),
            "time": f"{sum(r.duration_ms for r in results) / 1000:.3f}",
            **{k: str(v) for k, v in counts.items()},
        })
        for r in results:
            _case(suite, r)
    for k, v in totals.items():
        root.set(k, str(v))
    root.set("time", f"{max(0.0, report.finished_ms - report.started_ms) / 1000:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")


def write_junit(report: ConformanceReport, path: str | Path | None = None) -> str:
    """Return the JUnit XML; also write it to `path` when given."""
    xml = to_junit_xml(report)
    if path is not None:
        Path(path).write_text(xml, encoding="utf-8")
    return xml
