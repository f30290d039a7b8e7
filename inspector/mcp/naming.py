"""Stable, namespaced MCP tool names (docs/mcp.md, "Tool names").

MCP tool names are limited to `[A-Za-z0-9_.-]`, 1–128 characters (MCP 2025-11-25 "Tool
names"); several desktop clients still reject dots and names over 64 characters, so the
bridge uses the strictest common subset: `^[A-Za-z0-9_-]{1,64}$`.

Scheme: `<ns>__<tool>` where `<ns>` is `<kind>_<slug>`:
- kind `p` for a CETP v2 provider, `v1` for a CETP v1(-only) provider, `x` for an AndyClaw
  extension;
- slug = the provider package's last dotted segment (extension: its id), lower-cased,
  other characters folded to `_`;
- when two selected sources share a slug, each gets `_<6 hex of sha256(identity)>`
  appended (identity = authority or extension package), which is stable across runs;
- a name longer than 64 characters is cut and ends in `_<8 hex of sha256(full name)>`.
The same device and selection therefore always yield the same names.
"""

from __future__ import annotations

import hashlib
import re

MAX_NAME = 64
NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_FOLD = re.compile(r"[^A-Za-z0-9_-]+")


def _hex(text: str, n: int) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:n]


def slug(text: str) -> str:
    """A name part: allowed characters only, never empty."""
    s = _FOLD.sub("_", text).strip("_").lower()
    return s or "x" + _hex(text, 6)


def namespace(kind: str, package_or_id: str, identity: str, clash: bool) -> str:
    """`<kind>_<slug>` (with a stable hash suffix when the slug clashes)."""
    base = package_or_id.rsplit(".", 1)[-1] if kind != "x" else package_or_id
    ns = f"{kind}_{slug(base)}"
    if clash:
        ns += "_" + _hex(identity, 6)
    return ns


def tool_name(ns: str, tool: str) -> str:
    """`<ns>__<tool>`, cut to 64 characters with a hash of the full name when too long."""
    full = f"{ns}__{_FOLD.sub('_', tool) or _hex(tool, 6)}"
    if len(full) <= MAX_NAME and NAME_RE.match(full):
        return full
    return full[: MAX_NAME - 9] + "_" + _hex(full, 8)
