"""Bounding untrusted provider text before it reaches a widget.

Provider names, descriptions, errors and results may be huge or hostile. Widgets only ever
show plain text, and only a bounded amount of it, so a 10 MB description cannot freeze a
label and control characters cannot garble the layout.
"""

from __future__ import annotations

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
