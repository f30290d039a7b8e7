"""The non-conforming provider fails exactly the checks it is built to fail, and a plugin
provider with one new fault is caught."""

from __future__ import annotations

from pathlib import Path

from inspector.conformance import ConformanceSetup, Observer, Outcome, Scenario, run_conformance
from inspector.virtual import VirtualDevice
from inspector.virtual.apps.badprovider import NONCONFORMING_FAULTS

BAD = "com.example.badprovider"

#: fault id (inspector/virtual/apps/badprovider.py) → the checks that must not pass
EXPECTED: dict[str, set[str]] = {
    "limits_below_minimum": {"negotiate.limits_minimums"},
    "token_too_long": {"negotiate.session_token", "negotiate.token_unique"},  # one constant
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
    # wipe_data's effect looks the same after one or two runs through every read tool the
    # provider has, so no observer can reveal the missing dedup (see the plugin test below)
    "no_mutation_dedup": set(),
}


def test_every_fault_is_mapped() -> None:
    assert {f.id for f in NONCONFORMING_FAULTS} == set(EXPECTED)


async def test_bad_provider_fails_exactly_its_faults(client) -> None:
    report = await run_conformance(client, BAD)
    not_passing = {r.check_id for r in report.results
                   if r.outcome in (Outcome.FAIL, Outcome.WARNING, Outcome.ERROR)}
    assert not_passing == set().union(*EXPECTED.values())
    warnings = {r.check_id for r in report.by_outcome(Outcome.WARNING)}
    assert warnings == {"v1.dual_stack_read_only_heuristic", "text.instructions"}
    assert not report.passed and report.exit_code == 1
    # checks it cannot run without setup say so instead of passing
    assert report.result("idempotency.replay").outcome == Outcome.NEEDS_SETUP
    for r in report.by_outcome(Outcome.FAIL):
        assert r.message and r.section.startswith("§")


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
    assert failed <= {"idempotency.replay", "idempotency.concurrent",
                      "idempotency.retry_after_timeout", "idempotency.different_args"}
    replay = report.result("idempotency.replay")
    assert "twice" in replay.message or "different outcome" in replay.message
