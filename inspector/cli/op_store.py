"""Operations the CLI started, remembered across invocations.

`call --no-wait` ends the process while the provider keeps working; to query or cancel the
operation later the spec requires the original request_id (§4.1), which nobody should have
to copy by hand. So each started operation is remembered in a small JSON file in the
inspector's home (`$CETP_INSPECTOR_HOME`, else `$XDG_STATE_HOME/cetp-inspector`).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from pydantic import BaseModel, ValidationError

MAX_REMEMBERED = 200


class RememberedOperation(BaseModel):
    operation_id: str
    request_id: str
    device: str
    provider: str  # package of the provider
    authority: str
    tool: str
    started_at_ms: int
    last_state: str = "accepted"


def home_dir() -> Path:
    env = os.environ.get("CETP_INSPECTOR_HOME")
    if env:
        return Path(env)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "cetp-inspector"


class OperationStore:
    """A JSON list of `RememberedOperation`, newest last, written atomically."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or home_dir() / "cli-operations.json"

    def load(self) -> list[RememberedOperation]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        out: list[RememberedOperation] = []
        for item in raw if isinstance(raw, list) else []:
            try:
                out.append(RememberedOperation.model_validate(item))
            except ValidationError:
                continue
        return out

    def _save(self, ops: list[RememberedOperation]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps([o.model_dump() for o in ops[-MAX_REMEMBERED:]], indent=1),
                       encoding="utf-8")
        tmp.replace(self.path)

    def remember(self, op: RememberedOperation) -> None:
        ops = [o for o in self.load() if o.operation_id != op.operation_id or o.device != op.device]
        ops.append(op)
        self._save(ops)

    def update_state(self, device: str, operation_id: str, state: str) -> None:
        ops = self.load()
        for o in ops:
            if o.operation_id == operation_id and o.device == device:
                o.last_state = state
        self._save(ops)

    def find(self, operation_id: str, device: str | None = None) -> RememberedOperation | None:
        for o in reversed(self.load()):
            if o.operation_id == operation_id and (device is None or o.device == device):
                return o
        return None


def now_ms() -> int:
    return int(time.time() * 1000)
