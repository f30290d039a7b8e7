"""dedup.every_mutating_tool and deadline.every_mutating_tool on the stock provider: every
allowed tool is judged (for dedup, the one asking for a scope grant is approved first), and
a tool it cannot call makes it need setup, naming that tool and why."""

from __future__ import annotations

from inspector.conformance import Outcome, run_conformance
from inspector.virtual import VirtualDevice

from .conftest import full_setup

PRICE = "com.example.pricealerts"
CHECK = "dedup.every_mutating_tool"


async def test_every_allowed_tool_is_replayed(device: VirtualDevice, client) -> None:
    report = await run_conformance(client, PRICE, setup=full_setup(), select=[CHECK])
    r = report.result(CHECK)
    assert r.outcome == Outcome.PASS, r.message
    tools = r.evidence.observed["tools"]
    # create_alert is the `mutation` scenario's tool: idempotency.* judges it
    assert set(tools) == {"share_watchlist", "sync_watchlist"}
    for t in tools.values():
        assert t["replay_outcome"] == t["outcome"] and t["other_args"]["code"] == \
            "INVALID_REQUEST"
    assert tools["sync_watchlist"]["replay"]["operation_id"] == \
        tools["sync_watchlist"]["first"]["operation_id"]


async def test_a_tool_it_cannot_call_needs_setup_with_the_reason(device: VirtualDevice,
                                                                 client) -> None:
    setup = full_setup(allow_mutations=["create_alert", "sync_watchlist", "delete_alert"])
    setup.tool_args["delete_alert"] = {"alert_id": "no-such-alert"}
    report = await run_conformance(client, PRICE, setup=setup, select=[CHECK])
    r = report.result(CHECK)
    assert r.outcome == Outcome.NEEDS_SETUP
    assert "delete_alert" in r.message and "tool_args.delete_alert" in r.message
    assert "sync_watchlist" not in r.message


async def test_without_other_mutating_tools_it_does_not_apply(device: VirtualDevice,
                                                             client) -> None:
    report = await run_conformance(client, PRICE, setup=full_setup(
        allow_mutations=["create_alert"]), select=[CHECK])
    assert report.result(CHECK).outcome == Outcome.NOT_APPLICABLE


async def test_every_allowed_tool_refuses_an_expired_deadline(device: VirtualDevice,
                                                              client) -> None:
    check = "deadline.every_mutating_tool"
    report = await run_conformance(client, PRICE, setup=full_setup(), select=[check])
    r = report.result(check)
    assert r.outcome == Outcome.PASS, r.message
    tools = r.evidence.observed["tools"]
    assert set(tools) == {"share_watchlist", "sync_watchlist"}
    assert tools["sync_watchlist"]["outcome"]["code"] == "DEADLINE_EXCEEDED"


async def test_a_tool_without_dedup_is_named_with_what_came_back(device: VirtualDevice, client,
                                                                  tmp_path) -> None:
    """The planted fault (dedup wired into create_alert only): the failure names the tool,
    says what the replay and the other arguments got, and the evidence has both replies."""
    from inspector.virtual.faultplugins import plugin_source

    path = tmp_path / "fault.py"
    path.write_text(plugin_source("dedup_only_create_alert", confirmation_ttl_ms=1500),
                    encoding="utf-8")
    [package] = device.load_plugin(path, notify=False)
    report = await run_conformance(client, package, setup=full_setup(), select=[CHECK])
    r = report.result(CHECK)
    assert r.outcome == Outcome.FAIL
    assert r.message.startswith("no deduplication by request_id: share_watchlist: the replay")
    assert "sync_watchlist" not in r.message  # operations are still deduplicated
    share = r.evidence.observed["tools"]["share_watchlist"]
    assert share["replay_outcome"]["value"]["share_id"] != share["outcome"]["value"]["share_id"]
