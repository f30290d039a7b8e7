"""Factories for journal, bundle and replay tests: realistic CETP exchanges."""

from __future__ import annotations

import json
import time
from typing import Any

from inspector.protocol.bundle import Bundle, Int, Long, to_jsonable
from inspector.protocol.exchange import Exchange, ExchangeKind, ExchangeStatus

AUTHORITY = "com.example.alerts.cetp"
PACKAGE = "com.example.alerts"
TOKEN = "tok-SECRET-1234567890"
RESUME = "resume-SECRET-abcdef"


def v2_extras(method_extras: dict[str, Any], *, token: str = TOKEN, rid: str = "r-1") -> Bundle:
    b = Bundle(
        protocol_version=Int(2),
        session_token=token,
        request_id=rid,
        deadline_at_ms=Long(int(time.time() * 1000) + 30_000),
    )
    b.update(method_extras)
    return b


def reply(data: Any, *, rid: str | None = None, status: str = "success") -> Bundle:
    b = Bundle(status=status, data=json.dumps(data))
    if rid is not None:
        b["request_id"] = rid
    return b


def exchange(
    method: str,
    request: Bundle | None,
    response: Bundle | None,
    *,
    status: ExchangeStatus = ExchangeStatus.SUCCESS,
    tool: str | None = None,
    decoded: Any = None,
    error_code: str | None = None,
    error_message: str | None = None,
    kind: ExchangeKind = ExchangeKind.CETP,
) -> Exchange:
    ex = Exchange(
        kind=kind,
        device="virtual",
        target=AUTHORITY,
        package=PACKAGE,
        method=method,
        tool=tool,
        request_id=str(request.get("request_id")) if request else None,
        request=to_jsonable(request) if request is not None else None,
    )
    ex.response = to_jsonable(response) if response is not None else None
    ex.decoded = decoded
    ex.error_code = error_code
    ex.error_message = error_message
    ex.finish(status)
    return ex


TOOLS = {
    "revision": "1",
    "tools": [
        {"name": "list_alerts", "annotations": {"effect": "read"}},
        {"name": "set_alert", "annotations": {"effect": "write"}},
    ],
}


def sample_session() -> list[Exchange]:
    """negotiate → list_tools → a read tool → a mutation (with a resume token)."""
    negotiate = exchange(
        "negotiate",
        Bundle(consumer_versions=Int(2), consumer_capabilities='["cancellation"]'),
        reply({"selected_version": 2, "provider_id": PACKAGE, "session_token": TOKEN}),
        decoded={"selected_version": 2, "session_token": TOKEN},
    )
    tools = exchange(
        "list_tools", v2_extras({}, rid="r-tools"), reply(TOOLS, rid="r-tools"), decoded=TOOLS
    )
    read = exchange(
        "execute_tool",
        v2_extras({"tool_name": "list_alerts", "args": "{}"}, rid="r-read"),
        reply({"alerts": [{"symbol": "ETH", "above": 4000}]}, rid="r-read"),
        tool="list_alerts",
    )
    write = exchange(
        "execute_tool",
        v2_extras(
            {"tool_name": "set_alert", "args": '{"symbol":"BTC"}', "resume_token": RESUME},
            rid="r-write",
        ),
        reply({"created": True, "note": f"resumed with {RESUME}"}, rid="r-write"),
        tool="set_alert",
        error_message=None,
    )
    return [negotiate, tools, read, write]
