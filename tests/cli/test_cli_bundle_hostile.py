"""The CLI on hostile bundles and journals (issue 12): a clear error of the file's own kind,
never "INTERNAL … inspector bug"; a damaged journal is listed, the others still show."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli.main import main
from inspector.session.journal import JournalWriter, sessions_dir
from tests.session.bundle_attacks import corrupt_deflate, deep_json_bundle, zip_bomb


def _run(capsys, *argv: str) -> tuple[int, dict, str]:
    capsys.readouterr()
    code = main([*argv, "--json"])
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err
    return code, json.loads(cap.out) if cap.out.strip() else {}, cap.err


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CETP_INSPECTOR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CETP_INSPECTOR_NO_ADB", "1")


@pytest.mark.parametrize("make", [zip_bomb, deep_json_bundle, corrupt_deflate])
def test_bundle_open_of_a_hostile_bundle_is_bad_bundle(tmp_path, capsys, make) -> None:
    path = make(tmp_path / "x.cetpbundle")
    code, doc, err = _run(capsys, "bundle", "open", str(path))
    text = json.dumps(doc) + err
    assert code != 0
    assert "BAD_BUNDLE" in text and "INTERNAL" not in text and "inspector bug" not in text


def test_bundle_list_shows_a_damaged_journal_next_to_good_ones(tmp_path, capsys) -> None:
    d = sessions_dir()
    JournalWriter.create(name="good", directory=d).close()
    (d / "evil.jsonl").write_bytes(b"[" * 100_000 + b"]" * 100_000 + b"\n")
    code, doc, _ = _run(capsys, "bundle", "list")
    assert code == 0
    by_id = {s["session_id"]: s for s in doc["sessions"]}
    assert by_id["evil"]["damaged"] and not by_id[next(k for k in by_id if k != "evil")][
        "damaged"]
    capsys.readouterr()
    assert main(["bundle", "list"]) == 0
    out = capsys.readouterr().out
    assert "DAMAGED" in out and "good" in out


def test_record_continues_a_torn_journal_without_cutting_it(cli, tmp_path) -> None:
    r1 = cli("call", "pricealerts", "get_quote", "--args", '{"symbol": "ACME"}',
             "--record", "torn")
    assert r1.code == 0
    [s] = [s for s in cli("bundle", "list").doc["sessions"] if s["name"] == "torn"]
    path = Path(s["path"])
    with open(path, "ab") as f:
        f.write(b'{"type":"exchange","exchange":{"id":"cut-off')
    before = path.read_bytes()
    r2 = cli("call", "pricealerts", "get_quote", "--args", '{"symbol": "ACME"}',
             "--record", "torn")
    assert r2.code == 0 and "torn line" in r2.err and ".torn-" in r2.err
    after = path.read_bytes()
    assert after.startswith(before)  # append-only: not a byte cut
    [s2] = [s for s in cli("bundle", "list").doc["sessions"] if s["name"] == "torn"]
    assert s2["exchange_count"] > s["exchange_count"]
