"""Helpers for untrusted provider text (§7.3): names, descriptions, errors, results.

- `bound(text, limit)` cuts text to a length with an ellipsis and keeps the original length;
- `escape_controls(text)` makes control, format (bidi overrides, zero-width) and other
  invisible characters visible as `\\u{...}` escapes, so a display never hides or reorders;
- `control_chars(text)` lists the offending characters;
- `instruction_like(text)` flags text that reads like instructions to an agent (a
  heuristic warning, never a verdict: tool output is data, not instructions).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

#: Default display limits (characters) for provider-supplied text.
LIMITS: dict[str, int] = {
    "name": 128,
    "title": 200,
    "provider_name": 200,
    "description": 4096,
    "error_message": 2048,
    "scope_description": 1024,
}
ELLIPSIS = "…"


@dataclass(frozen=True)
class Bounded:
    text: str
    truncated: bool
    original_length: int

    def __str__(self) -> str:
        return self.text


def bound(text: str, limit: int) -> Bounded:
    """`text` cut to at most `limit` characters (ellipsis included) when longer."""
    n = len(text)
    if n <= limit:
        return Bounded(text, False, n)
    if limit <= 0:
        return Bounded("", True, n)
    return Bounded(text[: limit - 1] + ELLIPSIS, True, n)


def bound_display(text: str, limit: int) -> str:
    """Bounded and escaped, with the original length noted when cut."""
    b = bound(text, limit)
    shown = escape_controls(b.text)
    return f"{shown} [{b.original_length} characters]" if b.truncated else shown


_ALLOWED_WS = {"\n", "\t"}


def is_suspicious_char(ch: str, allow_newlines: bool = True) -> bool:
    """Control (Cc), format (Cf: bidi overrides, zero-width…), surrogate, private-use or
    unassigned characters; newline and tab pass when `allow_newlines`."""
    if allow_newlines and ch in _ALLOWED_WS:
        return False
    cat = unicodedata.category(ch)
    return cat in ("Cc", "Cf", "Cs", "Co", "Cn") or ch in ("\u2028", "\u2029")


def control_chars(text: str, allow_newlines: bool = True) -> list[str]:
    """Distinct suspicious characters in `text`, in order of first appearance.

    Runs on the event loop for every string of a tool list, so it stays in C for the bulk:
    every suspicious character is non-printable (str.isprintable), and only the distinct
    characters of a text that is not all printable are looked at one by one."""
    if text.isprintable():
        return []
    return [ch for ch in dict.fromkeys(text)
            if not ch.isprintable() and is_suspicious_char(ch, allow_newlines)]


def escape_controls(text: str, allow_newlines: bool = False) -> str:
    """Replace suspicious characters with visible escapes (`\\n`, `\\t`, `\\u{202e}`)."""
    out: list[str] = []
    for ch in text:
        if ch == "\n" and not allow_newlines:
            out.append("\\n")
        elif ch == "\t" and not allow_newlines:
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif is_suspicious_char(ch, allow_newlines=True):
            out.append(f"\\u{{{ord(ch):04x}}}")
        else:
            out.append(ch)
    return "".join(out)


def one_line(text: str, limit: int = 200) -> str:
    """A single display line: escaped, bounded."""
    return escape_controls(bound(text, limit).text)


_INSTRUCTION_PATTERNS: list[tuple[str, str]] = [
    ("ignore previous instructions",
     r"\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b(previous|prior|above|earlier|all|"
     r"system|your)\b[^.\n]{0,20}\b(instructions?|prompts?|rules|guidelines|messages?)"),
    ("you must call", r"\byou\s+(must|should|need\s+to|have\s+to)\s+(now\s+)?"
                      r"(call|invoke|run|execute|use)\b"),
    ("always/never call", r"\b(always|never)\s+(call|invoke|use|run)\s+(this|the)\b"),
    ("role marker", r"(^|\n)\s*(system|assistant|developer)\s*:|<\s*/?\s*(system|assistant|"
                    r"instructions?)\s*>|\[\s*(system|inst)\s*\]"),
    ("new instructions", r"\b(new|updated|real|actual)\s+instructions?\b"),
    ("act as", r"\b(you\s+are\s+now|act\s+as|pretend\s+(to\s+be|you\s+are))\b"),
    ("exfiltration", r"\b(send|forward|upload|post|leak)\b[^.\n]{0,40}\b(password|secret|"
                     r"token|credentials?|private\s+key|seed\s+phrase|api\s+key)s?\b"),
    ("do not tell the user", r"\b(do\s+not|don'?t|never)\s+(tell|inform|show|reveal\s+to)\s+"
                             r"(the\s+)?user\b"),
    ("without confirmation", r"\bwithout\s+(asking|confirmation|confirming|approval|"
                             r"the\s+user'?s?\s+(consent|approval))\b"),
]
_COMPILED = [(label, re.compile(p, re.IGNORECASE)) for label, p in _INSTRUCTION_PATTERNS]

#: Only the first this-many characters are scanned (bounded cost on huge text).
SCAN_LIMIT = 65536


@dataclass(frozen=True)
class InstructionHit:
    label: str
    excerpt: str


def instruction_like(text: str) -> list[InstructionHit]:
    """Heuristic: phrases that read like instructions to an agent ("ignore previous
    instructions", "you must call", role markers …). One hit per kind, first match."""
    t = unicodedata.normalize("NFKC", text[:SCAN_LIMIT])
    t = "".join(ch for ch in t if unicodedata.category(ch) != "Cf")  # zero-width tricks
    hits: list[InstructionHit] = []
    for label, rx in _COMPILED:
        m = rx.search(t)
        if m:
            hits.append(InstructionHit(label, one_line(m.group(0).strip(), 80)))
    return hits


def looks_like_instructions(text: str) -> bool:
    return bool(instruction_like(text))


_STACK_PATTERNS = [
    re.compile(r"^\s+at\s+[\w$.<>]+\([\w$.]*(:\d+)?\)", re.MULTILINE),  # Java/Kotlin frames
    re.compile(r"Traceback \(most recent call last\)"),
    re.compile(r'File "[^"]+", line \d+'),
    re.compile(r"\b(java|kotlin|android)\.[\w.]+(Exception|Error)\b"),
    re.compile(r"\bCaused by:\s"),
]
_SECRET_PATTERNS = [
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    re.compile(r"\b(password|passwd|secret|api[_-]?key|access[_-]?token|bearer)\b\s*[:=]\s*\S+",
               re.IGNORECASE),
    re.compile(r"\bBearer\s+[A-Za-z0-9._~+/-]{16,}"),
    re.compile(r"\b(jdbc|postgres(ql)?|mysql|mongodb)(\+\w+)?://\S+", re.IGNORECASE),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"(/data/(data|user/\d+)/[\w.]+/\S+)"),
]


def stack_trace_like(text: str) -> bool:
    """Does an error message contain stack-trace frames or exception class names?"""
    t = text[:SCAN_LIMIT]
    return any(p.search(t) for p in _STACK_PATTERNS)


def secret_like(text: str) -> list[str]:
    """Excerpts that look like secrets or sensitive internals (keys, tokens, DSNs, paths)."""
    t = text[:SCAN_LIMIT]
    out: list[str] = []
    for p in _SECRET_PATTERNS:
        m = p.search(t)
        if m:
            out.append(one_line(m.group(0), 60))
    return out
