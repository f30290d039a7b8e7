"""The `cold_start` fault: a provider whose process a ROM does not start for `call`.

Runs against the backend and through a real socket (the `phone` fixture), so the desktop
sees the same relay error code and message as from the phone relay (AndroidPlatform.call
maps ContentResolver's IllegalArgumentException to NOT_FOUND "provider rejected the call: …").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from inspector.relay.api import BAD_ARGS, NOT_FOUND, RelayError
from inspector.virtual.device import VirtualDevice
from tests.virtual.phones import FINANCE_AUTH, PRICE_AUTH, V2, value

PRICE = "com.example.pricealerts"
ANDROID_PLATFORM = (
    Path(__file__).resolve().parents[2]
    / "relay_apk/src/app/org/cetp/inspector/relay/app/AndroidPlatform.java"
)
REJECTED_PREFIX = "provider rejected the call: "


async def _assert_cold(c: V2) -> RelayError:
    with pytest.raises(RelayError) as exc:
        await c.negotiate()
    assert exc.value.code == NOT_FOUND
    assert exc.value.message == f"{REJECTED_PREFIX}Unknown authority {PRICE_AUTH}"
    return exc.value


def test_the_message_shape_is_the_java_relays() -> None:
    """The prefix the virtual device uses is the one the phone relay really sends."""
    java = ANDROID_PLATFORM.read_text(encoding="utf-8")
    assert "catch (IllegalArgumentException e)" in java
    assert f'RelayException.NOT_FOUND, "{REJECTED_PREFIX}"' in java


async def test_acquire_wakes_a_cold_provider(phone: Any, device: VirtualDevice) -> None:
    app = device.app(PRICE)
    assert await phone.fault("cold_start", package=PRICE)
    c = V2(phone)
    await _assert_cold(c)
    assert not app.process_running
    starts = app.process_starts
    ok, detail = await phone.wake_provider(PRICE_AUTH, PRICE, "acquire")
    assert ok and "provider acquired" in detail and "process started" in detail
    assert app.process_running and app.process_starts == starts + 1
    assert (await c.negotiate())["status"] == "success"
    # a warm provider stays reachable; other apps were never cold
    assert value(await c.execute("list_alerts", {})) is not None
    assert (await phone.call(FINANCE_AUTH, "list_tools", None))["status"] == "success"


async def test_launch_mode_needs_the_launch_intent(phone: Any, device: VirtualDevice) -> None:
    assert await phone.fault("cold_start", package=PRICE, mode="launch")
    c = V2(phone)
    await _assert_cold(c)
    ok, detail = await phone.wake_provider(PRICE_AUTH, PRICE, "acquire")
    assert not ok and detail == f"no provider with authority '{PRICE_AUTH}'"
    await _assert_cold(c)
    ok, detail = await phone.wake_provider(PRICE_AUTH, PRICE, "launch")
    assert ok and detail.startswith(f"launched {PRICE}")
    assert (await c.negotiate())["status"] == "success"


@pytest.mark.parametrize("stop", ["force_stop", "restart_process"])
async def test_a_stopped_process_is_cold_again(phone: Any, stop: str) -> None:
    assert await phone.fault("cold_start", package=PRICE)
    assert (await phone.wake_provider(PRICE_AUTH, PRICE, "acquire"))[0]
    c = V2(phone)
    assert (await c.negotiate())["status"] == "success"
    if stop == "force_stop":
        assert await phone.force_stop(PRICE)
    else:
        assert await phone.fault("restart_process", package=PRICE)
    await _assert_cold(c)


async def test_a_process_killed_after_commit_is_cold_again(phone: Any) -> None:
    assert await phone.fault("cold_start", package=PRICE)
    assert (await phone.wake_provider(PRICE_AUTH, PRICE, "acquire"))[0]
    c = V2(phone)
    await c.negotiate()
    assert await phone.fault("restart_process", package=PRICE, when="after_commit")
    with pytest.raises(RelayError):  # the app dies right after committing
        await c.execute("create_alert", {"symbol": "ACME", "price": 100})
    await _assert_cold(c)


async def test_off_disarms_and_bad_arguments_are_refused(phone: Any) -> None:
    assert await phone.fault("cold_start", package=PRICE)
    c = V2(phone)
    await _assert_cold(c)
    assert await phone.fault("cold_start", package=PRICE, mode="off")
    assert (await c.negotiate())["status"] == "success"  # started on first call, as usual
    with pytest.raises(RelayError) as exc:
        await phone.fault("cold_start", package=PRICE, mode="sometimes")
    assert exc.value.code == BAD_ARGS and "acquire" in exc.value.message
    with pytest.raises(RelayError) as exc:
        await phone.fault("cold_start")
    assert exc.value.code == BAD_ARGS
    with pytest.raises(RelayError) as exc:
        await phone.fault("cold_start", package="com.not.there")
    assert exc.value.code == NOT_FOUND
