"""The rule registry shared by every rule module: `Rule`, `RULES`, `_rule`, `_show`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from inspector.protocol import text as txt
from inspector.protocol.exchange import Finding

Level = Literal["MUST", "SHOULD", "INFO"]
CETP = "CETP v2"
ANDYCLAW = "AndyClaw"


@dataclass(frozen=True)
class Rule:
    id: str
    section: str
    level: Level
    title: str
    spec: str = CETP

    def finding(self, ok: bool, message: str, path: str = "") -> Finding:
        return Finding(rule_id=self.id, section=self.section, level=self.level, ok=ok,
                       message=message, path=path)

    def ok(self, message: str, path: str = "") -> Finding:
        return self.finding(True, message, path)

    def fail(self, message: str, path: str = "") -> Finding:
        return self.finding(False, message, path)

    @property
    def reference(self) -> str:
        return f"{self.spec} {self.section}"


RULES: dict[str, Rule] = {}


def _rule(id: str, section: str, level: Level, title: str, spec: str = CETP) -> Rule:
    if id in RULES:  # pragma: no cover - programming error
        raise ValueError(f"duplicate rule id {id}")
    r = Rule(id, section, level, title, spec)
    RULES[id] = r
    return r


def _show(value: Any, limit: int = 60) -> str:
    s = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return repr(txt.one_line(s, limit)) if isinstance(value, str) else txt.one_line(s, limit)
