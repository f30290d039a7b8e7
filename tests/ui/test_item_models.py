"""Every item model of the window passes pytest-qt's model tester."""

from __future__ import annotations

import pytest

from inspector.consumer.execution import ExecState, Execution
from inspector.protocol.cetp import OperationState
from inspector.session.devices import DeviceInfo
from inspector.ui.json_tree import CHUNK, JsonTreeModel
from inspector.ui.navigator import NavigatorFilter, NavigatorModel
from inspector.ui.operations_panel import OperationsModel, OperationsPanel

pytestmark = pytest.mark.gui


def test_json_tree_model_lazy_and_chunked(qtmodeltester, qloop):
    value = {"a": [1, 2, {"b": None}], "big": list(range(CHUNK * 2 + 5)), "s": "x" * 5000}
    model = JsonTreeModel(value)
    root = model.index(0, 0)
    assert model.data(root) == "$" and model.rowCount(root) == 0  # nothing built yet
    model.fetchMore(root)
    big = next(
        model.index(r, 0, root)
        for r in range(model.rowCount(root))
        if model.data(model.index(r, 0, root)) == "big"
    )
    assert model.hasChildren(big) and model.rowCount(big) == 0 and model.canFetchMore(big)
    model.fetchMore(big)
    assert model.rowCount(big) == CHUNK
    model.fetchMore(big)
    model.fetchMore(big)
    assert model.rowCount(big) == CHUNK * 2 + 5 and not model.canFetchMore(big)
    assert model.json_pointer(model.index(3, 0, big)) == "/big/3"
    assert "more characters" in model.data(model.index(2, 1, root))
    qtmodeltester.check(model, force_py=True)
    model.set_value([])
    qtmodeltester.check(model, force_py=True)


def _devices() -> list[DeviceInfo]:
    return [
        DeviceInfo(serial="virtual", kind="virtual", model="CETP virtual device"),
        DeviceInfo(serial="R58M", kind="adb", model="Pixel"),
        DeviceInfo(serial="OFF1", kind="adb", state="offline", usable=False,
                   message="reconnect the cable"),  # gets a "what to do" child row
    ]


@pytest.mark.parametrize("check_proxy", [False, True])
def test_navigator_model_and_filter(qtmodeltester, qloop, check_proxy):
    model = NavigatorModel()
    model.set_devices(_devices(), {})
    proxy = NavigatorFilter()
    proxy.setSourceModel(model)
    qtmodeltester.check(proxy if check_proxy else model, force_py=True)
    model.set_devices([*_devices()[:2], _devices()[2].model_copy(update={"usable": True})], {})
    assert model.item(2, 0).rowCount() == 0  # the hint went with the problem
    model.set_devices([DeviceInfo(serial="virtual", kind="virtual")], {"virtual": "connected"})
    assert model.rowCount() == 1 and model.item(0, 1).text() == "connected"
    proxy.setFilterFixedString("nothing-matches")
    assert proxy.rowCount() == 0


def test_operations_model_timeline_and_states(qtmodeltester, qtbot, qloop):
    panel = OperationsPanel()
    qtbot.addWidget(panel)
    model: OperationsModel = panel.model
    qtmodeltester.check(model, force_py=True)
    ex = Execution(
        tool_name="sync",
        args_json="{}",
        state=ExecState.ACCEPTED,
        operation_id="op_1",
        poll_after_ms=500,
    )
    panel.update_execution(ex)
    ex.operation = OperationState(
        operation_id="op_1",
        state="running",
        progress={"current": 1, "total": 4, "message": "Fetched A"},
    )
    panel.update_execution(ex)
    assert model.data(model.index(0, 3)) == "25 %"
    assert panel.progress.value() == 25 and panel.cancel.isEnabled()
    ex.operation = OperationState(operation_id="op_1", state="cancelled")
    ex.state = ExecState.CANCELLED
    panel.update_execution(ex)
    assert [st for _t, st in model.rows[0].timeline] == ["accepted", "running", "cancelled"]
    assert not panel.cancel.isEnabled() and model.data(model.index(0, 5)) == "—"
    qtmodeltester.check(model, force_py=True)
