"""The virtual device's conforming provider passes every check."""

from __future__ import annotations

from inspector.conformance import Outcome, run_conformance
from inspector.conformance.registry import CHECKS
from inspector.protocol.exchange import ExchangeKind
from inspector.virtual import VirtualDevice
from inspector.virtual.apps.pricealerts import PriceAlertsProvider
from inspector.virtual.callers import second_caller_connector

from .conftest import full_setup

PRICE = "com.example.pricealerts"


async def test_price_alerts_passes_every_check(device: VirtualDevice, client) -> None:
    """The stock provider as installed on a fresh device: no subclass, no extra tool."""
    assert type(device.app(PRICE)) is PriceAlertsProvider
    events = []
    report = await run_conformance(client, PRICE, setup=full_setup(), progress=events.append,
                                   second_caller=second_caller_connector(device))
    bad = [(r.check_id, r.outcome.value, r.message) for r in report.results
           if r.outcome not in (Outcome.PASS, Outcome.NOT_APPLICABLE)]
    assert bad == []
    assert report.passed and report.exit_code == 0
    assert {r.check_id for r in report.results} == set(CHECKS)
    # only checks that truly do not apply to this provider are N/A
    na = {r.check_id for r in report.by_outcome(Outcome.NOT_APPLICABLE)}
    assert na <= {"result.file_needs_capability", "v1.side_effects_migrate"}
    assert [e.kind for e in events][:2] == ["plan", "start"] and events[-1].kind == "done"
    # every dynamic check points at the exchanges it made
    for cid in ("idempotency.replay", "confirmation.approve", "async.restart_recovery",
                "large.file_result", "errors.method_not_found"):
        assert report.result(cid).evidence.exchange_ids, cid
    # the audit read tool shows exactly one sync_watchlist run across the restart, and the
    # device's short confirmation lifetime lets the expired-token check really run
    restart = report.result("async.restart_recovery").evidence.observed
    assert restart["effect"] == restart["single_effect"] == {".count": 1}
    assert report.result("confirmation.expired_token").outcome == Outcome.PASS
    # the retry check really lost a reply after the provider had acted
    assert report.result("idempotency.retry_after_timeout").evidence.observed["reply_lost"]
    # the provider never executed one caller's request twice (caller.dedup_per_caller sends
    # one request_id from two apps on purpose: two executions, one per UID)
    app = device.app(PRICE)
    rows = app.store.all("SELECT uid, request_id, COUNT(*) AS n FROM executions "
                         "GROUP BY uid, request_id")
    assert rows and all(r["n"] == 1 for r in rows)
    assert len({r["uid"] for r in rows}) == 2


async def test_v1_only_provider(client) -> None:
    report = await run_conformance(client, "com.example.finance")
    assert report.passed
    assert report.result("v1.list_tools").outcome == Outcome.PASS
    assert report.result("discovery.versions_consistency").outcome == Outcome.PASS
    assert report.result("negotiate.success").outcome == Outcome.NOT_APPLICABLE
    assert report.result("text.instructions").outcome == Outcome.PASS


async def test_recorded_exchanges_are_the_evidence(device: VirtualDevice, client) -> None:
    from inspector.consumer.recorder import Recorder

    rec = Recorder(device="virtual")
    report = await run_conformance(client, PRICE, recorder=rec,
                                   select=["negotiate", "errors"])
    ids = {x.id for x in rec.exchanges}
    for r in report.results:
        assert set(r.evidence.exchange_ids) <= ids
    assert all(x.kind == ExchangeKind.CETP for x in rec.exchanges)
