"""The real window driven against the in-process virtual device, flow by flow (issue 5)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from inspector.consumer.execution import ExecState
from tests.ui.fixtures import PRICEALERTS, Harness

pytestmark = pytest.mark.gui


def test_discovery_lists_devices_providers_extensions_with_badges(harness: Harness):
    w = harness.window
    m = w.navigator.model
    assert m.rowCount() >= 1
    dev = m.item(0, 0)
    names = [dev.child(r, 0).text() for r in range(dev.rowCount())]
    badges = [dev.child(r, 1).text() for r in range(dev.rowCount())]
    assert any("Price" in n or "pricealerts" in n for n in names)
    assert "v1+v2" in badges and "v1" in badges
    assert any(b.startswith("ext") for b in badges)
    assert any("⚠" in b for b in badges)  # the bad provider's foreign authority
    bad = [n for n in names if n.startswith("Bad Provider")]  # two services, one label
    assert len(bad) == 2 and len(set(bad)) == 2, bad
    w.navigator.filter.setText("dice")
    proxy = w.navigator.proxy
    root = proxy.index(0, 0)
    assert proxy.rowCount(root) == 1


def test_negotiation_shows_result_masks_token_and_renegotiates(harness: Harness):
    harness.open_provider()
    w = harness.window
    ov = w.overview
    assert ov.n_selected.text() == "2"
    token = w.controller.entry(w.current_key).engine.session.token
    assert token not in ov.n_token.text() and "•" in ov.n_token.text()
    ov.reveal.setChecked(True)
    assert ov.n_token.text() == token
    ov.reveal.setChecked(False)
    assert "async_operations" in ov.n_caps.text()
    assert ov.limits.rowCount() == 4 and "≥ 65,536" in ov.limits.item(0, 2).text()
    assert ov.n_expiry.text() != "—"
    ov.caps["large_results"].setChecked(False)
    ov.negotiate.click()
    harness.wait(lambda: "large_results" not in ov.n_caps.text() and ov.n_caps.text() != "—")
    assert w.tools.list.topLevelItemCount() > 0
    assert w.tools.v1box.isVisible() or w.tools.v1_list.topLevelItemCount() > 0


def test_call_built_with_the_form(harness: Harness):
    harness.open_provider()
    w = harness.window
    harness.compose("get_quote")
    w.composer.form.field("symbol").edit.setText("ACME")
    harness.wait(lambda: harness.args() == {"symbol": "ACME"})
    harness.wait(lambda: w.composer.verdict is not None and w.composer.verdict.ok)
    rid = harness.send()
    harness.wait(lambda: w.result.state.text() == "Success")
    assert w.result.env_request_id.text() == rid
    assert "output matches" in w.result.env_schema.text()
    assert "ACME" in w.result.value_view.text.toPlainText()
    harness.wait(lambda: w.traffic.model.total > 0)


def test_validation_error_lists_pointer_and_provider_rejects(harness: Harness):
    harness.open_provider()
    w = harness.window
    harness.compose("get_quote")
    w.composer.form.field("symbol").edit.setText("lower case")
    harness.wait(
        lambda: (
            w.composer.verdict is not None
            and any(i.pointer == "/symbol" for i in w.composer.verdict.issues)
        )
    )
    assert any(
        "/symbol" in w.composer.issues.item(r).text() for r in range(w.composer.issues.count())
    )
    harness.send()  # send anyway: the provider answers INVALID_ARGS
    harness.wait(lambda: w.result.err_code.text() == "INVALID_ARGS")
    assert w.result.error_box.isVisibleTo(w.result)


def _confirmation(harness: Harness, approve: bool):
    harness.open_provider()
    w = harness.window
    harness.compose("create_alert", {"symbol": "ACME", "price": 12.5})
    rid = harness.send()
    harness.wait(
        lambda: (
            (ex := harness.execution(rid)) is not None and ex.state == ExecState.NEEDS_RESOLUTION
        )
    )
    assert "•" in w.result.conf_token.text()
    assert w.result.launch.isEnabled()
    w.result.launch.click()
    harness.wait(lambda: w.confirmation_dialog is not None and w.confirmation_dialog.isVisible())
    dlg = w.confirmation_dialog
    assert dlg.target.text() and dlg.action.text()
    assert "ACME" in dlg.parameters.toPlainText()
    (dlg.approve if approve else dlg.deny).click()
    return rid


def test_confirmation_approved_resumes_with_the_same_request_id(harness: Harness):
    rid = _confirmation(harness, approve=True)
    w = harness.window
    harness.wait(lambda: harness.execution(rid).state == ExecState.SUCCEEDED, timeout=15_000)
    ex = harness.execution(rid)
    assert ex.request_id == rid and any(a.resumed for a in ex.attempts)
    harness.wait(lambda: w.result.state.text() == "Success")
    assert "approved" in w.result.conf_state.text()


def test_confirmation_denied_is_shown_as_denial(harness: Harness):
    rid = _confirmation(harness, approve=False)
    w = harness.window
    harness.wait(
        lambda: (
            harness.execution(rid).state
            in (ExecState.RESOLUTION_DECLINED, ExecState.USER_CANCELLED)
        )
    )
    harness.wait(lambda: "Denied" in w.result.state.text())
    assert "denied" in w.result.conf_state.text()


def test_async_operation_is_cancelled_from_the_operations_panel(harness: Harness):
    harness.open_provider()
    w = harness.window
    harness.compose(
        "sync_watchlist", {"symbols": ["ACME", "GLOBX", "INITECH", "UMBRL"], "step_ms": 1000}
    )
    rid = harness.send()
    ops = w.operations
    harness.wait(lambda: ops.model.rowCount() == 1 and ops.cancel.isEnabled())
    ops.cancel.click()
    harness.wait(lambda: ops.model.rows[0].final, timeout=20_000)
    ex = harness.execution(rid)
    assert ex.state == ExecState.CANCELLED or (ex.cancel and ex.cancel.confirmed_cancelled)
    assert "cancelled" in [st for _ts, st in ops.model.rows[0].timeline]
    assert ops.timeline.count() >= 2


def test_large_result_verified_and_saved(harness: Harness, tmp_path):
    harness.open_provider()
    w = harness.window
    harness.compose("export_history", {"rows": 6000})
    rid = harness.send()
    harness.wait(
        lambda: (ex := harness.execution(rid)) is not None and ex.file_verdict is not None,
        timeout=20_000,
    )
    harness.wait(lambda: w.result.file_verdict.text().startswith("✓"))
    names = [w.result.checklist.item(r, 0).text() for r in range(w.result.checklist.rowCount())]
    assert {"size", "sha256"} <= set(names)
    out = tmp_path / "saved.json"
    assert w.save_result_to(rid, str(out))
    assert out.stat().st_size == harness.execution(rid).file.size_bytes


def test_corrupted_large_result_is_flagged(harness: Harness):
    harness.open_provider()
    w = harness.window
    w.run(
        harness.controller.fault("virtual", "corrupt_digest", package=PRICEALERTS), "fault", "fault"
    )
    harness.wait(lambda: bool(harness.device.faults.corrupt))
    harness.compose("export_history", {"rows": 6000})
    rid = harness.send()
    harness.wait(
        lambda: (ex := harness.execution(rid)) is not None and ex.file_verdict is not None,
        timeout=20_000,
    )
    harness.wait(lambda: w.result.file_verdict.text().startswith("✗"))
    assert "sha256" in w.result.file_verdict.text()


@pytest.mark.parametrize(
    "ext_id, function, args",
    [
        ("hello_world", "hello", {"name": "Ada"}),
        ("unit_converter", "convert_length", {"value": 2, "from": "km", "to": "m"}),
        ("dice", "roll_dice", {"sides": 6, "count": 2, "seed": 7}),
        ("flashlight", "toggle_flashlight", {"on": True}),
    ],
)
def test_extension_called_through_its_bridge(harness: Harness, ext_id, function, args):
    w = harness.window
    assert w.navigator.select("virtual", ext_id)
    view = w.extension_view
    harness.wait(lambda: view.host is not None and bool(view.host.functions)
                 and view.functions.count() == len(view.host.functions)
                 and view.functions.item(0).data(Qt.ItemDataRole.UserRole) is not None)
    names = [f.name for f in view.host.functions]
    fn = function if function in names else names[0]
    assert view.select_function(fn)
    bridge = view.host.decl.bridge.value
    view.set_bridge(bridge)
    assert view.composer.bridge.currentText() == bridge
    view.composer.set_args(args)
    harness.wait(lambda: view.composer.send.isEnabled())
    view.composer.confirm = lambda *_: True
    assert view.composer.submit() is not None
    harness.wait(
        lambda: view.outcome.text().startswith(("✓", "✗")) and "via" in view.outcome.text()
    )
    assert bridge in view.outcome.text()
    assert view.outcome.text().startswith("✓"), view.outcome.text() + view.detail.text()


def test_device_drops_and_comes_back(harness: Harness):
    harness.open_provider()
    w = harness.window
    states: list[str] = []
    harness.controller.linkStateChanged.connect(lambda _s, st, _d: states.append(st))
    w.run(harness.controller.fault("virtual", "drop_connection"), "fault", "fault")
    harness.wait(lambda: bool(harness.device.faults.drop_next))
    harness.compose("get_quote", {"symbol": "ACME"})
    rid = harness.send()
    # the engine retries with the same request_id through the reconnecting link
    harness.wait(
        lambda: (
            harness.execution(rid) is not None
            and harness.execution(rid).state in (ExecState.SUCCEEDED, ExecState.OUTCOME_UNKNOWN)
        ),
        timeout=20_000,
    )
    assert "disconnected" in states
    w.reconnect()
    harness.wait(lambda: states[-1] == "connected")
    # as a person does: send again once the first call has ended and Send is enabled
    harness.wait(lambda: w.composer.in_flight is None and w.composer.send.isEnabled())
    rid2 = harness.send()
    harness.wait(
        lambda: (ex := harness.execution(rid2)) is not None and ex.state == ExecState.SUCCEEDED
    )
    assert "connected" in w.navigator.model.item(0, 1).text()


def test_conformance_tab_plans_against_the_session(harness: Harness):
    harness.open_provider()
    w = harness.window
    w.tabs.setCurrentWidget(w.conformance_holder)
    panel = w.conformance_panel
    assert panel is not None
    harness.wait(lambda: panel.plan is not None or panel.error is not None, timeout=20_000)
    assert panel.error is None and panel.plan.items


def test_operation_survives_a_reconnect(harness: Harness):
    harness.open_provider()
    w = harness.window
    harness.compose("sync_watchlist", {"symbols": ["ACME", "GLOBX", "INITECH"], "step_ms": 400})
    rid = harness.send()
    ops = w.operations
    harness.wait(lambda: ops.model.rowCount() == 1)
    w.reconnect()
    harness.wait(lambda: ops.model.rows[0].final, timeout=20_000)
    ex = harness.execution(rid)
    assert ex.state == ExecState.SUCCEEDED, ex.message
    assert ex.request_id == rid and ops.model.rows[0].state == "succeeded"
    # shown once its output is checked against output_schema (off the UI thread, issue 12)
    harness.wait(lambda: "ACME" in ops.result.text.toPlainText())


def test_package_removed_on_the_device_refreshes_the_tree(harness: Harness):
    w = harness.window

    def names() -> list[str]:
        dev = w.navigator.model.item(0, 0)
        return [dev.child(r, 0).text() for r in range(dev.rowCount())]

    assert "MyFinance" in names()
    harness.device.uninstall("com.example.finance")  # the device pushes package_changed
    harness.wait(lambda: "MyFinance" not in names())
    assert "Unit Converter" in names()


def test_traffic_detail_shows_the_typed_bundles_and_filters(harness: Harness):
    harness.open_provider()
    w = harness.window
    harness.compose("get_quote", {"symbol": "ACME"})
    harness.send()
    harness.wait(lambda: w.result.state.text() == "Success")
    model = w.traffic.model
    harness.wait(lambda: model.rowCount() == model.total and model.total >= 5)
    w.traffic.filter.setText("tool:get_quote method:execute")
    harness.wait(lambda: model.rowCount() == 1)
    w.traffic.table.selectRow(0)
    text = w.traffic.detail.toPlainText()
    assert "request (typed Bundle)" in text and "response (typed Bundle)" in text
    assert '"t": "int"' in text and '"t": "long"' in text  # protocol_version, deadline_at_ms
    assert "ACME" in text
    w.traffic.filter.setText("status:error")
    harness.wait(lambda: model.rowCount() == 0)
    assert "of" in w.traffic.count.text()


def test_spec_rule_breaks_found_while_loading_become_tree_warnings(harness: Harness):
    w = harness.window
    d = harness.controller.discovery("virtual")
    bad = next(x for x in d.cetp if x.package == "com.example.badprovider"
               and x.authority == "com.example.badprovider.clawseed.tools")
    assert w.navigator.select("virtual", bad.key)
    harness.wait(lambda: (e := harness.controller.entry(w.current_key or "")) is not None
                 and (e.loaded or bool(e.error)))
    dev = w.navigator.model.item(0, 0)
    row = next(r for r in range(dev.rowCount()) if dev.child(r, 0).data(
        Qt.ItemDataRole.UserRole + 3) == bad.key)
    harness.wait(lambda: "⚠" in dev.child(row, 1).text())
    assert dev.child(row, 1).text().startswith("v1+v2")
    assert any(not f.ok for f in harness.controller.entry(w.current_key).engine.findings)
