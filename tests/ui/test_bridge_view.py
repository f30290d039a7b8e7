"""The Bridge view follows a real bridge (`cetp-inspector mcp` over stdio, driven by the
official MCP Python SDK client in its own thread, like an agent) through its journal, and
the person at the desk answers the virtual device's confirmation screen there."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from PySide6.QtCore import Qt

from inspector.ui.bridge_view import COLUMNS, BridgeView

ROOT = Path(__file__).resolve().parents[2]
ACME_QUOTE = 101.25  # the virtual provider's quote: an alert there needs no confirmation


def run_agent(home: Path, results: dict[str, Any]) -> threading.Thread:
    """An MCP client that creates an alert, then deletes it (which needs confirmation)."""

    async def agent() -> None:
        env = {**os.environ, "CETP_INSPECTOR_HOME": str(home), "CETP_INSPECTOR_NO_ADB": "1"}
        env.pop("CETP_INSPECTOR_MCP_TEST_ONLY_VIRTUAL_SCREEN", None)
        params = StdioServerParameters(
            command=sys.executable, cwd=str(ROOT), env=env,
            args=["-m", "inspector", "mcp", "--provider", "pricealerts", "--no-extensions",
                  "--allow-mutations", "create_alert,delete_alert"])
        with open(home / "bridge-stderr.txt", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (r, w), \
                    ClientSession(r, w) as client:
                await client.initialize()
                created = await client.call_tool("p_pricealerts__create_alert",
                                                 {"symbol": "ACME", "price": ACME_QUOTE})
                alert = json.loads(created.content[0].text)["alert_id"]
                results["delete"] = await client.call_tool("p_pricealerts__delete_alert",
                                                           {"alert_id": alert})

    def main() -> None:
        try:
            asyncio.run(agent())
        except BaseException as exc:  # reported by the test, not lost in the thread
            results["error"] = exc

    t = threading.Thread(target=main, name="mcp-agent", daemon=True)
    t.start()
    return t


@pytest.mark.timeout(120)
def test_view_follows_a_live_bridge_and_answers_the_virtual_screen(
        qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("CETP_INSPECTOR_HOME", str(home))
    results: dict[str, Any] = {}
    agent = run_agent(home, results)
    view = BridgeView()
    qtbot.addWidget(view)
    view.resize(1100, 600)
    view.show()
    qtbot.waitUntil(lambda: view.tail is not None or view.attach(None), timeout=60_000)
    # the delete waits on the virtual device's screen: the view shows it, nothing answers
    qtbot.waitUntil(lambda: view.pending.count() == 1, timeout=60_000)
    assert "com.example.pricealerts" in view.pending.item(0).text()
    assert view.approve.isEnabled()
    assert "delete" not in results and agent.is_alive()
    view.grab().save(str(tmp_path / "bridge_view_pending.png"))
    qtbot.mouseClick(view.approve, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not agent.is_alive(), timeout=60_000)
    assert "error" not in results, results.get("error")
    assert results["delete"].isError is False
    qtbot.waitUntil(lambda: view.table.rowCount() == 2
                    and view.table.item(1, COLUMNS.index("State")).text() == "ok",
                    timeout=10_000)
    tools = [view.table.item(r, COLUMNS.index("Tool")).text() for r in range(2)]
    assert tools == ["p_pricealerts__create_alert", "p_pricealerts__delete_alert"]
    assert view.table.item(1, COLUMNS.index("Client")).text() == "mcp"
    assert view.pending.count() == 0 and not view.approve.isEnabled()
    assert "clients: mcp" in view.summary.text()
    view.table.selectRow(1)
    assert '"alert_id"' in view.details.toPlainText()
    view.grab().save(str(tmp_path / "bridge_view_done.png"))


def test_window_opens_the_view_from_the_view_menu(harness: Any, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CETP_INSPECTOR_HOME", str(tmp_path / "empty-home"))
    window = harness.window
    view_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    assert window.act_bridge in view_menu.actions()
    qtbot = harness.qtbot
    qtbot.keyClick(window, Qt.Key.Key_B,
                   Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: getattr(window, "bridge_view", None) is not None
                    and window.bridge_view.isVisible())
    assert "No bridge session found" in window.bridge_view.source.text()
    assert "cetp-inspector mcp" in window.bridge_view.source.text()
    window.bridge_view.close()
