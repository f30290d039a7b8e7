"""Terminal sanitizing of untrusted provider text and the progress bar."""

from __future__ import annotations

import io

from inspector.cli.progress import ProgressBar
from inspector.cli.terminal_text import safe_text


def test_escape_sequences_are_neutralised() -> None:
    evil = "ok\x1b[2J\x1b]0;pwned\x07\u202eevil\r"
    out = safe_text(evil)
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out and "\r" not in out
    assert "\\x1b[2J" in out and "\\u202e" in out


def test_newlines_kept_unless_one_line() -> None:
    assert safe_text("a\nb") == "a\nb"
    assert safe_text("a\nb", one_line=True) == "a\\x0ab"


def test_bounded_with_original_length() -> None:
    out = safe_text("x" * 5000, 100)
    assert out.startswith("x" * 100) and "5000 in all" in out and len(out) < 200


def test_progress_bar_non_tty_prints_changes_only() -> None:
    buf = io.StringIO()
    bar = ProgressBar("op_1", buf)
    bar.update(10, 100, "sync")
    bar.update(10, 100, "sync")
    bar.update(100, 100, "done\x1b[31m")
    lines = buf.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("op_1 [##") and "10/100 sync" in lines[0]
    assert "\x1b" not in buf.getvalue()


def test_progress_bar_without_numbers_shows_the_state() -> None:
    buf = io.StringIO()
    bar = ProgressBar("operation op_1", buf)
    bar.update(None, None, "queued")
    bar.update(None, None, "running")
    bar.done("succeeded")
    assert buf.getvalue().splitlines() == ["operation op_1 queued", "operation op_1 running",
                                           "operation op_1 succeeded"]


def test_progress_bar_disabled_writes_nothing() -> None:
    buf = io.StringIO()
    bar = ProgressBar("x", buf, enabled=False)
    bar.update(1, 2, "a")
    bar.done("b")
    assert buf.getvalue() == ""
