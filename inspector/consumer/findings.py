"""Turning protocol violations and engine checks into `Finding`s on exchanges."""

from __future__ import annotations

from inspector.protocol.cetp import ProtocolViolation
from inspector.protocol.exchange import Finding


def violation_finding(v: ProtocolViolation, rule_prefix: str = "wire") -> Finding:
    """A fatal or non-fatal wire violation as a failed MUST finding."""
    field = v.field or "reply"
    return Finding(rule_id=f"{rule_prefix}.{field}", section=v.section, level="MUST",
                   ok=False, message=str(v), path=field)


def finding(rule_id: str, section: str, message: str, *, ok: bool = False,
            level: str = "MUST", path: str = "") -> Finding:
    return Finding(rule_id=rule_id, section=section, level=level, ok=ok, message=message,
                   path=path)
