"""The traffic detail and its text export mask session/resume tokens by default, with an
explicit reveal (issue 12), like the overview."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from inspector.ui.traffic_panel import TrafficPanel
from tests.session.journal_factories import RESUME, TOKEN, sample_session

pytestmark = pytest.mark.gui


def test_tokens_masked_until_revealed(qtbot, qloop) -> None:
    panel = TrafficPanel()
    qtbot.addWidget(panel)
    exchanges = sample_session()
    panel.model.add_many(exchanges)
    panel.model.flush()
    for ex in exchanges:
        panel.show_exchange(ex)
        text = panel.detail.toPlainText()
        assert TOKEN not in text and RESUME not in text
    panel.show_exchange(exchanges[0])  # negotiate: the token is in the reply and decoded
    assert TOKEN[:4] + "•" in panel.detail.toPlainText()
    export = panel.export_text()
    assert TOKEN not in export and RESUME not in export and len(export.splitlines()) == 4

    qtbot.mouseClick(panel.reveal, Qt.MouseButton.LeftButton)
    assert panel.reveal.isChecked() and panel.reveal.text() == "Hide tokens"
    assert TOKEN in panel.detail.toPlainText()
    assert TOKEN in panel.export_text() and RESUME in panel.export_text()
    qtbot.mouseClick(panel.reveal, Qt.MouseButton.LeftButton)
    assert TOKEN not in panel.detail.toPlainText()
