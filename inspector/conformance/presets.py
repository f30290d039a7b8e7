"""Ready-made setups for the virtual device's reference providers (`--setup reference`).

A preset only says *which calls* the scenarios use; it never allows a mutation: the user
still names the tools (`allow_mutations`), so a preset cannot make the suite mutate
anything on its own.
"""

from __future__ import annotations

from inspector.conformance.model import ConformanceSetup, Observer, Scenario, ToolCall

PRICE_ALERTS = "com.example.pricealerts"


def reference_setup(package: str) -> ConformanceSetup | None:
    """The scenarios for a reference app of the virtual device, or None."""
    if package == PRICE_ALERTS:
        alerts = Observer(tool="list_alerts")
        return ConformanceSetup(
            tool_args={"get_quote": {"symbol": "ACME"}, "export_history": {"rows": 3}},
            mutation=Scenario(tool="create_alert", args={"symbol": "ACME", "price": 100},
                              observer=alerts),
            # more than 50 % away from the quote: the provider asks for confirmation
            confirmation=Scenario(tool="create_alert", args={"symbol": "ACME", "price": 500},
                                  observer=alerts),
            async_call=Scenario(tool="sync_watchlist",
                                args={"symbols": ["ACME", "GLOBX", "INITECH"],
                                      "step_ms": 300}),
            large_result=ToolCall(tool="export_history", args={"bytes": 400_000}),
        )
    return None


#: the tools the price-alert preset needs allowed to run every check
PRICE_ALERTS_MUTATIONS = ("create_alert", "sync_watchlist")
