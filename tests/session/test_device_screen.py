"""A session's device screen: the virtual device's confirmation answered by a tap."""

from __future__ import annotations

import asyncio
from pathlib import Path

from inspector.consumer.engine import ProviderSession
from inspector.consumer.execution import ExecState
from inspector.session.device_screen import RelayScreen, screen_for
from inspector.session.session import Session
from inspector.tasks import Spawner
from inspector.virtual.screen import HEIGHT, WIDTH
from tests.session.test_session_session import manager as manager  # fixture
from tests.session.test_session_session import session as session  # fixture

PRICE = "com.example.pricealerts"




async def test_a_policy_that_leaves_it_to_the_screen_and_a_tap_that_approves(
        session: Session) -> None:
    async def on_screen(_req: object) -> None:
        return None  # the person answers on the device's screen

    session.confirmation_policy = on_screen  # type: ignore[assignment]
    screen = screen_for(session, None)
    assert isinstance(screen, RelayScreen)
    ps = session.provider_session(session.find_provider(PRICE))
    assert isinstance(ps, ProviderSession)
    created = await ps.execute_tool("create_alert", {"symbol": "ACME", "price": 101.25})
    ex = await ps.execute_tool("delete_alert", {"alert_id": created.value["alert_id"]})
    launch = asyncio.ensure_future(ps.launch_resolution(ex))
    for _ in range(200):
        if any(e.get("event") == "confirmation_request" for e in session.events):
            break
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)
    assert not launch.done()  # nobody answered for the person
    png = await screen.capture()
    assert png.startswith(b"\x89PNG")
    # the Approve button sits at the bottom right of the virtual screen
    what, cid = await screen.send_input("tap", x=WIDTH * 3 // 4, y=HEIGHT - 48)
    assert what == "approve" and cid
    ex = await launch
    assert ex.state == ExecState.SUCCEEDED
    assert session.confirmations == []  # answered on the screen, not by a policy


async def test_no_screen_without_the_ops_or_adb(session: Session) -> None:
    class NoScreen:
        link = type("L", (), {"hello_info": type("H", (), {"capabilities": ("call",)})()})()

    assert screen_for(NoScreen(), None) is None
    assert screen_for(NoScreen(), lambda: object()) is not None  # a phone: adb screencap


async def test_a_phone_confirmation_is_captured_after_the_launch(tmp_path: Path) -> None:
    from inspector.consumer.recorder import Recorder
    from inspector.protocol.exchange import ExchangeKind, ExchangeStatus
    from inspector.session.screenshots import ConfirmationScreenshots, saved_screenshots

    class Phone:  # an adb screen: no relay link, frames captured after the launch
        captures = 0

        async def capture(self) -> bytes:
            Phone.captures += 1
            return b"\x89PNG\r\n\x1a\n" + b"frame"

    class FakeSession:
        def __init__(self) -> None:
            self.recorder = Recorder()
            self.spawner = Spawner()

        def add_exchange_listener(self, f):  # type: ignore[no-untyped-def]
            return self.recorder.add_listener(f)

        def add_event_listener(self, f):  # type: ignore[no-untyped-def]
            pass

    s = FakeSession()
    journal = tmp_path / "s.jsonl"
    keeper = ConfirmationScreenshots(s, Phone(), Path(str(journal) + ".screens"), settle_s=0.01)
    x = s.recorder.start(ExchangeKind.RESOLUTION, "pi_1", "launch_pending_intent",
                         package=PRICE)
    other = s.recorder.start(ExchangeKind.CETP, "a", "list_tools", package=PRICE)
    s.recorder.finish(other, ExchangeStatus.SUCCESS)
    await keeper.aclose()
    assert Phone.captures == 1
    assert saved_screenshots(journal) == {x.id: b"\x89PNG\r\n\x1a\nframe"}
    await s.spawner.cancel_all()
