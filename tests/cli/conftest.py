"""Fixtures: a standalone virtual device on a real Unix socket, and a CLI runner.

The virtual device runs as its own process (`python -m inspector.virtual --listen unix:…`),
exactly as a user would start it, so every CLI test goes through the real relay protocol
over a real socket, and its durable state survives across CLI invocations like a phone's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from inspector.cli.main import main

TOKEN = "test-token-cli"
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class VirtualServer:
    socket: str
    token: str
    state_dir: Path
    proc: subprocess.Popen[str]


def start_virtual(tmp: Path, token: str = TOKEN) -> VirtualServer:
    sock = tmp / "virtual.sock"
    state = tmp / "state"
    proc = subprocess.Popen(
        [sys.executable, "-m", "inspector.virtual", "--listen", f"unix:{sock}", "--token", token,
         "--state-dir", str(state)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # "listening on unix:…" once it accepts connections
    if not line.startswith("listening on"):
        proc.kill()
        raise RuntimeError(f"virtual device did not start: {line!r} {proc.stderr.read()!r}")
    return VirtualServer(f"unix:{sock}", token, state, proc)


def stop_virtual(server: VirtualServer) -> None:
    server.proc.terminate()
    try:
        server.proc.wait(10)
    except subprocess.TimeoutExpired:
        server.proc.kill()


@pytest.fixture(scope="module")
def virtual_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VirtualServer]:
    server = start_virtual(tmp_path_factory.mktemp("virtual"))
    yield server
    stop_virtual(server)


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CETP_INSPECTOR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CETP_INSPECTOR_NO_ADB", "1")
    monkeypatch.delenv("CETP_INSPECTOR_DEBUG", raising=False)


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def doc(self) -> dict[str, Any]:
        return json.loads(self.out)


class Cli:
    """Runs `main([...])` in-process against the standalone virtual device."""

    def __init__(self, server: VirtualServer, capsys: pytest.CaptureFixture[str]) -> None:
        self.server = server
        self.capsys = capsys

    def __call__(self, *argv: str, json_out: bool = True) -> Result:
        self.capsys.readouterr()
        full = [*argv, "--relay-socket", self.server.socket, "--token", self.server.token]
        if json_out:
            full.append("--json")
        code = main(full)
        captured = self.capsys.readouterr()
        assert "Traceback" not in captured.err, captured.err
        return Result(code, captured.out, captured.err)


@pytest.fixture
def cli(virtual_server: VirtualServer, capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(virtual_server, capsys)


def run_subprocess(*argv: str, env: dict[str, str] | None = None,
                   timeout: float = 60) -> subprocess.CompletedProcess[str]:
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=ROOT,
                          env=full_env, timeout=timeout)


def wait_until(predicate: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.05)
