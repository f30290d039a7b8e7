"""What makes a failure actionable: the rule it breaks (quoted), the call that shows it
(sent and received, as JSON) and the evidence exchanges embedded in the report itself, so
an exchange id in a JSON report resolves without the session that produced it."""

from __future__ import annotations

import json
from typing import Any

from inspector.conformance.model import CheckResult, ConformanceReport, Outcome, RequirementRef
from inspector.conformance.requirements import requirements_for
from inspector.protocol.exchange import Exchange

NOT_PASSING = (Outcome.FAIL, Outcome.WARNING, Outcome.ERROR)
MAX_STRING = 2000
MAX_EXCHANGES_PER_RESULT = 12


def shorten(value: Any, limit: int = MAX_STRING) -> Any:
    """The value with long strings cut (a 256 KiB inline result stays readable)."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit] + f"… ({len(value)} chars)"
    if isinstance(value, dict):
        return {k: shorten(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [shorten(v, limit) for v in value[:200]]
    return value


def _extras(ex: Exchange) -> dict[str, Any]:
    """The request's extras as plain values (the exchange keeps the typed, loss-free
    form {"t": type, "v": value})."""
    req = ex.request
    if isinstance(req, dict) and req.get("t") == "Bundle":
        req = req.get("v")
    if not isinstance(req, dict):
        return {}
    return {k: (v.get("v") if isinstance(v, dict) and "t" in v else v) for k, v in req.items()}


def _args(ex: Exchange) -> Any:
    raw = _extras(ex).get("args")
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return shorten(raw, 400)
    return raw


def sent_of(ex: Exchange) -> dict[str, Any]:
    out: dict[str, Any] = {"method": ex.method}
    if ex.tool:
        out["tool"] = ex.tool
        out["args"] = shorten(_args(ex), 400)
    extras = _extras(ex)
    for k in ("protocol_version", "deadline_at_ms", "operation_id", "resume_token"):
        if k in extras:
            out[k] = shorten(extras[k], 80)
    if ex.request_id:
        out["request_id"] = ex.request_id
    return out


def received_of(ex: Exchange) -> dict[str, Any]:
    out: dict[str, Any] = {"status": ex.status.value}
    if ex.error_code:
        out["error_code"] = ex.error_code
        if ex.error_message:
            out["error_message"] = shorten(ex.error_message, 300)
    elif ex.decoded is not None:
        out["data"] = shorten(ex.decoded, 300)
    for n in ex.notes[:2]:
        out.setdefault("notes", []).append(shorten(n, 300))
    return out


def _headline(r: CheckResult, by_id: dict[str, Exchange], observers: set[str]
              ) -> Exchange | None:
    """The call that shows the failure: the check's last call that is not an observer read
    (observers only witness effects), else its last call."""
    xs = [by_id[i] for i in r.evidence.exchange_ids if i in by_id]
    if not xs:
        return None
    own = [x for x in xs if x.tool not in observers]
    return (own or xs)[-1]


def annotate(report: ConformanceReport, exchanges: list[Exchange]) -> None:
    """Quote the requirements on every result; for each failure, fill `sent`/`received`
    and embed its evidence exchanges in the report."""
    by_id = {x.id: x for x in exchanges}
    s = report.setup
    observers = {sc.observer.tool for sc in (s.mutation, s.confirmation, s.async_call,
                                             s.ungranted)
                 if sc is not None and sc.observer is not None}
    keep: list[str] = []
    for r in report.results:
        # the most specific statement first (the one fewest checks share)
        reqs = sorted(requirements_for(r.check_id), key=lambda q: (len(q.checks), q.id))
        r.requirements = [RequirementRef(id=q.id, section=q.section, keyword=q.keyword,
                                         quote=q.quote) for q in reqs]
        if r.outcome not in NOT_PASSING:
            continue
        ex = _headline(r, by_id, observers)
        if ex is not None and r.sent is None:
            r.sent, r.received = sent_of(ex), received_of(ex)
        if isinstance(r.evidence.observed.get("sent"), dict):  # what the check says it sent
            r.sent = {**(r.sent or {}), **r.evidence.observed["sent"]}
        keep.extend(r.evidence.exchange_ids[-MAX_EXCHANGES_PER_RESULT:])
    seen: set[str] = set()
    for i in keep:
        if i in by_id and i not in seen:
            seen.add(i)
            report.exchanges.append(shorten(by_id[i].model_dump(mode="json")))
