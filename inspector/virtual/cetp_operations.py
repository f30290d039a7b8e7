"""Background operations (§4.4) of `CetpProvider`: start, run, poll, cancel, and
resume after a process restart."""

from __future__ import annotations

import asyncio
import json
import secrets
import sqlite3
from typing import Any

from inspector.protocol.bundle import Bundle
from inspector.virtual.app import (
    CallContext,
)
from inspector.virtual.cetp_model import (
    TERMINAL_STATES,
    Operation,
    OperationCancelled,
    Session,
    ToolCall,
    ToolSpec,
)
from inspector.virtual.cetp_wire import (
    CetpError,
    dumps,
    v2_error,
    v2_success,
)
from inspector.virtual.store import now_ms


class OperationsMixin:
    """Mixed into `CetpProvider` (inspector.virtual.cetp_provider)."""

    # --- async operations (§4.4) ----------------------------------------------------------------
    def runs_as_operation(self, spec: ToolSpec) -> bool:
        return hasattr(self, f"op_{spec.name}")

    def new_operation_id(self, call: ToolCall) -> str:
        """A fresh, unguessable operation_id (a hook: planted faults make it guessable)."""
        return "op_" + secrets.token_hex(8)

    async def start_operation(self, call: ToolCall) -> Bundle:
        op_id = self.new_operation_id(call)
        t = now_ms()
        try:
            with self.store.tx() as db:
                db.execute(
                    "INSERT INTO operations(operation_id, uid, request_id, tool, args_json,"
                    " state, created_ms, updated_ms) VALUES (?,?,?,?,?,?,?,?)",
                    (
                        op_id,
                        call.caller.uid,
                        call.request_id,
                        call.spec.name,
                        call.args_text,
                        "queued",
                        t,
                        t,
                    ),
                )
                db.execute(
                    "INSERT INTO dedup(uid, provider_id, request_id, tool, args_sha256,"
                    " operation_id, created_ms) VALUES (?,?,?,?,?,?,?)",
                    (
                        call.caller.uid,
                        self.provider_id,
                        call.request_id,
                        call.spec.name,
                        call.args_sha256,
                        op_id,
                        t,
                    ),
                )
        except sqlite3.IntegrityError:
            stored = self.lookup_dedup(call)
            assert stored is not None
            return stored
        task = self._start_operation(op_id)
        assert call.session is not None
        if not call.session.has("async_operations"):
            # not negotiated: the consumer waits for the synchronous outcome (§3.4)
            await asyncio.shield(task)
        op = self.store.one("SELECT * FROM operations WHERE operation_id=?", op_id)
        assert op is not None
        return self.accepted_or_result(call, op)

    def accepted_or_result(self, call: ToolCall, op: sqlite3.Row) -> Bundle:
        assert call.session is not None
        if call.session.has("async_operations"):
            return v2_success(
                {"operation_id": op["operation_id"], "poll_after_ms": self.POLL_AFTER_MS},
                call.request_id,
                status="accepted",
            )
        if op["state"] == "succeeded":
            return v2_success(json.loads(op["result_json"]), call.request_id)
        if op["state"] in ("failed", "cancelled"):
            e = json.loads(op["error_json"])
            return v2_error(
                CetpError(e["error_code"], e["error_message"], retryable=e["retryable"]),
                call.request_id,
            )
        raise CetpError(
            "UNAVAILABLE",
            "the execution is still running; retry with the same request_id",
            retry_after_ms=self.POLL_AFTER_MS,
        )

    def _start_operation(self, op_id: str) -> asyncio.Task[Any]:
        existing = self._op_tasks.get(op_id)
        if existing is not None and not existing.done():
            return existing
        task = self.spawn(self._run_operation(op_id), f"operation-{op_id}")
        self._op_tasks[op_id] = task
        return task

    async def _run_operation(self, op_id: str) -> None:
        row = self.store.one("SELECT * FROM operations WHERE operation_id=?", op_id)
        if row is None or row["state"] in TERMINAL_STATES:
            return
        op = Operation(
            provider=self,
            operation_id=op_id,
            uid=row["uid"],
            request_id=row["request_id"],
            tool=row["tool"],
            args=json.loads(row["args_json"]),
            progress_current=row["progress_current"],
            progress_total=row["progress_total"],
        )
        if row["committed"]:
            op.succeed()  # died after its commit point: the effect is in, nothing re-runs
            return
        self.store.run(
            "UPDATE operations SET state='running', updated_ms=? WHERE operation_id=?",
            now_ms(),
            op_id,
        )
        try:
            await getattr(self, f"op_{row['tool']}")(op)
            if not op._committed:
                raise CetpError("INTERNAL_ERROR", "the operation ended without a result")
            op.succeed()
        except OperationCancelled:
            err = CetpError("CANCELLED", "the operation was cancelled before it took effect")
            self._finish_operation(op_id, "cancelled", err)
        except CetpError as err:
            self._finish_operation(op_id, "failed", err)

    def _finish_operation(self, op_id: str, state: str, err: CetpError) -> None:
        self.store.run(
            "UPDATE operations SET state=?, error_json=?, updated_ms=? WHERE operation_id=?"
            " AND committed=0",
            state,
            dumps(err.as_json()),
            now_ms(),
            op_id,
        )

    def _operation_for(self, ctx: CallContext, extras: Bundle, rid: str) -> sqlite3.Row:
        op_id = extras.get("operation_id")
        if not isinstance(op_id, str):
            raise CetpError("INVALID_REQUEST", "operation_id (String) is required")
        row = self.store.one("SELECT * FROM operations WHERE operation_id=?", op_id)
        # bound to the calling UID and the creating request id (§4.1, §4.4)
        if row is None or row["uid"] != ctx.caller.uid or row["request_id"] != rid:
            raise CetpError(
                "INVALID_REQUEST",
                "no such operation for this caller and request_id (use the request_id of the "
                "execute_tool call that created it)",
            )
        return row

    def get_operation(self, ctx: CallContext, session: Session, extras: Bundle, rid: str) -> Bundle:
        if not session.has("async_operations"):
            raise CetpError("UNSUPPORTED_CAPABILITY", "async_operations was not negotiated")
        row = self._operation_for(ctx, extras, rid)
        return v2_success(self.operation_state(row), rid)

    def operation_state(self, row: sqlite3.Row) -> dict[str, Any]:
        state = row["state"]
        out: dict[str, Any] = {"operation_id": row["operation_id"], "state": state}
        if row["progress_total"]:
            out["progress"] = {
                "current": row["progress_current"],
                "total": row["progress_total"],
                "message": row["progress_message"],
            }
        if state not in TERMINAL_STATES:
            out["poll_after_ms"] = self.POLL_AFTER_MS
        elif state == "succeeded":
            out["result"] = json.loads(row["result_json"])
        else:
            out["error"] = json.loads(row["error_json"])
        return out

    def cancel_operation(
        self, ctx: CallContext, session: Session, extras: Bundle, rid: str
    ) -> Bundle:
        if not session.has("cancellation"):
            raise CetpError("UNSUPPORTED_CAPABILITY", "cancellation was not negotiated")
        row = self._operation_for(ctx, extras, rid)
        if row["committed"] or row["state"] in ("succeeded", "failed"):
            raise CetpError(
                "CONFLICT",
                f"the operation is {row['state']} and its effect is final; it cannot be cancelled",
            )
        self.store.run(
            "UPDATE operations SET cancel_requested=1, updated_ms=? WHERE operation_id=?",
            now_ms(),
            row["operation_id"],
        )
        return v2_success(
            {"operation_id": row["operation_id"], "state": "cancellation_requested"}, rid
        )

