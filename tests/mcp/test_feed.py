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
