"""Bounding untrusted provider text before it reaches a widget — the one plain-text path.

Provider names, descriptions, errors and results may be huge or hostile. Widgets only ever
show plain text, and only a bounded amount of it, so a 10 MB description cannot freeze a
label and control characters cannot garble the layout.

Qt guesses: a QLabel in its default AutoText format, a tooltip and an item's ToolTipRole
render anything `Qt.mightBeRichText` likes as HTML — a provider's `<img width=40000
height=40000>` cost 6.2 GB per hover, an `<a href>` became a link (issue 12). So every
provider-derived string goes through one of:

- `set_plain(label, text)`: a label (or any widget with setTextFormat) fixed to PlainText;
- `tooltip(text)`: an escaped paragraph — rich text Qt renders literally, never as markup;
  use it for setToolTip and for ToolTipRole of item models;
- `status_text(text)`: one bounded line for QStatusBar.showMessage.
"""

from __future__ import annotations

import html
import json
from typing import Any

LABEL_LIMIT = 200
PARAGRAPH_LIMIT = 4_000
DOCUMENT_LIMIT = 2_000_000

_CONTROL = {c: " " for c in range(0x20) if c not in (0x09, 0x0A)}
_CONTROL.update({0x7F: " ", 0x202E: " ", 0x202D: " ", 0x2066: " ", 0x2067: " ", 0x2068: " "})


def bound(text: object, limit: int = LABEL_LIMIT, *, single_line: bool = True) -> str:
    """Plain, length-bounded text: control and bidi-override characters neutralised."""
    s = text if isinstance(text, str) else ("" if text is None else str(text))
    if len(s) > limit:
        s = s[:limit] + f"… [{len(s) - limit:,} more characters]"
    s = s.translate(_CONTROL)
    if single_line:
        s = s.replace("\n", " ⏎ ").replace("\t", " ")
    return s


def pretty_json(value: Any, limit: int = DOCUMENT_LIMIT) -> str:
    """Indented JSON for a text view, cut at `limit` characters (the tree shows the rest)."""
    try:
        text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=repr)
    except (TypeError, ValueError) as exc:
        text = f"<not JSON-serialisable: {exc}>"
    if len(text) > limit:
        text = text[:limit] + f"\n… [cut: {len(text) - limit:,} more characters; see the tree]"
    return text


def human_bytes(n: int | float | None) -> str:
    """1536 -> '1.5 KB' (binary units, as size limits are powers of two)."""
    if n is None:
        return "—"
    v = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if abs(v) < 1024 or unit == "GB":
            return f"{int(v)} B" if unit == "B" else f"{v:.1f} {unit}"
        v /= 1024
    return f"{v:.1f} GB"


def mask_secret(secret: str | None, keep: int = 4) -> str:
    """Show only the first and last characters of a token; the rest as bullets."""
    if not secret:
        return "—"
    if len(secret) <= keep * 2:
        return "•" * len(secret)
    return f"{secret[:keep]}{'•' * 8}{secret[-keep:]}  ({len(secret)} chars)"


_TOOLTIP_HEAD = "<p style='white-space:pre-wrap'>"


class Tooltip(str):
    """A tooltip built by `tooltip()` (so already escaped): the type, not the text, says
    so — a provider string that merely looks like one is still escaped."""

    __slots__ = ()


def tooltip(text: object, limit: int = PARAGRAPH_LIMIT) -> str:
    """A tooltip Qt can never take for markup: the bounded text, HTML-escaped, inside a
    pre-wrap paragraph (newlines kept). Empty text gives "" (no tooltip)."""
    body = bound(text, limit, single_line=False)
    if not body:
        return ""
    return Tooltip(_TOOLTIP_HEAD + html.escape(body, quote=False) + "</p>")


def plain_tooltip(text: str) -> str:
    """`tooltip(text)` unless `text` already is one (models that build their own)."""
    return text if isinstance(text, Tooltip) or not text else tooltip(text)


def status_text(text: object, limit: int = 300) -> str:
    """One bounded plain line for the status bar (QStatusBar paints it as text)."""
    return bound(text, limit)


def set_plain(widget: Any, text: object, limit: int = PARAGRAPH_LIMIT, *,
              single_line: bool = False) -> None:
    """Show `text` in a QLabel-like widget as plain text (never AutoText/RichText)."""
    from PySide6.QtCore import Qt

    widget.setTextFormat(Qt.TextFormat.PlainText)
    widget.setText(bound(text, limit, single_line=single_line))


def shrinkable(widget: Any) -> Any:
    """Let a label of provider text shrink below its text's width (issue 14).

    A QLabel's minimum width is its longest unbreakable run — word wrap cannot break a
    5,000-character name without spaces — and a layout grows the whole window to honour
    it. An explicit minimum width of 1 px replaces that minimum (Qt's layouts prefer an
    explicit minimum to the hint) while the size hint still asks for the whole text, so
    the label is as wide as the text when there is room and clipped when there is not (the
    full text belongs in the tooltip or a view that scrolls). Returns the widget.
    """
    widget.setMinimumWidth(1)
    return widget
