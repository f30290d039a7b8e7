"""Redaction of secrets from journals and bundles — by structure, never by blind string
replacement (issue 12).

A secret is a value under a secret key (`session_token`, `resume_token`, and keys the user
adds), wherever that key appears: a plain JSON value, a typed Bundle entry
(`{"t": "String", "v": …}`), or a key inside a JSON document carried in a string (a CETP
`data` payload, where a provider sends the token back). Those places are replaced.

Free text (error messages, notes) may quote a token the provider was sent. Only strings
under free-text keys are scrubbed there, and only of collected secrets long enough to be
unmistakable (≥ 12 characters, matched as whole tokens). The old rule — replace every
occurrence of any 4+ character secret anywhere — let a provider whose token was `success`
erase the `status` of every exchange, and so the exchanges, from a bug report.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

DEFAULT_SECRET_KEYS: frozenset[str] = frozenset({"session_token", "resume_token"})
"""Keys whose values are secrets in every session (CETP v2 §4); users can add more."""
REDACTED = "[REDACTED]"
#: Keys whose string values are prose, where a quoted secret is scrubbed.
FREE_TEXT_KEYS: frozenset[str] = frozenset({
    "error_message", "message", "notes", "note", "detail", "hint", "text", "summary",
    "description", "evidence", "reason", "observed", "expected"})
#: Shortest secret scrubbed from free text (shorter ones are replaced only where keyed).
MIN_FREE_TEXT_SECRET = 12


def _json_in_string(s: str) -> Any:
    t = s.lstrip()
    if not t.startswith(("{", "[")):
        return None
    try:
        v = json.loads(s)
    except (ValueError, RecursionError):
        return None
    return v if isinstance(v, dict | list) else None


class Redactor:
    """Collect the secrets of some JSON data, then hide them where they are (see module)."""

    def __init__(self, keys: Iterable[str] = (),
                 hide_with: Callable[[str], str] | None = None) -> None:
        """`hide_with(secret)` gives what replaces a secret (default: REDACTED); the GUI
        masks instead (first/last characters), by the same structural rules."""
        self.keys = frozenset(DEFAULT_SECRET_KEYS | set(keys))
        self.secrets: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._hide_with = hide_with

    # -- collecting ---------------------------------------------------------------------
    def collect(self, obj: Any) -> None:
        stack = [obj]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                for k, v in node.items():
                    if k in self.keys:
                        self._collect_value(v)
                    stack.append(v)
            elif isinstance(node, list):
                stack.extend(node)
            elif isinstance(node, str):
                inner = _json_in_string(node)
                if inner is not None:
                    stack.append(inner)
        self._pattern = None

    def _collect_value(self, v: Any) -> None:
        if isinstance(v, dict) and "t" in v:
            v = v.get("v")
        if isinstance(v, str) and v and v != REDACTED:
            self.secrets.add(v)

    # -- applying -----------------------------------------------------------------------
    def apply(self, obj: Any) -> Any:
        """`obj` with keyed secrets replaced and long secrets scrubbed from free text."""
        return self._apply(obj, free_text=False)

    def apply_text(self, text: str) -> str:
        """Scrub a piece of prose (a bundle note, a summary)."""
        return self._scrub(text)

    def _apply(self, obj: Any, free_text: bool) -> Any:
        if isinstance(obj, dict):
            return {k: self._hide(v) if k in self.keys
                    else self._apply(v, k in FREE_TEXT_KEYS) for k, v in obj.items()}
        if isinstance(obj, list):
            return [self._apply(v, free_text) for v in obj]
        if isinstance(obj, str):
            inner = _json_in_string(obj)
            if inner is not None:
                redacted = self._apply(inner, False)
                if redacted != inner:  # re-serialise only when something was hidden
                    obj = json.dumps(redacted, ensure_ascii=False, separators=(",", ":"))
                return obj
            return self._scrub(obj) if free_text else obj
        return obj

    def _scrub(self, text: str) -> str:
        pat = self._free_text_pattern()
        if pat is None:
            return text
        if self._hide_with is None:
            return pat.sub(REDACTED, text)
        hide = self._hide_with
        return pat.sub(lambda m: hide(m.group(0)), text)

    def _free_text_pattern(self) -> re.Pattern[str] | None:
        if self._pattern is None:
            long = sorted((s for s in self.secrets if len(s) >= MIN_FREE_TEXT_SECRET),
                          key=len, reverse=True)
            if not long:
                return None
            # whole tokens only: not inside a longer word
            alt = "|".join(re.escape(s) for s in long)
            self._pattern = re.compile(rf"(?<![\w-])(?:{alt})(?![\w-])")
        return self._pattern

    def _hide(self, v: Any) -> Any:
        if v is None:
            return None
        if isinstance(v, dict) and "t" in v:
            if v.get("t") == "null":
                return v
            inner = v.get("v")
            return {"t": "String", "v": self._hidden(inner if isinstance(inner, str) else "")}
        return self._hidden(v if isinstance(v, str) else "")

    def _hidden(self, secret: str) -> str:
        return REDACTED if self._hide_with is None else self._hide_with(secret)

    def redact(self, obj: Any) -> Any:
        """Collect then apply on one object (use collect/apply for several)."""
        self.collect(obj)
        return self.apply(obj)


def masked(obj: Any, mask: Callable[[str], str], keys: Iterable[str] = ()) -> Any:
    """`obj` with every secret (same places as redaction) shown through `mask`."""
    return Redactor(keys, hide_with=mask).redact(obj)
