"""The bridge over streamable HTTP (official MCP Python SDK client), in this process on the
in-process virtual device: list_changed after a package change, the virtual screen answered
by a person (answer file, as the Bridge view does), elicitation, token checks."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import mcp.types as types
import pytest

from inspector.mcp.bridge import BridgeOptions
from inspector.mcp.feed import write_answer
from inspector.session.journal import read_journal
from tests.mcp.factories import PRICE, http_bridge, texts

pytestmark = pytest.mark.timeout(120)
ACME_QUOTE = 101.25


async def test_lists_calls_and_journals_the_client(home: Path) -> None:
    async with http_bridge(home) as hb, hb.client() as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        r = await client.call_tool("p_pricealerts__get_quote", {"symbol": "ACME"})
        ext = await client.call_tool("x_dice__roll_dice", {"sides": 6})
        notes = read_journal(hb.journal.path).records_of("mcp")
    assert "p_pricealerts__get_quote" in tools and not r.isError
    assert r.structuredContent["price"] == ACME_QUOTE
    assert not ext.isError and ext.meta["cetp-inspector/extension"]["bridge"] == "broadcast"
    client_note = next(n for n in notes if n["event"] == "client")
    assert client_note["name"] == "mcp"  # the SDK client's default clientInfo name
    finished = [n for n in notes if n["event"] == "call_finished"]
    assert [n["tool"] for n in finished] == ["p_pricealerts__get_quote", "x_dice__roll_dice"]
    assert finished[0]["request_id"]  # the CETP execution behind the MCP call
    exchanges = read_journal(hb.journal.path).exchanges
    assert any(x.request_id == finished[0]["request_id"] and x.method == "execute_tool"
               for x in exchanges)


async def test_requests_without_the_token_are_refused(home: Path) -> None:
    async with http_bridge(home) as hb:
        body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "x", "version": "1"}}}
        headers = {"Accept": "application/json, text/event-stream"}
        async with httpx.AsyncClient() as http:
            none = await http.post(hb.url, json=body, headers=headers)
            wrong = await http.post(hb.url, json=body, headers={
                **headers, "Authorization": "Bearer nope"})
            evil_host = await http.post(hb.url, json=body, headers={
                **headers, "Authorization": "Bearer test-bridge-token-0123456789",
                "Host": "evil.example:80"})
    assert none.status_code == 401 and wrong.status_code == 401
    assert "Bearer" in none.headers["www-authenticate"]
    assert evil_host.status_code in (400, 421)  # DNS-rebinding protection


async def test_package_change_sends_list_changed(home: Path) -> None:
    changed = asyncio.Event()

    async def on_message(msg: Any) -> None:
        if isinstance(msg, types.ServerNotification) and \
                isinstance(msg.root, types.ToolListChangedNotification):
            changed.set()

    async with http_bridge(home) as hb, hb.client(message_handler=on_message) as client:
        before = {t.name for t in (await client.list_tools()).tools}
        hb.device.uninstall("com.example.finance")  # a package_changed event on the device
        await asyncio.wait_for(changed.wait(), 20)
        after = {t.name for t in (await client.list_tools()).tools}
    finance = {"v1_finance__get_transactions", "v1_finance__get_portfolio_holdings"}
    assert finance <= before
    assert after == before - finance


async def _pending_confirmation(journal: Path) -> str:
    while True:
        for n in read_journal(journal).records_of("mcp"):
            if n["event"] == "confirmation_screen":
                return str(n["confirmation_id"])
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("approve", [True, False])
async def test_virtual_screen_waits_for_a_person(home: Path, approve: bool) -> None:
    reminders: list[str] = []

    async def on_progress(_p: float, _t: float | None, msg: str | None) -> None:
        reminders.append(msg or "")

    opts = BridgeOptions(allow_mutations=["delete_alert", "create_alert"], remind_s=0.1)
    async with http_bridge(home, opts) as hb, hb.client() as client:
        created = await client.call_tool("p_pricealerts__create_alert",
                                         {"symbol": "ACME", "price": ACME_QUOTE})
        alert = json.loads(texts(created))["alert_id"]
        call = asyncio.ensure_future(client.call_tool("p_pricealerts__delete_alert",
                                                      {"alert_id": alert},
                                                      progress_callback=on_progress))
        cid = await asyncio.wait_for(_pending_confirmation(hb.journal.path), 20)
        while len(reminders) < 3:  # reminders keep coming while the screen is up
            await asyncio.sleep(0.05)
        assert not call.done()  # nobody answered yet: the call waits, nothing is approved
        assert all(m.startswith("confirm on the virtual device's screen") for m in reminders)
        assert "(waiting" in reminders[-1]
        write_answer(hb.journal.path, cid, approve)  # the person taps Approve / Deny
        r = await asyncio.wait_for(call, 20)
        left = texts(await client.call_tool("p_pricealerts__list_alerts", {}))
    assert r.isError is (not approve), texts(r)
    assert (alert in left) is (not approve)


@pytest.mark.parametrize("accept", [True, False])
async def test_elicitation_still_ends_in_the_providers_confirmation(home: Path,
                                                                   accept: bool) -> None:
    asked: list[str] = []

    async def elicit(_ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept" if accept else "decline", content={})

    opts = BridgeOptions(allow_mutations=["delete_alert", "create_alert"],
                         test_only_virtual_screen=False)  # the device's user denies
    async with http_bridge(home, opts) as hb, hb.client(elicitation_callback=elicit) as client:
        created = await client.call_tool("p_pricealerts__create_alert",
                                         {"symbol": "ACME", "price": ACME_QUOTE})
        alert = json.loads(texts(created))["alert_id"]
        r = await client.call_tool("p_pricealerts__delete_alert", {"alert_id": alert})
        left = texts(await client.call_tool("p_pricealerts__list_alerts", {}))
        screens = [n for n in read_journal(hb.journal.path).records_of("mcp")
                   if n["event"] == "confirmation_screen"]
    assert asked and "You still approve or deny it there" in asked[0]
    assert r.isError and alert in left  # accepting in the client approves nothing
    if accept:
        assert len(screens) == 1 and "USER_CANCELLED" in texts(r)  # the device said no
    else:
        assert screens == [] and "USER_DECLINED" in texts(r)  # nothing was launched


async def test_output_of_an_async_tool_and_progress_over_http(home: Path) -> None:
    seen: list[float] = []

    async def on_progress(p: float, _t: float | None, _m: str | None) -> None:
        seen.append(p)

    opts = BridgeOptions(providers=[PRICE], no_extensions=True,
                         allow_mutations=["p_pricealerts__sync_watchlist"])
    async with http_bridge(home, opts) as hb, hb.client() as client:
        names = {t.name for t in (await client.list_tools()).tools}
        r = await client.call_tool("p_pricealerts__sync_watchlist",
                                   {"symbols": ["ACME", "GLOBX"], "step_ms": 100},
                                   progress_callback=on_progress)
    assert all(n.startswith("p_pricealerts__") for n in names)
    assert not r.isError and json.loads(texts(r))["synced"] == 2
    assert 2.0 in seen


async def test_retry_after_a_lost_reply_keeps_the_request_id(home: Path) -> None:
    """The provider commits, then its process dies before replying: the bridge's retry
    carries the same request_id, so the provider answers from its dedup record."""
    opts = BridgeOptions(allow_mutations=["create_alert"])
    async with http_bridge(home, opts) as hb, hb.client() as client:
        before = texts(await client.call_tool("p_pricealerts__list_alerts", {}))
        await hb.session.link.fault("restart_process", package=PRICE, when="after_commit")
        r = await client.call_tool("p_pricealerts__create_alert",
                                   {"symbol": "INITECH", "price": 12.34})
        after = json.loads(texts(await client.call_tool("p_pricealerts__list_alerts", {})))
        sent = [x for x in read_journal(hb.journal.path).exchanges
                if x.method == "execute_tool" and x.tool == "create_alert"]
    assert not r.isError, texts(r)
    alert = json.loads(texts(r))["alert_id"]
    assert alert not in before
    assert [a["alert_id"] for a in after["alerts"]].count(alert) == 1
    assert len(sent) >= 2 and len({x.request_id for x in sent}) == 1


async def test_v1_tool_needs_permission(home: Path) -> None:
    async with http_bridge(home, BridgeOptions(providers=["com.example.finance"])) as hb, \
            hb.client() as client:
        refused = await client.call_tool("v1_finance__get_portfolio_holdings", {})
    assert refused.isError and "CETP v1 declares no effect" in texts(refused)
    opts = BridgeOptions(providers=["com.example.finance"],
                         allow_mutations=["v1_finance__get_portfolio_holdings"])
    async with http_bridge(home, opts) as hb, hb.client() as client:
        ok = await client.call_tool("v1_finance__get_portfolio_holdings", {})
    assert not ok.isError, texts(ok)


async def test_revision_change_found_during_a_call_sends_list_changed(home: Path) -> None:
    """No package event: the provider's tool set changes while it runs (e.g. a feature
    flag); the engine re-lists after re-negotiating (§3.3) and the bridge notifies."""
    changed = asyncio.Event()

    async def on_message(msg: Any) -> None:
        if isinstance(msg, types.ServerNotification) and \
                isinstance(msg.root, types.ToolListChangedNotification):
            changed.set()

    async with http_bridge(home) as hb, hb.client(message_handler=on_message) as client:
        app = hb.device.app(PRICE)
        full = app.visible_tools
        app.visible_tools = lambda s: [t for t in full(s) if t.name != "share_watchlist"]
        app.kill_process()  # the provider forgets its sessions: the next call renegotiates
        r = await client.call_tool("p_pricealerts__get_quote", {"symbol": "ACME"})
        await asyncio.wait_for(changed.wait(), 20)
        names = {t.name for t in (await client.list_tools()).tools}
    assert not r.isError, texts(r)
    assert "p_pricealerts__share_watchlist" not in names
    assert "p_pricealerts__get_quote" in names
