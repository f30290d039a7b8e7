"""The bridge over stdio, driven by the official MCP Python SDK client (what a desktop agent
does), on a standalone virtual device."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

import mcp.types as types
import pytest

from inspector.cli.main import main
from inspector.session.devices import connect_socket
from inspector.session.journal import read_journal
from tests.cli.conftest import VirtualServer
from tests.mcp.factories import PRICE, stdio_bridge, texts

pytestmark = pytest.mark.timeout(120)
ACME_QUOTE = 101.25  # the virtual provider's quote
SCREEN = "CETP_INSPECTOR_MCP_TEST_ONLY_VIRTUAL_SCREEN"


async def test_lists_namespaced_tools_with_mapped_annotations(
        virtual_server: VirtualServer, home: Path) -> None:
    async with stdio_bridge(virtual_server, home) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    quote = tools["p_pricealerts__get_quote"]
    assert quote.annotations is not None and quote.annotations.readOnlyHint is True
    assert quote.inputSchema["required"] == ["symbol"]  # passed through
    delete = tools["p_pricealerts__delete_alert"]
    assert delete.annotations.readOnlyHint is False and delete.annotations.destructiveHint
    meta = delete.meta["cetp-inspector/cetp"]
    assert meta["confirmation"] == "always" and meta["effect"] == "delete"
    assert "--allow-mutations p_pricealerts__delete_alert" in delete.description
    assert {"x_hello_world__greet", "x_unit_converter__convert_length", "x_dice__roll_dice",
            "x_flashlight__toggle_flashlight"} <= set(tools)
    assert "v1_finance__get_portfolio_holdings" in tools
    # the provider claiming another package's authority is reported, not bridged
    assert "belongs to com.example.finance" in (home / "bridge-stderr.txt").read_text()


async def test_read_tool_returns_structured_content(virtual_server: VirtualServer,
                                                    home: Path) -> None:
    async with stdio_bridge(virtual_server, home) as client:
        r = await client.call_tool("p_pricealerts__get_quote", {"symbol": "ACME"})
        bad = await client.call_tool("p_pricealerts__get_quote", {"symbol": "NOPE"})
    assert not r.isError
    assert r.structuredContent["symbol"] == "ACME"
    assert json.loads(texts(r)) == r.structuredContent
    assert bad.isError and "INVALID_ARGS" in texts(bad)


async def test_mutation_refused_unless_allowed(virtual_server: VirtualServer,
                                               home: Path) -> None:
    async with stdio_bridge(virtual_server, home) as client:
        r = await client.call_tool("p_pricealerts__create_alert",
                                   {"symbol": "ACME", "price": 1})
        alerts = await client.call_tool("p_pricealerts__list_alerts", {})
    assert r.isError
    assert "MUTATION_NOT_ALLOWED" in texts(r) and "--allow-mutations" in texts(r)
    assert "al_" not in texts(alerts)  # nothing was sent to the provider


async def _create_alert(client: object) -> str:
    # at the quote: the provider's policy asks no confirmation
    r = await client.call_tool("p_pricealerts__create_alert",  # type: ignore[attr-defined]
                               {"symbol": "ACME", "price": ACME_QUOTE})
    assert not r.isError, texts(r)
    return json.loads(texts(r))["alert_id"]


@pytest.mark.parametrize("answer", ["approve", "deny"])
async def test_confirmation_is_answered_on_the_device(
        virtual_server: VirtualServer, home: Path, answer: str) -> None:
    progress: list[str] = []

    async def on_progress(_p: float, _t: float | None, msg: str | None) -> None:
        progress.append(msg or "")

    async with stdio_bridge(virtual_server, home, "--allow-mutations",
                            "create_alert,delete_alert", env={SCREEN: answer}) as client:
        alert = await _create_alert(client)
        r = await client.call_tool("p_pricealerts__delete_alert", {"alert_id": alert},
                                   progress_callback=on_progress)
        left = texts(await client.call_tool("p_pricealerts__list_alerts", {}))
    assert any("confirm on the virtual device" in m for m in progress), progress
    if answer == "approve":
        assert not r.isError, texts(r)
        assert json.loads(texts(r)) == {"alert_id": alert, "deleted": True}
        assert alert not in left
    else:
        assert r.isError and "USER_CANCELLED" in texts(r)
        assert alert in left


async def test_async_operation_reports_progress(virtual_server: VirtualServer,
                                                home: Path) -> None:
    seen: list[tuple[float, float | None]] = []

    async def on_progress(p: float, t: float | None, _m: str | None) -> None:
        seen.append((p, t))

    async with stdio_bridge(virtual_server, home, "--allow-mutations",
                            "sync_watchlist") as client:
        r = await client.call_tool("p_pricealerts__sync_watchlist",
                                   {"symbols": ["ACME", "GLOBX", "INITECH"], "step_ms": 150},
                                   progress_callback=on_progress)
    assert not r.isError, texts(r)
    assert json.loads(texts(r))["synced"] == 3
    assert (3.0, 3.0) in seen and len(seen) >= 2


async def test_cancellation_cancels_the_operation(virtual_server: VirtualServer,
                                                  home: Path) -> None:
    started = asyncio.Event()

    async def on_progress(_p: float, _t: float | None, _m: str | None) -> None:
        started.set()

    async with stdio_bridge(virtual_server, home, "--allow-mutations",
                            "sync_watchlist") as client:
        call = asyncio.ensure_future(client.call_tool(
            "p_pricealerts__sync_watchlist",
            {"symbols": ["ACME", "GLOBX", "INITECH", "UMBRL"], "step_ms": 2000},
            progress_callback=on_progress))
        await asyncio.wait_for(started.wait(), 30)
        request_id = client._request_id - 1  # the SDK numbers requests; the call is the last
        await client.send_notification(types.ClientNotification(types.CancelledNotification(
            params=types.CancelledNotificationParams(requestId=request_id,
                                                     reason="user pressed stop"))))
        with pytest.raises(Exception, match="cancel"):
            await asyncio.wait_for(call, 30)
    # the bridge sent CETP cancel_operation and queried it to a terminal `cancelled`
    (journal,) = (home / "sessions").glob("*.jsonl")
    notes = read_journal(journal).records_of("mcp")
    cancel = next(n for n in notes if n.get("state") == "cancel_requested_by_client")
    assert cancel["confirmed_cancelled"] is True, cancel
    sent = [x for x in read_journal(journal).exchanges if x.method == "cancel_operation"]
    assert sent and sent[0].request_id == cancel["request_id"]


async def test_large_result_verified_and_corrupted_one_refused(
        virtual_server: VirtualServer, home: Path) -> None:
    async with stdio_bridge(virtual_server, home) as client:
        big = await client.call_tool("p_pricealerts__export_history", {"bytes": 2_000_000})
        link = next(c for c in big.content if isinstance(c, types.ResourceLink))
        read = await client.read_resource(link.uri)
        medium = await client.call_tool("p_pricealerts__export_history", {"bytes": 600_000})
        relay = await connect_socket(virtual_server.socket, virtual_server.token, events=False)
        try:
            await relay.fault("corrupt_digest", package=PRICE)
        finally:
            await relay.close()
        bad = await client.call_tool("p_pricealerts__export_history", {"bytes": 600_000})
    assert not big.isError, texts(big)
    declared = big.meta["cetp-inspector/file"]
    assert declared["bytes"] == 2_000_000 and link.size == 2_000_000
    body = read.contents[0].text.encode()
    assert len(body) == 2_000_000 and hashlib.sha256(body).hexdigest() == declared["sha256"]
    # over 1 MiB: a link; up to 1 MiB: embedded (both verified before they are returned)
    assert not medium.isError
    embedded = next(c for c in medium.content if isinstance(c, types.EmbeddedResource))
    assert len(embedded.resource.text.encode()) == 600_000
    assert hashlib.sha256(embedded.resource.text.encode()).hexdigest() == \
        medium.meta["cetp-inspector/file"]["sha256"]
    assert bad.isError and "VERIFICATION_FAILED" in texts(bad)
    assert not any(isinstance(c, types.ResourceLink | types.EmbeddedResource)
                   for c in bad.content)


@pytest.mark.parametrize(("tool", "args", "bridge"), [
    ("x_hello_world__greet", {"name": "Ada"}, "service"),
    ("x_unit_converter__convert_length", {"value": 1, "from": "km", "to": "m"}, "provider"),
    ("x_dice__roll_dice", {"sides": 6}, "broadcast"),
    ("x_flashlight__toggle_flashlight", {}, "activity"),
])
async def test_extension_on_each_bridge(virtual_server: VirtualServer, home: Path, tool: str,
                                        args: dict[str, object], bridge: str) -> None:
    async with stdio_bridge(virtual_server, home, "--allow-mutations", "*") as client:
        r = await client.call_tool(tool, args)
    assert not r.isError, texts(r)
    assert r.meta["cetp-inspector/extension"]["bridge"] == bridge


async def test_bridge_session_exports_as_a_bug_report(virtual_server: VirtualServer,
                                                      home: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    async with stdio_bridge(virtual_server, home) as client:
        await client.call_tool("p_pricealerts__get_quote", {"symbol": "ACME"})
    (journal,) = (home / "sessions").glob("*.jsonl")
    out = home / "bridge.cetpbundle"
    assert main(["bundle", "create", journal.stem, "-o", str(out), "--json"]) == 0
    capsys.readouterr()
    assert main(["bundle", "open", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    text = json.dumps(doc)
    assert "execute_tool" in text and "get_quote" in text
