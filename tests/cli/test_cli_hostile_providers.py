"""Hostile-provider sweep (issue 12): every case of `plugins/hostile_envelopes.py` answers one
method with hostile data; the CLI must end with a clear, specific outcome — the expected error
code, never `INTERNAL … inspector bug`, no traceback, no hang, bounded plain-text output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli.main import main
from tests.cli.plugins.hostile_envelopes import CASES

PLUGIN = Path(__file__).parent / "plugins" / "hostile_envelopes.py"
COMMAND = {"list_tools": "tools", "negotiate": "negotiate", "get_provider_info": "info",
           "execute_tool": "call"}
M = "MALFORMED_REPLY"
#: case → the error code the command must end with (None: it succeeds, with findings)
EXPECTED: dict[str, str | None] = {
    "status_int": M, "status_array": M, "data_int": M, "data_bundle": M, "data_missing": M,
    "data_deep": M, "data_not_json": M, "request_id_int": M, "pv_string": M,
    "empty_bundle": M, "error_fields_odd": M, "error_retry_negative": M,
    "error_retry_huge": "RATE_LIMITED", "tools_not_list": M, "tools_of_ints": None,
    "tools_10000": "TOO_LARGE", "tool_name_1mb": "TOO_LARGE", "tool_desc_1mb_evil": "TOO_LARGE",
    "tool_name_int": None, "schema_not_object": None, "schema_string": None,
    "schema_remote_ref": None, "schema_recursive_ref": None, "schema_bad_type": None,
    "revision_int": M, "revision_every_call": None, "revision_nested": M, "data_array": M,
    "data_null": M,
    "neg_limits_negative": None, "neg_limits_strings": M, "neg_caps_nested": M,
    "neg_token_int": M, "neg_token_huge": None, "neg_version_string": M,
    "neg_expires_odd": M, "neg_pv_array": M, "neg_data_deep": M,
    "result_deep": M, "result_evil_text": M, "result_kind_odd": M, "file_size_zero": M,
    "file_size_negative": M, "file_size_2_63": M, "error_details_deep": "INTERNAL",
    "error_code_unknown": M, "op_poll_negative": M, "op_poll_huge": None,
    "info_nested": M,
}


def _argv(case: str) -> list[str]:
    method = CASES[case][0]
    argv = [COMMAND[method], f"com.example.he.{case}"]
    if method == "execute_tool":
        argv += ["get_quote", "--args", '{"symbol": "ACME"}']
    return [*argv, "--virtual-plugin", str(PLUGIN)]


def test_every_case_has_an_expectation() -> None:
    assert set(EXPECTED) == set(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_reply_json(case: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main([*_argv(case), "--json"])
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    assert "Traceback" not in cap.err and "inspector bug" not in cap.out + cap.err
    assert len(cap.out) < 1_100_000  # bounded by the relay's 1 MiB frame
    want = EXPECTED[case]
    got = (doc.get("error") or {}).get("code")
    if got is None and isinstance(doc.get("execution"), dict):  # a call's own outcome
        got = (doc["execution"].get("error") or {}).get("error_code")
    if want is None:
        assert code == 0 and doc["ok"] is True, doc.get("error")
    else:
        assert code != 0 and got == want, (code, got, doc.get("error"))


HUMAN = ["data_not_json", "tool_desc_1mb_evil", "error_details_deep", "error_code_unknown",
         "result_evil_text", "neg_limits_negative", "op_poll_huge", "error_retry_huge",
         "tools_of_ints", "revision_every_call"]


@pytest.mark.parametrize("case", HUMAN)
def test_hostile_reply_human(case: str, capsys: pytest.CaptureFixture[str]) -> None:
    main(_argv(case))
    cap = capsys.readouterr()
    text = cap.out + cap.err
    assert "Traceback" not in text and "inspector bug" not in text
    for raw in ("\x1b", "\x00", "\u202e"):
        assert raw not in text
    assert len(text) < 20_000  # long provider text is cut, not dumped


def test_huge_poll_after_does_not_hang(capsys: pytest.CaptureFixture[str]) -> None:
    """poll_after_ms 2^63 used to make `call` sleep forever; now it stops and says why."""
    assert main([*_argv("op_poll_huge"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["execution"]["state"] == "accepted"
    assert "poll again after 9223372036854775808 ms" in doc["execution"]["message"]


def test_limit_below_the_floor_is_named_as_the_providers_bug(
        capsys: pytest.CaptureFixture[str]) -> None:
    main(["call", "com.example.he.neg_limits_negative", "get_quote", "--args",
          '{"symbol": "ACME"}', "--virtual-plugin", str(PLUGIN)])
    err = capsys.readouterr().err
    assert "REQUEST_TOO_LARGE" in err and "below the §2.2 minimum 65536" in err
