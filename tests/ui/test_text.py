"""The plain-text path of inspector/ui/text.py (issue 12): whatever a provider sends, a
tooltip renders it literally — the markup as characters, no image, no link."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QLabel

from inspector.ui.text import Tooltip, bound, plain_tooltip, set_plain, status_text, tooltip

pytestmark = pytest.mark.gui

_html_bits = st.sampled_from(["<b>", "</b>", "<a href='x'>", "<img width=40000 height=40000>",
                              "&amp;", "&lt;", "<p>", "<br>", "<table>", "<!--", "\n", " ",
                              "<style>", "x", "é", "\u202e"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(_html_bits, st.text(max_size=8)), max_size=20).map("".join))
def test_any_provider_text_renders_literally(qapp, text) -> None:
    tip = tooltip(text)
    if not bound(text, 4000, single_line=False).strip():
        return  # whitespace-only text: nothing to show either way
    doc = QTextDocument()
    doc.setHtml(tip)
    shown = doc.toPlainText().replace("\u2029", "\n").replace("\u00a0", " ")
    # the characters themselves, markup included (Qt trims whitespace at the very ends)
    assert shown.strip() == bound(text, 4000, single_line=False).replace("\u00a0", " ").strip()
    assert "<img" not in doc.toHtml() and "<a " not in doc.toHtml()  # no image, no link


def test_tooltip_type_marks_escaped_text_and_lookalikes_are_escaped() -> None:
    real = tooltip("<b>x</b>")
    assert isinstance(real, Tooltip) and plain_tooltip(real) is real
    fake = "<p style='white-space:pre-wrap'><img src=x></p>"  # a provider imitating one
    assert "&lt;img" in plain_tooltip(fake)
    assert tooltip("") == "" and plain_tooltip("") == ""


def test_set_plain_and_status_text(qapp) -> None:
    lbl = QLabel()
    set_plain(lbl, "<b>bold</b>\nline", 100)
    assert lbl.textFormat() == Qt.TextFormat.PlainText and lbl.text() == "<b>bold</b>\nline"
    set_plain(lbl, "a\nb", single_line=True)
    assert "\n" not in lbl.text()
    assert "\n" not in status_text("x\ny") and len(status_text("z" * 1000)) < 400
