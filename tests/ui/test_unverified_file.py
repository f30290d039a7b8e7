"""A file result whose digest fails is shown as unverified bytes (hex + text), never as a
parsed JSON value in the result panel (issue 12)."""

from __future__ import annotations

import pytest

from tests.ui.fixtures import PRICEALERTS, Harness

pytestmark = pytest.mark.gui


def test_corrupted_file_shows_unverified_bytes_not_a_value(harness: Harness):
    harness.open_provider()
    w = harness.window
    w.run(harness.controller.fault("virtual", "corrupt_digest", package=PRICEALERTS),
          "fault", "fault")
    harness.wait(lambda: bool(harness.device.faults.corrupt))
    harness.compose("export_history", {"rows": 6000})
    rid = harness.send()
    harness.wait(lambda: (ex := harness.execution(rid)) is not None
                 and ex.file_verdict is not None, timeout=20_000)
    harness.wait(lambda: w.result.file_verdict.text().startswith("✗"))
    ex = harness.execution(rid)
    assert not ex.file_verdict.verified and not ex.file_verdict.parsed and not ex.has_value
    view = w.result.value_view
    harness.wait(lambda: view.text.toPlainText().startswith("UNVERIFIED BYTES"))
    text = view.text.toPlainText()
    assert "00000000  " in text  # the hex dump
    assert view.tree_model.rowCount() == 0  # no JSON tree of untrusted content
