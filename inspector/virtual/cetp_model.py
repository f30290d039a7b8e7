"""What a virtual CETP provider is made of: tool and scope declarations, sessions, calls,
background operations and the audit tool (used by `CetpProvider` and its mixins)."""

from __future__ import annotations

import datetime as dt
import hashlib
import sqlite3
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from inspector.virtual.app import (
    CallContext,
    Caller,
    FileSource,
)
from inspector.virtual.cetp_wire import (
    dumps,
)
from inspector.virtual.store import now_ms

if TYPE_CHECKING:
    from inspector.virtual.cetp_provider import CetpProvider

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
OPTIONAL_CAPABILITIES = ("async_operations", "cancellation", "large_results")
V2_METHODS = (
    "negotiate",
    "get_provider_info",
    "list_tools",
    "execute_tool",
    "get_operation",
    "cancel_operation",
)
TERMINAL_STATES = ("succeeded", "failed", "cancelled")


class ToolSpec(BaseModel):
    """One tool as the provider declares it (spec §3.3/§3.4)."""

    model_config = ConfigDict(frozen=True)

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    scopes: tuple[str, ...] = ()
    annotations: dict[str, Any] = Field(default_factory=dict)
    in_v1: bool = False  # listed by the v1 list_tools (read-only tools only, spec §2.1)

    @property
    def effect(self) -> str:
        return str(self.annotations.get("effect", "read"))

    @property
    def is_read(self) -> bool:
        return self.effect == "read"


class Scope(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    title: str
    description: str
    access: str
    sensitivity: str


@dataclass
class Session:
    """What a session token is bound to (spec §2.2): UID, version, capabilities, expiry."""

    token: str
    uid: int
    version: int
    capabilities: frozenset[str]
    expires_ms: int
    limits: dict[str, int]

    def has(self, capability: str) -> bool:
        return capability in self.capabilities


@dataclass
class ToolCall:
    """One execute_tool call after envelope validation."""

    ctx: CallContext
    session: Session | None  # None for v1
    spec: ToolSpec
    args: Any
    args_text: str
    request_id: str
    deadline_at_ms: int | None

    @property
    def caller(self) -> Caller:
        return self.ctx.caller

    @property
    def args_sha256(self) -> str:
        return hashlib.sha256(self.args_text.encode("utf-8")).hexdigest()


@dataclass
class JsonFile:
    """A result produced as a file (too big to build in memory)."""

    source: FileSource
    media_type: str = "application/json"


class OperationCancelled(Exception):
    """Raised by `Operation.checkpoint()` when cancellation was requested before commit."""


@dataclass
class Operation:
    """A running background operation as the tool code sees it (durable progress)."""

    provider: CetpProvider
    operation_id: str
    uid: int
    request_id: str
    tool: str
    args: Any
    progress_current: int = 0
    progress_total: int = 0
    _committed: bool = field(default=False)

    def progress(self, current: int, total: int, message: str = "") -> None:
        self.progress_current, self.progress_total = current, total
        self.provider.store.run(
            "UPDATE operations SET state='running', progress_current=?, progress_total=?,"
            " progress_message=?, updated_ms=? WHERE operation_id=?",
            current,
            total,
            message,
            now_ms(),
            self.operation_id,
        )

    def checkpoint(self) -> None:
        """A cancellation point before the commit (cooperative cancellation, §4.4)."""
        row = self.provider.store.one(
            "SELECT cancel_requested FROM operations WHERE operation_id=?", self.operation_id
        )
        if row is not None and row["cancel_requested"]:
            raise OperationCancelled

    def commit(self, mutate: Callable[[sqlite3.Connection], Any], *, final: bool = True) -> Any:
        """Run the business mutation and store the result, atomically: the commit point.

        From here on a cancel answers CONFLICT. With `final=False` the operation stays
        `running` (post-commit work such as notifications) and is marked succeeded when the
        tool code returns — or, after a restart, without re-running anything."""
        self.checkpoint()
        with self.provider.store.tx() as db:
            result = mutate(db)
            self.provider.validate_output(self.provider.spec(self.tool), result)
            envelope = {"kind": "inline", "value": result}
            db.execute(
                "UPDATE operations SET state=?, committed=1, result_json=?,"
                " updated_ms=? WHERE operation_id=?",
                ("succeeded" if final else "running", dumps(envelope), now_ms(), self.operation_id),
            )
            self.provider.record_execution(db, self.uid, self.request_id, self.tool)
        self._committed = True
        return result

    def succeed(self) -> None:
        self.provider.store.run(
            "UPDATE operations SET state='succeeded', updated_ms=? WHERE operation_id=?"
            " AND committed=1",
            now_ms(),
            self.operation_id,
        )


AUDIT_DEFAULT_LIMIT = 50
AUDIT_MAX_LIMIT = 500


def audit_tool(scope: str, name: str = "list_executions") -> ToolSpec:
    """A read tool over the provider's audit log (one row per business side effect).

    Without it nothing outside can see whether a background mutation ran once or twice
    (`sync_watchlist` rewrites the same watchlist); with it a conformance observer counts
    executions (`count` grows by one per effect). Implemented by
    `CetpProvider.tool_list_executions`."""
    return ToolSpec(
        name=name,
        title="List executions",
        description=(
            "The audit log of your actions in this app: one entry per change a tool made "
            "(request id, tool, time), newest first, with the total count"
        ),
        input_schema={
            "type": "object",
            "properties": {
                "tool": {"type": "string", "pattern": "^[a-z][a-z0-9_]{0,63}$"},
                "limit": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": AUDIT_MAX_LIMIT,
                    "default": AUDIT_DEFAULT_LIMIT,
                },
            },
            "additionalProperties": False,
        },
        output_schema={
            "type": "object",
            "properties": {
                "count": {"type": "integer", "minimum": 0},
                "executions": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "request_id": {"type": "string"},
                            "tool": {"type": "string"},
                            "at_ms": {"type": "integer"},
                        },
                        "required": ["request_id", "tool", "at_ms"],
                    },
                },
            },
            "required": ["count", "executions"],
        },
        scopes=(scope,),
        annotations={
            "effect": "read",
            "risk": "low",
            "destructive": False,
            "idempotent": True,
            "open_world": False,
            "confirmation": "never",
            "execution": "sync",
        },
    )


def _uuid_ok(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def _iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


