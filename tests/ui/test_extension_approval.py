"""`requiresApproval` extension functions ask before every call (the dialog hook replaced):
refusing sends nothing, approving runs the call once; other functions never ask."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from inspector.protocol.exchange import ExchangeKind
from tests.ui.fixtures import Harness

pytestmark = pytest.mark.gui

FLASHLIGHT = "com.example.flashlight"


def open_function(h: Harness, ext_id: str, function: str, args: dict) -> None:
    view = h.window.extension_view
    assert h.window.navigator.select("virtual", ext_id)
    h.wait(lambda: view.host is not None and view.host.decl.id == ext_id
           and view.functions.count() == len(view.host.functions) > 0
           and view.functions.item(0).data(Qt.ItemDataRole.UserRole) is not None)
    assert view.select_function(function)
    view.composer.set_args(args)
    h.wait(lambda: view.composer.send.isEnabled())


def calls(h: Harness, function: str) -> list:
    return [x for x in h.controller.exchanges()
            if x.kind == ExchangeKind.EXTENSION and x.tool == function]


def test_refused_approval_sends_nothing_then_approval_runs_it(harness: Harness):
    view = harness.window.extension_view
    open_function(harness, "flashlight", "toggle_flashlight", {"on": True})
    app = harness.device.apps[FLASHLIGHT]
    asked: list[tuple[str, str]] = []

    def refuse(title: str, text: str) -> bool:
        asked.append((title, text))
        return False

    view.composer.confirm = refuse
    view.composer.submit()
    assert len(asked) == 1
    assert "toggle_flashlight" in asked[0][1] and "requiresApproval" in asked[0][1]
    assert view.outcome.text().startswith("Not sent")
    assert view.outcome.property("role") == "warn"
    harness.qtbot.wait(200)  # nothing is in flight: no exchange, no launch
    assert calls(harness, "toggle_flashlight") == [] and app.launches == []

    def approve(title: str, text: str) -> bool:
        asked.append((title, text))
        return True

    view.composer.confirm = approve
    view.composer.submit()
    harness.wait(lambda: view.outcome.text().startswith(("✓", "✗")))
    assert len(asked) == 2
    assert view.outcome.text() == "✓ result of toggle_flashlight via activity", view.detail.text()
    assert len(app.launches) == 1
    assert [x.status.value for x in calls(harness, "toggle_flashlight")] == ["success"]


def test_functions_without_requires_approval_never_ask(harness: Harness):
    view = harness.window.extension_view
    open_function(harness, "dice", "roll_dice", {"sides": 6, "count": 1, "seed": 3})
    asked: list[str] = []
    view.composer.confirm = lambda title, _text: asked.append(title) or False
    view.composer.submit()
    harness.wait(lambda: view.outcome.text().startswith(("✓", "✗")))
    assert asked == [] and view.outcome.text().startswith("✓")
