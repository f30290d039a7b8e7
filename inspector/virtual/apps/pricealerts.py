"""`com.example.pricealerts`: the spec's price-alert example as a dual-stack CETP v2 provider.

Reads (list_alerts, get_quote, export_history) are also served to v1 consumers; the
mutations (create_alert, delete_alert, sync_watchlist) exist only in v2, with
confirmation, durable deduplication and a background operation with a commit point.
The v2-only read `list_executions` shows the caller's audit log, so an outside observer
(the conformance suite) can count executions even of `sync_watchlist`, whose effect looks
the same after one run or two.
"""

from __future__ import annotations

import asyncio
import secrets
import sqlite3
from typing import Any

from inspector.virtual.cetp_provider import (
    CetpProvider,
    JsonFile,
    Operation,
    Scope,
    ToolCall,
    ToolSpec,
    audit_tool,
)
from inspector.virtual.cetp_wire import CetpError
from inspector.virtual.filegen import history_file, layout_for_bytes, overhead
from inspector.virtual.store import now_ms

QUOTES: dict[str, float] = {
    "ACME": 101.25,
    "GLOBX": 55.10,
    "INITECH": 12.34,
    "UMBRL": 240.00,
    "STARK": 310.50,
    "WAYNE": 188.80,
    "CYBDN": 77.77,
}
MAX_HISTORY_BYTES = 1 << 40

SYMBOL = {"type": "string", "pattern": "^[A-Z]{1,8}$", "description": "Ticker symbol"}
ALERT = {
    "type": "object",
    "properties": {
        "alert_id": {"type": "string"},
        "symbol": {"type": "string"},
        "price": {"type": "number"},
        "direction": {"type": "string", "enum": ["above", "below"]},
        "created_ms": {"type": "integer"},
    },
    "required": ["alert_id", "symbol", "price", "direction"],
}


def _ann(
    effect: str,
    risk: str = "low",
    *,
    destructive: bool = False,
    idempotent: bool = False,
    open_world: bool = False,
    confirmation: str = "never",
    execution: str = "sync",
) -> dict[str, Any]:
    return {
        "effect": effect,
        "risk": risk,
        "destructive": destructive,
        "idempotent": idempotent,
        "open_world": open_world,
        "confirmation": confirmation,
        "execution": execution,
    }


TOOLS: list[ToolSpec] = [
    ToolSpec(
        name="list_alerts",
        title="List price alerts",
        description="List your active price alerts",
        input_schema={"type": "object", "properties": {}, "additionalProperties": False},
        output_schema={
            "type": "object",
            "properties": {"alerts": {"type": "array", "items": ALERT}},
            "required": ["alerts"],
        },
        scopes=("alerts.read",),
        annotations=_ann("read", idempotent=True),
        in_v1=True,
    ),
    ToolSpec(
        name="get_quote",
        title="Get quote",
        description="Get the latest price of a security",
        input_schema={
            "type": "object",
            "properties": {"symbol": SYMBOL},
            "required": ["symbol"],
            "additionalProperties": False,
        },
        output_schema={
            "type": "object",
            "properties": {
                "symbol": {"type": "string"},
                "price": {"type": "number"},
                "currency": {"type": "string"},
            },
            "required": ["symbol", "price", "currency"],
        },
        scopes=("quotes.read",),
        annotations=_ann("read", idempotent=True),
        in_v1=True,
    ),
    ToolSpec(
        name="create_alert",
        title="Create price alert",
        description="Create a price alert for a security",
        input_schema={
            "type": "object",
            "properties": {
                "symbol": SYMBOL,
                "price": {"type": "number", "exclusiveMinimum": 0},
                "direction": {"type": "string", "enum": ["above", "below"]},
            },
            "required": ["symbol", "price"],
            "additionalProperties": False,
        },
        output_schema={
            "type": "object",
            "properties": {"alert_id": {"type": "string"}},
            "required": ["alert_id"],
        },
        scopes=("alerts.write",),
        annotations=_ann(
            "create", "moderate", confirmation="provider_policy", execution="sync_or_async"
        ),
    ),
    ToolSpec(
        name="delete_alert",
        title="Delete price alert",
        description="Delete one of your price alerts permanently",
        input_schema={
            "type": "object",
            "properties": {"alert_id": {"type": "string", "minLength": 1, "maxLength": 64}},
            "required": ["alert_id"],
            "additionalProperties": False,
        },
        output_schema={
            "type": "object",
            "properties": {"alert_id": {"type": "string"}, "deleted": {"type": "boolean"}},
            "required": ["alert_id", "deleted"],
        },
        scopes=("alerts.write",),
        annotations=_ann(
            "delete", "moderate", destructive=True, idempotent=True, confirmation="always"
        ),
    ),
    ToolSpec(
        name="sync_watchlist",
        title="Synchronise watchlist",
        description=(
            "Fetch fresh quotes for the given symbols and replace the watchlist with them. "
            "Runs in the background with progress; cancellable until the new watchlist is "
            "committed. step_ms sets the simulated time per symbol."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "symbols": {"type": "array", "items": SYMBOL, "minItems": 1, "maxItems": 50},
                "step_ms": {"type": "integer", "minimum": 0, "maximum": 5000, "default": 100},
            },
            "required": ["symbols"],
            "additionalProperties": False,
        },
        output_schema={
            "type": "object",
            "properties": {
                "synced": {"type": "integer"},
                "watchlist": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"symbol": {"type": "string"}, "price": {"type": "number"}},
                        "required": ["symbol", "price"],
                    },
                },
            },
            "required": ["synced", "watchlist"],
        },
        scopes=("alerts.write", "quotes.read"),
        annotations=_ann("update", idempotent=True, execution="sync_or_async"),
    ),
    ToolSpec(
        name="share_watchlist",
        title="Share watchlist",
        description=(
            "Share your current watchlist with another person by e-mail. Needs the "
            "watchlist.share scope, which you grant once in the provider's screen."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "recipient": {"type": "string", "pattern": "^[^@\\s]+@[^@\\s]+$"},
            },
            "required": ["recipient"],
            "additionalProperties": False,
        },
        output_schema={
            "type": "object",
            "properties": {
                "share_id": {"type": "string"},
                "recipient": {"type": "string"},
                "symbols": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["share_id", "recipient", "symbols"],
        },
        scopes=("watchlist.share",),
        annotations=_ann("create", "moderate", open_world=True),
    ),
    ToolSpec(
        name="export_history",
        title="Export price history",
        description=(
            "Export the price history as one JSON document. Give either rows (number of "
            "records) or bytes (exact document size); large exports arrive as a file."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "rows": {"type": "integer", "minimum": 0, "maximum": 100_000_000},
                "bytes": {"type": "integer", "minimum": overhead(), "maximum": MAX_HISTORY_BYTES},
            },
            "oneOf": [{"required": ["rows"]}, {"required": ["bytes"]}],
            "additionalProperties": False,
        },
        output_schema={
            "type": "object",
            "properties": {"history": {"type": "array", "items": {"type": "object"}}},
            "required": ["history"],
        },
        scopes=("history.read",),
        annotations=_ann("read", idempotent=True),
        in_v1=True,
    ),
    audit_tool("alerts.read"),
]

SCHEMA = """
CREATE TABLE IF NOT EXISTS alerts (
    alert_id TEXT PRIMARY KEY,
    uid INTEGER NOT NULL,
    symbol TEXT NOT NULL,
    price REAL NOT NULL,
    direction TEXT NOT NULL,
    created_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS shares (
    share_id TEXT PRIMARY KEY,
    uid INTEGER NOT NULL,
    recipient TEXT NOT NULL,
    symbols TEXT NOT NULL,
    created_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS watchlist (
    uid INTEGER NOT NULL,
    symbol TEXT NOT NULL,
    price REAL NOT NULL,
    synced_ms INTEGER NOT NULL,
    PRIMARY KEY (uid, symbol)
);
"""


class PriceAlertsProvider(CetpProvider):
    """The spec's price-alert provider (§2.1 manifest, §3 descriptors, §4 invocation)."""

    PACKAGE = "com.example.pricealerts"
    LABEL = "Price Alerts"
    PROVIDER_NAME = "Price Alerts"
    DESCRIPTION = "Manage price alerts and watchlists"
    EXTRA_SCHEMA = SCHEMA
    CONFIRM_DEVIATION = 0.5  # provider_policy: confirm alerts priced > 50 % away from quote
    GRANT_SCOPES = ("watchlist.share",)  # the user grants it once (AUTH_REQUIRED flow)

    def scopes(self) -> list[Scope]:
        return [
            Scope(
                name="alerts.read",
                title="See price alerts",
                description="Read your alerts and watchlist",
                access="read",
                sensitivity="financial",
            ),
            Scope(
                name="alerts.write",
                title="Manage price alerts",
                description="Create, update, and delete alerts",
                access="write",
                sensitivity="financial",
            ),
            Scope(
                name="quotes.read",
                title="Read quotes",
                description="Read public market quotes",
                access="read",
                sensitivity="public",
            ),
            Scope(
                name="watchlist.share",
                title="Share your watchlist",
                description="Send your watchlist to people you choose",
                access="write",
                sensitivity="personal",
            ),
            Scope(
                name="history.read",
                title="Export history",
                description="Export your price history",
                access="read",
                sensitivity="personal",
            ),
        ]

    def tool_specs(self) -> list[ToolSpec]:
        return list(TOOLS)

    # --- reads ----------------------------------------------------------------------------------
    def tool_list_alerts(self, call: ToolCall) -> dict[str, Any]:
        rows = self.store.all(
            "SELECT * FROM alerts WHERE uid=? ORDER BY created_ms, alert_id", call.caller.uid
        )
        return {
            "alerts": [
                {
                    "alert_id": r["alert_id"],
                    "symbol": r["symbol"],
                    "price": r["price"],
                    "direction": r["direction"],
                    "created_ms": r["created_ms"],
                }
                for r in rows
            ]
        }

    def quote(self, symbol: str) -> float:
        if symbol not in QUOTES:
            raise CetpError(
                "INVALID_ARGS", f"unknown symbol {symbol!r}; known: {', '.join(sorted(QUOTES))}"
            )
        return QUOTES[symbol]

    def tool_get_quote(self, call: ToolCall) -> dict[str, Any]:
        symbol = call.args["symbol"]
        return {"symbol": symbol, "price": self.quote(symbol), "currency": "USD"}

    def tool_export_history(self, call: ToolCall) -> JsonFile:
        if "rows" in call.args:
            records, padding = int(call.args["rows"]), 0
        else:
            records, padding = layout_for_bytes(int(call.args["bytes"]))
        return JsonFile(history_file(records, padding))

    # --- mutations (inside one transaction with the dedup record) -------------------------------
    def needs_confirmation(self, call: ToolCall) -> bool:
        if call.spec.name != "create_alert":
            return False
        quote = QUOTES.get(call.args["symbol"])
        if quote is None:
            return False  # refused by the business check anyway
        return abs(call.args["price"] - quote) / quote > self.CONFIRM_DEVIATION

    def tool_create_alert(self, call: ToolCall, db: sqlite3.Connection) -> dict[str, Any]:
        symbol = call.args["symbol"]
        price = self.quote(symbol)
        direction = call.args.get("direction") or (
            "above" if call.args["price"] > price else "below"
        )
        alert_id = "al_" + secrets.token_hex(6)
        db.execute(
            "INSERT INTO alerts VALUES (?,?,?,?,?,?)",
            (alert_id, call.caller.uid, symbol, float(call.args["price"]), direction, now_ms()),
        )
        return {"alert_id": alert_id}

    def tool_delete_alert(self, call: ToolCall, db: sqlite3.Connection) -> dict[str, Any]:
        alert_id = call.args["alert_id"]
        n = db.execute(
            "DELETE FROM alerts WHERE alert_id=? AND uid=?", (alert_id, call.caller.uid)
        ).rowcount
        if not n:
            raise CetpError("CONFLICT", f"there is no alert {alert_id[:64]!r} (already deleted?)")
        return {"alert_id": alert_id, "deleted": True}

    def tool_share_watchlist(self, call: ToolCall, db: sqlite3.Connection) -> dict[str, Any]:
        symbols = [
            r[0]
            for r in db.execute(
                "SELECT symbol FROM watchlist WHERE uid=? ORDER BY symbol", (call.caller.uid,)
            )
        ]
        if not symbols:
            raise CetpError("CONFLICT", "your watchlist is empty; run sync_watchlist first")
        share_id = "sh_" + secrets.token_hex(6)
        db.execute(
            "INSERT INTO shares VALUES (?,?,?,?,?)",
            (share_id, call.caller.uid, call.args["recipient"], ",".join(symbols), now_ms()),
        )
        return {"share_id": share_id, "recipient": call.args["recipient"], "symbols": symbols}

    # --- background operation -------------------------------------------------------------------
    async def op_sync_watchlist(self, op: Operation) -> None:
        symbols: list[str] = list(op.args["symbols"])
        step_s = int(op.args.get("step_ms", 100)) / 1000.0
        total = len(symbols)
        fetched: dict[str, float] = {}
        # durable progress: a restarted process re-fetches from where it was (reads only)
        for i, symbol in enumerate(symbols):
            op.checkpoint()
            if i < op.progress_current:
                fetched[symbol] = self.quote(symbol)
                continue
            await asyncio.sleep(step_s)
            fetched[symbol] = self.quote(symbol)  # unknown symbol → the operation fails
            op.progress(i + 1, total, f"Fetched {symbol}")

        def replace_watchlist(db: sqlite3.Connection) -> dict[str, Any]:
            db.execute("DELETE FROM watchlist WHERE uid=?", (op.uid,))
            t = now_ms()
            db.executemany(
                "INSERT INTO watchlist VALUES (?,?,?,?)",
                [(op.uid, s, p, t) for s, p in fetched.items()],
            )
            return {
                "synced": len(fetched),
                "watchlist": [{"symbol": s, "price": p} for s, p in fetched.items()],
            }

        op.commit(replace_watchlist, final=False)  # the commit point: cancel → CONFLICT
        op.progress(total, total, "Committed; publishing the new watchlist")
        await asyncio.sleep(step_s)  # post-commit work: the state is still running
