"""Small builders for UI tests: exchanges and tool descriptors."""

from __future__ import annotations

from typing import Any

from inspector.protocol.exchange import Exchange, ExchangeKind, ExchangeStatus


def exchange(i: int = 0, **over: Any) -> Exchange:
    """A finished CETP exchange; every 7th one is a provider error."""
    err = i % 7 == 3
    base: dict[str, Any] = dict(
        kind=ExchangeKind.CETP,
        device="virtual",
        target=f"com.example.p{i % 13}.cetp",
        package=f"com.example.p{i % 13}",
        method="execute_tool" if i % 3 else "list_tools",
        tool=f"tool_{i % 29}" if i % 3 else None,
        request_id=f"req-{i}",
        request={"protocol_version": {"$int": 2}, "tool_name": f"tool_{i % 29}"},
        response={"status": "error" if err else "success"},
        request_bytes=100 + i % 50,
        response_bytes=200 + i % 70,
        error_code="INVALID_ARGS" if err else None,
        error_message="bad args" if err else None,
    )
    base.update(over)
    ex = Exchange(**base)
    if "status" not in over:
        ex.finish(ExchangeStatus.PROVIDER_ERROR if err else ExchangeStatus.SUCCESS)
    return ex
