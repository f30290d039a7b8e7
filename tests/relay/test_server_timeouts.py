"""The server's per-op deadline: `timeout_ms` plus a grace, so a backend's own answer wins."""

from __future__ import annotations

import asyncio
import dataclasses
import time

import pytest

from inspector.protocol.bundle import Bundle
from inspector.relay import server as relay_server
from inspector.relay.api import TIMEOUT, HelloInfo, RelayError, ServerConnection
from inspector.relay.server import connect_in_process
from tests.relay.fakes import TOKEN, FakeBackend


class BroadcastBackend(FakeBackend):
    """A FakeBackend that also serves `broadcast`, answering after `answer_after_s`.

    `answer_after_s=None` answers as a real relay does when nobody replies: after waiting
    the whole `timeout_ms`, with `timed_out: true`. `hang=True` never answers.
    """

    def __init__(self, answer_after_s: float | None = None, hang: bool = False) -> None:
        super().__init__()
        self.answer_after_s = answer_after_s
        self.hang = hang

    def hello_info(self, client: str) -> HelloInfo:
        info = super().hello_info(client)
        return dataclasses.replace(info, capabilities=(*info.capabilities, "broadcast"))

    async def handle(self, op: str, args: Bundle, conn: ServerConnection) -> object:
        if op != "broadcast":
            return await super().handle(op, args, conn)
        if self.hang:
            await asyncio.Event().wait()
        timeout_s = int(args["timeout_ms"]) / 1000  # type: ignore[call-overload]
        wait = timeout_s if self.answer_after_s is None else self.answer_after_s
        await asyncio.sleep(wait)
        return Bundle(reply=None, timed_out=self.answer_after_s is None)


async def test_a_silent_broadcast_is_timed_out_not_a_timeout_error() -> None:
    client = await connect_in_process(BroadcastBackend(), TOKEN)
    try:
        start = time.monotonic()
        r = await client.broadcast("com.x", "com.x.ASK", Bundle(), "com.x.REPLY", timeout_ms=200)
        assert r.timed_out is True and r.reply is None
        assert time.monotonic() - start >= 0.2
    finally:
        await client.close()


async def test_a_backend_answering_a_little_late_still_wins() -> None:
    client = await connect_in_process(BroadcastBackend(answer_after_s=0.4), TOKEN)
    try:
        r = await client.broadcast("com.x", "com.x.ASK", Bundle(), "com.x.REPLY", timeout_ms=100)
        assert r.timed_out is False
    finally:
        await client.close()


async def test_a_backend_that_never_answers_gets_timeout_after_the_grace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(relay_server, "BACKEND_GRACE_S", 0.3)
    client = await connect_in_process(BroadcastBackend(hang=True), TOKEN)
    try:
        start = time.monotonic()
        with pytest.raises(RelayError) as info:
            await client.broadcast("com.x", "com.x.ASK", Bundle(), "com.x.REPLY", timeout_ms=100)
        elapsed = time.monotonic() - start
        assert info.value.code == TIMEOUT
        assert "100 ms" in info.value.message and "timeout_ms" in info.value.message
        assert 0.4 <= elapsed < 3.0, elapsed
        assert await client.ping() > 0  # the connection survives a timed-out op
    finally:
        await client.close()


def test_the_server_grace_stays_below_the_clients() -> None:
    from inspector.relay.client import TIMEOUT_GRACE_S

    assert 0 < relay_server.BACKEND_GRACE_S < TIMEOUT_GRACE_S
