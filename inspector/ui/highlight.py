"""JSON syntax highlighting fed by pygments tokens (never rich text).

`JsonHighlighter` colours each QTextBlock from pygments' JSON lexer run over that line
(JSON strings never span lines, so lines lex independently and edits only re-lex the
changed lines). For big documents the per-line spans are computed in a worker thread and
applied a few hundred blocks per event-loop turn, so a 5 MB result never freezes the window.
"""

from __future__ import annotations

from collections.abc import Sequence

import shiboken6
from pygments.lexers.data import JsonLexer
from pygments.token import Token, _TokenType
from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextCharFormat, QTextDocument

from inspector.ui import theme
from inspector.ui.workers import run_in_thread

BIG_DOCUMENT = 32_000  # characters; above this, lex off the UI thread (64 KB took 140 ms)
_BATCH_BLOCKS = 400

Span = tuple[int, int, str]  # start, length, style key

_LIGHT = {
    "key": "#0550ae",
    "string": "#0a3069",
    "number": "#953800",
    "keyword": "#8250df",
    "punct": "#57606a",
    "error": "#cf222e",
    "comment": "#6e7781",
}
_DARK = {
    "key": "#79c0ff",
    "string": "#a5d6ff",
    "number": "#ffa657",
    "keyword": "#d2a8ff",
    "punct": "#8b949e",
    "error": "#f85149",
    "comment": "#8b949e",
}


def _style_key(tok: _TokenType) -> str | None:
    if tok in Token.Name.Tag:
        return "key"
    if tok in Token.String:
        return "string"
    if tok in Token.Number:
        return "number"
    if tok in Token.Keyword:
        return "keyword"
    if tok in Token.Punctuation:
        return "punct"
    if tok in Token.Error:
        return "error"
    if tok in Token.Comment:
        return "comment"
    return None


_lexer = JsonLexer()


def line_spans(line: str) -> list[Span]:
    """Pygments tokens of one line as (start, length, style) spans."""
    spans: list[Span] = []
    for pos, tok, value in _lexer.get_tokens_unprocessed(line):
        key = _style_key(tok)
        if key and value:
            spans.append((pos, len(value), key))
    return spans


def document_spans(lines: Sequence[str]) -> list[list[Span]]:
    """Spans for every line (pure; runs in a worker thread for big documents)."""
    return [line_spans(line) for line in lines]


class JsonHighlighter(QSyntaxHighlighter):
    """Colours JSON in a QPlainTextEdit's document."""

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self._formats: dict[str, QTextCharFormat] = {}
        self._precomputed: dict[int, list[Span]] | None = None
        self._pending: list[int] = []
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._apply_batch)
        self.enabled = True
        self.reload_theme()

    def reload_theme(self) -> None:
        palette = _DARK if theme.current() == "dark" else _LIGHT
        self._formats = {}
        for key, col in palette.items():
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(col))
            if key == "key":
                fmt.setFontWeight(QFont.Weight.DemiBold)
            self._formats[key] = fmt

    def highlightBlock(self, text: str) -> None:
        if not self.enabled:
            return
        n = self.currentBlock().blockNumber()
        if self._precomputed is not None:
            spans = self._precomputed.get(n)
            if spans is None:
                return  # not reached yet by the background pass
        else:
            spans = line_spans(text)
        for start, length, key in spans:
            self.setFormat(start, length, self._formats[key])

    @property
    def busy(self) -> bool:
        return self._timer.isActive()

    async def highlight_big(self, text: str) -> None:
        """Lex `text` (already set in the document) in a thread, then paint in batches."""
        lines = text.split("\n")
        self.enabled = True
        self._precomputed = {}
        spans = await run_in_thread(document_spans, lines)
        if not self._alive() or self.document().blockCount() != len(lines):
            return  # the view is gone, or the text changed (a newer call paints it)
        self._precomputed = dict(enumerate(spans))
        self._pending = list(range(len(lines)))
        self._timer.start()

    def _alive(self) -> bool:
        """The highlighter and its document still exist on the C++ side."""
        if not shiboken6.isValid(self):
            return False
        doc = self.document()
        return doc is not None and shiboken6.isValid(doc)

    def _apply_batch(self) -> None:
        if not self._alive():
            if shiboken6.isValid(self._timer):
                self._timer.stop()
            return
        doc = self.document()
        batch, self._pending = self._pending[:_BATCH_BLOCKS], self._pending[_BATCH_BLOCKS:]
        for n in batch:
            block = doc.findBlockByNumber(n)
            if block.isValid():
                self.rehighlightBlock(block)
        if not self._pending:
            self._timer.stop()
            self._precomputed = None  # later edits lex per line again


def set_json_text(
    edit, highlighter: JsonHighlighter, text: str, spawn_name: str, owner: QObject | None = None
) -> None:
    """Put `text` into a QPlainTextEdit; big documents are highlighted in the background."""
    from inspector.tasks import spawn

    if len(text) > BIG_DOCUMENT:
        highlighter.enabled = False
        edit.setPlainText(text)
        spawn(highlighter.highlight_big(text), spawn_name)
    else:
        highlighter.enabled = True
        highlighter._precomputed = None
        edit.setPlainText(text)
