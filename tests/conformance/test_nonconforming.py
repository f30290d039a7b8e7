"""The non-conforming provider fails exactly the checks it is built to fail, and a plugin
provider with one new fault is caught."""

from __future__ import annotations

from pathlib import Path

from inspector.conformance import ConformanceSetup, Observer, Outcome, Scenario, run_conformance
from inspector.virtual import VirtualDevice
from inspector.virtual.apps.badprovider import NONCONFORMING_FAULTS
from inspector.virtual.callers import second_caller_connector

BAD = "com.example.badprovider"

#: fault id (inspector/virtual/apps/badprovider.py) → the checks that must not pass
EXPECTED: dict[str, set[str]] = {
    "limits_below_minimum": {"negotiate.limits_minimums"},
    # one constant token: too long, repeated, hence also guessable
    "token_too_long": {"negotiate.session_token", "negotiate.token_unique",
                       "negotiate.token_unpredictable"},
    "unrequested_capability": {"negotiate.capability_intersection"},
    "bad_tool_name": {"tool.name_pattern"},
    "bad_scope_name": {"scope.name_pattern"},
    "delete_without_confirmation": {"annotations.confirmation_always"},
    "sync_or_async_without_async": {"annotations.async_needs_capability"},
    "non_fragment_ref": {"schema.no_remote_ref"},
    "side_effect_in_v1": {"v1.dual_stack_read_only", "v1.dual_stack_read_only_heuristic"},
    "authority_other_package": {"discovery.same_package"},
    "unknown_method_tool_not_found": {"errors.method_not_found"},
    "wrong_retryable": {"error.retryable_matches"},
    "stack_trace_in_error": {"error.message_safe"},
    "instruction_in_description": {"text.instructions"},
    "revision_never_changes": {"tools.revision_changes"},
    # seen through the provider's audit read tool (WIPES): every run of wipe_data counts
    "no_mutation_dedup": {"idempotency.replay", "idempotency.different_args",
                          "idempotency.concurrent", "idempotency.retry_after_timeout"},
    # seen only by a second caller (the virtual device's consumer app)
    "session_any_caller": {"caller.session_token_bound"},
}

#: the provider's own (conforming) audit read tool: `count` grows by one per wipe
WIPES = Observer(tool="list_executions", args={"tool": "wipe_data"}, ignore_keys=["executions"])
#: what a user of the suite sets up to test wipe_data's deduplication; wipe_data's schema
#: allows extra properties, so `reason` makes schema-valid "different" arguments
WIPE_SETUP = ConformanceSetup(
    allow_mutations=["wipe_data"],
    mutation=Scenario(tool="wipe_data", args={}, observer=WIPES),
    mutation_alt_args={"reason": "a different call"},
)


def test_every_fault_is_mapped() -> None:
    assert {f.id for f in NONCONFORMING_FAULTS} == set(EXPECTED)
    # every fault is caught by at least one check: none is left as "cannot be observed"
    assert [f for f, checks in EXPECTED.items() if not checks] == []


async def test_bad_provider_fails_exactly_its_faults(client, device: VirtualDevice) -> None:
    report = await run_conformance(client, BAD, setup=WIPE_SETUP,
                                   second_caller=second_caller_connector(device))
    not_passing = {r.check_id for r in report.results
                   if r.outcome in (Outcome.FAIL, Outcome.WARNING, Outcome.ERROR)}
    assert not_passing == set().union(*EXPECTED.values())
    warnings = {r.check_id for r in report.by_outcome(Outcome.WARNING)}
    assert warnings == {"v1.dual_stack_read_only_heuristic", "text.instructions"}
    assert not report.passed and report.exit_code == 1
    for r in report.by_outcome(Outcome.FAIL):
        assert r.message and r.section.startswith("§")
    # the dedup failures are judged by what the observer saw, not guessed
    replay = report.result("idempotency.replay")
    assert "ran twice" in replay.message
    assert replay.evidence.observed["effect_first"] == {".count": 1}
    assert replay.evidence.observed["effect_replay"] == {".count": 1}
    assert report.result("idempotency.different_args").evidence.observed["effect"] == {
        ".count": 1}
    # it has no confirmation, async or large-result call: those checks say so
    for cid in ("confirmation.approve", "async.restart_recovery", "large.file_result",
                "caller.operation_bound", "caller.resume_token_bound"):
        assert report.result(cid).outcome == Outcome.NEEDS_SETUP, cid
    # another app presenting the relay's session token was served
    token = report.result("caller.session_token_bound")
    assert "not bound to the calling UID" in token.message
    assert token.evidence.observed["other_caller_got"]["kind"] == "success"
    # with no dedup at all, a second caller's wipe is never another caller's result (by the
    # end of a full run the observer's list outgrows the bad 1024-byte inline limit, so the
    # check may need setup instead; tests/conformance/test_callers.py runs it on its own)
    assert report.result("caller.dedup_per_caller").outcome != Outcome.FAIL


async def test_without_a_scenario_dedup_checks_need_setup(client, device: VirtualDevice
                                                          ) -> None:
    """No setup: the checks that would have to wipe say what they need instead of passing,
    and the destructive tool is never invoked."""
    app = device.app(BAD)
    report = await run_conformance(client, BAD, select=["idempotency"])
    ran = {r.check_id: r.outcome for r in report.results if r.outcome != Outcome.SKIPPED}
    assert set(ran) == EXPECTED["no_mutation_dedup"]
    assert all(o == Outcome.NEEDS_SETUP for o in ran.values()), ran
    assert app.execution_count() == 0  # type: ignore[attr-defined]


PLUGIN = '''
from inspector.virtual.apps.pricealerts import PriceAlertsProvider


class NoDedupAlerts(PriceAlertsProvider):
    """Forgets request ids: every replay creates another alert."""

    PACKAGE = "com.example.nodedup"
    LABEL = "No Dedup Alerts"

    def lookup_dedup(self, call):
        return None

    def store_outcome(self, db, call, outcome):
        return None


def register(device):
    device.install(NoDedupAlerts())
'''


async def test_plugin_with_one_new_fault_is_caught(device: VirtualDevice, client,
                                                   tmp_path: Path) -> None:
    path = tmp_path / "nodedup.py"
    path.write_text(PLUGIN, encoding="utf-8")
    assert device.load_plugin(path, notify=False) == ["com.example.nodedup"]
    setup = ConformanceSetup(
        allow_mutations=["create_alert"],
        mutation=Scenario(tool="create_alert", args={"symbol": "ACME", "price": 100},
                          observer=Observer(tool="list_alerts")))
    report = await run_conformance(client, "com.example.nodedup", setup=setup,
                                   select=["idempotency", "negotiate", "descriptors"])
    failed = {r.check_id for r in report.by_outcome(Outcome.FAIL)}
    assert "idempotency.replay" in failed
    # exactly the dedup checks fail (the same fault as the bad provider's), nothing else
    # in the selection: its negotiation and descriptors are the conforming provider's
    assert failed == EXPECTED["no_mutation_dedup"]
    assert all(r.outcome.ok for r in report.results if r.check_id not in failed)
    replay = report.result("idempotency.replay")
    assert "twice" in replay.message or "different outcome" in replay.message
