"""The bundle viewer on hostile bundles (issue 12): it says what is wrong, never stays
blank; provider text in the bundle is shown as plain text."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from inspector.ui.bundle_viewer import BundleViewer
from tests.session.bundle_attacks import (
    corrupt_deflate,
    deep_json_bundle,
    patch_member,
    write_bundle,
    zip_bomb,
)

pytestmark = pytest.mark.gui


def _encrypted(path):
    write_bundle(path, {"device.json": b"{}"})
    return patch_member(path, "device.json", flag_bits=0x1)


@pytest.mark.parametrize("make, says", [
    (zip_bomb, "zip bomb"), (deep_json_bundle, "nested too deeply"),
    (corrupt_deflate, "deflate|damaged|cannot be read"), (_encrypted, "encrypted")])
def test_hostile_bundle_shows_its_error(qtbot, qloop, tmp_path, make, says) -> None:
    import re

    path = make(tmp_path / "x.cetpbundle")
    viewer = BundleViewer()
    qtbot.addWidget(viewer)
    with qtbot.waitSignal(viewer.failed, timeout=20_000) as failed:
        viewer.open_path(path)
    assert re.search(says, failed.args[0])
    assert viewer.title.text() == "Cannot open the bundle"
    assert re.search(says, viewer.meta.text())
    assert viewer.meta.textFormat() == Qt.TextFormat.PlainText


def test_bundle_from_torn_journal_says_what_was_lost(qtbot, qloop, tmp_path) -> None:
    from inspector.session.bundle_file import create_bundle
    from inspector.session.journal import read_journal
    from tests.session.test_bundle_replay import _journal

    jpath = _journal(tmp_path)
    lines = jpath.read_bytes().splitlines(keepends=True)
    lines[-2] = lines[-2][:40] + b"\n"
    jpath.write_bytes(b"".join(lines))
    path = create_bundle(tmp_path / "torn.cetpbundle", read_journal(jpath))
    viewer = BundleViewer()
    qtbot.addWidget(viewer)
    with qtbot.waitSignal(viewer.loaded, timeout=20_000):
        viewer.open_path(path)
    assert "⚠ 1 journal line(s) were torn or damaged" in viewer.meta.text()
