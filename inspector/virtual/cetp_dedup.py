"""Durable deduplication (§6): the dedup record, stored outcomes, the audit log and the
mutation transaction of `CetpProvider`."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from inspector.protocol.bundle import Bundle
from inspector.virtual.cetp_model import (
    AUDIT_DEFAULT_LIMIT,
    ToolCall,
)
from inspector.virtual.cetp_wire import (
    CetpError,
    dumps,
    v2_error,
    v2_success,
)
from inspector.virtual.store import now_ms


class DedupMixin:
    """Mixed into `CetpProvider` (inspector.virtual.cetp_provider)."""

    # --- dedup (§6) -----------------------------------------------------------------------------
    def lookup_dedup(self, call: ToolCall) -> Bundle | None:
        row = self.store.one(
            "SELECT * FROM dedup WHERE uid=? AND provider_id=? AND request_id=?",
            call.caller.uid,
            self.provider_id,
            call.request_id,
        )
        if row is None:
            return None
        if row["tool"] != call.spec.name or row["args_sha256"] != call.args_sha256:
            raise CetpError(
                "INVALID_REQUEST",
                "this request_id was already used with a different tool or arguments; "
                "use a new request_id for a new execution",
            )
        if row["operation_id"] is not None:
            op = self.store.one(
                "SELECT * FROM operations WHERE operation_id=?", row["operation_id"]
            )
            assert op is not None
            return self.accepted_or_result(call, op)
        return self.outcome_reply(json.loads(row["outcome_json"]), call.request_id)

    def outcome_reply(self, outcome: dict[str, Any], rid: str) -> Bundle:
        if outcome["status"] == "success":
            return v2_success(outcome["data"], rid)
        e = outcome["error"]
        return v2_error(
            CetpError(e["error_code"], e["error_message"], retryable=e["retryable"]), rid
        )

    def store_outcome(
        self, db: sqlite3.Connection, call: ToolCall, outcome: dict[str, Any]
    ) -> None:
        db.execute(
            "INSERT INTO dedup(uid, provider_id, request_id, tool, args_sha256, outcome_json,"
            " created_ms) VALUES (?,?,?,?,?,?,?)",
            (
                call.caller.uid,
                self.provider_id,
                call.request_id,
                call.spec.name,
                call.args_sha256,
                dumps(outcome),
                now_ms(),
            ),
        )

    def record_execution(self, db: sqlite3.Connection, uid: int, rid: str, tool: str) -> None:
        db.execute(
            "INSERT INTO executions(uid, request_id, tool, at_ms) VALUES (?,?,?,?)",
            (uid, rid, tool, now_ms()),
        )

    def execution_count(self, request_id: str | None = None) -> int:
        """How many business side effects happened (for a request id) — tests use this to
        prove nothing executed twice."""
        if request_id is None:
            row = self.store.one("SELECT COUNT(*) AS n FROM executions")
        else:
            row = self.store.one(
                "SELECT COUNT(*) AS n FROM executions WHERE request_id=?", request_id
            )
        return int(row["n"]) if row else 0

    def tool_list_executions(self, call: ToolCall) -> dict[str, Any]:
        """The audit read tool (see `audit_tool`): this caller's side effects, newest first.

        `count` is the total, so an observer keeps seeing each new execution even when the
        list is cut at `limit`; only the caller's own rows are shown (§7.2)."""
        where, params = "uid=?", [call.caller.uid]
        if call.args.get("tool"):
            where, params = where + " AND tool=?", [*params, call.args["tool"]]
        count = self.store.one(f"SELECT COUNT(*) AS n FROM executions WHERE {where}", *params)
        limit = int(call.args.get("limit", AUDIT_DEFAULT_LIMIT))
        rows = self.store.all(
            f"SELECT request_id, tool, at_ms FROM executions WHERE {where}"
            " ORDER BY seq DESC LIMIT ?",
            *params,
            limit,
        )
        return {
            "count": int(count["n"]) if count else 0,
            "executions": [
                {"request_id": r["request_id"], "tool": r["tool"], "at_ms": r["at_ms"]}
                for r in rows
            ],
        }

    def run_mutation(self, call: ToolCall) -> Bundle:
        """Business mutation + dedup record + stored outcome in one transaction."""
        fn = getattr(self, f"tool_{call.spec.name}")
        try:
            with self.store.tx() as db:
                db.execute("SAVEPOINT tool")
                try:
                    value = fn(call, db)
                    self.validate_output(call.spec, value)
                    data = {"kind": "inline", "value": value}
                    outcome: dict[str, Any] = {"status": "success", "data": data}
                    self.record_execution(db, call.caller.uid, call.request_id, call.spec.name)
                    db.execute("RELEASE tool")
                except CetpError as err:
                    # a business refusal is a terminal outcome too: replayed, never re-run;
                    # whatever the tool wrote before refusing is rolled back
                    db.execute("ROLLBACK TO tool")
                    db.execute("RELEASE tool")
                    outcome = {"status": "error", "error": err.as_json()}
                self.store_outcome(db, call, outcome)
        except sqlite3.IntegrityError:
            stored = self.lookup_dedup(call)
            assert stored is not None
            return stored
        call.ctx.fault_after_commit()
        return self.outcome_reply(outcome, call.request_id)

