"""`--wake` end to end: a cold provider (the `cold_start` fault) on the standalone virtual
device, reached over a real socket as a user would."""

from __future__ import annotations

from tests.cli.conftest import Cli

UNKNOWN = "provider rejected the call: Unknown authority com.example.pricealerts.clawseed.tools"

PRICE = "com.example.pricealerts"


def arm_cold(cli: Cli, mode: str = "acquire") -> None:
    """Arm the fault with the CLI's own command (its default mode is acquire)."""
    extra = [] if mode == "acquire" else ["--mode", mode]
    r = cli("virtual", "fault", "cold_start", "--package", PRICE, *extra)
    assert r.code == 0 and r.doc["armed"] is True, r.out
    assert r.doc["args"].get("mode") == (None if mode == "acquire" else mode)


def summary(steps: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return [(s["step"], s["method"], s.get("mode"), s["status"]) for s in steps]


def test_without_wake_the_error_says_what_to_try(cli: Cli) -> None:
    arm_cold(cli)
    r = cli("call", PRICE, "list_alerts")
    assert r.code == 3, r.out
    err = r.doc["error"]
    assert err["code"] == "NOT_FOUND" and err["message"] == UNKNOWN
    assert "--wake" in err["hint"] and "not running" in err["hint"]
    assert "wake_steps" not in r.doc


def test_wake_acquire_then_retry(cli: Cli) -> None:
    arm_cold(cli)
    r = cli("call", PRICE, "list_alerts", "--wake")
    assert r.code == 0, r.out
    assert r.doc["execution"]["state"] == "succeeded"
    steps = r.doc["wake_steps"]
    assert summary(steps) == [
        ("failed_call", "negotiate", None, "transport_error"),
        ("wake", "wake_provider", "acquire", "success"),
        ("retry", "negotiate", None, "success"),
    ]
    assert steps[0]["error_code"] == "NOT_FOUND" and steps[0]["error_message"] == UNKNOWN
    assert "process started" in steps[1]["detail"]


def test_wake_falls_back_to_the_launch_intent(cli: Cli) -> None:
    arm_cold(cli, "launch")
    r = cli("--wake", "call", PRICE, "create_alert", "--args", '{"symbol": "GLOBX", "price": 7}',
            "--approve")
    assert r.code == 0, r.out
    steps = r.doc["wake_steps"]
    assert summary(steps) == [
        ("failed_call", "negotiate", None, "transport_error"),
        ("wake", "wake_provider", "acquire", "transport_error"),
        ("wake", "wake_provider", "launch", "success"),
        ("retry", "negotiate", None, "success"),
    ]
    assert steps[1]["error_code"] == "WAKE_FAILED"
    assert steps[1]["detail"].startswith("no provider with authority")
    listed = cli("call", PRICE, "list_alerts", "--wake")  # still warm: no wake needed
    assert listed.code == 0 and listed.doc["wake_steps"] == []
    symbols = [a["symbol"] for a in listed.doc["execution"]["value"]["alerts"]]
    assert symbols.count("GLOBX") == 1


def test_wake_steps_in_text_mode(cli: Cli) -> None:
    arm_cold(cli)
    r = cli("call", PRICE, "list_alerts", "--wake", json_out=False)
    assert r.code == 0, r.err
    lines = [ln for ln in r.err.splitlines() if ln.startswith("wake: ")]
    assert len(lines) == 3
    assert "wake_provider(acquire) success" in lines[1]
