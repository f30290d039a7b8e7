"""Optional reply fields of Java relay versionCode 3 (docs/relay-protocol.md §4): read when
present, None when an older relay leaves them out."""

from __future__ import annotations

import dataclasses

import pytest

from inspector.protocol.bundle import Bundle, Int, Long
from inspector.relay.api import HelloInfo, ServerConnection
from inspector.relay.server import connect_in_process
from tests.relay.fakes import TOKEN, FakeBackend


class V3Backend(FakeBackend):
    def __init__(self, new_fields: bool) -> None:
        super().__init__()
        self.new_fields = new_fields

    def hello_info(self, client: str) -> HelloInfo:
        info = super().hello_info(client)
        return dataclasses.replace(
            info, capabilities=(*info.capabilities, "launch_pending_intent", "broadcast"))

    async def handle(self, op: str, args: Bundle, conn: ServerConnection) -> object:
        if op == "launch_pending_intent":
            out = Bundle(result_code=Int(0), data=None)
            if self.new_fields:
                out.update(outcome="cancelled_new_task", elapsed_ms=Long(35),
                           detail="RESULT_CANCELED after 35 ms … new task")
            return out
        if op == "broadcast":
            assert ("include_stopped" in args) == self.new_fields
            out = Bundle(reply=None, timed_out=True)
            if self.new_fields:
                out.update(reply_action=str(args["reply_action"]) + ".r" + "0" * 32,
                           include_stopped=True, target_stopped=True,
                           detail="no reply within 300 ms: the target is in the stopped state")
            return out
        return await super().handle(op, args, conn)


@pytest.mark.parametrize("new_fields", [True, False])
async def test_outcome_and_stopped_state_are_read_when_present(new_fields: bool) -> None:
    client = await connect_in_process(V3Backend(new_fields), TOKEN)
    try:
        r = await client.launch_pending_intent("pi-1", 1000)
        b = await client.broadcast("com.x", "A", Bundle(), "com.x.R", 300,
                                   include_stopped=new_fields)
    finally:
        await client.close()
    assert r.result_code == 0 and not r.ok and b.timed_out
    if new_fields:
        assert (r.outcome, r.elapsed_ms) == ("cancelled_new_task", 35)
        assert b.target_stopped is True
        assert b.reply_action and b.reply_action.startswith("com.x.R.r")
        assert b.detail and "stopped state" in b.detail
    else:
        assert r.outcome is None and r.elapsed_ms is None and r.detail is None
        assert b.target_stopped is None and b.reply_action is None and b.detail is None
