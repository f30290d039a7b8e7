"""Structured errors and exit codes; never a traceback. Plus real subprocess runs."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from inspector.cli.main import main
from tests.cli.conftest import (
    TOKEN,
    Cli,
    VirtualServer,
    run_subprocess,
    start_virtual,
    stop_virtual,
)


def test_unknown_provider_lists_candidates(cli: Cli) -> None:
    r = cli("tools", "com.nope")
    assert r.code == 2
    err = r.doc["error"]
    assert err["code"] == "NOT_FOUND"
    assert "com.example.pricealerts" in err["hint"]
    assert set(err) == {"code", "message", "retryable", "hint", "details"}


def test_ambiguous_provider(cli: Cli) -> None:
    r = cli("tools", "com.example.badprovider")
    assert r.code == 2
    assert r.doc["error"]["code"] == "AMBIGUOUS"
    candidates = r.doc["error"]["details"]["candidates"]
    assert len(candidates) == 2
    # each candidate is a name that selects exactly that provider (copy-pasteable)
    for c in candidates:
        assert c in r.doc["error"]["hint"]
        picked = cli("tools", c)
        assert picked.code in (0, 1) and picked.doc.get("error", {}).get("code") != "AMBIGUOUS"


def test_unknown_extension(cli: Cli) -> None:
    r = cli("ext-call", "nope", "f")
    assert r.code == 2 and r.doc["error"]["code"] == "NOT_FOUND"
    assert "hello_world" in r.doc["error"]["hint"]


def test_unknown_tool_lists_the_tools(cli: Cli) -> None:
    r = cli("call", "pricealerts", "nope")
    assert r.code == 1 and r.doc["error"]["code"] == "TOOL_NOT_FOUND"
    assert "get_quote" in r.doc["error"]["hint"]


def test_bad_json_args(cli: Cli) -> None:
    r = cli("call", "pricealerts", "get_quote", "--args", "{nope")
    assert r.code == 2 and r.doc["error"]["code"] == "BAD_ARGS_JSON"


def test_args_file(cli: Cli, tmp_path: Path) -> None:
    f = tmp_path / "args.json"
    f.write_text('{"symbol": "GLOBX"}')
    r = cli("call", "pricealerts", "get_quote", "--args-file", str(f))
    assert r.code == 0 and r.doc["execution"]["value"]["symbol"] == "GLOBX"
    missing = cli("call", "pricealerts", "get_quote", "--args-file", str(tmp_path / "no"))
    assert missing.code == 2 and missing.doc["error"]["code"] == "BAD_ARGS_FILE"


def test_request_too_large_is_refused_before_sending(cli: Cli) -> None:
    big = json.dumps({"symbol": "A" * 70_000})
    r = cli("call", "pricealerts", "get_quote", "--args", big)
    assert r.code == 2
    assert r.doc["error"]["code"] == "REQUEST_TOO_LARGE"


def test_unknown_capability(cli: Cli) -> None:
    r = cli("negotiate", "pricealerts", "--capabilities", "teleport")
    assert r.code == 2 and r.doc["error"]["code"] == "BAD_CAPABILITY"


def test_usage_error_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["call"]) == 2
    err = capsys.readouterr().err
    assert "usage:" in err and "error: USAGE:" in err
    assert main(["call", "--json"]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is False and doc["error"]["code"] == "USAGE"
    assert "PROVIDER" in doc["error"]["message"]
    assert main(["ext-call", "x", "y", "--bridge", "pigeon"]) == 2
    assert "pigeon" in capsys.readouterr().err


def test_wrong_token_is_a_device_error(virtual_server: VirtualServer,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["providers", "--relay-socket", virtual_server.socket, "--token", "wrong",
                 "--json"])
    out = capsys.readouterr()
    assert code == 3
    doc = json.loads(out.out)
    assert doc["ok"] is False and doc["error"]["code"] == "AUTH_FAILED"
    assert "Traceback" not in out.err


def test_no_relay_at_socket(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["providers", "--relay-socket", f"unix:{tmp_path / 'none.sock'}", "--token",
                 "t"])
    err = capsys.readouterr().err
    assert code == 3
    assert err.startswith("error: DISCONNECTED:") and "hint:" in err and "Traceback" not in err


def test_bad_socket_spec(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["providers", "--relay-socket", "carrier-pigeon", "--token", "t"]) == 2
    assert "BAD_SOCKET" in capsys.readouterr().err


HOSTILE = Path(__file__).parent / "plugins" / "hostile.py"


@pytest.mark.parametrize("command", [["tools"], ["info"], ["negotiate"], ["providers"]])
def test_hostile_provider_text_is_escaped(command: list[str], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Provider text from a plugin with escape sequences never reaches the terminal raw."""
    argv = [command[0]] + ([] if command[0] == "providers" else ["com.example.hostile"])
    code = main([*argv, "--virtual-plugin", str(HOSTILE), "--virtual-state",
                 str(tmp_path / "s")])
    out = capsys.readouterr().out
    assert code == 0
    if command[0] == "providers":
        assert "com.example.hostile" in out
    for raw in ("\x1b", "\x07", "\u202e", "\r"):
        assert raw not in out
    if command[0] in ("tools", "info", "negotiate"):
        assert "\\x1b" in out  # shown escaped, so the user sees something is off


def test_in_process_virtual_device_is_the_default(capsys: pytest.CaptureFixture[str],
                                                  tmp_path: Path) -> None:
    """No socket, no adb: the embedded virtual device (over a real socketpair)."""
    code = main(["call", "pricealerts", "get_quote", "--args", '{"symbol": "ACME"}', "--json",
                 "--virtual-state", str(tmp_path / "state")])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["device"] == "virtual"
    assert doc["execution"]["value"]["symbol"] == "ACME"
    assert (tmp_path / "state").is_dir()


def test_virtual_plugin_is_loaded(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "broken.py"
    bad.write_text("raise RuntimeError('boom')\n")
    code = main(["providers", "--virtual-plugin", str(bad)])
    err = capsys.readouterr().err
    assert code == 2 and "BAD_PLUGIN" in err and "Traceback" not in err


# --- real subprocesses ----------------------------------------------------------------------


def test_subprocess_providers_json(virtual_server: VirtualServer) -> None:
    p = run_subprocess("-m", "inspector.cli", "providers", "--json", "--relay-socket",
                       virtual_server.socket, "--token", virtual_server.token,
                       env={"CETP_INSPECTOR_NO_ADB": "1"})
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert any(pr["package"] == "com.example.finance" for pr in doc["providers"])


def test_subprocess_call_error_exit_code(virtual_server: VirtualServer, tmp_path: Path) -> None:
    p = run_subprocess("-m", "inspector", "call", "pricealerts", "get_quote", "--args",
                       '{"symbol": "NOPE"}', "--relay-socket", virtual_server.socket,
                       "--token", virtual_server.token,
                       env={"CETP_INSPECTOR_NO_ADB": "1", "CETP_INSPECTOR_HOME": str(tmp_path)})
    assert p.returncode == 1
    assert "error: INVALID_ARGS:" in p.stderr and "Traceback" not in p.stderr


def test_subprocess_virtual_serve(tmp_path: Path) -> None:
    """`cetp-inspector virtual serve` starts a device that the CLI can then attach to."""
    import subprocess

    sock = tmp_path / "served.sock"
    proc = subprocess.Popen(
        [sys.executable, "-m", "inspector.cli", "virtual", "serve", "--listen", f"unix:{sock}",
         "--token", TOKEN], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=Path(__file__).resolve().parents[2])
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("listening on unix:")
        p = run_subprocess("-m", "inspector.cli", "extensions", "--json", "--relay-socket",
                           f"unix:{sock}", "--token", TOKEN, env={"CETP_INSPECTOR_NO_ADB": "1"})
        assert p.returncode == 0, p.stderr
        assert "hello_world" in {e["id"] for e in json.loads(p.stdout)["extensions"]}
    finally:
        proc.terminate()
        proc.wait(10)


def test_gui_without_display_says_so() -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    import subprocess

    p = subprocess.run([sys.executable, "-m", "inspector.cli"], capture_output=True, text=True,
                       env=env, cwd=Path(__file__).resolve().parents[2], timeout=60)
    assert p.returncode == 3
    assert "NO_DISPLAY" in p.stderr and "--help" in p.stderr


def test_no_argument_opens_the_window(monkeypatch: pytest.MonkeyPatch) -> None:
    import inspector.ui.app as app

    calls: list[tuple[list[str], object]] = []
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    monkeypatch.setattr(app, "run_gui", lambda argv, opts=None: calls.append((argv, opts)) or 7)
    assert main([]) == 7
    assert main(["--json"]) == 7  # only global options: still the window
    assert main(["--virtual-plugin", "x.py", "-d", "SER"]) == 7  # handed to the window
    assert len(calls) == 3
    opts = calls[2][1]
    assert opts.virtual_plugin == ["x.py"] and opts.device == "SER"


def test_restarted_standalone_device_keeps_state(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A whole device restart (new process, same state dir) keeps durable provider state."""
    server = start_virtual(tmp_path)
    try:
        code = main(["call", "pricealerts", "create_alert", "--args",
                     '{"symbol": "ACME", "price": 101.25}', "--json", "--relay-socket",
                     server.socket, "--token", server.token])
        alert = json.loads(capsys.readouterr().out)["execution"]["value"]["alert_id"]
        assert code == 0
    finally:
        stop_virtual(server)
    server = start_virtual(tmp_path)
    try:
        code = main(["call", "pricealerts", "list_alerts", "--json", "--relay-socket",
                     server.socket, "--token", server.token])
        alerts = json.loads(capsys.readouterr().out)["execution"]["value"]["alerts"]
        assert code == 0 and alert in {a["alert_id"] for a in alerts}
    finally:
        stop_virtual(server)


def test_every_execution_state_has_an_exit_code() -> None:
    """A new engine state must get a deliberate exit code, not a silent fallback."""
    from inspector.cli.cmd_call import STATE_EXIT
    from inspector.consumer.execution import ExecState

    assert set(STATE_EXIT) == set(ExecState)
