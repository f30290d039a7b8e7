"""A broadcast timeout carries the relay's explanation (target stopped, issue 10) into the
exchange's findings, so the user sees why the extension never answered."""

from __future__ import annotations

from inspector.protocol import andyclaw as ac
from inspector.protocol.bundle import Bundle
from inspector.relay.api import BroadcastReply
from tests.consumer.fakes import FakeRelay
from tests.consumer.test_andyclaw_host import host_for

STOPPED = ("no reply within 30000 ms: the target is in the stopped state (never launched "
           "since install, or force-stopped) and Android does not deliver broadcasts")


async def test_the_relays_timeout_detail_becomes_a_finding() -> None:
    relay = FakeRelay()
    host = await host_for(relay, bridges=("broadcast",))

    async def broadcast(package: str, action: str, extras: Bundle, reply_action: str,
                        timeout_ms: int = 30_000) -> BroadcastReply:
        return BroadcastReply(None, True, target_stopped=True, detail=STOPPED)

    relay.broadcast = broadcast  # type: ignore[method-assign]
    reply = await host.execute("greet", {"name": "A"}, bridge=ac.Bridge.BROADCAST)
    assert reply.outcome == "timeout" and STOPPED in reply.problems
    messages = [f.message for f in host.recorder.exchanges[-1].findings]
    assert STOPPED in messages
    # a stopped target is the cause, not a receiver ignoring response_action
    assert "stopped state" in reply.problems[0]
    assert not any("ignores the request's response_action" in p for p in reply.problems)


async def test_a_running_target_that_stays_silent_is_blamed_on_response_action() -> None:
    relay = FakeRelay()
    host = await host_for(relay, bridges=("broadcast",))

    async def broadcast(package: str, action: str, extras: Bundle, reply_action: str,
                        timeout_ms: int = 30_000) -> BroadcastReply:
        return BroadcastReply(None, True, target_stopped=False)

    relay.broadcast = broadcast  # type: ignore[method-assign]
    reply = await host.execute("greet", {"name": "A"}, bridge=ac.Bridge.BROADCAST)
    assert "ignores the request's response_action" in reply.problems[0]
