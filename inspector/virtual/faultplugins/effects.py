"""Planted faults in effects: deadlines, scopes, read tools, the v1 path, request and result
limits, deduplication, confirmation and background operations."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any

from inspector.protocol.bundle import Bundle, Int
from inspector.virtual.app import FileSource
from inspector.virtual.cetp_provider import JsonFile, Session, ToolCall
from inspector.virtual.cetp_wire import CetpError, v1_error, v1_success, v2_success
from inspector.virtual.faultplugins import FaultyAlerts, planted
from inspector.virtual.store import now_ms

MIB = 1 << 20

# --- enforcement ------------------------------------------------------------------------


@planted("P-046", "deadline.expired_not_executed", select=("enforcement",),
         then=("deadline.every_mutating_tool",))
class ExpiredDeadlineRuns(FaultyAlerts):
    """Never looks at deadline_at_ms: a call that arrives too late still executes."""

    FAULT_ID = "expired_deadline_runs"

    def check_deadline(self, deadline_at_ms: int | None) -> None:
        if not self.broken:
            super().check_deadline(deadline_at_ms)


@planted("P-081", "scopes.enforced", select=("enforcement",))
class ScopesNeverChecked(FaultyAlerts):
    """Declares scopes but never checks a grant at execution."""

    FAULT_ID = "scopes_never_checked"

    def missing_scopes(self, call: ToolCall) -> list[str]:
        return [] if self.broken else super().missing_scopes(call)


@planted("P-035", "read.no_side_effect", select=("enforcement",))
class QuoteCreatesAlert(FaultyAlerts):
    """get_quote (effect=read) also files a price alert for the symbol it looked up."""

    FAULT_ID = "quote_creates_alert"

    def tool_get_quote(self, call: ToolCall) -> dict[str, Any]:
        d = super().tool_get_quote(call)
        if self.broken:
            self.store.run("INSERT INTO alerts VALUES (?,?,?,?,?,?)",
                           f"al_q{now_ms()}_{self.execution_count()}_{id(call)}",
                           call.caller.uid, d["symbol"], d["price"], "above", now_ms())
        return d


@planted("P-087", "v1.no_mutation_via_v1", select=("v1",))
class V1RunsMutations(FaultyAlerts):
    """Lists only reads to v1, but its v1 execute_tool runs any tool, mutations included."""

    FAULT_ID = "v1_runs_mutations"

    async def handle_v1(self, ctx: Any, method: str, extras: Bundle) -> Bundle:
        name = extras.get("tool_name")
        if not (self.broken and method == "execute_tool" and isinstance(name, str)):
            return await super().handle_v1(ctx, method, extras)
        try:
            spec = self.spec(name)
            args_text = extras.get("args") if isinstance(extras.get("args"), str) else "{}"
            rid = extras.get("request_id") if isinstance(extras.get("request_id"), str) else ""
            call = ToolCall(ctx, None, spec, self.parse_args(spec, args_text), args_text,
                            rid, None)
            if spec.is_read:
                return v1_success(self.run_read(call))
            with self.store.tx() as db:
                value = getattr(self, f"tool_{name}", None)
                if value is None:  # a background tool: do its effect inline
                    db.execute("DELETE FROM watchlist WHERE uid=?", (ctx.caller.uid,))
                    self.record_execution(db, ctx.caller.uid, rid, name)
                    return v1_success({"synced": 0, "watchlist": []})
                out = value(call, db)
                self.record_execution(db, ctx.caller.uid, rid, name)
            return v1_success(out)
        except CetpError as err:
            return v1_error(err.code, err.message)


@planted("P-013", "limits.request_size_enforced", select=("enforcement",))
class NoRequestLimit(FaultyAlerts):
    """Advertises max_request_bytes but accepts any request size."""

    FAULT_ID = "no_request_limit"

    def check_request_size(self, session: Session, args_text: str) -> None:
        if not self.broken:
            super().check_request_size(session, args_text)


# --- large results (§4.5) ---------------------------------------------------------------

LARGE = ("large_results", "result.inline_limit", "result.file_needs_capability")


@planted("P-064", "large.size_sweep", select=LARGE, then=("result.inline_limit",))
class InlinesJustAboveLimit(FaultyAlerts):
    """Inlines a file-backed result when its compact JSON fits the limit counted in whole
    KiB (`size // 1024 <= limit // 1024`): up to 1023 bytes too many."""

    FAULT_ID = "inlines_just_above_limit"

    async def finish_read(self, call: ToolCall, value: Any) -> Bundle:
        assert call.session is not None
        limit = self.inline_limit(call.session)
        if self.broken and isinstance(value, JsonFile) and value.source.size <= 2 * limit:
            raw = await self.read_small(value.source)
            text = json.dumps(json.loads(raw), separators=(",", ":"), ensure_ascii=False)
            if (len(text.encode()) + 25) // 1024 <= limit // 1024:
                return Bundle(status="success", protocol_version=Int(2),
                              data='{"kind":"inline","value":' + text + "}",
                              request_id=call.request_id)
            value = JsonFile(FileSource.from_bytes(raw))
        return await super().finish_read(call, value)


@planted("P-065", "large.size_sweep", select=LARGE)
class DigestWrongPastOneMiB(FaultyAlerts):
    """Hashes only the first MiB of a file result: digests are wrong above 1 MiB."""

    FAULT_ID = "digest_wrong_past_1mib"

    def file_result(self, call: ToolCall, result: JsonFile) -> Bundle:
        b = super().file_result(call, result)
        if self.broken and result.source.size > MIB:
            data = json.loads(b["data"])
            data["sha256"] = hashlib.sha256(b"first MiB only").hexdigest()
            b["data"] = json.dumps(data)
        return b


@planted("P-065", "large.file_result", select=LARGE, then=("large.size_sweep",))
class WrongDigest(FaultyAlerts):
    """Declares the SHA-256 of the bytes it meant to write, then writes others."""

    FAULT_ID = "wrong_digest"

    def file_result(self, call: ToolCall, result: JsonFile) -> Bundle:
        if self.broken:
            src = result.source

            async def chunks(size: int):  # type: ignore[no-untyped-def]
                first = True
                async for c in src.read(size):
                    if first and c:
                        c, first = bytes([c[0] ^ 0x20]) + c[1:], False
                    yield c

            result = JsonFile(FileSource(src.size, chunks, src.sha256))
        return super().file_result(call, result)


@planted("P-066", "large.too_large_without_capability", select=LARGE)
class TooLargeAsInternal(FaultyAlerts):
    """Without large_results, a big result fails with INTERNAL_ERROR."""

    FAULT_ID = "too_large_as_internal"

    def file_result(self, call: ToolCall, result: JsonFile) -> Bundle:
        try:
            return super().file_result(call, result)
        except CetpError as err:
            if self.broken and err.code == "RESULT_TOO_LARGE":
                raise CetpError("INTERNAL_ERROR", "the export failed") from None
            raise


@planted("P-066", "large.too_large_without_capability", select=LARGE,
         then=("result.file_needs_capability",))
class FileWithoutCapability(FaultyAlerts):
    """Sends file results even in sessions that did not negotiate large_results."""

    FAULT_ID = "file_without_capability"

    def file_result(self, call: ToolCall, result: JsonFile) -> Bundle:
        if self.broken and call.session is not None:
            call = ToolCall(call.ctx, Session(call.session.token, call.session.uid,
                                              call.session.version,
                                              call.session.capabilities | {"large_results"},
                                              call.session.expires_ms, call.session.limits),
                            call.spec, call.args, call.args_text, call.request_id,
                            call.deadline_at_ms)
        return super().file_result(call, result)


# --- idempotency (§6) -------------------------------------------------------------------

IDEM = ("idempotency",)


@planted("P-070", {"idempotency.replay", "idempotency.different_args",
                   "idempotency.concurrent", "idempotency.retry_after_timeout"}, select=IDEM,
         why="without any dedup record every check that re-sends a request_id sees a "
         "second execution")
class NoDedup(FaultyAlerts):
    """Forgets request ids: every replay runs again."""

    FAULT_ID = "no_dedup"

    def lookup_dedup(self, call: ToolCall) -> Bundle | None:
        return None if self.broken else super().lookup_dedup(call)

    def store_outcome(self, db: sqlite3.Connection, call: ToolCall, outcome: dict[str, Any]
                      ) -> None:
        if not self.broken:
            super().store_outcome(db, call, outcome)


@planted("P-072", "idempotency.different_args", select=IDEM)
class DedupIgnoresArgs(FaultyAlerts):
    """Replays the stored outcome for a reused request_id whatever the arguments."""

    FAULT_ID = "dedup_ignores_args"

    def lookup_dedup(self, call: ToolCall) -> Bundle | None:
        if self.broken:
            row = self.store.one("SELECT * FROM dedup WHERE uid=? AND request_id=?",
                                 call.caller.uid, call.request_id)
            if row is not None and row["operation_id"] is None \
                    and row["args_sha256"] != call.args_sha256:
                return self.outcome_reply(json.loads(row["outcome_json"]), call.request_id)
        return super().lookup_dedup(call)


@planted("P-060", "idempotency.retry_after_timeout", select=IDEM)
class DedupInMemory(FaultyAlerts):
    """Keeps dedup records in memory: a process restart forgets them."""

    FAULT_ID = "dedup_in_memory"

    def on_process_death(self) -> None:
        super().on_process_death()
        if self.broken:
            self.store.run("DELETE FROM dedup WHERE operation_id IS NULL")


# --- confirmation (§4.3) ----------------------------------------------------------------

CONF = ("confirmation",)


@planted("P-082", "confirmation.resolution", select=CONF)
class MutableIntent(FaultyAlerts):
    """The confirmation PendingIntent is created mutable."""

    FAULT_ID = "mutable_intent"

    def confirmation_activity(self, cid: str, screen: Any) -> Any:
        a = super().confirmation_activity(cid, screen)
        if self.broken:
            a.immutable = False
        return a


@planted("P-050", "confirmation.no_effect_before_approval", select=CONF,
         then=("confirmation.deny", "confirmation.expired_token", "confirmation.forged_token",
               "confirmation.token_bound_to_args", "confirmation.consumer_flag_ignored"))
class EffectBeforeApproval(FaultyAlerts):
    """Files a draft alert as soon as confirmation is asked for (visible in list_alerts)."""

    FAULT_ID = "effect_before_approval"

    def require_confirmation(self, call: ToolCall, screen: Any, kind: str = "confirm",
                             scopes: list[str] | None = None) -> Bundle:
        if self.broken and kind == "confirm" and call.spec.name == "create_alert":
            self.store.run("INSERT OR IGNORE INTO alerts VALUES (?,?,?,?,?,?)",
                           "al_draft_" + call.request_id[:8], call.caller.uid,
                           call.args["symbol"], float(call.args["price"]), "above", now_ms())
        return super().require_confirmation(call, screen, kind, scopes)


@planted("P-050", "confirmation.approve", select=(*CONF, "idempotency.replay"))
class ApprovedButNothing(FaultyAlerts):
    """After approval it answers success but never creates the alert."""

    FAULT_ID = "approved_but_nothing"

    def consume_resume_token(self, call: ToolCall, token: str, kind: str = "confirm") -> bool:
        pending = super().consume_resume_token(call, token, kind)
        if self.broken and not pending and kind == "confirm":
            raise _FakeSuccess(call.request_id)
        return pending

    async def execute_tool(self, ctx: Any, session: Session, extras: Bundle, rid: str
                           ) -> Bundle:
        try:
            return await super().execute_tool(ctx, session, extras, rid)
        except _FakeSuccess:
            return v2_success({"kind": "inline", "value": {"alert_id": "al_fake"}}, rid)


class _FakeSuccess(Exception):
    pass


def _row(app: FaultyAlerts, token: str) -> sqlite3.Row | None:
    return app.store.one("SELECT * FROM confirmations WHERE resume_token=?", token)


@planted("P-053", "confirmation.token_single_use", select=CONF)
class ReusableToken(FaultyAlerts):
    """A used resume_token works again (for any request_id)."""

    FAULT_ID = "reusable_token"

    def consume_resume_token(self, call: ToolCall, token: str, kind: str = "confirm") -> bool:
        row = _row(self, token)
        if self.broken and row is not None and row["state"] == "used":
            return False
        if self.broken and row is not None and row["request_id"] != call.request_id \
                and row["state"] == "approved":
            return False
        return super().consume_resume_token(call, token, kind)


@planted("P-054", "confirmation.token_bound_to_args", select=CONF)
class TokenIgnoresArgs(FaultyAlerts):
    """The resume_token is checked against everything but the arguments."""

    FAULT_ID = "token_ignores_args"

    def consume_resume_token(self, call: ToolCall, token: str, kind: str = "confirm") -> bool:
        row = _row(self, token)
        if self.broken and row is not None and row["args_sha256"] != call.args_sha256:
            self.store.run("UPDATE confirmations SET args_sha256=? WHERE resume_token=?",
                           call.args_sha256, token)
        return super().consume_resume_token(call, token, kind)

    def require_confirmation(self, call: ToolCall, screen: Any, kind: str = "confirm",
                             scopes: list[str] | None = None) -> Bundle:
        return super().require_confirmation(call, screen, kind, scopes)


@planted("P-056", "confirmation.deny", select=CONF)
class DenialApproves(FaultyAlerts):
    """A denial in its screen is recorded as an approval."""

    FAULT_ID = "denial_approves"

    def confirmation_activity(self, cid: str, screen: Any) -> Any:
        a = super().confirmation_activity(cid, screen)
        if self.broken:
            inner = a.on_result

            async def on_result(approved: bool):  # type: ignore[no-untyped-def]
                return await inner(True)

            a.on_result = on_result
        return a


@planted("P-055", "confirmation.expired_token", select=CONF)
class TokenNeverExpires(FaultyAlerts):
    """Approved resume_tokens never expire."""

    FAULT_ID = "token_never_expires"

    def consume_resume_token(self, call: ToolCall, token: str, kind: str = "confirm") -> bool:
        if self.broken:
            self.store.run("UPDATE confirmations SET expires_ms=? WHERE resume_token=? AND "
                           "state='approved'", now_ms() + 3_600_000, token)
        return super().consume_resume_token(call, token, kind)


@planted("P-055", "confirmation.forged_token", select=CONF)
class AnyTokenResumes(FaultyAlerts):
    """A resume_token it never issued counts as the approval of the pending confirmation."""

    FAULT_ID = "any_token_resumes"

    def consume_resume_token(self, call: ToolCall, token: str, kind: str = "confirm") -> bool:
        if self.broken and _row(self, token) is None:
            return False
        return super().consume_resume_token(call, token, kind)


@planted("P-051", "confirmation.consumer_flag_ignored", select=CONF)
class TrustsConfirmedFlag(FaultyAlerts):
    """Skips its own screen when the consumer says confirmed=true."""

    FAULT_ID = "trusts_confirmed_flag"

    async def execute_tool(self, ctx: Any, session: Session, extras: Bundle, rid: str
                           ) -> Bundle:
        self._confirmed = self.broken and extras.get("confirmed") is True
        return await super().execute_tool(ctx, session, extras, rid)

    def needs_confirmation(self, call: ToolCall) -> bool:
        return False if getattr(self, "_confirmed", False) else super().needs_confirmation(call)


# --- background operations (§4.4) -------------------------------------------------------

ASYNC = ("async",)


@planted("P-062", "async.accepted", select=ASYNC)
class NegativePollAfter(FaultyAlerts):
    """The accepted reply says poll_after_ms=-1."""

    FAULT_ID = "negative_poll_after"

    def accepted_or_result(self, call: ToolCall, op: sqlite3.Row) -> Bundle:
        b = super().accepted_or_result(call, op)
        if self.broken and b.get("status") == "accepted":
            b["data"] = json.dumps({"operation_id": op["operation_id"], "poll_after_ms": -1})
        return b


@planted("P-062", "async.poll", select=ASYNC)
class OperationResultOffSchema(FaultyAlerts):
    """A finished sync_watchlist reports `synced` as a string."""

    FAULT_ID = "operation_result_off_schema"

    def operation_state(self, row: sqlite3.Row) -> dict[str, Any]:
        d = super().operation_state(row)
        if self.broken and d.get("state") == "succeeded":
            res = d["result"]
            d["result"] = {**res, "value": {**res["value"], "synced": str(res["value"]
                                                                           ["synced"])}}
        return d


@planted("P-063", "async.progress", select=ASYNC)
class ProgressBackwards(FaultyAlerts):
    """Progress counts down."""

    FAULT_ID = "progress_backwards"

    def operation_state(self, row: sqlite3.Row) -> dict[str, Any]:
        d = super().operation_state(row)
        if self.broken and "progress" in d:
            p = d["progress"]
            d["progress"] = {**p, "current": p["total"] - p["current"]}
        return d


@planted("P-061", "async.cancel", select=ASYNC)
class CancelClaimsCancelled(FaultyAlerts):
    """cancel_operation answers state=cancelled although the operation runs on."""

    FAULT_ID = "cancel_claims_cancelled"

    def cancel_operation(self, ctx: Any, session: Session, extras: Bundle, rid: str
                         ) -> Bundle:
        b = super().cancel_operation(ctx, session, extras, rid)
        if self.broken and b.get("status") == "success":
            d = json.loads(b["data"])
            b["data"] = json.dumps({**d, "state": "cancelled"})
        return b


@planted("P-061", "async.cancel_after_commit", select=ASYNC, then=("async.window",))
class CancelRewritesHistory(FaultyAlerts):
    """Cancelling a finished operation marks it cancelled (its effect stays)."""

    FAULT_ID = "cancel_rewrites_history"

    def cancel_operation(self, ctx: Any, session: Session, extras: Bundle, rid: str
                         ) -> Bundle:
        if self.broken:
            row = self._operation_for(ctx, extras, rid)
            if row["state"] == "succeeded":
                self.store.run("UPDATE operations SET state='cancelled', error_json=? WHERE "
                               "operation_id=?", json.dumps({
                                   "error_code": "CANCELLED", "error_message": "cancelled",
                                   "retryable": False}), row["operation_id"])
                return v2_success({"operation_id": row["operation_id"],
                                   "state": "cancellation_requested"}, rid)
        return super().cancel_operation(ctx, session, extras, rid)


@planted("P-059", "async.window", select=ASYNC, then=("async.restart_recovery",))
class ForgetsFinishedOperations(FaultyAlerts):
    """A finished operation can be read once; after that it is RESULT_EXPIRED."""

    FAULT_ID = "forgets_finished_operations"

    def get_operation(self, ctx: Any, session: Session, extras: Bundle, rid: str) -> Bundle:
        seen: set[str] = self.__dict__.setdefault("_seen_terminal", set())
        op_id = extras.get("operation_id")
        if self.broken and op_id in seen:
            raise CetpError("RESULT_EXPIRED", "the operation's result is gone")
        b = super().get_operation(ctx, session, extras, rid)
        if json.loads(b["data"]).get("state") in ("succeeded", "failed", "cancelled"):
            seen.add(str(op_id))
        return b

    def lookup_dedup(self, call: ToolCall) -> Bundle | None:
        b = super().lookup_dedup(call)
        if self.broken and b is not None and b.get("status") == "accepted":
            op = json.loads(b["data"]).get("operation_id")
            if op in self.__dict__.get("_seen_terminal", set()):
                raise CetpError("RESULT_EXPIRED", "the execution's result is gone")
        return b


@planted("P-060", "async.restart_recovery", select=ASYNC)
class OperationsDieWithProcess(FaultyAlerts):
    """A restarted process does not resume its running operations (they stay running)."""

    FAULT_ID = "operations_die_with_process"

    def on_process_start(self) -> None:
        if not self.broken:
            super().on_process_start()


@planted("P-045", "async.request_id_bound", select=ASYNC)
class OperationAnyRequestId(FaultyAlerts):
    """get_operation answers for an operation_id whatever request_id comes with it."""

    FAULT_ID = "operation_any_request_id"

    def _operation_for(self, ctx: Any, extras: Bundle, rid: str) -> sqlite3.Row:
        if self.broken:
            op = self.store.one("SELECT request_id FROM operations WHERE operation_id=?",
                                extras.get("operation_id"))
            if op is not None:
                rid = op["request_id"]
        return super()._operation_for(ctx, extras, rid)


@planted("P-058", "caller.operation_bound", select=("callers",))
class OperationAnyCaller(FaultyAlerts):
    """Answers get_operation and cancel_operation for any caller's operation."""

    FAULT_ID = "operation_any_caller"

    def _operation_for(self, ctx: Any, extras: Bundle, rid: str) -> sqlite3.Row:
        if self.broken:
            row = self.store.one("SELECT * FROM operations WHERE operation_id=?",
                                 extras.get("operation_id"))
            if row is not None and row["request_id"] == rid:
                return row
        return super()._operation_for(ctx, extras, rid)


@planted("P-055", "caller.resume_token_bound", select=("callers",))
class ResumeAnyCaller(FaultyAlerts):
    """Accepts an approved resume_token from any app."""

    FAULT_ID = "resume_any_caller"

    def consume_resume_token(self, call: ToolCall, token: str, kind: str = "confirm") -> bool:
        row = _row(self, token)
        if self.broken and row is not None and row["uid"] != call.caller.uid:
            self.store.run("UPDATE confirmations SET uid=? WHERE resume_token=?",
                           call.caller.uid, token)
        return super().consume_resume_token(call, token, kind)


@planted("P-071", "caller.dedup_per_caller", select=("callers",))
class DedupAnyCaller(FaultyAlerts):
    """The dedup key leaves out the calling UID."""

    FAULT_ID = "dedup_any_caller"

    def lookup_dedup(self, call: ToolCall) -> Bundle | None:
        if self.broken:
            row = self.store.one("SELECT * FROM dedup WHERE request_id=?", call.request_id)
            if row is not None and row["outcome_json"] is not None:
                return self.outcome_reply(json.loads(row["outcome_json"]), call.request_id)
        return super().lookup_dedup(call)

