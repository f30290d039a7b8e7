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
