"""Any screen (issue 14): the window fits 1024×700, the overview's buttons are never behind
a scrollbar, and a saved geometry from a bigger monitor is clamped to this screen."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import QRect, QSettings, Qt
from PySide6.QtGui import QTextDocumentFragment

from inspector.ui.main_window import MainWindow
from inspector.ui.window_layout import clamp_to
from tests.ui.fixtures import Harness

pytestmark = pytest.mark.gui


def shown(tip: str) -> str:
    """What a tooltip displays (its markup rendered away)."""
    return QTextDocumentFragment.fromHtml(tip).toPlainText()


def seen(widget) -> bool:
    """Visible to a person: shown and not clipped away by a scroll area."""
    return widget.isVisible() and not widget.visibleRegion().isEmpty()


@pytest.mark.parametrize("size", [(1360, 860), (1024, 700)])
def test_negotiate_and_reveal_need_no_scrolling(harness: Harness, size):
    w = harness.window
    w.resize(*size)
    harness.open_provider()
    w.tabs.setCurrentIndex(0)
    ov = w.overview
    harness.wait(lambda: w.width() == size[0] and w.height() == size[1])
    harness.wait(lambda: seen(ov.negotiate) and seen(ov.reveal))
    assert not ov.horizontalScrollBar().isVisible()
    assert ov.negotiate.mapTo(ov, ov.negotiate.rect().bottomRight()).y() <= ov.height()


def test_the_window_shrinks_well_below_1239_px(harness: Harness):
    w = harness.window
    assert w.minimumSizeHint().width() <= 900
    assert w.minimumSizeHint().height() <= 700
    harness.open_provider()
    harness.compose("get_quote", {"symbol": "ACME"})
    w.resize(1024, 700)
    harness.wait(lambda: w.width() == 1024)
    send = w.composer.send
    harness.wait(lambda: seen(send))  # the composer's controls wrapped, Send is reachable
    assert send.mapTo(w, send.rect().bottomRight()).x() <= w.width()


def test_clamp_moves_and_shrinks_into_the_screen():
    screen = QRect(0, 0, 1024, 700)
    assert clamp_to(QRect(3000, 2000, 1400, 900), screen) == QRect(0, 0, 1024, 700)
    assert clamp_to(QRect(-50, 10, 800, 600), screen) == QRect(0, 10, 800, 600)
    assert clamp_to(QRect(500, 400, 800, 600), screen) == QRect(224, 100, 800, 600)


def test_a_saved_geometry_bigger_than_the_screen_is_clamped(qtbot, qloop, tmp_path):
    path = str(tmp_path / "settings.ini")
    first = MainWindow(settings=QSettings(path, QSettings.Format.IniFormat), autostart=False)
    qtbot.addWidget(first)
    first.show()
    first.setGeometry(5000, 4000, 3000, 2000)  # a big monitor, far to the right
    first.save_layout()
    first.hide()
    again = MainWindow(settings=QSettings(path, QSettings.Format.IniFormat), autostart=False)
    qtbot.addWidget(again)
    again.show()
    avail = again.screen().availableGeometry()
    g = again.geometry()
    assert avail.contains(g.topLeft())
    assert g.width() <= avail.width()
    assert g.height() <= max(avail.height(), again.minimumSizeHint().height())


@pytest.mark.parametrize("ext_id", ["unit_converter", "dice"])  # "provider", "broadcast"
def test_bridge_names_are_not_cut(harness: Harness, ext_id):
    w = harness.window
    w.resize(1024, 700)
    view = w.extension_view
    assert w.navigator.select("virtual", ext_id)
    harness.wait(lambda: view.host is not None and view.functions.count() > 0
                 and view.functions.item(0).data(Qt.ItemDataRole.UserRole) is not None)
    assert view.select_function(view.host.functions[0].name)
    combo = view.composer.bridge
    names = [combo.itemText(i) for i in range(combo.count())]
    assert names
    longest = max(combo.fontMetrics().horizontalAdvance(n) for n in names)
    harness.wait(lambda: combo.isVisible() and combo.width() > longest)


def test_elided_provider_names_and_badges_have_their_whole_text_as_tooltip(harness: Harness):
    w = harness.window
    w.resize(1024, 700)
    dev = w.navigator.model.item(0, 0)
    for r in range(dev.rowCount()):
        name, badge = dev.child(r, 0), dev.child(r, 1)
        if name.text().startswith("⚠"):
            continue
        # tooltips are escaped HTML (issue 12): compare what they show
        assert shown(name.toolTip()).startswith(name.text()), name.text()
        assert shown(badge.toolTip()).startswith(badge.text().split("  ⚠")[0]) \
            or "⚠" in badge.text()


HIDPI_PROBE = """
import json, sys
from PySide6.QtCore import QSettings
from inspector.ui.app import make_app
from inspector.ui.main_window import MainWindow
app = make_app([])
w = MainWindow(settings=QSettings(sys.argv[1], QSettings.Format.IniFormat), autostart=False)
w.resize(1024, 700)
w.show()
app.processEvents()
hint = w.minimumSizeHint()
print(json.dumps({"dpr": w.devicePixelRatio(), "min": [hint.width(), hint.height()],
                  "size": [w.width(), w.height()]}))
"""


def test_at_200_percent_the_window_still_fits_1024_by_700(tmp_path):
    """HiDPI: Qt scales by 2 (QT_SCALE_FACTOR, as a 200 % desktop does); the window's
    logical minimum must still fit a 1024×700 screen."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", QT_SCALE_FACTOR="2",
               HOME=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", HIDPI_PROBE, str(tmp_path / "s.ini")],
                         cwd=Path(__file__).resolve().parents[2], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    probe = json.loads(out.stdout.strip().splitlines()[-1])
    assert probe["dpr"] == 2
    assert probe["min"][0] <= 1024 and probe["min"][1] <= 700
    assert probe["size"] == [1024, 700]


LONG = "W" * 5000  # a provider's name, error or result without a single space


def settled_min_width(w) -> int:
    """The window's minimum width once the layout requests a change posted have climbed
    up to it (each level posts the next; the window caches its minimum until then)."""
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication

    for _ in range(12):
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
    return w.minimumSizeHint().width()


def fits(w) -> bool:
    """The window neither grew past a 1024-px screen nor asks to."""
    return settled_min_width(w) <= 1024 and w.width() <= 1024


BRIDGE_CALLS = {  # one extension of the virtual device per bridge
    "service": ("hello_world", "greet", {"name": "Ada"}),
    "provider": ("unit_converter", "convert_length", {"value": 1, "from": "km", "to": "m"}),
    "broadcast": ("dice", "roll_dice", {"sides": 6, "count": 1, "seed": 3}),
    "activity": ("flashlight", "toggle_flashlight", {"on": True}),
}


def open_function(h: Harness, ext_id: str, function: str, args: dict) -> None:
    view = h.window.extension_view
    assert h.window.navigator.select("virtual", ext_id)
    h.wait(lambda: view.host is not None and view.host.decl.id == ext_id
           and view.functions.count() == len(view.host.functions) > 0
           and view.functions.item(0).data(Qt.ItemDataRole.UserRole) is not None)
    assert view.select_function(function)
    view.composer.set_args(args)
    h.wait(lambda: view.composer.send.isEnabled())


@pytest.mark.parametrize("bridge", list(BRIDGE_CALLS))
def test_an_extension_call_on_every_bridge_keeps_the_window_at_1024(harness: Harness, bridge):
    """The defect: the in-flight bar's label ("⏳ roll_dice is running — request_id …") had
    no way to shrink, so each call widened the window to ~1130 px and it stayed there."""
    w = harness.window
    w.resize(1024, 700)
    harness.wait(lambda: w.width() == 1024)
    view = w.extension_view
    open_function(harness, *BRIDGE_CALLS[bridge])
    view.set_bridge(bridge)
    view.composer.confirm = lambda _t, _x: True
    view.composer.send.click()
    assert view.composer.in_flight_bar.isVisible()
    assert fits(w), (w.width(), w.minimumSizeHint())
    harness.wait(lambda: view.outcome.text().startswith(("✓", "✗")))
    assert view.outcome.text().startswith("✓") and f"via {bridge}" in view.outcome.text()
    assert fits(w), (w.width(), w.minimumSizeHint())
    harness.wait(lambda: seen(view.composer.send))


def test_long_extension_names_errors_and_results_keep_the_window_at_1024(harness: Harness):
    from inspector.protocol import andyclaw as ac
    from inspector.ui.controller import ExtensionCall

    w = harness.window
    w.resize(1024, 700)
    harness.wait(lambda: w.width() == 1024)
    view = w.extension_view
    open_function(harness, *BRIDGE_CALLS["broadcast"])
    req = view.composer.submit()
    assert req is not None
    harness.wait(lambda: view.outcome.text().startswith(("✓", "✗")))
    view.composer.set_in_flight(req.model_copy(update={"tool_name": LONG}))
    assert fits(w), w.minimumSizeHint()
    view.show_call(ExtensionCall(function=LONG, bridge="service", params="{}", error=LONG))
    assert fits(w), w.minimumSizeHint()
    reply = ac.ExtensionReply(
        bridge=ac.Bridge.SERVICE, outcome="exception", result=LONG, error=LONG,
        exception_class=LONG, exception_message=LONG, in_band_error=LONG,
        component=LONG, launched=False, problems=[LONG, LONG],
    )
    view.show_call(ExtensionCall(function=LONG, bridge="service", params="{}", reply=reply))
    harness.wait(lambda: w.width() <= 1024)
    assert fits(w), w.minimumSizeHint()
    assert view.outcome.text().startswith("✗") and LONG[:64] in view.outcome.text()
    assert seen(view.composer.send)


#: labels that only ever show the inspector's own few words, never provider or device text
OWN_WORDS = re.compile("|".join((
    r"\d+ exchanges?", "Pending confirmations", "deadline", "request_id",
    r"No async operations yet\..*", "Mutating tools — .*",
)))


def labels_never_widen(w, where: str) -> None:
    """Give every shown label 5,000 characters without a space (what a hostile provider's
    name, description or error, or a device's error, would put there) and check the
    window's minimum stays inside 1024 px; the old text is put back at once."""
    from PySide6.QtWidgets import QLabel

    from inspector.ui.badges import BadgeRow

    for label in w.findChildren(QLabel):
        if not label.isVisible() or OWN_WORDS.fullmatch(label.text()):
            continue
        old = label.text()
        # a badge row bounds each badge to 60 characters itself
        label.setText(LONG[:60] if isinstance(label.parent(), BadgeRow) else LONG)
        grown = settled_min_width(w)
        label.setText(old)
        assert grown <= 1024, (where, label.objectName(), type(label.parent()).__name__,
                               old[:60])


def test_no_provider_text_widens_any_screen_past_1024(harness: Harness):
    """Every provider tab after a call, with the Device screen dock open (the conformance
    tab's six buttons side by side needed 730 px: with the dock the window grew to 1214)."""
    w = harness.window
    w.resize(1024, 700)
    harness.open_provider()
    harness.compose("get_quote", {"symbol": "ACME"})
    harness.send()
    harness.wait(lambda: w.result.state.text() == "Success")
    w.screen_dock.show()
    harness.wait(lambda: w.screen_pane.frames > 0)
    for i in range(w.tabs.count()):
        w.tabs.setCurrentIndex(i)
        harness.wait(lambda: w.tabs.currentWidget().isVisible())
        if w.tabs.currentWidget() is w.conformance_holder:  # its plan arrives later
            harness.wait(lambda: w.conformance_panel is not None
                         and w.conformance_panel.plan_summary.text() != "")
        assert fits(w), (w.tabs.tabText(i), w.minimumSizeHint())
        labels_never_widen(w, w.tabs.tabText(i))
    w.tabs.setCurrentIndex(0)
    harness.wait(lambda: w.width() <= 1024 and seen(w.overview.negotiate)
                 and seen(w.overview.reveal))


def test_the_bridge_view_fits_1024_with_a_long_journal_path(harness: Harness, tmp_path,
                                                             monkeypatch):
    monkeypatch.setenv("CETP_INSPECTOR_HOME", str(tmp_path / "empty-home"))
    w = harness.window
    w.act_bridge.trigger()
    harness.wait(lambda: getattr(w, "bridge_view", None) is not None
                 and w.bridge_view.isVisible())
    view = w.bridge_view
    assert view.minimumSizeHint().width() <= 1024
    labels_never_widen(view, "bridge")
    view.close()
