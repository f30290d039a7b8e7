"""Replay as a virtual provider from the command line: `--virtual-bundle FILE` and
`bundle serve FILE`, against a session recorded with `--record` on the virtual device."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from inspector.cli.main import main
from tests.cli.conftest import ROOT, Cli, Result

VOLATILE = frozenset({"journal", "request_id", "exchange_id", "exchange_ids",
                      "time_ms", "pid", "tid"})  # a replayed log line is logged anew
ALERT_ARGS = '{"symbol": "ACME", "price": 101.25}'


def scrub(doc: Any) -> Any:
    """A command's JSON document without what differs between runs by design (ids, the
    journal, the length of the — redacted — session token)."""
    if isinstance(doc, dict):
        return {k: scrub(v) for k, v in doc.items() if k not in VOLATILE}
    if isinstance(doc, list):
        return [scrub(v) for v in doc
                if not (isinstance(v, dict) and v.get("path") == "data.session_token")]
    return doc


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> Result:
    capsys.readouterr()
    code = main([*argv, "--json"])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err, captured.err
    return Result(code, captured.out, captured.err)


@pytest.fixture
def recorded(cli: Cli, tmp_path: Path) -> tuple[Path, dict[str, Result]]:
    """tools, a read and a create_alert recorded into one session, then bundled."""
    outputs = {
        "tools": cli("tools", "pricealerts", "--record", "served"),
        "list": cli("call", "pricealerts", "list_alerts", "--args", "{}", "--record", "served"),
        "create": cli("call", "pricealerts", "create_alert", "--args", ALERT_ARGS,
                      "--record", "served"),
    }
    assert all(r.code == 0 for r in outputs.values()), {k: r.out for k, r in outputs.items()}
    bundle = tmp_path / "served.cetpbundle"
    assert cli("bundle", "create", "served", "-o", str(bundle)).code == 0
    return bundle, outputs


def test_virtual_bundle_reproduces_the_recorded_output(
    recorded: tuple[Path, dict[str, Result]], capsys: pytest.CaptureFixture[str]
) -> None:
    bundle, outputs = recorded
    vb = ("--virtual-bundle", str(bundle))
    providers = run(capsys, *vb, "providers")
    assert providers.code == 0
    assert [p["package"] for p in providers.doc["providers"]] == ["com.example.pricealerts"]

    tools = run(capsys, *vb, "tools", "pricealerts")
    assert tools.code == 0 and scrub(tools.doc) == scrub(outputs["tools"].doc)
    listed = run(capsys, *vb, "call", "pricealerts", "list_alerts", "--args", "{}")
    assert listed.code == 0 and scrub(listed.doc) == scrub(outputs["list"].doc)
    created = run(capsys, *vb, "call", "pricealerts", "create_alert", "--args", ALERT_ARGS)
    assert created.code == 0 and scrub(created.doc) == scrub(outputs["create"].doc)

    unrecorded = run(capsys, *vb, "call", "pricealerts", "get_quote", "--args",
                     '{"symbol": "ACME"}')
    assert unrecorded.code == 1
    assert "not in the recording" in json.dumps(unrecorded.doc)

    missing = run(capsys, "--virtual-bundle", str(bundle.with_name("nope.cetpbundle")),
                  "providers")
    assert missing.code == 2 and missing.doc["error"]["code"] == "BAD_BUNDLE"
    both = run(capsys, *vb, "--relay-socket", "unix:/nonexistent", "providers")
    assert both.code == 2 and both.doc["error"]["code"] == "BAD_DEVICE"


def test_bundle_serve_on_a_socket(
    recorded: tuple[Path, dict[str, Result]], capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    bundle, outputs = recorded
    sock = tmp_path / "replay.sock"
    proc = subprocess.Popen(
        [sys.executable, "-m", "inspector.cli", "bundle", "serve", str(bundle),
         "--listen", f"unix:{sock}", "--token", "replay-token"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("listening on unix:"), (line, proc.stderr.read() if
                                                       proc.poll() is not None else "")
        at = ("--relay-socket", f"unix:{sock}", "--token", "replay-token")
        tools = run(capsys, *at, "tools", "pricealerts")
        assert tools.code == 0 and scrub(tools.doc) == scrub(outputs["tools"].doc)
        created = run(capsys, *at, "call", "pricealerts", "create_alert", "--args", ALERT_ARGS)
        assert created.code == 0 and scrub(created.doc) == scrub(outputs["create"].doc)
        denied = run(capsys, "--relay-socket", f"unix:{sock}", "--token", "wrong", "providers")
        assert denied.code == 3
    finally:
        proc.terminate()
        try:
            _, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
    assert proc.returncode == 0, err
    assert "replaying com.example.pricealerts" in err
    assert not sock.exists()  # closed cleanly


def test_bundle_serve_usage_errors(tmp_path: Path) -> None:
    junk = tmp_path / "junk.cetpbundle"
    junk.write_text("not a bundle")
    r = subprocess.run(
        [sys.executable, "-m", "inspector.cli", "--json", "bundle", "serve", str(junk),
         "--listen", f"unix:{tmp_path / 's.sock'}", "--token", "t"],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )
    assert r.returncode == 2 and json.loads(r.stdout)["error"]["code"] == "BAD_BUNDLE"
    r = subprocess.run(
        [sys.executable, "-m", "inspector.cli", "--json", "bundle", "serve", str(junk),
         "--listen", "tcp:10.0.0.1:1"],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )
    assert r.returncode == 2 and json.loads(r.stdout)["error"]["code"] == "BAD_SOCKET"
