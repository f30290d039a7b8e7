"""Provider-side confirmation and scope grants (§4.3, §7.2) of `CetpProvider`: the
confirmation screen, resume tokens and their single use."""

from __future__ import annotations

import secrets

from inspector.protocol.bundle import Bundle
from inspector.virtual.app import (
    ConfirmationScreen,
    PendingActivity,
)
from inspector.virtual.cetp_model import (
    ToolCall,
)
from inspector.virtual.cetp_wire import (
    CetpError,
    v2_error,
)
from inspector.virtual.store import now_ms


class ConfirmationMixin:
    """Mixed into `CetpProvider` (inspector.virtual.cetp_provider)."""

    # --- confirmation (§4.3) --------------------------------------------------------------------
    def confirmation_screen(self, call: ToolCall) -> ConfirmationScreen | None:
        """The screen to show, or None when this call needs no confirmation. `always`
        tools always confirm; `provider_policy` tools decide in `needs_confirmation`."""
        policy = call.spec.annotations.get("confirmation", "never")
        if policy == "always" or (policy == "provider_policy" and self.needs_confirmation(call)):
            return self.describe_confirmation(call)
        return None

    def needs_confirmation(self, call: ToolCall) -> bool:
        return False

    def describe_confirmation(self, call: ToolCall) -> ConfirmationScreen:
        params = {k: str(v)[:200] for k, v in (call.args or {}).items()}
        return ConfirmationScreen(
            title=call.spec.title,
            target=self.PROVIDER_NAME,
            action=call.spec.name,
            parameters=params,
            consequences=call.spec.description,
        )

    def new_resume_token(self, call: ToolCall) -> str:
        """A fresh, unguessable resume_token (a hook: planted faults make it guessable)."""
        return secrets.token_urlsafe(32)

    def require_confirmation(
        self,
        call: ToolCall,
        screen: ConfirmationScreen,
        kind: str = "confirm",
        scopes: list[str] | None = None,
    ) -> Bundle:
        """USER_ACTION_REQUIRED (or AUTH_REQUIRED for a scope grant) with an immutable
        PendingIntent to the provider's screen and a resume_token (§4.3)."""
        row = self.store.one(
            "SELECT * FROM confirmations WHERE uid=? AND request_id=? AND state='pending'"
            " AND expires_ms>? AND kind=?",
            call.caller.uid,
            call.request_id,
            now_ms(),
            kind,
        )
        if row is None or row["args_sha256"] != call.args_sha256 or row["tool"] != call.spec.name:
            cid = "conf_" + secrets.token_hex(8)
            token = self.new_resume_token(call)
            with self.store.tx() as db:
                db.execute(
                    "INSERT INTO confirmations VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        cid,
                        token,
                        call.caller.uid,
                        call.request_id,
                        call.spec.name,
                        call.args_sha256,
                        screen.model_dump_json(),
                        "pending",
                        now_ms() + self.confirmation_ttl_ms,
                        kind,
                        ",".join(scopes or ()),
                    ),
                )
        else:
            cid, token = row["confirmation_id"], row["resume_token"]
        handle = call.ctx.pending_intent(self.confirmation_activity(cid, screen))
        if kind == "auth":
            err = CetpError(
                "AUTH_REQUIRED",
                "this tool needs a scope you have not granted; grant it in the provider's screen",
                extra=Bundle(resolution=handle, resume_token=token),
            )
        else:
            err = CetpError(
                "USER_ACTION_REQUIRED",
                "this call needs your confirmation in the provider's screen",
                extra=Bundle(resolution=handle, resume_token=token),
            )
        return v2_error(err, call.request_id)

    def confirmation_activity(self, cid: str, screen: ConfirmationScreen) -> PendingActivity:
        async def on_result(approved: bool) -> tuple[int, Bundle | None]:
            with self.store.tx() as db:
                changed = db.execute(
                    "UPDATE confirmations SET state=? WHERE confirmation_id=? AND state='pending'"
                    " AND expires_ms>?",
                    ("approved" if approved else "denied", cid, now_ms()),
                ).rowcount
                row = db.execute(
                    "SELECT uid, kind, scopes FROM confirmations WHERE confirmation_id=?", (cid,)
                ).fetchone()
                if approved and changed and row["kind"] == "auth":
                    expires = now_ms() + self.GRANT_TTL_MS
                    db.executemany(
                        "INSERT OR REPLACE INTO grants VALUES (?,?,?)",
                        [(row["uid"], s, expires) for s in row["scopes"].split(",") if s],
                    )
            return (-1 if approved and changed else 0), None

        return PendingActivity(
            package=self.package,
            component=f"{self.package}.ConfirmActivity",
            screen=screen,
            on_result=on_result,
        )

    def resume_kind(self, token: str) -> str | None:
        row = self.store.one("SELECT kind FROM confirmations WHERE resume_token=?", token)
        return None if row is None else str(row["kind"])

    def consume_resume_token(self, call: ToolCall, token: str, kind: str = "confirm") -> bool:
        """Single-use, bound to caller, tool, request id, args bytes and expiry (§4.3).

        Returns True while the confirmation is still unanswered (ask again); raises
        USER_CANCELLED on denial; returns False once approved (token now used)."""
        row = self.store.one("SELECT * FROM confirmations WHERE resume_token=?", token)
        if row is None or row["uid"] != call.caller.uid:
            raise CetpError("INVALID_REQUEST", "unknown resume_token")
        if row["state"] == "used":
            raise CetpError("INVALID_REQUEST", "this resume_token was already used")
        if row["kind"] != kind:
            raise CetpError("INVALID_REQUEST", "this resume_token answers another question")
        if row["request_id"] != call.request_id or row["tool"] != call.spec.name:
            raise CetpError("INVALID_REQUEST", "the resume_token belongs to another request")
        if row["args_sha256"] != call.args_sha256:
            raise CetpError(
                "INVALID_REQUEST", "the arguments changed since confirmation; confirm again"
            )
        if row["expires_ms"] <= now_ms():
            raise CetpError("INVALID_REQUEST", "the resume_token expired; start a new execution")
        if row["state"] == "pending":
            return True
        self.store.run(
            "UPDATE confirmations SET state='used' WHERE confirmation_id=?",
            row["confirmation_id"],
        )
        if row["state"] == "denied":
            err = CetpError("USER_CANCELLED", "you declined this action in the provider")
            with self.store.tx() as db:
                self.store_outcome(db, call, {"status": "error", "error": err.as_json()})
            raise err
        return False

