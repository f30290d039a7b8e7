"""Turning protocol violations and engine checks into `Finding`s; quoting untrusted text."""

from __future__ import annotations

from inspector.protocol.cetp import ProtocolViolation
from inspector.protocol.exchange import Finding
from inspector.protocol.text import bound_display

#: provider text quoted in engine messages is bounded and escaped (it is untrusted, §7.3)
MAX_QUOTED = 500


def quote(text: object) -> str:
    """Provider-supplied text, safe to put in a message shown to people."""
    return bound_display(str(text) if text is not None else "", MAX_QUOTED)


#: wire fields whose violations belong to a rule of `inspector.protocol.rules`
FIELD_RULES = {"request_id": "reply.echo", "protocol_version": "reply.echo"}


def violation_finding(v: ProtocolViolation, rule_prefix: str = "wire") -> Finding:
    """A fatal or non-fatal wire violation as a failed MUST finding (`wire.<field>`, or the
    shared rule id when there is one, e.g. `reply.echo`)."""
    field = v.field or "reply"
    rule_id = FIELD_RULES.get(field, f"{rule_prefix}.{field}")
    return Finding(rule_id=rule_id, section=v.section, level="MUST", ok=False,
                   message=str(v), path=field)


def finding(rule_id: str, section: str, message: str, *, ok: bool = False,
            level: str = "MUST", path: str = "") -> Finding:
    return Finding(rule_id=rule_id, section=section, level=level, ok=ok, message=message,
                   path=path)


def describe_error(err: object) -> str:
    """`CODE: message` of a provider error, quoted safely."""
    return f"{quote(getattr(err, 'error_code', ''))}: {quote(getattr(err, 'error_message', ''))}"
