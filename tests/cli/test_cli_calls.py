"""The flows of issue 3's "Done when", driven through the CLI and a real socket."""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path

from tests.cli.conftest import Cli

PRICE = "com.example.pricealerts"
ACME_QUOTE = 101.25  # the virtual provider's quote: an alert at the quote needs no confirmation


def create_alert(cli: Cli) -> str:
    r = cli("call", PRICE, "create_alert", "--args",
            json.dumps({"symbol": "ACME", "price": ACME_QUOTE}))
    assert r.code == 0, r.out
    return r.doc["execution"]["value"]["alert_id"]


def alert_ids(cli: Cli) -> set[str]:
    r = cli("call", PRICE, "list_alerts")
    assert r.code == 0, r.out
    return {a["alert_id"] for a in r.doc["execution"]["value"]["alerts"]}


def test_v1_call(cli: Cli) -> None:
    r = cli("call", "com.example.finance", "get_portfolio_holdings", "--args",
            '{"account_type": "fund"}')
    assert r.code == 0, r.out
    ex = r.doc["execution"]
    assert ex["protocol_version"] == 1 and ex["state"] == "succeeded"
    assert {h["account_type"] for h in ex["value"]["holdings"]} == {"fund"}


def test_v1_error_is_a_provider_error(cli: Cli) -> None:
    r = cli("call", "com.example.finance", "get_transactions", "--args", "{}")
    assert r.code == 1
    assert r.doc["ok"] is False and r.doc["error"]["code"] == "INVALID_ARGS"


def test_v2_read_call(cli: Cli) -> None:
    r = cli("call", PRICE, "get_quote", "--args", '{"symbol": "ACME"}')
    assert r.code == 0, r.out
    ex = r.doc["execution"]
    assert ex["protocol_version"] == 2 and ex["value"]["price"] == ACME_QUOTE
    assert ex["output_findings"] and all(f["ok"] for f in ex["output_findings"])
    uuid.UUID(ex["request_id"])


def test_dual_stack_v1_view_refuses_mutations(cli: Cli) -> None:
    r = cli("call", PRICE, "create_alert", "--v1", "--args",
            json.dumps({"symbol": "ACME", "price": ACME_QUOTE}))
    assert r.code == 1
    assert r.doc["error"]["code"] == "TOOL_NOT_FOUND"


def test_deadline_is_sent_and_enforced(cli: Cli) -> None:
    """Each of the next three IPCs (negotiate, list_tools, execute_tool) arrives 250 ms
    late, so a 100 ms deadline has passed when the provider sees the execution."""
    before = alert_ids(cli)
    assert cli("virtual", "fault", "delay", "--package", PRICE, "--ms", "250",
               "--count", "3").code == 0
    r = cli("call", PRICE, "create_alert", "--args",
            json.dumps({"symbol": "ACME", "price": ACME_QUOTE}), "--deadline-ms", "100")
    assert r.code == 1, r.out
    assert r.doc["error"]["code"] == "DEADLINE_EXCEEDED"
    assert alert_ids(cli) == before  # checked before the side effect (§4.1)


def test_confirmation_approved_deletes(cli: Cli) -> None:
    alert = create_alert(cli)
    r = cli("call", PRICE, "delete_alert", "--args", json.dumps({"alert_id": alert}), "--approve")
    assert r.code == 0, r.out
    ex = r.doc["execution"]
    assert ex["resolution_result"] == "approved"
    assert [a["outcome"] for a in ex["attempts"]] == ["error:USER_ACTION_REQUIRED", "success"]
    assert ex["attempts"][1]["resumed"] is True
    assert ex["value"] == {"alert_id": alert, "deleted": True}
    assert alert not in alert_ids(cli)


def test_confirmation_denied_keeps_the_alert(cli: Cli) -> None:
    alert = create_alert(cli)
    r = cli("call", PRICE, "delete_alert", "--args", json.dumps({"alert_id": alert}), "--deny")
    assert r.code == 1
    assert r.doc["error"]["code"] == "USER_CANCELLED"
    assert r.doc["execution"]["resolution_result"] == "declined"
    assert alert in alert_ids(cli)


def test_confirmation_without_an_answer_explains_what_to_do(cli: Cli) -> None:
    alert = create_alert(cli)
    r = cli("call", PRICE, "delete_alert", "--args", json.dumps({"alert_id": alert}))
    assert r.code == 1
    assert r.doc["error"]["code"] == "USER_ACTION_REQUIRED"
    assert "--approve" in r.doc["error"]["hint"]
    assert r.doc["execution"]["resume_token"]
    assert alert in alert_ids(cli)


def test_token_replay_and_changed_args_are_rejected(cli: Cli) -> None:
    alert = create_alert(cli)
    args = json.dumps({"alert_id": alert})
    first = cli("call", PRICE, "delete_alert", "--args", args)
    rid = first.doc["execution"]["request_id"]
    token = first.doc["execution"]["resume_token"]
    # approving later with the same request id reuses the pending confirmation and token
    done = cli("call", PRICE, "delete_alert", "--args", args, "--request-id", rid, "--approve")
    assert done.code == 0, done.out
    # the same request id again: the same terminal outcome, not a second execution
    again = cli("call", PRICE, "delete_alert", "--args", args, "--request-id", rid)
    assert again.code == 0 and again.doc["execution"]["value"] == {"alert_id": alert,
                                                                    "deleted": True}
    # replaying the used resume token on a new execution is refused
    replay = cli("call", PRICE, "delete_alert", "--args", args, "--request-id",
                 str(uuid.uuid4()), f"--resume-token={token}")  # tokens may start with "-"
    assert replay.code == 1 and replay.doc["error"]["code"] == "INVALID_REQUEST"
    # reusing the request id with different arguments is refused (§6)
    changed = cli("call", PRICE, "delete_alert", "--args", json.dumps({"alert_id": "al_other"}),
                  "--request-id", rid)
    assert changed.code == 1 and changed.doc["error"]["code"] == "INVALID_REQUEST"


def test_resume_token_bound_to_original_args(cli: Cli) -> None:
    alert = create_alert(cli)
    first = cli("call", PRICE, "delete_alert", "--args", json.dumps({"alert_id": alert}))
    ex = first.doc["execution"]
    r = cli("call", PRICE, "delete_alert", "--args", json.dumps({"alert_id": alert + "x"}),
            "--request-id", ex["request_id"], f"--resume-token={ex['resume_token']}")
    assert r.code == 1 and r.doc["error"]["code"] == "INVALID_REQUEST"
    assert "changed" in r.doc["error"]["message"]
    assert alert in alert_ids(cli)


def test_async_operation_success_with_progress(cli: Cli) -> None:
    r = cli("call", PRICE, "sync_watchlist", "--args",
            '{"symbols": ["ACME", "GLOBX", "INITECH"], "step_ms": 30}')
    assert r.code == 0, r.out
    ex = r.doc["execution"]
    assert ex["operation_id"] and ex["operation"]["state"] == "succeeded"
    assert ex["value"]["synced"] == 3
    assert f"operation {ex['operation_id']}" in r.err  # progress on stderr


def test_async_operation_failure(cli: Cli) -> None:
    r = cli("call", PRICE, "sync_watchlist", "--args",
            '{"symbols": ["ACME", "NOPE"], "step_ms": 10}')
    assert r.code == 1
    assert r.doc["execution"]["operation"]["state"] == "failed"
    assert r.doc["error"]["code"] == "INVALID_ARGS"


def test_no_wait_then_ops_get_and_list(cli: Cli) -> None:
    r = cli("call", PRICE, "sync_watchlist", "--args",
            '{"symbols": ["ACME", "GLOBX"], "step_ms": 50}', "--no-wait")
    assert r.code == 0
    ex = r.doc["execution"]
    assert ex["state"] == "accepted"
    listed = cli("ops", "list")
    assert [o["operation_id"] for o in listed.doc["operations"]] == [ex["operation_id"]]
    got = cli("ops", "get", ex["operation_id"], "--wait")
    assert got.code == 0, got.out
    assert got.doc["execution"]["request_id"] == ex["request_id"]
    assert got.doc["execution"]["value"]["synced"] == 2
    assert cli("ops", "list").doc["operations"][0]["last_state"] == "succeeded"


def test_cancel_before_commit_is_confirmed(cli: Cli) -> None:
    r = cli("call", PRICE, "sync_watchlist", "--args",
            '{"symbols": ["ACME", "GLOBX", "INITECH", "STARK"], "step_ms": 1000}', "--no-wait")
    op = r.doc["execution"]["operation_id"]
    c = cli("ops", "cancel", op)
    assert c.code == 0, c.out
    assert c.doc["cancel"]["confirmed_cancelled"] is True
    assert c.doc["execution"]["operation"]["state"] == "cancelled"


def test_cancel_after_commit_is_not_cancelled(cli: Cli) -> None:
    r = cli("call", PRICE, "sync_watchlist", "--args", '{"symbols": ["ACME"], "step_ms": 0}',
            "--no-wait")
    op = r.doc["execution"]["operation_id"]
    assert cli("ops", "get", op, "--wait").code == 0
    c = cli("ops", "cancel", op)
    assert c.code == 1
    assert c.doc["cancel"]["confirmed_cancelled"] is False
    assert c.doc["cancel"]["final_state"] == "succeeded"
    assert c.doc["error"]["code"] in ("CONFLICT", "NOT_CANCELLED")


def test_ops_get_of_an_unknown_operation_is_a_usage_error(cli: Cli) -> None:
    r = cli("ops", "get", "op_nope")
    assert r.code == 2 and r.doc["error"]["code"] == "UNKNOWN_OPERATION"


def test_provider_restart_mid_operation_runs_once(cli: Cli) -> None:
    r = cli("call", PRICE, "sync_watchlist", "--args",
            '{"symbols": ["ACME", "GLOBX", "INITECH"], "step_ms": 200}', "--no-wait")
    ex = r.doc["execution"]
    restart = cli("virtual", "fault", "restart_process", "--package", PRICE)
    assert restart.code == 0 and restart.doc["armed"] is True
    got = cli("ops", "get", ex["operation_id"], "--wait")
    assert got.code == 0, got.out
    assert got.doc["execution"]["value"]["synced"] == 3
    # the same request id after the restart: the same operation, not a second execution
    again = cli("call", PRICE, "sync_watchlist", "--args",
                '{"symbols": ["ACME", "GLOBX", "INITECH"], "step_ms": 200}',
                "--request-id", ex["request_id"])
    assert again.code == 0, again.out
    assert again.doc["execution"]["operation_id"] in (None, ex["operation_id"])
    assert again.doc["execution"]["value"]["synced"] == 3


def test_large_result_verified_and_saved(cli: Cli, tmp_path: Path) -> None:
    target = tmp_path / "history.json"
    r = cli("call", PRICE, "export_history", "--args", '{"bytes": 2000000}', "--save",
            str(target))
    assert r.code == 0, r.out
    verdict = r.doc["execution"]["file_verdict"]
    assert verdict["ok"] and verdict["bytes_read"] == 2_000_000
    assert {c["name"]: c["status"] for c in verdict["checks"]}["sha256"] == "pass"
    data = target.read_bytes()
    assert len(data) == 2_000_000
    assert hashlib.sha256(data).hexdigest() == verdict["sha256"]
    assert r.doc["execution"]["file"]["sha256"] == verdict["sha256"]
    assert r.doc["saved_to"] == str(target)


def test_digest_mismatch_is_a_verification_failure(cli: Cli, tmp_path: Path) -> None:
    assert cli("virtual", "fault", "corrupt_digest", "--package", PRICE).code == 0
    target = tmp_path / "bad.json"
    r = cli("call", PRICE, "export_history", "--args", '{"bytes": 600000}', "--save",
            str(target))
    assert r.code == 4, r.out
    assert not target.exists() and r.doc["saved_to"] is None  # bad bytes are not handed on
    assert r.doc["error"]["code"] == "VERIFICATION_FAILED"
    checks = {c["name"]: c["status"] for c in r.doc["execution"]["file_verdict"]["checks"]}
    assert checks["sha256"] == "fail"


def test_read_limit_is_enforced(cli: Cli) -> None:
    r = cli("call", PRICE, "export_history", "--args", '{"bytes": 600000}',
            "--max-read-bytes", "100000")
    assert r.code == 4
    checks = {c["name"]: c["status"] for c in r.doc["execution"]["file_verdict"]["checks"]}
    assert checks["read_limit"] == "fail"


def test_result_too_large_without_the_capability(cli: Cli) -> None:
    r = cli("call", PRICE, "export_history", "--args", '{"bytes": 600000}', "--capabilities",
            "async_operations,cancellation")
    assert r.code == 1
    assert r.doc["error"]["code"] == "RESULT_TOO_LARGE"
    assert r.doc["error"]["retryable"] is False


def test_extension_service_bridge(cli: Cli) -> None:
    r = cli("ext-call", "hello_world", "greet", "--args", '{"name": "Ada"}')
    assert r.code == 0, r.out
    assert r.doc["bridge"] == "service"
    assert "Ada" in r.doc["reply"]["decoded"]["greeting"]


def test_extension_unknown_function_is_an_in_band_error(cli: Cli) -> None:
    r = cli("ext-call", "org.ethereumphone.extensionexample", "nope", "--args", "{}")
    assert r.code == 1
    assert r.doc["error"]["code"] == "IN_BAND_ERROR"


def test_extension_provider_bridge(cli: Cli) -> None:
    r = cli("ext-call", "unit_converter", "convert_length", "--args",
            '{"value": 1, "from": "km", "to": "m"}')
    assert r.code == 0, r.out
    assert r.doc["bridge"] == "provider"
    assert "1000" in r.doc["reply"]["result"]


def test_extension_broadcast_bridge(cli: Cli) -> None:
    r = cli("ext-call", "dice", "roll_dice", "--args", '{"sides": 6, "count": 3, "seed": 7}')
    assert r.code == 0, r.out
    assert r.doc["bridge"] == "broadcast"
    assert r.doc["reply"]["outcome"] == "result"


def test_extension_activity_bridge_needs_approval(cli: Cli) -> None:
    refused = cli("ext-call", "flashlight", "toggle_flashlight", "--args", '{"on": true}')
    assert refused.code == 2 and refused.doc["error"]["code"] == "APPROVAL_REQUIRED"
    r = cli("ext-call", "flashlight", "toggle_flashlight", "--args", '{"on": true}',
            "--approve")
    assert r.code == 0, r.out
    assert r.doc["bridge"] == "activity" and r.doc["reply"]["launched"] is True


def test_extension_wrong_bridge_is_a_usage_error(cli: Cli) -> None:
    r = cli("ext-call", "hello_world", "greet", "--args", '{"name": "x"}', "--bridge",
            "broadcast")
    assert r.code == 2 and r.doc["error"]["code"] == "NO_BRIDGE"


def test_connection_dropped_during_negotiation_is_recovered(cli: Cli) -> None:
    assert cli("virtual", "fault", "drop_connection").code == 0
    r = cli("call", PRICE, "get_quote", "--args", '{"symbol": "GLOBX"}')
    assert r.code == 0, r.out
    assert r.doc["execution"]["value"]["symbol"] == "GLOBX"


def test_provider_dies_after_commit_and_the_retry_does_not_execute_twice(cli: Cli) -> None:
    before = alert_ids(cli)
    armed = cli("virtual", "fault", "restart_process", "--package", PRICE, "--when",
                "after_commit")
    assert armed.code == 0
    r = cli("call", PRICE, "create_alert", "--args",
            json.dumps({"symbol": "INITECH", "price": 12.34}))
    assert r.code == 0, r.out
    attempts = r.doc["execution"]["attempts"]
    assert len(attempts) >= 2 and attempts[-1]["outcome"] == "success"
    assert attempts[0]["outcome"].startswith(("transport:", "error:"))
    new = alert_ids(cli) - before
    assert len(new) == 1  # committed once, although the first reply never came
    assert r.doc["execution"]["value"]["alert_id"] in new
