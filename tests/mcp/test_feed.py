"""Reading a growing journal back (JournalTail) and the virtual screen's answer files."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from inspector.mcp.feed import JournalTail, wait_answer, write_answer
from inspector.session.journal import JournalWriter


def test_tail_returns_only_new_complete_records(tmp_path: Path) -> None:
    w = JournalWriter.create(name="b", directory=tmp_path)
    tail = JournalTail(w.path)
    w.record("mcp", {"event": "client", "name": "agent"})
    first = tail.poll()
    assert [r["data"]["event"] for r in first] == ["client"]
    assert tail.header is not None and tail.header["name"] == "b"
    with open(w.path, "ab") as f:  # a torn line: kept until it is complete
        f.write(b'{"type": "mcp", "data": {"event": "call_st')
    assert tail.poll() == []
    with open(w.path, "ab") as f:
        f.write(b'arted"}}\nnot json\n[1]\n')
    assert [r["data"]["event"] for r in tail.poll()] == ["call_started"]
    w.close()


async def test_answer_file_round_trip(tmp_path: Path) -> None:
    journal = tmp_path / "s.jsonl"
    waiter = asyncio.ensure_future(wait_answer(journal, "cr_abc", 5, poll_s=0.01))
    await asyncio.sleep(0.05)
    write_answer(journal, "cr_abc", True)
    assert await waiter is True
    assert await wait_answer(journal, "cr_abc", 0.05, poll_s=0.01) is None  # consumed
    write_answer(journal, "cr_x", False)
    assert await wait_answer(journal, "cr_x", 1) is False


def test_answer_ids_cannot_escape_the_folder(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        write_answer(tmp_path / "s.jsonl", "../../etc/passwd", True)
    assert not any(tmp_path.rglob("passwd"))


def rec(event: str, **data: object) -> dict[str, object]:
    return {"type": "mcp", "data": {"event": event, **data}, "at_ms": 1.0}


def test_bridge_state_folds_calls_and_confirmations() -> None:
    from inspector.mcp.feed import BridgeState

    s = BridgeState()
    assert s.apply([rec("bridge_started", device="virtual", tools=["a", "b"]),
                    rec("client", name="agent", version="1"),
                    rec("call_started", call_id="c1", client="agent", tool="a",
                        arguments={"x": 1}),
                    rec("confirmation", call_id="c1", request_id="r1", state="pending",
                        screen="phone"),
                    rec("confirmation_screen", confirmation_id="cr_1", package="p"),
                    {"type": "exchange", "exchange": {}}])
    assert s.device == "virtual" and s.clients == ["agent 1"] and s.exchanges == 1
    row = s.calls["c1"]
    assert (row.state, row.request_id, row.summary) == ("running", "r1",
                                                        "confirmation pending")
    assert s.waiting_on_phone == {"c1": "a"} and "cr_1" in s.pending
    s.apply([rec("confirmation_answer", confirmation_id="cr_1", approved=True),
             rec("call_finished", call_id="c1", tool="a", is_error=True, summary="USER_X"),
             rec("tools_list_changed", tools=["a"])])
    assert s.pending == {} and s.waiting_on_phone == {}
    assert (row.state, row.summary) == ("error", "USER_X")
    assert s.tools == ["a"] and s.list_changed == 1
    assert not s.apply([{"type": "device", "data": {}}, {"type": "mcp", "data": "junk"}])
