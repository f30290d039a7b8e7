from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from inspector.consumer.recorder import Recorder
from inspector.protocol.bundle import Bundle, Int
from inspector.protocol.exchange import ExchangeKind, ExchangeStatus
from inspector.session.journal import (
    FORMAT_VERSION,
    HOME_ENV,
    REDACTED,
    JournalError,
    JournalWriter,
    Redactor,
    delete_session,
    device_facts,
    export_session,
    list_sessions,
    migrate_file,
    open_session,
    read_journal,
    rename_session,
    sessions_dir,
)
from tests.relay.fakes import FakeBackend
from tests.session.journal_factories import RESUME, TOKEN, sample_session

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).resolve().parents[2]


def test_sessions_dir_honours_the_home_override(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HOME_ENV, str(tmp_path / "home"))
    assert sessions_dir() == tmp_path / "home" / "sessions"
    monkeypatch.delenv(HOME_ENV)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert sessions_dir() == tmp_path / "xdg" / "cetp-inspector" / "sessions"


def test_recorder_exchanges_are_journaled_when_finished(tmp_path: Path) -> None:
    rec = Recorder(device="virtual")
    with JournalWriter.create(name="demo", device={"serial": "virtual"}, directory=tmp_path) as w:
        detach = w.attach(rec)
        x = rec.start(ExchangeKind.CETP, "a.b", "negotiate", request=Bundle(v=Int(2)))
        assert len(w.path.read_bytes().splitlines()) == 1  # pending: not written
        rec.finish(x, ExchangeStatus.SUCCESS, response=Bundle(status="success"))
        rec.add_findings(x, [])  # republished: written again, the last line wins
        w.record("device", {"model": "Pixel 8", "release": "15"})
        detach()
        y = rec.start(ExchangeKind.CETP, "a.b", "list_tools")
        rec.finish(y, ExchangeStatus.SUCCESS)  # after detach: not journaled
    lines = w.path.read_bytes().splitlines()
    header = json.loads(lines[0])
    assert header["format"] == "cetp-inspector-journal" and header["version"] == FORMAT_VERSION
    assert [json.loads(line)["type"] for line in lines[1:]] == ["exchange", "exchange", "device"]
    back = read_journal(w.path)
    assert [e.id for e in back.exchanges] == [x.id]
    assert back.exchanges[0].response == {
        "t": "Bundle",
        "v": {"status": {"t": "String", "v": "success"}},
    }
    assert back.latest("device") == {"model": "Pixel 8", "release": "15"}
    assert back.damaged_lines == 0 and back.migrated_from is None


def test_list_rename_open_delete(tmp_path: Path) -> None:
    a = JournalWriter.create(name="first", directory=tmp_path)
    for ex in sample_session():
        a.record_exchange(ex)
    a.close()
    b = JournalWriter.create(name="second", directory=tmp_path, session_id="fixed-id")
    b.close()
    listed = {s.session_id: s for s in list_sessions(tmp_path)}
    assert set(listed) == {a.session_id, "fixed-id"}
    assert listed[a.session_id].exchange_lines == 4 and listed[a.session_id].name == "first"
    rename_session("fixed-id", "renamed", tmp_path)
    assert {s.name for s in list_sessions(tmp_path)} == {"first", "renamed"}
    assert open_session("fixed-id", tmp_path).name == "renamed"
    delete_session("fixed-id", tmp_path)
    assert [s.session_id for s in list_sessions(tmp_path)] == [a.session_id]
    with pytest.raises(JournalError, match="no session"):
        open_session("fixed-id", tmp_path)
    with pytest.raises(JournalError, match="invalid session id"):
        open_session("../etc/passwd", tmp_path)


def test_v0_journal_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "legacy-0001.jsonl"
    shutil.copy(FIXTURES / "journal-v0.jsonl", path)
    contents = read_journal(path)
    assert contents.migrated_from == 0
    assert contents.name == "Old price alerts session"
    assert contents.header.device == {"serial": "emulator-5554"}
    assert contents.header.created_ms == pytest.approx(1764500000500.0)
    a, b = contents.exchanges
    assert (a.id, a.started_ms, a.finished_ms) == ("ex-a", 1764500001000.0, 1764500001250.0)
    assert b.error_code == "INVALID_ARGUMENT" and b.error_message == "symbol is required"
    assert contents.damaged_lines == 1  # the fixture's torn last line
    assert migrate_file(path) == 0
    assert (tmp_path / "legacy-0001.v0.bak").exists()
    again = read_journal(path)
    assert again.migrated_from is None and [e.id for e in again.exchanges] == ["ex-a", "ex-b"]
    assert migrate_file(path) is None
    w = JournalWriter.reopen(path)
    w.rename("continued")
    w.close()
    assert read_journal(path).name == "continued"


def test_unreadable_journals_say_why(tmp_path: Path) -> None:
    bad = tmp_path / "x.jsonl"
    bad.write_text("not json\n")
    with pytest.raises(JournalError, match="not a journal header"):
        read_journal(bad)
    bad.write_text('{"format": "cetp-inspector-journal", "version": 99}\n')
    with pytest.raises(JournalError, match="newer than this inspector"):
        read_journal(bad)
    listed = list_sessions(tmp_path)  # listed as damaged, not hidden (issue 12)
    assert [(s.session_id, s.exchange_count) for s in listed] == [("x", 0)]
    assert "not supported" in (listed[0].damaged or "")


_WRITER = textwrap.dedent(
    """
    import sys
    from inspector.consumer.recorder import Recorder
    from inspector.protocol.bundle import Bundle, Int
    from inspector.protocol.exchange import ExchangeKind, ExchangeStatus
    from inspector.session.journal import JournalWriter

    w = JournalWriter.create(name="killed", directory=sys.argv[1], session_id="victim")
    rec = Recorder(device="virtual")
    rec.add_listener(w.on_exchange)
    i = 0
    while True:
        x = rec.start(ExchangeKind.CETP, "a.b", "execute_tool",
                      request=Bundle(n=Int(i), pad="x" * 5000))
        x.id = f"ex-{i}"
        rec.finish(x, ExchangeStatus.SUCCESS, response=Bundle(n=Int(i)))
        print(i, flush=True)
        i += 1
    """
)


def test_kill_mid_session_keeps_every_finished_exchange(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(tmp_path)],
        stdout=subprocess.PIPE,
        env=env,
        cwd=ROOT,
        text=True,
    )
    assert proc.stdout is not None
    finished = -1
    for line in proc.stdout:
        finished = int(line)
        if finished >= 200:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    proc.stdout.close()
    path = tmp_path / "victim.jsonl"
    contents = read_journal(path)
    ids = [e.id for e in contents.exchanges]
    assert ids[: finished + 1] == [f"ex-{i}" for i in range(finished + 1)]
    for e in contents.exchanges:
        n = int(e.id[3:])
        assert e.request["v"]["n"] == {"t": "int", "v": n}
        assert e.response == {"t": "Bundle", "v": {"n": {"t": "int", "v": n}}}
    assert contents.damaged_lines <= 1
    # a torn tail is sealed (never cut: journals are append-only) and kept aside, so the
    # journal stays readable after a restart and nothing written is lost
    with open(path, "ab") as f:
        f.write(b'{"type":"exchange","exchange":{"id":"torn')
    before = path.read_bytes()
    w = JournalWriter.reopen(path)
    w.rename("after the crash")
    w.close()
    assert w.torn is not None and w.torn.kept_in is not None
    assert Path(w.torn.kept_in).read_bytes().endswith(b'{"id":"torn')
    assert path.read_bytes().startswith(before)  # every byte still there
    again = read_journal(path)
    assert again.damaged_lines == 1 and again.name == "after the crash"
    assert len(again.exchanges) == len(contents.exchanges)
    assert again.latest("journal_repair")["kept_in"] == w.torn.kept_in


def test_redactor_finds_secrets_in_typed_values_json_strings_and_text() -> None:
    data = {
        "request": {
            "t": "Bundle",
            "v": {
                "session_token": {"t": "String", "v": TOKEN},
                "api_key": {"t": "String", "v": "k-123456"},
            },
        },
        "response": {"t": "String", "v": json.dumps({"session_token": TOKEN, "n": 1})},
        "notes": [f"resume_token={RESUME} failed", f"retry with {TOKEN}"],
        "decoded": {"resume_token": RESUME},
    }
    r = Redactor(keys={"api_key"})
    out = r.redact(data)
    text = json.dumps(out)
    for secret in (TOKEN, RESUME, "k-123456"):
        assert secret not in text
    assert out["request"]["v"]["session_token"] == {"t": "String", "v": REDACTED}
    assert json.loads(out["response"]["v"]) == {"session_token": REDACTED, "n": 1}
    untouched = {"args": '{"a": 1}'}
    assert Redactor().redact(untouched) == untouched  # JSON strings kept byte for byte


def test_export_redacts_by_default_with_opt_out(tmp_path: Path) -> None:
    w = JournalWriter.create(name="s", directory=tmp_path / "sessions")
    for ex in sample_session():
        w.record_exchange(ex)
    w.close()
    contents = read_journal(w.path)
    safe = export_session(contents, tmp_path / "safe.jsonl")
    raw = safe.read_text("utf-8")
    assert TOKEN not in raw and RESUME not in raw and REDACTED in raw
    assert json.loads(raw.splitlines()[0])["redacted"] is True
    assert len(read_journal(safe).exchanges) == 4
    full = export_session(contents, tmp_path / "full.jsonl", redact=False)
    assert TOKEN in full.read_text("utf-8")


def test_device_facts_from_the_relay_hello() -> None:
    facts = device_facts("R58M", FakeBackend().hello_info("x"))
    assert facts["serial"] == "R58M" and facts["model"] == "Fake"
    assert facts["sdk_int"] == 34 and type(facts["sdk_int"]) is int
    assert facts["relay_version_name"] == "0.7-fake" and "call" in facts["capabilities"]
    assert json.loads(json.dumps(facts)) == facts
    assert device_facts("virtual") == {"serial": "virtual"}


def test_session_list_counts_an_updated_exchange_once(tmp_path: Path) -> None:
    """An exchange written again (updated findings) is one exchange in the session list."""
    w = JournalWriter.create(name="twice", directory=tmp_path)
    exchanges = sample_session()
    for ex in exchanges:
        w.record_exchange(ex)
    w.record_exchange(exchanges[0])  # the same exchange, journaled a second time
    w.close()
    [summary] = list_sessions(tmp_path)
    assert summary.exchange_lines == len(exchanges) + 1
    assert summary.exchange_count == len(exchanges)
