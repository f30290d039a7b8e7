"""Provider text made safe for a terminal.

Provider names, descriptions, errors and results are untrusted: an ANSI escape sequence in
a tool description could rewrite the user's screen or hide text. Everything printed for a
person goes through `safe_text`, which escapes control characters (except newline and tab)
and bounds the length. `--json` output is escaped by the JSON encoder instead.
"""

from __future__ import annotations

import unicodedata

DEFAULT_MAX_CHARS = 4000


def _escape_char(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def escape_controls(text: str, *, keep_newlines: bool = True) -> str:
    """Escape C0/C1 controls, DEL, bidi overrides and other format characters."""
    out: list[str] = []
    for ch in text:
        if keep_newlines and ch in "\n\t":
            out.append(ch)
            continue
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Cf", "Cs", "Co") or cat == "Zl" or cat == "Zp":
            out.append(_escape_char(ch))
        else:
            out.append(ch)
    return "".join(out)


def bound(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> str:
    """Cut `text` to `max_chars`, saying how long it really was."""
    if len(text) <= max_chars:
        return text
    return f"{text[:max_chars]}… [{len(text) - max_chars} more characters, {len(text)} in all]"


def safe_text(value: object, max_chars: int = DEFAULT_MAX_CHARS, *, one_line: bool = False) -> str:
    """Untrusted value → printable, bounded, control-free text."""
    text = value if isinstance(value, str) else str(value)
    return escape_controls(bound(text, max_chars), keep_newlines=not one_line)
