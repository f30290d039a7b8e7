"""Zero rich text anywhere a provider string can reach (issue 12).

A provider and an extension put HTML into every field they control (see
plugins/html_everywhere.py). The window is driven through them like a person would —
provider overview, tools, composer, a failing call, traffic, the extension and a failing
function call — and then every widget is walked: labels, tooltips, item models
(ToolTipRole) and the status bar. Any place where Qt would render the provider's markup
fails the test, with the widget's class, object name and text."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QAbstractItemModel, QModelIndex, Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QWidget

from inspector.consumer.execution import ExecState
from tests.ui.fixtures import Harness

pytestmark = pytest.mark.gui

PLUGIN = Path(__file__).parent / "plugins" / "html_everywhere.py"
PROVIDER = "com.example.htmlprovider"
MARKERS = ("<b>", "<a href", "<img")


def _has_markup(text: str) -> bool:
    return any(m in text for m in MARKERS)


def _rich(text: str) -> bool:
    """Would Qt render `text` as rich text (for a tooltip or an AutoText label)?"""
    from PySide6.QtGui import Qt as GuiQt

    return bool(GuiQt.mightBeRichText(text))


def _who(w: QWidget) -> str:
    chain, p = [], w
    while p is not None and len(chain) < 4:
        chain.append(f"{type(p).__name__}:{p.objectName() or '-'}")
        p = p.parentWidget()
    return " < ".join(chain)


def _model_offences(model: QAbstractItemModel, where: str, out: list[str],
                    parent: QModelIndex | None = None, depth: int = 0) -> None:
    parent = parent or QModelIndex()
    if depth > 6:
        return
    rows = min(model.rowCount(parent), 500)
    try:
        cols = max(1, model.columnCount(parent))
    except TypeError:  # list models keep columnCount private in PySide6
        cols = 1
    for r in range(rows):
        for c in range(cols):
            idx = model.index(r, c, parent)
            tip = model.data(idx, Qt.ItemDataRole.ToolTipRole)
            if isinstance(tip, str) and _has_markup(tip) and _rich(tip):
                out.append(f"{where} row {r} col {c} tooltip renders HTML: {tip[:120]!r}")
        first = model.index(r, 0, parent)
        if model.rowCount(first) > 0:
            _model_offences(model, where, out, first, depth + 1)


def offences(root: QWidget) -> list[str]:
    out: list[str] = []
    widgets = [root, *root.findChildren(QWidget)]
    for w in widgets:
        w.ensurePolished()  # what happens before any widget is first shown
        tip = w.toolTip()
        if tip and _has_markup(tip) and _rich(tip):
            out.append(f"{_who(w)} tooltip renders HTML: {tip[:120]!r}")
        if isinstance(w, QLabel):
            text = w.text()
            fmt = w.textFormat()
            if _has_markup(text) and (fmt == Qt.TextFormat.RichText or (
                    fmt == Qt.TextFormat.AutoText and _rich(text))):
                out.append(f"{_who(w)} label renders HTML: {text[:120]!r}")
        if isinstance(w, QAbstractItemView) and not isinstance(w, QHeaderView) \
                and w.model() is not None:
            _model_offences(w.model(), _who(w), out)
    return sorted(set(out))


def _drive(harness: Harness) -> None:
    w = harness.window
    harness.device.load_plugin(PLUGIN)
    harness.wait(lambda: any(d.package == PROVIDER
                             for d in harness.controller.discovery("virtual").cetp))
    harness.open_provider(PROVIDER)
    for i in range(w.tabs.count()):
        w.tabs.setCurrentIndex(i)
    w.tabs.setCurrentIndex(1)
    assert w.tools.select("get_quote")
    w.tools.compose.click()
    harness.wait(lambda: w.composer.verdict is not None)
    w.composer.set_args({"symbol": "ACME"})
    harness.wait(lambda: w.composer.send.isEnabled())
    rid = harness.send()
    harness.wait(lambda: (ex := harness.execution(rid)) is not None
                 and ex.state not in (ExecState.RUNNING,), timeout=15_000)
    for i in range(w.tabs.count()):
        w.tabs.setCurrentIndex(i)
    traffic = w.traffic
    if traffic.model.rowCount() > 0:
        traffic.table.selectRow(traffic.model.rowCount() - 1)
    # the extension: its panel, its functions, a failing call
    assert w.navigator.select("virtual", "html_ext")
    view = w.extension_view
    harness.wait(lambda: view.host is not None and bool(view.host.functions)
                 and view.functions.count() == len(view.host.functions))
    assert view.select_function(view.host.functions[0].name)
    view.composer.set_args({"sides": 6})
    harness.wait(lambda: view.composer.send.isEnabled())
    view.composer.confirm = lambda *_: True
    assert view.composer.submit() is not None
    harness.wait(lambda: view.outcome.text().startswith(("✓", "✗")), timeout=15_000)


def test_no_provider_string_renders_as_rich_text(harness: Harness):
    _drive(harness)
    found = offences(harness.window)
    assert not found, "rich text from a provider:\n" + "\n".join(found)


def test_a_provider_error_in_the_status_bar_is_plain_text(harness: Harness):
    from tests.ui.plugins.html_everywhere import HTML

    w = harness.window
    w.report("call failed", "INVALID_ARGS: Error " + HTML)
    found = [o for o in offences(w) if "statusBar" in o or "QStatusBar" in o]
    assert not found, "\n".join(found)
