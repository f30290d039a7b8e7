"""The window's File menu: its own session journal, the sessions list, a recorded session
shown read-only, and a replay of it against the current device."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.session.journal import list_sessions, read_journal
from tests.ui.fixtures import Harness

pytestmark = pytest.mark.gui


@pytest.fixture
def journal_dir(tmp_path: Path) -> Path:
    return tmp_path / "journals"


def test_the_gui_session_is_journaled_listed_shown_and_replayable(harness: Harness,
                                                                   journal_dir: Path):
    w = harness.window
    harness.open_provider()
    harness.compose("get_quote", {"symbol": "ACME"})
    harness.send()
    harness.wait(lambda: w.result.state.text() == "Success")
    sessions = list_sessions(journal_dir)
    assert len(sessions) == 1 and sessions[0].name.startswith("GUI virtual")
    contents = read_journal(sessions[0].path)
    assert any(x.tool == "get_quote" for x in contents.exchanges)

    panel = w.show_sessions()
    assert panel is not None and panel in w.side_windows
    shown = w.show_recorded_session(contents)
    assert shown.traffic.model.total == len(contents.exchanges)
    replay = w.replay(contents)
    assert replay is not None and replay.isVisible()
    for side in list(w.side_windows):
        side.close()


def test_a_bug_report_is_served_as_a_virtual_provider(harness: Harness, journal_dir: Path,
                                                       tmp_path: Path):
    """File ▸ Serve bug report: the recorded provider answers from the virtual device."""
    from inspector.session.bundle_file import create_bundle
    from inspector.virtual.apps.replayed import ReplayedApp

    w = harness.window
    harness.open_provider()
    harness.compose("get_quote", {"symbol": "ACME"})
    harness.send()
    harness.wait(lambda: w.result.state.text() == "Success")
    recorded = w.result.state.text()
    [session] = list_sessions(journal_dir)
    bundle = create_bundle(tmp_path / "bug.cetpbundle", read_journal(session.path))

    before = w.controller.discovery("virtual")
    assert w.serve_bug_report(str(bundle)) == ["com.example.pricealerts"]
    assert isinstance(harness.device.app("com.example.pricealerts"), ReplayedApp)
    harness.wait(lambda: w.controller.discovery("virtual") is not before)  # rescanned

    harness.open_provider()
    harness.compose("get_quote", {"symbol": "ACME"})  # recorded: the same answer
    harness.send()
    harness.wait(lambda: w.result.state.text() == recorded)
    harness.compose("get_quote", {"symbol": "OTHER"})  # never recorded: said plainly
    harness.send()
    harness.wait(lambda: w.result.err_code.text() == "UNAVAILABLE")

    assert w.serve_bug_report(str(tmp_path / "missing.cetpbundle")) == []
