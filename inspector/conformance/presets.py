"""Ready-made setups for the virtual device's reference providers (the GUI's "Use reference
setup"; for the CLI, `docs/conformance.md` has the same setup as a `--setup FILE` example).

A preset only says *which calls* the scenarios use; it never allows a mutation: the user
still names the tools (`allow_mutations`), so a preset cannot make the suite mutate
anything on its own.
"""

from __future__ import annotations

from inspector.conformance.model import ConformanceSetup, Observer, Scenario, ToolCall

PRICE_ALERTS = "com.example.pricealerts"

#: the price-alert provider's audit read tool: `count` grows by one per execution of the
#: given tool, which is the only outside view of `sync_watchlist` (it rewrites the same
#: watchlist however often it runs); the entries themselves are ignored when comparing
SYNC_EXECUTIONS = Observer(tool="list_executions", args={"tool": "sync_watchlist"},
                           ignore_keys=["executions"])


def reference_setup(package: str, *, confirmation_ttl_ms: int | None = None
                    ) -> ConformanceSetup | None:
    """The scenarios for a reference app of the virtual device, or None.

    `confirmation_ttl_ms` is the device's confirmation lifetime when it was started with a
    short one (`VirtualDevice(confirmation_ttl_ms=…)`, `--confirmation-ttl-ms`); with the
    default 300 s the expired-token check reports needs_setup rather than wait."""
    # the planted-fault plugins (inspector.virtual.faultplugins) are the same provider
    if package == PRICE_ALERTS or package.startswith("com.example.fault."):
        alerts = Observer(tool="list_alerts")
        return ConformanceSetup(
            tool_args={"get_quote": {"symbol": "ACME"}, "export_history": {"rows": 3},
                       "list_executions": {"limit": 5}},
            mutation=Scenario(tool="create_alert", args={"symbol": "ACME", "price": 100},
                              observer=alerts),
            # more than 50 % away from the quote: the provider asks for confirmation
            confirmation=Scenario(tool="create_alert", args={"symbol": "ACME", "price": 500},
                                  observer=alerts),
            async_call=Scenario(tool="sync_watchlist",
                                args={"symbols": ["ACME", "GLOBX", "INITECH"],
                                      "step_ms": 300},
                                observer=SYNC_EXECUTIONS),
            large_result=ToolCall(tool="export_history", args={"bytes": 400_000}),
            # a fresh app (the second caller) holds no watchlist.share grant
            ungranted=Scenario(tool="share_watchlist", args={"recipient": "kim@example.com"},
                               observer=Observer(tool="list_executions",
                                                 args={"tool": "share_watchlist"},
                                                 ignore_keys=["executions"])),
            resume_token_ttl_ms=confirmation_ttl_ms,
        )
    return None


#: the tools the price-alert preset needs allowed to run every check
PRICE_ALERTS_MUTATIONS = ("create_alert", "sync_watchlist", "share_watchlist")
