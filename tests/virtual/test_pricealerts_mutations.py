"""com.example.pricealerts: deduplication, durability and confirmation (spec §4.3, §6)."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from inspector.relay.api import IPC_FAILED, RelayError
from inspector.virtual.apps.pricealerts import PriceAlertsProvider
from inspector.virtual.device import ConfirmationRequest, VirtualDevice
from tests.virtual.phones import V2, BackendPhone, data, error, value

PKG = "com.example.pricealerts"


def provider(device: VirtualDevice) -> PriceAlertsProvider:
    app = device.app(PKG)
    assert isinstance(app, PriceAlertsProvider)
    return app


async def create(v2: V2, price: float = 100.0, rid: str | None = None) -> str:
    return str(
        value(await v2.execute("create_alert", {"symbol": "ACME", "price": price}, request_id=rid))[
            "alert_id"
        ]
    )


async def test_same_request_id_replays_the_outcome(v2: V2, device: VirtualDevice) -> None:
    rid = str(uuid.uuid4())
    first = await create(v2, rid=rid)
    again = await create(v2, rid=rid)
    assert first == again
    assert provider(device).execution_count(rid) == 1
    assert len(value(await v2.execute("list_alerts", {}))["alerts"]) == 1


async def test_same_request_id_with_other_args_is_refused(v2: V2) -> None:
    rid = str(uuid.uuid4())
    await create(v2, rid=rid)
    r = await v2.execute("create_alert", {"symbol": "ACME", "price": 99}, request_id=rid)
    assert error(r) == "INVALID_REQUEST"


async def test_concurrent_same_id_has_one_executor(v2: V2, device: VirtualDevice) -> None:
    rid = str(uuid.uuid4())
    replies = await asyncio.gather(
        *[
            v2.execute("create_alert", {"symbol": "GLOBX", "price": 50}, request_id=rid)
            for _ in range(4)
        ]
    )
    ids = {value(r)["alert_id"] for r in replies}
    assert len(ids) == 1
    assert provider(device).execution_count(rid) == 1


async def test_business_refusal_is_a_stored_terminal_outcome(v2: V2, device: VirtualDevice) -> None:
    rid = str(uuid.uuid4())
    args = {"symbol": "ZZZ", "price": 5}
    assert error(await v2.execute("create_alert", args, request_id=rid)) == "INVALID_ARGS"
    assert error(await v2.execute("create_alert", args, request_id=rid)) == "INVALID_ARGS"
    assert provider(device).execution_count(rid) == 0


async def test_reply_lost_then_retry_does_not_execute_twice(
    v2: V2, phone: Any, device: VirtualDevice
) -> None:
    rid = str(uuid.uuid4())
    args = {"symbol": "ACME", "price": 101}
    await phone.fault("drop_connection")
    with pytest.raises(RelayError):
        await v2.execute("create_alert", args, request_id=rid)
    assert provider(device).execution_count(rid) == 1  # it ran; only the reply was lost
    await phone.reconnect()
    again = await v2.execute("create_alert", args, request_id=rid)  # same id, same session
    assert value(again)["alert_id"].startswith("al_")
    assert provider(device).execution_count(rid) == 1
    assert len(value(await v2.execute("list_alerts", {}))["alerts"]) == 1


async def test_process_death_after_commit(v2: V2, phone: Any, device: VirtualDevice) -> None:
    rid = str(uuid.uuid4())
    await phone.fault("restart_process", package=PKG, when="after_commit")
    with pytest.raises(RelayError) as exc:
        await v2.execute("create_alert", {"symbol": "ACME", "price": 102}, request_id=rid)
    assert exc.value.code == IPC_FAILED
    r = await v2.execute("create_alert", {"symbol": "ACME", "price": 102}, request_id=rid)
    assert error(r) == "NEGOTIATION_REQUIRED"
    await v2.negotiate()
    r = await v2.execute("create_alert", {"symbol": "ACME", "price": 102}, request_id=rid)
    assert value(r)["alert_id"].startswith("al_")
    assert provider(device).execution_count(rid) == 1


async def test_state_survives_a_new_device_on_the_same_state_dir(tmp_path: Path) -> None:
    rid = str(uuid.uuid4())
    dev = VirtualDevice(tmp_path / "s")
    v2 = V2(BackendPhone(dev))
    await v2.negotiate()
    first = await create(v2, rid=rid)
    await dev.aclose()
    dev2 = VirtualDevice(tmp_path / "s")
    try:
        v2b = V2(BackendPhone(dev2))
        await v2b.negotiate()
        assert await create(v2b, rid=rid) == first
        assert provider(dev2).execution_count(rid) == 1
    finally:
        await dev2.aclose()


# --- confirmation (§4.3) ---------------------------------------------------------------------


async def confirm(phone: Any, resolution: Any, approve: bool) -> Any:
    """Launch the PendingIntent and answer the confirmation_request event."""
    launch = asyncio.ensure_future(phone.launch_pending_intent(resolution.id))
    for _ in range(200):
        if phone.events:
            break
        await asyncio.sleep(0.01)
    ev = phone.events.pop()
    assert ev["event"] == "confirmation_request"
    assert await phone.answer_confirmation(ev["confirmation_id"], approve)
    return ev, await launch


async def test_delete_needs_confirmation_then_runs_once(
    v2: V2, phone: Any, device: VirtualDevice
) -> None:
    alert = await create(v2)
    rid = str(uuid.uuid4())
    r = await v2.execute("delete_alert", {"alert_id": alert}, request_id=rid, confirmed=True)
    assert error(r) == "USER_ACTION_REQUIRED"  # a consumer "confirmed" flag means nothing
    res = r["resolution"]
    assert res.immutable is True and res.targets_activity is True
    assert res.creator_package == PKG
    assert len(value(await v2.execute("list_alerts", {}))["alerts"]) == 1  # no effect yet
    ev, result = await confirm(phone, res, True)
    assert result.result_code == -1
    assert ev["action"] == "delete_alert" and ev["parameters"]["alert_id"] == alert
    assert ev["target"] == "Price Alerts" and ev["consequences"]
    done = await v2.execute(
        "delete_alert", {"alert_id": alert}, request_id=rid, resume_token=r["resume_token"]
    )
    assert value(done) == {"alert_id": alert, "deleted": True}
    assert value(await v2.execute("list_alerts", {}))["alerts"] == []
    # the same logical execution retried: same outcome, no second effect
    again = await v2.execute(
        "delete_alert", {"alert_id": alert}, request_id=rid, resume_token=r["resume_token"]
    )
    assert value(again) == value(done)
    assert provider(device).execution_count(rid) == 1


async def test_denial_is_user_cancelled(v2: V2, phone: Any) -> None:
    alert = await create(v2)
    rid = str(uuid.uuid4())
    r = await v2.execute("delete_alert", {"alert_id": alert}, request_id=rid)
    _, result = await confirm(phone, r["resolution"], False)
    assert result.result_code == 0
    r2 = await v2.execute(
        "delete_alert", {"alert_id": alert}, request_id=rid, resume_token=r["resume_token"]
    )
    assert error(r2) == "USER_CANCELLED" and r2["retryable"] is False
    assert len(value(await v2.execute("list_alerts", {}))["alerts"]) == 1


async def test_resume_token_replay_and_changed_args(v2: V2, phone: Any) -> None:
    a1, a2 = await create(v2), await create(v2, 90)
    rid = str(uuid.uuid4())
    r = await v2.execute("delete_alert", {"alert_id": a1}, request_id=rid)
    token = r["resume_token"]
    await confirm(phone, r["resolution"], True)
    changed = await v2.execute("delete_alert", {"alert_id": a2}, request_id=rid, resume_token=token)
    assert error(changed) == "INVALID_REQUEST"
    ok = await v2.execute("delete_alert", {"alert_id": a1}, request_id=rid, resume_token=token)
    assert value(ok)["deleted"] is True
    replay = await v2.execute("delete_alert", {"alert_id": a2}, resume_token=token)
    assert error(replay) == "INVALID_REQUEST"
    assert {a["alert_id"] for a in value(await v2.execute("list_alerts", {}))["alerts"]} == {a2}


async def test_unanswered_confirmation_asks_again(v2: V2) -> None:
    alert = await create(v2)
    rid = str(uuid.uuid4())
    r = await v2.execute("delete_alert", {"alert_id": alert}, request_id=rid)
    r2 = await v2.execute(
        "delete_alert", {"alert_id": alert}, request_id=rid, resume_token=r["resume_token"]
    )
    assert error(r2) == "USER_ACTION_REQUIRED"
    assert r2["resume_token"] == r["resume_token"]


async def test_expired_resume_token(v2: V2, phone: Any, device: VirtualDevice) -> None:
    alert = await create(v2)
    provider(device).CONFIRMATION_TTL_MS = 50
    rid = str(uuid.uuid4())
    r = await v2.execute("delete_alert", {"alert_id": alert}, request_id=rid)
    await asyncio.sleep(0.1)
    _, result = await confirm(phone, r["resolution"], True)
    assert result.result_code == 0  # too late: the screen no longer accepts the answer
    r2 = await v2.execute(
        "delete_alert", {"alert_id": alert}, request_id=rid, resume_token=r["resume_token"]
    )
    assert error(r2) == "INVALID_REQUEST"


async def test_provider_policy_confirms_only_risky_alerts(
    v2: V2, phone: Any, device: VirtualDevice
) -> None:
    assert value(await v2.execute("create_alert", {"symbol": "ACME", "price": 110}))
    answered: list[ConfirmationRequest] = []

    def policy(req: ConfirmationRequest) -> bool:
        answered.append(req)
        return True

    device.confirmation_handler = policy
    rid = str(uuid.uuid4())
    far = {"symbol": "ACME", "price": 500}
    r = await v2.execute("create_alert", far, request_id=rid)
    assert error(r) == "USER_ACTION_REQUIRED"
    assert (await phone.launch_pending_intent(r["resolution"].id)).result_code == -1
    assert answered[0].action == "create_alert" and answered[0].parameters["price"] == "500"
    ok = await v2.execute("create_alert", far, request_id=rid, resume_token=r["resume_token"])
    assert value(ok)["alert_id"]


async def test_answer_for_unknown_confirmation(phone: Any) -> None:
    assert await phone.answer_confirmation("cr_nope", True) is False


async def test_v1_resolution_strings_never_used(v2: V2) -> None:
    alert = await create(v2)
    r = await v2.execute("delete_alert", {"alert_id": alert})
    assert "authorize_intent" not in r
    assert json.loads(json.dumps(r["resume_token"]))


# --- scope grants (AUTH_REQUIRED, §3.4 / §4.3) ---------------------------------------------------


async def sync_watchlist(v2: V2) -> None:
    r = await v2.execute("sync_watchlist", {"symbols": ["ACME", "WAYNE"], "step_ms": 0})
    for _ in range(200):
        op = data(
            await v2.method(
                "get_operation", request_id=r["request_id"], operation_id=data(r)["operation_id"]
            )
        )
        if op["state"] == "succeeded":
            return
        await asyncio.sleep(0.01)
    raise AssertionError(op)


async def test_scope_grant_flow(v2: V2, phone: Any, device: VirtualDevice) -> None:
    await sync_watchlist(v2)
    rid = str(uuid.uuid4())
    args = {"recipient": "ada@example.com"}
    r = await v2.execute("share_watchlist", args, request_id=rid)
    assert error(r) == "AUTH_REQUIRED" and r["retryable"] is False
    assert r["resolution"].immutable and r["resume_token"]
    ev, result = await confirm(phone, r["resolution"], True)
    assert ev["parameters"]["scopes"] == "watchlist.share"
    assert result.result_code == -1
    done = await v2.execute("share_watchlist", args, request_id=rid, resume_token=r["resume_token"])
    assert value(done)["symbols"] == ["ACME", "WAYNE"]
    # the grant holds for this caller: the next share needs no screen
    again = await v2.execute("share_watchlist", {"recipient": "bob@example.com"})
    assert value(again)["recipient"] == "bob@example.com"
    assert provider(device).execution_count(rid) == 1


async def test_scope_grant_denied(v2: V2, phone: Any) -> None:
    rid = str(uuid.uuid4())
    args = {"recipient": "eve@example.com"}
    r = await v2.execute("share_watchlist", args, request_id=rid)
    await confirm(phone, r["resolution"], False)
    r2 = await v2.execute("share_watchlist", args, request_id=rid, resume_token=r["resume_token"])
    assert error(r2) == "USER_CANCELLED"
    r3 = await v2.execute("share_watchlist", args)
    assert error(r3) == "AUTH_REQUIRED"  # nothing was granted


async def test_confirmation_lifetime_is_a_setting(tmp_path: Path) -> None:
    """No subclass needed: the provider, or the whole device, takes a lifetime."""
    assert PriceAlertsProvider().confirmation_ttl_ms == 300_000
    assert PriceAlertsProvider(confirmation_ttl_ms=1500).confirmation_ttl_ms == 1500
    assert PriceAlertsProvider.CONFIRMATION_TTL_MS == 300_000  # the class default is intact
    with pytest.raises(ValueError, match="positive int"):
        PriceAlertsProvider(confirmation_ttl_ms=0)
    with pytest.raises(ValueError, match="positive int"):
        VirtualDevice(tmp_path / "bad", confirmation_ttl_ms=-5)
    device = VirtualDevice(tmp_path / "state", confirmation_ttl_ms=80)
    try:
        assert provider(device).confirmation_ttl_ms == 80
        assert device.app("com.example.badprovider").confirmation_ttl_ms == 80  # type: ignore[attr-defined]
        phone = BackendPhone(device)
        v2 = V2(phone)
        await v2.negotiate()
        alert = await create(v2)
        rid = str(uuid.uuid4())
        r = await v2.execute("delete_alert", {"alert_id": alert}, request_id=rid)
        row = provider(device).store.one(
            "SELECT expires_ms FROM confirmations WHERE request_id=?", rid
        )
        assert row is not None
        await asyncio.sleep(0.12)
        r2 = await v2.execute(
            "delete_alert", {"alert_id": alert}, request_id=rid, resume_token=r["resume_token"]
        )
        assert error(r2) == "INVALID_REQUEST" and "expired" in r2["error_message"]
    finally:
        await device.aclose()
