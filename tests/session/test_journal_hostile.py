"""Hostile and torn journals (issue 12): listed as damaged, append-only, nothing lost;
redaction by structure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.protocol.bundle import to_jsonable
from inspector.session.bundle_file import create_bundle, open_bundle
from inspector.session.journal import (
    JournalError,
    JournalWriter,
    list_sessions,
    parse_journal,
    read_journal,
    seal_torn_tail,
)
from inspector.session.redaction import REDACTED, Redactor
from tests.session.journal_factories import TOKEN, exchange, reply, sample_session, v2_extras


def _good(d: Path, name: str) -> Path:
    w = JournalWriter.create(name=name, directory=d)
    for ex in sample_session():
        w.record_exchange(ex)
    w.close()
    return w.path


def test_deeply_nested_header_is_listed_as_damaged_the_others_still_show(tmp_path) -> None:
    _good(tmp_path, "one")
    _good(tmp_path, "two")
    (tmp_path / "evil.jsonl").write_bytes(b"[" * 200_000 + b"]" * 200_000 + b"\n")
    listed = {s.session_id: s for s in list_sessions(tmp_path)}
    assert len(listed) == 3
    assert listed["evil"].damaged and "too deeply" in listed["evil"].damaged
    assert sorted(s.name for s in listed.values() if not s.damaged) == ["one", "two"]
    with pytest.raises(JournalError, match="too deeply"):
        read_journal(tmp_path / "evil.jsonl")


def test_deep_exchange_line_is_one_damaged_line(tmp_path) -> None:
    p = _good(tmp_path, "s")
    with open(p, "ab") as f:
        f.write(b'{"type":"exchange","exchange":' + b"[" * 100_000 + b"]" * 100_000 + b"}\n")
    c = read_journal(p)
    assert c.damaged_lines == 1 and len(c.exchanges) == 4


def test_continuing_never_truncates_a_last_line_without_newline(tmp_path) -> None:
    p = _good(tmp_path, "s")
    whole = p.read_bytes().rstrip(b"\n")  # the last record is whole, only its newline lost
    p.write_bytes(whole)
    w = JournalWriter.reopen(p)
    w.rename("continued")
    w.close()
    assert p.read_bytes().startswith(whole)
    assert w.torn is not None and w.torn.kept_in is None  # nothing torn to keep aside
    c = read_journal(p)
    assert len(c.exchanges) == 4 and c.damaged_lines == 0 and c.name == "continued"


def test_header_only_journal_without_newline_is_not_wiped(tmp_path) -> None:
    w = JournalWriter.create(name="empty", directory=tmp_path)
    w.close()
    header = w.path.read_bytes().rstrip(b"\n")
    w.path.write_bytes(header)
    w2 = JournalWriter.reopen(w.path)
    w2.record("device", {"model": "X"})
    w2.close()
    assert w.path.read_bytes().startswith(header)
    assert read_journal(w.path).latest("device") == {"model": "X"}


def test_torn_tail_kept_aside_and_reported(tmp_path) -> None:
    p = _good(tmp_path, "s")
    torn = b'{"type":"exchange","exchange":{"id":"half-writ'
    with open(p, "ab") as f:
        f.write(torn)
    found = seal_torn_tail(p)
    assert found is not None and Path(found.kept_in).read_bytes() == torn
    assert found.bytes == len(torn)
    assert p.read_bytes().endswith(torn + b"\n")  # still there: append-only
    assert read_journal(p).damaged_lines == 1


def test_a_record_appended_after_a_torn_line_is_salvaged(tmp_path) -> None:
    """What an older inspector left: a torn line and the next record on one line."""
    p = _good(tmp_path, "s")
    lines = p.read_bytes().splitlines(keepends=True)
    merged = lines[-2][:30] + lines[-1]  # torn + a whole record, no newline between
    p.write_bytes(b"".join(lines[:-2]) + merged)
    c = read_journal(p)
    assert c.damaged_lines == 1
    assert len(c.exchanges) == 4 - 1  # the torn one is lost; the next one is recovered


def test_bundle_create_from_torn_journal_reports_lost_lines(tmp_path) -> None:
    p = _good(tmp_path, "s")
    lines = p.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2][:50] + b"\n"
    p.write_bytes(b"".join(lines))
    report = open_bundle(create_bundle(tmp_path / "b.cetpbundle", read_journal(p)))
    assert report.manifest.lost_lines == 1 and report.warnings


@pytest.mark.parametrize("token", ["success", "execute_tool", "true", "r-1", "list_tools",
                                   "cetp", "virtual"])
def test_a_token_equal_to_common_words_erases_nothing_else(tmp_path, token) -> None:
    w = JournalWriter.create(name="s", directory=tmp_path)
    negotiate = exchange("negotiate", v2_extras({}, token=token),
                         reply({"selected_version": 2, "session_token": token}),
                         decoded={"session_token": token})
    exs = [negotiate] + [exchange("execute_tool", v2_extras({"tool_name": "x"}, token=token),
                                  reply({"kind": "inline", "value": {"ok": "success"}}),
                                  tool="x") for _ in range(7)]
    for ex in exs:
        w.record_exchange(ex)
    w.close()
    c = read_journal(w.path)
    report = open_bundle(create_bundle(tmp_path / "b.cetpbundle", c))
    assert len(report.exchanges) == 8
    assert [e.status.value for e in report.exchanges] == ["success"] * 8
    # the token fields themselves are hidden
    req = report.exchanges[1].request
    assert req["v"]["session_token"] == {"t": "String", "v": REDACTED}
    assert json.loads(report.exchanges[0].response["v"]["data"]["v"])["session_token"] == \
        REDACTED


@settings(max_examples=40, deadline=None)
@given(token=st.text(min_size=1, max_size=30))
def test_redaction_never_changes_anything_but_secret_places(token) -> None:
    data = {"status": "success", "method": "execute_tool", "session_token": token,
            "request": to_jsonable(v2_extras({}, token=token)), "value": {"k": "success"},
            "error_message": f"bad token {token}"}
    out = Redactor().redact(data)
    assert out["status"] == "success" and out["method"] == "execute_tool"
    assert out["value"] == {"k": "success"}
    assert out["session_token"] == REDACTED
    assert out["request"]["v"]["session_token"] == {"t": "String", "v": REDACTED}
    assert out["request"]["v"]["request_id"] == data["request"]["v"]["request_id"]


def test_long_tokens_are_scrubbed_from_free_text_only() -> None:
    r = Redactor()
    out = r.redact({"session_token": TOKEN, "error_message": f"token {TOKEN} expired",
                    "tool": f"x{TOKEN}"})
    assert out["error_message"] == f"token {REDACTED} expired"
    assert out["tool"] == f"x{TOKEN}"  # not free text: left as recorded


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000))
def test_any_bytes_parse_or_raise_journal_error(blob) -> None:
    try:
        parse_journal(blob, "fuzz")
    except JournalError as exc:
        assert "fuzz" in str(exc)
