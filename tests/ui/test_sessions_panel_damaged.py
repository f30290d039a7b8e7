"""The Sessions panel lists a damaged journal as damaged and still shows the others
(issue 12: one deeply nested header used to leave the panel with 0 sessions)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from inspector.session.journal import JournalWriter
from tests.ui.test_conformance_panel import wait_task
from tests.ui.test_sessions_panel import _panel

pytestmark = pytest.mark.gui


def test_damaged_journal_listed_beside_good_ones(qtbot, qloop, tmp_path) -> None:
    d = tmp_path / "sessions"
    d.mkdir()
    for name in ("alpha", "beta"):
        JournalWriter.create(name=name, directory=d).close()
    (d / "evil.jsonl").write_bytes(b"{" * 1 + b'"a":' + b"[" * 150_000 + b"]" * 150_000
                                   + b"}\n")
    panel = _panel(qtbot, d)
    rows = [panel.model.summary(r) for r in range(panel.model.rowCount())]
    assert sorted(s.name for s in rows if not s.damaged) == ["alpha", "beta"]
    [bad] = [s for s in rows if s.damaged]
    row = panel.model.row_of(bad.session_id)
    shown = panel.model.data(panel.model.index(row, 0), Qt.ItemDataRole.DisplayRole)
    assert shown.startswith("⚠ damaged")
    tip = panel.model.data(panel.model.index(row, 0), Qt.ItemDataRole.ToolTipRole)
    assert "cannot be read" in tip
    panel.select(bad.session_id)
    wait_task(qtbot, panel.open_selected())
    assert panel.error is not None and "Cannot open the session" in panel.error
