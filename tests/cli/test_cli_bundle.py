"""--record NAME journals commands into one session; bundle create/open/list."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from tests.cli.conftest import Cli


def test_record_then_bundle(cli: Cli, tmp_path: Path) -> None:
    r1 = cli("call", "pricealerts", "get_quote", "--args", '{"symbol": "ACME"}',
             "--record", "bug42")
    r2 = cli("call", "pricealerts", "get_quote", "--args", '{"symbol": "NOPE"}',
             "--record", "bug42")
    assert r1.code == 0 and r2.code == 1
    session_id = r1.doc["journal"]
    assert r2.doc["journal"] == session_id  # the second command continued the session

    listed = cli("bundle", "list")
    [s] = [s for s in listed.doc["sessions"] if s["name"] == "bug42"]
    assert s["session_id"] == session_id and s["exchange_count"] >= 4

    journal_text = Path(s["path"]).read_text()
    token = next(
        json.loads(line)["exchange"]["decoded"]["session_token"]
        for line in journal_text.splitlines()[1:]
        if '"method":"negotiate"' in line and '"status":"success"' in line
    )
    assert token in journal_text  # the local journal keeps everything

    out = tmp_path / "bug42.cetpbundle"
    made = cli("bundle", "create", "bug42", "-o", str(out), "--note", "quote fails")
    assert made.code == 0, made.out
    assert made.doc["redacted"] is True
    with zipfile.ZipFile(out) as z:
        blob = b"".join(z.read(n) for n in z.namelist())
    assert token.encode() not in blob  # secrets redacted on export

    opened = cli("bundle", "open", str(out))
    assert opened.code == 0
    methods = [(e["method"], e["status"]) for e in opened.doc["exchanges"]]
    assert ("execute_tool", "success") in methods and ("execute_tool", "provider_error") in methods
    assert "quote fails" in opened.doc["summary"]
    assert opened.doc["device"]["serial"] == "virtual"


def test_bundle_errors(cli: Cli, tmp_path: Path) -> None:
    missing = cli("bundle", "create", "no-such-session")
    assert missing.code == 2 and missing.doc["error"]["code"] == "NOT_FOUND"
    junk = tmp_path / "junk.cetpbundle"
    junk.write_text("not a zip")
    bad = cli("bundle", "open", str(junk))
    assert bad.code == 2 and bad.doc["error"]["code"] == "BAD_BUNDLE"


def test_replay_a_bundle_reads_only_by_default(cli: Cli, tmp_path: Path) -> None:
    assert cli("call", "pricealerts", "get_quote", "--args", '{"symbol": "ACME"}',
               "--record", "replay-me").code == 0
    assert cli("call", "pricealerts", "create_alert", "--args",
               '{"symbol": "ACME", "price": 101.25}', "--record", "replay-me").code == 0
    out = tmp_path / "r.cetpbundle"
    assert cli("bundle", "create", "replay-me", "-o", str(out)).code == 0
    r = cli("bundle", "replay", str(out))
    assert r.code in (0, 4), r.out
    by_tool = {(x["method"], x["tool"]): x for x in r.doc["results"]}
    assert by_tool[("execute_tool", "get_quote")]["action"] == "reissued"
    assert by_tool[("execute_tool", "get_quote")]["changed"] is False
    assert by_tool[("execute_tool", "create_alert")]["action"] == "declined"
    # replaying the session by name works the same
    again = cli("bundle", "replay", "replay-me")
    assert [x["action"] for x in again.doc["results"]] == [x["action"] for x in r.doc["results"]]
