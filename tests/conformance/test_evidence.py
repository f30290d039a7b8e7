"""Reports an author can act on, asserted on real failures of planted faults: what was
sent and what came back (JSON), the rule quoted with its section, what to change, evidence
that resolves inside the report, one fault → one failure, exact diagnoses."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from inspector.conformance import ConformanceReport, Outcome, report_json, run_conformance
from inspector.virtual import VirtualDevice
from inspector.virtual.faultplugins import FaultyAlerts, load_all

from .conftest import CONFIRMATION_TTL_MS, full_setup

PLANTED = load_all()


async def _report(device: VirtualDevice, client, app: FaultyAlerts, select: list[str]
                  ) -> ConformanceReport:
    device.install(app, notify=False)
    return await run_conformance(client, app.package, setup=full_setup(poll_timeout_ms=3000),
                                 select=select)


def _fault(fault_id: str) -> FaultyAlerts:
    return PLANTED[fault_id].make(True, confirmation_ttl_ms=CONFIRMATION_TTL_MS)


async def test_a_failure_says_what_was_sent_what_came_back_and_the_rule(
        device: VirtualDevice, client) -> None:
    report = await _report(device, client, _fault("expired_deadline_runs"), ["deadline.*"])
    r = report.result("deadline.expired_not_executed")
    assert r.outcome == Outcome.FAIL
    # sent: the tool, its arguments as JSON and the expired deadline
    assert r.sent["tool"] == "create_alert" and r.sent["args"] == {"symbol": "ACME",
                                                                   "price": 100}
    assert r.sent["deadline_at_ms"] < report.started_ms
    # came back: the provider's success, as JSON
    assert r.received["status"] == "success" and r.received["data"]["kind"] == "inline"
    # the rule, quoted with its section, and what to change
    assert (r.requirements[0].id, r.requirements[0].section) == ("P-046", "§4.1")
    assert "MUST check the deadline" in r.requirements[0].quote
    assert "answer DEADLINE_EXCEEDED" in r.message
    # JSON in the message, not Python reprs
    assert '{"len(.alerts)": 1}' in r.message and "{'" not in r.message
    text = report.text()
    assert '      sent: {"args": {"price": 100, "symbol": "ACME"}' in text
    assert "      rule: P-046 §4.1 MUST: \u201cThe Provider MUST check the deadline" in text
    # the JUnit failure carries the same: sent, got, rule
    from inspector.conformance import to_junit_xml

    xml = to_junit_xml(report)
    assert 'sent: {"args": {"price": 100, "symbol": "ACME"}' in xml
    assert "got: {" in xml and "rule: P-046 §4.1 MUST" in xml
    # every evidence id resolves inside the report itself
    doc = json.loads(report_json(report))
    embedded = {x["id"] for x in doc["exchanges"]}
    assert r.evidence.exchange_ids and set(r.evidence.exchange_ids) <= embedded


async def test_one_fault_one_failure(device: VirtualDevice, client) -> None:
    report = await _report(device, client, _fault("error_without_retryable"), ["errors"])
    assert report.summary.root_failures == ["errors.envelope"]
    assert report.summary.consequences == {"errors.envelope": ["errors.tool_not_found"]}
    tnf = report.result("errors.tool_not_found")
    assert tnf.outcome == Outcome.FAIL and tnf.caused_by == "errors.envelope"
    assert tnf.message.startswith("probably a consequence of errors.envelope failing")
    assert report.verdict() == ("1 failed (errors.envelope), 1 more grouped under them as "
                                "consequences")
    # the text lists the consequence under its cause
    lines = report.text().splitlines()
    i = next(n for n, x in enumerate(lines) if "FAIL           errors.envelope" in x)
    assert any("errors.tool_not_found" in x and x.startswith("        FAIL")
               for x in lines[i:i + 8])


async def test_an_operation_that_stays_running_is_not_called_malformed(
        device: VirtualDevice, client) -> None:
    report = await _report(device, client, _fault("operations_die_with_process"),
                           ["async.restart_recovery"])
    r = report.result("async.restart_recovery")
    assert r.outcome == Outcome.FAIL
    assert "never reached a terminal state" in r.message and "still_running" in r.message
    assert "malformed" not in r.message and "data.kind" not in r.message


class FailedWithoutFields(FaultyAlerts):
    """A failed operation whose error object has only an error_code."""

    FAULT_ID = "failed_without_fields"

    def operation_state(self, row: sqlite3.Row) -> dict[str, Any]:
        d = super().operation_state(row)
        if d.get("state") == "succeeded":
            d.pop("result")
            d.update(state="failed", error={"error_code": "UNAVAILABLE"})
        return d


async def test_a_terminal_error_without_its_fields_names_them(device: VirtualDevice,
                                                              client) -> None:
    report = await _report(device, client, FailedWithoutFields(), ["async.poll"])
    r = report.result("async.poll")
    assert r.outcome == Outcome.FAIL
    assert "get_operation did not return a valid operation state" in r.message
    assert "error object lacks error_message, retryable" in r.message
    assert "data.kind" not in r.message
