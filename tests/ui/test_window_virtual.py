"""The Virtual device menu: what the CLI's virtual options do, reachable in the window."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.session.bundle_file import create_bundle
from inspector.session.journal import list_sessions, read_journal
from inspector.virtual.apps.pricealerts import PriceAlertsProvider
from inspector.virtual.apps.replayed import ReplayedApp
from tests.ui.fixtures import PRICEALERTS, Harness

pytestmark = pytest.mark.gui

PLUGIN = Path(__file__).parent / "plugins" / "evolving_tools.py"


@pytest.fixture
def journal_dir(tmp_path: Path) -> Path:
    return tmp_path / "journals"


def menu_action(h: Harness, text: str):
    for act in h.window.virtual_menu.actions():
        sub = act.menu()
        for a in ([act] + (sub.actions() if sub else [])):
            if a.text() == text:
                return a
    raise AssertionError(f"no menu item {text!r}")


def test_faults_are_injected_from_the_menu_into_the_open_provider(harness: Harness):
    harness.open_provider()
    menu_action(harness, "Corrupt the next file result's digest").trigger()
    harness.wait(lambda: PRICEALERTS in harness.device.faults.corrupt)
    menu_action(harness, "Delay the next call by 3 s").trigger()
    harness.wait(lambda: bool(harness.device.faults.delays))
    assert "Fault armed" in harness.window._status.text()


def test_a_per_app_fault_without_a_provider_says_what_to_do(harness: Harness):
    menu_action(harness, "Cold start the provider (acquire wakes it)").trigger()
    assert "open a provider of the virtual device first" in harness.window.last_error
    assert not harness.device.faults.cold


def test_a_plugin_is_loaded_from_the_menu(harness: Harness):
    w = harness.window
    assert w.load_plugin(str(PLUGIN)) == ["com.example.evolving"]
    harness.wait(lambda: any(x.package == "com.example.evolving"
                             for x in w.controller.discovery("virtual").cetp))
    assert w.load_plugin(str(PLUGIN.with_name("missing.py"))) == []
    assert w.last_error.startswith("Cannot load the plugin")


def test_serving_a_bug_report_stops_and_the_reference_app_returns(
        harness: Harness, journal_dir: Path, tmp_path: Path):
    w = harness.window
    harness.open_provider()
    harness.compose("get_quote", {"symbol": "ACME"})
    harness.send()
    harness.wait(lambda: w.result.state.text() == "Success")
    [session] = list_sessions(journal_dir)
    bundle = create_bundle(tmp_path / "bug.cetpbundle", read_journal(session.path))
    stop = menu_action(harness, "Stop serving bug reports")
    assert not stop.isEnabled()
    assert w.serve_bug_report(str(bundle)) == [PRICEALERTS]
    assert isinstance(harness.device.app(PRICEALERTS), ReplayedApp) and stop.isEnabled()
    stop.trigger()
    assert isinstance(harness.device.app(PRICEALERTS), PriceAlertsProvider)
    assert not stop.isEnabled()
