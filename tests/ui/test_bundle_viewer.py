"""The bundle viewer over a real bug report: session recorded on the virtual device, with
the conformance suite's report (its evidence ids point into the bundled session)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspector.conformance.runner import run_conformance
from inspector.consumer.engine import ProviderSession
from inspector.consumer.recorder import Recorder
from inspector.session.bundle_file import create_bundle
from inspector.session.journal import JournalWriter, read_journal
from inspector.tasks import spawn
from inspector.ui.bundle_viewer import BundleViewer, device_pairs, resolve_pointer
from tests.ui.test_conformance_panel import vclient as vclient
from tests.ui.test_conformance_panel import wait_task

AUTHORITY = "com.example.pricealerts.clawseed.tools"
PACKAGE = "com.example.pricealerts"


async def _record_with_conformance(client: Any, directory: Path) -> tuple[Path, str]:
    recorder = Recorder(device="virtual")
    writer = JournalWriter.create(name="alerts <i>bug</i>", directory=directory,
                                  device={"serial": "virtual"})
    writer.record("device", {"manufacturer": "Virtual", "model": "Pixel", "release": "14",
                             "sdk_int": 34, "relay_version_name": "0.1.0"})
    writer.record("discovery", {"packages": [{"package": PACKAGE, "uid": 10001}]})
    recorder.add_listener(writer.on_exchange)
    provider = ProviderSession(client, AUTHORITY, package=PACKAGE, recorder=recorder)
    await provider.negotiate()
    await provider.list_tools()
    await provider.execute_tool("list_alerts", {})
    report = await run_conformance(client, PACKAGE, recorder=recorder,
                                   select=["negotiate", "errors"])
    writer.record("conformance", report.model_dump(mode="json"))
    writer.close()
    return writer.path, str(recorder.exchanges[0].decoded["session_token"])


def make_bundle(qtbot: Any, client: Any, tmp_path: Path, *, redact: bool = True) -> Path:
    journal, _ = wait_task(qtbot, spawn(_record_with_conformance(client, tmp_path / "s"),
                                        "t-record"), 60_000)
    return create_bundle(tmp_path / "bug.cetpbundle", read_journal(journal),
                         note="list_alerts shows stale data", redact=redact)


def _open(qtbot: Any, path: Path) -> BundleViewer:
    viewer = BundleViewer()
    qtbot.addWidget(viewer)
    viewer.resize(1200, 800)
    with qtbot.waitSignal(viewer.loaded, timeout=20_000):
        viewer.open_path(path)
    return viewer


def test_bundle_opens_read_only_with_everything(qtbot, vclient, qtmodeltester, tmp_path):
    viewer = _open(qtbot, make_bundle(qtbot, vclient, tmp_path))
    report = viewer.report
    assert report is not None
    assert viewer.title.text() == "Bug report: alerts <i>bug</i>"
    assert "Secrets redacted" in viewer.secrets.text() and "session_token" in viewer.secrets.text()
    assert "list_alerts shows stale data" in viewer.summary.toPlainText()
    # device facts, labelled
    qtmodeltester.check(viewer.device_model)
    pairs = dict(viewer.device_model.pairs())
    assert pairs["Model"] == "Pixel" and pairs["Android version"] == "14"
    assert pairs["Relay version"] == "0.1.0" and pairs["Serial"] == "virtual"
    # declarations and descriptors
    qtmodeltester.check(viewer.providers_model)
    pm = viewer.providers_model
    root = pm.index(0, 0)  # the value itself ("$")
    top = [pm.data(pm.index(r, 0, root)) for r in range(pm.rowCount(root))]
    assert top == ["manifest declarations", "descriptors"]
    desc = pm.index(1, 0, root)
    assert viewer.providers_model.data(viewer.providers_model.index(0, 0, desc)) == AUTHORITY
    viewer.providers_view.setCurrentIndex(viewer.providers_model.index(0, 0, desc))
    assert "list_tools" in viewer.providers_text.toPlainText()
    # every exchange, in the traffic table
    assert viewer.traffic.model.rowCount() == len(report.exchanges) > 3
    # the conformance report, its evidence linked into the bundled exchanges
    assert viewer.conformance is not None and viewer.conformance.results
    results = viewer.results
    qtmodeltester.check(results.model)
    r = next(r for r in viewer.conformance.results if r.evidence.exchange_ids)
    assert results.select(r.check_id)
    assert results.evidence_model.item(0, 0).text() != "(exchange)"  # named from the bundle
    results.show_evidence.click()
    assert viewer.tabs.currentWidget() is viewer.traffic
    rows = viewer.traffic.table.selectionModel().selectedRows()
    assert rows and viewer.traffic.model.exchange_at(rows[0].row()).id == \
        r.evidence.exchange_ids[0]
    with qtbot.waitSignal(viewer.replay_requested) as replay:
        viewer.replay_button.click()
    assert replay.args[0] is report


def test_unredacted_bundle_is_flagged(qtbot, vclient, tmp_path) -> None:
    viewer = _open(qtbot, make_bundle(qtbot, vclient, tmp_path, redact=False))
    assert "WITHOUT redaction" in viewer.secrets.text()
    assert viewer.secrets.property("role") == "error"


def test_bad_bundle_says_why(qtbot, qloop, tmp_path) -> None:
    bad = tmp_path / "bad.cetpbundle"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    viewer = BundleViewer()
    qtbot.addWidget(viewer)
    with qtbot.waitSignal(viewer.failed, timeout=10_000) as failed:
        viewer.open_path(bad)
    assert "not a zip" in failed.args[0] or "not a bug-report" in failed.args[0]
    assert viewer.report is None and viewer.title.text() == "Cannot open the bundle"
    assert not viewer.replay_button.isEnabled()


def test_helpers() -> None:
    assert device_pairs({"zz": [1, 2], "model": "P"}) == [("Model", "P"), ("zz", "1, 2")]
    value = {"a": [{"b/c": 1}], "d": {"~": 2}}
    assert resolve_pointer(value, "/a/0/b~1c") == 1
    assert resolve_pointer(value, "/d/~0") == 2
    assert resolve_pointer(value, "/a/9") is None and resolve_pointer(value, "") == value


def test_bundle_viewer_fits_1024_with_long_report_text(qtbot, vclient, tmp_path) -> None:
    """Issue 14: a bug report's title, secrets line or device facts of 5,000 characters
    without a space never make the viewer wider than a 1024-px screen."""
    from tests.ui.test_window_layout import labels_never_widen

    viewer = _open(qtbot, make_bundle(qtbot, vclient, tmp_path))
    viewer.resize(1024, 700)
    viewer.show()
    qtbot.waitUntil(lambda: viewer.title.isVisible())
    assert viewer.minimumSizeHint().width() <= 1024
    labels_never_widen(viewer, "bundle viewer")
