"""Printing results and errors: `--json` documents or sanitized human text.

JSON output is one document on stdout with stable top-level keys (docs/cli.md): every
command prints `{"ok": bool, "command": str, ...}` and failures add an `error` object
`{code, message, retryable, hint, details}`. Human output escapes provider text.
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from inspector.cli.terminal_text import safe_text
from inspector.session.errors import ErrorInfo


def make_streams_safe(*streams: TextIO) -> None:
    """Never crash on a terminal that cannot show a character (PYTHONIOENCODING=ascii, a
    latin-1 console, a pipe with LANG=C): such characters are written as backslash escapes
    (a model name "Größe" → "Gr\\xf6\\xdfe") instead of ending in UnicodeEncodeError."""
    for stream in streams or (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is None:
            continue
        try:
            if (getattr(stream, "errors", "") or "strict") == "strict":
                reconfigure(errors="backslashreplace")
        except (ValueError, OSError):  # detached or closed stream: nothing to protect
            pass


def _default(o: Any) -> Any:
    if hasattr(o, "model_dump"):
        return o.model_dump(mode="json")
    if isinstance(o, bytes):
        return {"bytes": len(o)}
    if isinstance(o, set | frozenset | tuple):
        return list(o)
    return str(o)


def dumps(doc: Any) -> str:
    return json.dumps(doc, default=_default, ensure_ascii=True, indent=2, sort_keys=False)


def print_json(doc: dict[str, Any], stream: TextIO | None = None) -> None:
    out = stream or sys.stdout
    out.write(dumps(doc) + "\n")
    out.flush()


def print_error(err: ErrorInfo, *, as_json: bool, command: str, stream: TextIO | None = None,
                extra: dict[str, Any] | None = None) -> None:
    """Structured error: JSON on stdout with --json, else readable lines on stderr."""
    if as_json:
        doc: dict[str, Any] = {"ok": False, "command": command, "error": err.model_dump()}
        if extra:
            doc.update(extra)
        print_json(doc, stream)
        return
    out = stream or sys.stderr
    out.write(f"error: {safe_text(err.code, 100, one_line=True)}: "
              f"{safe_text(err.message, 2000)}\n")
    out.write(f"  retryable: {'yes' if err.retryable else 'no'}\n")
    if err.hint:
        out.write(f"  hint: {safe_text(err.hint, 2000)}\n")
    out.flush()


def table(rows: list[list[str]], headers: list[str], stream: TextIO | None = None) -> None:
    """A plain aligned table; every cell is sanitized and bounded."""
    out = stream or sys.stdout
    cells = [[_cell(c) for c in r] for r in rows]
    widths = [len(h) for h in headers]
    for r in cells:
        for i, c in enumerate(r):
            widths[i] = max(widths[i], len(c))
    out.write("  ".join(h.ljust(widths[i]) for i, h in enumerate(headers)).rstrip() + "\n")
    for r in cells:
        out.write("  ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip() + "\n")
    out.flush()


def _cell(value: str, width: int = 72) -> str:
    text = safe_text(value, 4 * width, one_line=True)
    return text if len(text) <= width else text[: width - 1] + "…"


def line(text: str = "", stream: TextIO | None = None) -> None:
    """One line of already-sanitized text (callers pass provider text through safe_text)."""
    out = stream or sys.stdout
    out.write(text + "\n")


def pretty_value(value: Any, max_chars: int = 20_000) -> str:
    """Untrusted JSON value → indented, sanitized, bounded text."""
    try:
        text = json.dumps(value, indent=2, ensure_ascii=False, default=_default)
    except (TypeError, ValueError):
        text = repr(value)
    return safe_text(text, max_chars)
