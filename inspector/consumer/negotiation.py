"""Version choice, negotiation checks and tool-list revision diffs (CETP v2 §2, §3.3, §8).

The rules a consumer must hold: offer versions in descending order, use v1 only when the
manifest has v1 and not v2, never fall back to v1 after a failed v2 negotiation, use only
the capabilities both sides agreed, and re-check the tool list's revision after every new
negotiation — reporting exactly what changed (field by field; the pass/fail verdicts come
from `inspector.protocol.rules`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from inspector.protocol.cetp import NegotiateResult, ToolDescriptor, ToolList


def choose_protocol(manifest_versions: Iterable[int]) -> int | None:
    """2 when the manifest advertises v2; 1 only when it has v1 and not v2 (§8)."""
    vs = set(manifest_versions)
    if 2 in vs:
        return 2
    if 1 in vs:
        return 1
    return None


class Session(BaseModel):
    """A successful v2 negotiation, as the engine uses it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    result: NegotiateResult
    requested_capabilities: tuple[str, ...]
    consumer_versions: tuple[int, ...]
    negotiated_ms: int
    exchange_id: str
    raw_limits: dict[str, Any] = Field(default_factory=dict)
    expires_ms: int | None = None  # expires_at as epoch ms, when given and parseable

    def expired(self, now_ms: int) -> bool:
        """Past its expires_at — only when it was valid when negotiated (never loops)."""
        return (self.expires_ms is not None and self.expires_ms > self.negotiated_ms
                and now_ms >= self.expires_ms)

    @property
    def token(self) -> str:
        return self.result.session_token

    @property
    def capabilities(self) -> frozenset[str]:
        """Capabilities the engine may use: granted AND requested (never more)."""
        return frozenset(self.result.capabilities) & frozenset(self.requested_capabilities)

    def has(self, capability: str) -> bool:
        return capability in self.capabilities

    @property
    def max_request_bytes(self) -> int:
        return self.result.limits.max_request_bytes


class ToolChange(BaseModel):
    """One tool present in both lists whose descriptor differs."""

    name: str
    fields: list[str]  # dotted paths that differ: "description", "annotations.risk" …


class ToolListDiff(BaseModel):
    """What changed between two tool lists (revision tracking, §3.3)."""

    old_revision: str | None
    new_revision: str
    added: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    changed: list[ToolChange] = Field(default_factory=list)

    @property
    def revision_changed(self) -> bool:
        return self.old_revision != self.new_revision

    @property
    def tools_changed(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def summary(self) -> str:
        if not self.tools_changed:
            return ("no tool changes" if not self.revision_changed
                    else f"revision {self.old_revision} → {self.new_revision}, no tool changes")
        parts = []
        if self.added:
            parts.append("added " + ", ".join(self.added))
        if self.removed:
            parts.append("removed " + ", ".join(self.removed))
        for c in self.changed:
            parts.append(f"changed {c.name} ({', '.join(c.fields)})")
        return f"revision {self.old_revision} → {self.new_revision}: " + "; ".join(parts)


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, dict) and prefix in ("", "annotations"):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else k, v, out)
    else:
        out[prefix] = value


def _tool_fields(tool: ToolDescriptor) -> dict[str, Any]:
    out: dict[str, Any] = {}
    _flatten("", tool.model_dump(mode="json"), out)
    return out


def diff_tool_lists(old: ToolList | None, new: ToolList) -> ToolListDiff:
    """Added, removed and changed tools (with the fields that changed)."""
    diff = ToolListDiff(old_revision=old.revision if old else None, new_revision=new.revision)
    if old is None:
        return diff
    before = {t.name: t for t in old.tools}
    after = {t.name: t for t in new.tools}
    diff.added = sorted(set(after) - set(before))
    diff.removed = sorted(set(before) - set(after))
    for name in sorted(set(before) & set(after)):
        a, b = _tool_fields(before[name]), _tool_fields(after[name])
        fields = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        if fields:
            diff.changed.append(ToolChange(name=name, fields=fields))
    return diff


def parse_expires_at(value: str | None) -> int | None:
    """`expires_at` (ISO 8601, e.g. 2026-09-02T12:00:00Z) as epoch ms; None if unusable."""
    if not value:
        return None
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return int(dt.timestamp() * 1000)
