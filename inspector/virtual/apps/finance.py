"""`com.example.finance`: the CETP v1 provider of the ClawSeed tutorial (reference notes).

v1 only: no negotiate (an unknown method, answered TOOL_NOT_FOUND as real v1 providers do),
`list_tools`/`get_provider_info` publish exactly the sample JSON from the reference notes.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema

from inspector.protocol.bundle import Bundle
from inspector.virtual.app import CallContext, VirtualApp
from inspector.virtual.cetp_wire import v1_error, v1_success
from inspector.virtual.logcat import app_log
from inspector.virtual.manifest import (
    ACCESS_TOOLS_DECL,
    PackageManifest,
    cetp_provider,
    cetp_service,
)


def sample(name: str) -> str:
    """A reference sample, byte for byte as the real app publishes it."""
    return resources.files("inspector.virtual.apps").joinpath("data", name).read_text("utf-8")


HOLDINGS: list[dict[str, Any]] = [
    {
        "symbol": "AAPL",
        "account_type": "stock",
        "quantity": 25,
        "cost_basis": 142.10,
        "current_price": 189.95,
    },
    {
        "symbol": "MSFT",
        "account_type": "stock",
        "quantity": 10,
        "cost_basis": 251.30,
        "current_price": 415.20,
    },
    {
        "symbol": "VTI",
        "account_type": "fund",
        "quantity": 40,
        "cost_basis": 198.75,
        "current_price": 262.40,
    },
    {
        "symbol": "VXUS",
        "account_type": "fund",
        "quantity": 60,
        "cost_basis": 54.20,
        "current_price": 61.05,
    },
]
TRANSACTIONS: list[dict[str, Any]] = [
    {"date": "2026-01-05", "type": "buy", "symbol": "VTI", "quantity": 10, "price": 240.10},
    {"date": "2026-02-14", "type": "dividend", "symbol": "MSFT", "amount": 7.50},
    {"date": "2026-03-02", "type": "buy", "symbol": "AAPL", "quantity": 5, "price": 171.30},
    {"date": "2026-04-18", "type": "sell", "symbol": "VXUS", "quantity": 15, "price": 58.90},
    {"date": "2026-06-30", "type": "dividend", "symbol": "VTI", "amount": 31.20},
    {"date": "2026-09-12", "type": "buy", "symbol": "MSFT", "quantity": 2, "price": 402.00},
]


class FinanceProvider(VirtualApp):
    PACKAGE = "com.example.finance"
    LABEL = "MyFinance"

    @property
    def authority(self) -> str:
        return f"{self.package}.clawseed.tools"

    def build_manifest(self) -> PackageManifest:
        return PackageManifest(
            package=self.package,
            label=self.label,
            uid=self.uid,
            version_code=3,
            version_name="1.2",
            launch_activity=".MainActivity",
            services=(cetp_service(self.authority, None),),
            providers=(cetp_provider(self.authority),),
            permissions=(ACCESS_TOOLS_DECL,),
        )

    def schemas(self) -> dict[str, dict[str, Any]]:
        tools = json.loads(sample("cetp-v1-finance.list_tools.json"))["tools"]
        return {t["name"]: t["parameters"] for t in tools}

    async def call(
        self, ctx: CallContext, authority: str, method: str, arg: str | None, extras: Bundle | None
    ) -> Bundle | None:
        app_log(self, "D", "FinanceProvider", f"call {method[:64]} from uid {ctx.caller.uid}")
        if method == "list_tools":
            return v1_success(sample("cetp-v1-finance.list_tools.json"))
        if method == "get_provider_info":
            return v1_success(sample("cetp-v1-finance.get_provider_info.json"))
        if method != "execute_tool":
            return v1_error("TOOL_NOT_FOUND", f"Unknown method: {method[:64]}")
        extras = extras or Bundle()
        tool = extras.get("tool_name")
        if not isinstance(tool, str) or not tool:
            return v1_error("INVALID_ARGS", "Missing tool_name")
        schema = self.schemas().get(tool)
        if schema is None:
            return v1_error("TOOL_NOT_FOUND", f"Unknown tool: {tool[:64]}")
        raw = extras.get("args")
        try:
            args = json.loads(raw) if isinstance(raw, str) else {}
            jsonschema.validate(args, schema)
        except (json.JSONDecodeError, jsonschema.ValidationError) as exc:
            msg = exc.msg if isinstance(exc, json.JSONDecodeError) else exc.message
            return v1_error("INVALID_ARGS", f"Invalid args: {msg[:200]}")
        if tool == "get_portfolio_holdings":
            kind = args.get("account_type", "all")
            rows = [h for h in HOLDINGS if kind == "all" or h["account_type"] == kind]
            return v1_success({"holdings": rows, "currency": "USD"})
        start, end = args["start_date"], args.get("end_date", "9999-12-31")
        limit = int(args.get("limit", 50))
        rows = [t for t in TRANSACTIONS if start <= t["date"] <= end][:limit]
        return v1_success({"transactions": rows})
