"""The conformance tab: plan with per-tool permission, run through the real suite on the
virtual device, results grouped by section, evidence links, cancel, export."""

from __future__ import annotations

import asyncio
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import shiboken6

from inspector.conformance.model import (
    Category,
    CheckResult,
    ConformanceReport,
    ConformanceSetup,
    Evidence,
    Outcome,
    Plan,
    PlanItem,
    TargetInfo,
)
from inspector.consumer.recorder import Recorder
from inspector.protocol.cetp import Annotations, ToolDescriptor
from inspector.tasks import spawn, spawner
from inspector.ui.conformance_panel import (
    EXCHANGE_ROLE,
    RESULT_ROLE,
    ConformancePanel,
    SuiteBackend,
    load_report_file,
    suggest_setup,
)
from inspector.virtual import VirtualDevice
from inspector.virtual.inprocess import connect_virtual_device

PRICEALERTS = "com.example.pricealerts"
BADPROVIDER = "com.example.badprovider"


# The suite's checks run on the window's event loop: a whole run (plan, ~90 checks, a size
# sweep up to 4 MiB) shows a few 100–130 ms steps here (docs/gui.md, "Known stalls").
SUITE_RUN_STALL = pytest.mark.stall_limit(ms=250, reason="conformance checks on the UI loop")


def wait_task(qtbot: Any, task: asyncio.Task[Any], timeout: int = 30_000) -> Any:
    qtbot.waitUntil(task.done, timeout=timeout)
    return task.result()


@pytest.fixture
def vclient(qtbot, qloop, tmp_path: Path) -> Iterator[Any]:
    """A relay client connected to a fresh in-process virtual device."""
    device = VirtualDevice(tmp_path / "device")
    client = wait_task(qtbot, spawn(connect_virtual_device(device, events=True), "t-connect"))
    yield client
    wait_task(qtbot, spawn(client.close(), "t-close"))
    wait_task(qtbot, spawn(device.aclose(), "t-device-close"))


def _panel(qtbot: Any, client: Any, package: str) -> tuple[ConformancePanel, Recorder]:
    recorder = Recorder(device="virtual")
    panel = ConformancePanel(SuiteBackend(client, package, recorder=recorder), package)
    qtbot.addWidget(panel)
    panel.resize(1200, 800)
    wait_task(qtbot, panel.load_tools())
    qtbot.waitUntil(lambda: panel.plan is not None, timeout=20_000)
    return panel, recorder


def _mutating_executes(panel: ConformancePanel, recorder: Recorder) -> list[str]:
    """execute_tool calls the suite made to the provider's mutating tools."""
    mutating = {t.name for t in panel._tools if t.annotations.mutating_or_risky}
    assert mutating  # the provider has some, so the check below means something
    return [e.tool or "" for e in recorder.exchanges
            if e.method == "execute_tool" and e.tool in mutating]


@SUITE_RUN_STALL
def test_plan_run_results_evidence_and_export(qtbot, vclient, qtmodeltester, tmp_path) -> None:
    panel, recorder = _panel(qtbot, vclient, PRICEALERTS)
    # every mutating tool gets a checkbox, unticked; nothing is allowed by default
    for tool in ("create_alert", "delete_alert"):
        box = panel.permission(tool)
        assert box is not None and not box.isChecked()
    assert panel.permission("list_alerts") is None  # reads need no permission
    assert panel.setup().allow_mutations == []
    assert panel.plan is not None and panel.plan.mutating_tools == []
    assert panel.plan_model.rowCount() == len(panel.plan.items) + 1  # + the prelude row
    assert "no mutating tool" in panel.plan_summary.text()
    qtmodeltester.check(panel.plan_model)

    asked: list[list[str]] = []
    panel.confirm_mutations = lambda tools: asked.append(tools) or True
    with qtbot.waitSignal(panel.report_ready, timeout=60_000) as sig:
        assert panel.start() is not None
    report: ConformanceReport = sig.args[0]
    assert asked == []  # nothing mutating allowed → nothing to confirm
    assert panel.report is report and len(report.results) == len(panel.plan.items)
    assert _mutating_executes(panel, recorder) == []  # the safety rule held

    model = panel.results.model
    qtmodeltester.check(model)
    sections = [model.item(r, 0).text() for r in range(model.rowCount())]
    assert sections == sorted(set(sections), key=lambda s: [int(x) for x in
                                                             s.strip("§").split(".")])
    assert sorted(r.check_id for r in model.results()) == sorted(
        r.check_id for r in report.results)
    needs = [r for r in report.results if r.outcome == Outcome.NEEDS_SETUP]
    assert needs and "needs setup" in panel.results_summary.text()
    # nothing failed: the verdict says so and the line is not shown as an error
    if not report.summary.must_failed:
        assert "— 0 failed, " in panel.results_summary.text()
        assert " need setup (" in panel.results_summary.text()
        assert panel.results_summary.property("role") == "warn"
    # a result with evidence: its exchanges are named and the link emits the id
    r = next(r for r in report.results if r.check_id == "negotiate.token_required")
    assert panel.results.select(r.check_id)
    assert r.check_id in panel.results.detail.toPlainText()
    ev = panel.results.evidence_model
    qtmodeltester.check(ev)
    assert ev.rowCount() == len(r.evidence.exchange_ids) > 0
    assert ev.item(0, 0).text().startswith(("negotiate", "list_tools"))
    recorded_ids = {e.id for e in recorder.exchanges}
    with qtbot.waitSignal(panel.evidence_requested) as jump:
        panel.results.show_evidence.click()
    assert jump.args[0] == ev.data(ev.index(0, 0), EXCHANGE_ROLE) and jump.args[0] in recorded_ids

    panel.results.problems_only.setChecked(True)
    shown = panel.results.visible_check_ids()
    assert shown and all(not report.result(c).outcome.ok for c in shown)

    js = panel.export_json(tmp_path / "r.json")
    assert load_report_file(js).results == report.results
    # a report from elsewhere (CI) opens in the same view; a bad file says why
    other = ConformancePanel(SlowBackend(), "ci")
    qtbot.addWidget(other)
    other.ask_open_path = lambda: str(tmp_path / "nope.json")
    other.load_button.click()
    assert "not a conformance report" in other.status.text()
    other.ask_open_path = lambda: str(js)
    other.load_button.click()
    assert other.report is not None and other.report.results == report.results
    assert other.results.model.rowCount() == model.rowCount()
    panel.ask_save_path = lambda title, flt, suggested: str(tmp_path / suggested)
    panel.export_json_button.click()
    assert (tmp_path / "conformance-com.example.pricealerts.json").exists()
    xml = ET.parse(panel.export_junit(tmp_path / "r.xml")).getroot()
    cases = xml.findall(".//testcase")
    assert len(cases) == len(report.results)
    assert len(xml.findall(".//skipped")) >= len(needs)


def test_nonconforming_provider_shows_failures(qtbot, vclient, tmp_path) -> None:
    panel, _ = _panel(qtbot, vclient, BADPROVIDER)
    with qtbot.waitSignal(panel.report_ready, timeout=60_000) as sig:
        panel.start()
    report: ConformanceReport = sig.args[0]
    failed = report.by_outcome(Outcome.FAIL)
    assert failed and not report.passed
    model = panel.results.model
    idx = model.index_of(failed[0].check_id)
    assert model.data(idx.siblingAtColumn(1)) == "fail"
    assert model.data(idx, RESULT_ROLE) == failed[0]
    group = idx.parent()
    assert "not passed" in model.data(group.siblingAtColumn(1))
    assert f"— {len(report.summary.root_failures)} failed (" in panel.results_summary.text()
    assert panel.results_summary.property("role") == "error"
    # a failure's detail says what was sent, what came back and the rule
    cid = "negotiate.limits_minimums"
    assert panel.results.select(cid)
    detail = panel.results.detail.toPlainText()
    assert "Sent:" in detail and "Came back:" in detail and "Rule P-012 (§2.2, MUST)" in detail
    # the exported report carries its evidence: opened elsewhere (no traffic log), the
    # evidence rows still say what each call was
    js = panel.export_json(tmp_path / "bad.json")
    other = ConformancePanel(SlowBackend(), "ci")
    qtbot.addWidget(other)
    other.ask_open_path = lambda: str(js)
    other.load_button.click()
    assert other.results.select(cid)
    ev = other.results.evidence_model
    assert ev.rowCount() > 0
    assert ev.item(0, 0).text().startswith(("negotiate", "list_tools", "get_provider_info"))


def test_permission_is_per_tool_and_confirmed(qtbot, vclient) -> None:
    panel, recorder = _panel(qtbot, vclient, PRICEALERTS)
    box = panel.permission("create_alert")
    assert box is not None
    box.setChecked(True)
    assert panel.setup().allow_mutations == ["create_alert"]
    panel.fill_setup_template()
    setup = panel.setup()
    assert setup.mutation is not None and setup.mutation.tool == "create_alert"
    assert setup.mutation.observer is not None and setup.mutation.observer.tool == "list_alerts"
    # refusing the confirmation runs nothing
    panel.confirm_mutations = lambda tools: False
    before = len(recorder.exchanges)
    assert panel.start() is None
    assert not panel.running and len(recorder.exchanges) == before
    assert "not confirmed" in panel.status.text()


def test_bad_advanced_setup_is_reported(qtbot, vclient) -> None:
    panel, _ = _panel(qtbot, vclient, PRICEALERTS)
    panel.setup_edit.setPlainText('{"poll_timeout_ms": "soon"}')
    assert panel.start() is None
    assert panel.setup_error.isVisibleTo(panel) and "poll_timeout_ms" in panel.setup_error.text()


def _tool(name: str, effect: str, **more: Any) -> ToolDescriptor:
    ann = {"effect": effect, "risk": "low", "idempotent": True, "confirmation": "never"}
    ann.update(more)
    return ToolDescriptor(name=name, description=f"{name} description", input_schema={
        "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        annotations=Annotations.model_validate(ann))


def test_suggest_setup_uses_only_allowed_tools() -> None:
    tools = [_tool("list_things", "read"), _tool("make_thing", "create"),
             _tool("zap_thing", "delete", confirmation="always", destructive=True,
                   execution="sync_or_async")]
    assert suggest_setup(tools, []) == {}
    s = suggest_setup(tools, ["zap_thing"])
    assert "mutation" not in s  # a confirmed, destructive tool is no plain mutation
    assert s["confirmation"]["tool"] == "zap_thing" and s["async_call"]["tool"] == "zap_thing"
    s = suggest_setup(tools, ["make_thing", "zap_thing"])
    assert s["mutation"]["tool"] == "make_thing" and s["mutation"]["args"] == {"n": 1}
    assert s["mutation"]["observer"]["tool"] == "list_things"
    ConformanceSetup.model_validate(s)


class SlowBackend:
    """Reports two results, then waits until cancelled (or fails when told to)."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.started = asyncio.Event()

    async def tools(self) -> list[ToolDescriptor]:
        return [_tool("list_things", "read"), _tool("make_thing", "create")]

    async def plan(self, setup: ConformanceSetup) -> Plan:
        items = [PlanItem(check_id=f"c.{i}", title=f"check {i}", section="§2.2", level="MUST",
                          category=Category.NEGOTIATION, status="run") for i in range(4)]
        return Plan(provider="p", items=items, mutating_tools=list(setup.allow_mutations))

    async def run(self, setup: ConformanceSetup, on_result: Any) -> ConformanceReport:
        for i in range(2):
            on_result(_result(f"c.{i}", Outcome.PASS))
        if self.fail:
            raise RuntimeError("relay went away")
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def _result(cid: str, outcome: Outcome, message: str = "") -> CheckResult:
    return CheckResult(check_id=cid, title=cid, section="§2.2", level="MUST",
                       category=Category.NEGOTIATION, outcome=outcome, message=message,
                       evidence=Evidence(exchange_ids=["x1"]))


def test_cancel_keeps_partial_results(qtbot, qloop, idle) -> None:
    panel = ConformancePanel(SlowBackend(), "p")
    qtbot.addWidget(panel)
    wait_task(qtbot, panel.load_tools())
    qtbot.waitUntil(lambda: panel.plan is not None)
    panel.start()
    qtbot.waitUntil(lambda: panel.progress.value() == 2)
    assert panel.running and panel.cancel_button.isEnabled() and not panel.run_button.isEnabled()
    assert panel.progress.maximum() == 4
    panel.cancel()
    idle()
    assert not panel.running and panel.run_button.isEnabled()
    assert [r.check_id for r in panel.results.model.results()] == ["c.0", "c.1"]
    assert "Cancelled" in panel.status.text() and panel.report is None


def test_backend_failure_is_shown(qtbot, qloop, idle) -> None:
    panel = ConformancePanel(SlowBackend(fail=True), "p")
    qtbot.addWidget(panel)
    panel.start()
    idle()
    assert panel.error == "relay went away"
    assert "relay went away" in panel.status.text() and "try again" in panel.status.text()
    assert not panel.export_json_button.isEnabled()


def test_untrusted_text_is_bounded_plain(qtbot, qloop) -> None:
    panel = ConformancePanel(SlowBackend(), "p")
    qtbot.addWidget(panel)
    evil = "<b>bold</b>\x1b[31m\u202e" + "A" * 50_000
    report = ConformanceReport(target=TargetInfo(package="p"),
                               results=[_result("c.0", Outcome.FAIL, evil)])
    report.finalize()
    panel.show_report(report)
    m = panel.results.model
    text = m.data(m.index_of("c.0").siblingAtColumn(3))
    assert len(text) < 500 and "\x1b" not in text and "\u202e" not in text
    assert text.startswith("<b>bold</b>")  # shown literally, never as markup


def test_human_confirmation_prompt(qtbot, vclient) -> None:
    backend = SuiteBackend(vclient, PRICEALERTS)
    panel = ConformancePanel(backend, PRICEALERTS)
    qtbot.addWidget(panel)
    assert backend.human_prompt == panel.prompt_on_device  # installed for confirmations=human
    task = spawn(backend.human_prompt("APPROVE the confirmation <b>now</b>"), "t-prompt")
    qtbot.waitUntil(lambda: panel.device_prompt is not None)
    box = panel.device_prompt
    assert box.text().startswith("APPROVE the confirmation <b>now</b>")
    assert not task.done()
    box.button(box.StandardButton.Ok).click()
    qtbot.waitUntil(task.done)
    assert panel.device_prompt is None


@SUITE_RUN_STALL
def test_reference_setup_runs_the_conforming_provider_clean(qtbot, vclient) -> None:
    panel, recorder = _panel(qtbot, vclient, PRICEALERTS)
    assert panel.preset_button.isVisibleTo(panel)
    panel.use_preset()
    assert panel.setup().allow_mutations == []  # a preset allows nothing by itself
    for tool in ("create_alert", "sync_watchlist"):
        panel.permission(tool).setChecked(True)
    qtbot.waitUntil(lambda: panel.plan is not None
                    and panel.plan.mutating_tools == ["create_alert", "sync_watchlist"],
                    timeout=20_000)
    asked: list[list[str]] = []
    panel.confirm_mutations = lambda tools: asked.append(tools) or True
    with qtbot.waitSignal(panel.report_ready, timeout=90_000) as sig:
        panel.start()
    report: ConformanceReport = sig.args[0]
    assert asked == [["create_alert", "sync_watchlist"]]
    # every check ran and none failed; what is left needs more than the preset holds
    # (an observer for the async call, the provider's resume-token lifetime)
    assert report.summary.must_failed == [], report.text()
    left = [r for r in report.results if not r.outcome.ok]
    assert left and all(r.outcome == Outcome.NEEDS_SETUP for r in left), report.text()
    assert len(report.by_outcome(Outcome.PASS)) > 60
    assert set(_mutating_executes(panel, recorder)) <= {"create_alert", "sync_watchlist"}


def test_no_preset_for_other_providers(qtbot, vclient) -> None:
    panel, _ = _panel(qtbot, vclient, BADPROVIDER)
    assert not panel.preset_button.isVisibleTo(panel)


def test_deleting_a_running_panel_stops_its_run_quietly(qtbot, qloop, idle) -> None:
    errors: list[str] = []
    spawner().on_error = lambda name, exc: errors.append(f"{name}: {exc}")
    try:
        panel = ConformancePanel(SlowBackend(), "p")
        panel.start()
        qtbot.waitUntil(lambda: len(panel.results.model.results()) == 2)
        task = panel._task
        shiboken6.delete(panel)  # what deleteLater does when the window swaps providers
        qtbot.waitUntil(lambda: task.done())
        idle()
    finally:
        spawner().on_error = None
    assert task.cancelled() or task.result() is None
    assert errors == []
