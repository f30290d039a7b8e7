"""The tool list's revision diff end to end: a plugin provider whose tool list changes
between negotiations; renegotiating in the window shows what was added, removed and changed."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from tests.ui.fixtures import Harness

pytestmark = pytest.mark.gui

PLUGIN = Path(__file__).parent / "plugins" / "evolving_tools.py"
EVOLVING = "com.example.evolving"


def tool_rows(h: Harness) -> dict[str, tuple[str, bool]]:
    """name → (annotation column text, selectable) of the v2 tool list."""
    lst = h.window.tools.list
    out = {}
    for i in range(lst.topLevelItemCount()):
        it = lst.topLevelItem(i)
        out[it.text(0)] = (it.text(1), bool(it.flags() & Qt.ItemFlag.ItemIsEnabled))
    return out


def test_renegotiation_shows_added_removed_and_changed_tools(harness: Harness):
    w = harness.window
    harness.device.load_plugin(PLUGIN)  # the device announces the new package
    harness.wait(lambda: any(d.package == EVOLVING
                             for d in harness.controller.discovery("virtual").cetp))
    harness.open_provider(EVOLVING)
    first = w.tools.revision.text()
    assert "list_alerts" in tool_rows(harness) and "archive_alerts" not in tool_rows(harness)
    assert not w.tools.diff.isVisible() and w.tools.diff.text() == ""

    w.tabs.setCurrentIndex(0)
    w.overview.negotiate.click()  # second negotiation: the provider's tools change
    harness.wait(lambda: w.tools.revision.text() != first, timeout=10_000)

    w.tabs.setCurrentIndex(1)
    text = w.tools.diff.text()
    assert w.tools.diff.isVisible()
    old_rev = first.split()[1]
    assert f"revision {old_rev} → " in text
    assert "+ added: archive_alerts" in text
    assert "− removed: list_alerts" in text
    assert "~ changed: get_quote (input_schema)" in text
    rows = tool_rows(harness)
    assert rows["archive_alerts"][0].startswith("new · ")
    assert rows["get_quote"][0].startswith("changed · ")
    assert rows["list_alerts"] == ("removed in this revision", False)  # shown, not callable
    assert not rows["create_alert"][0].startswith(("new", "changed"))

    # the changed schema reaches the composer: the new optional argument has a field
    assert w.tools.select("get_quote")
    w.tools.compose.click()
    assert w.composer.form.field("exchange") is not None
