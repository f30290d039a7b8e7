"""The session-wide token-leak check itself: it finds fragments, and it fails a run that
leaks a token through output, logs, exception text or files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.token_leaks import FRAGMENT, TokenRegistry

ROOT = Path(__file__).resolve().parents[1]


def test_registry_finds_every_8_character_piece_and_nothing_shorter() -> None:
    reg = TokenRegistry()
    token = "0123456789abcdef" * 3
    reg.add(token)
    for i in range(len(token) - FRAGMENT + 1):
        assert reg.find(f"error: xx{token[i:i + FRAGMENT]}yy") != []
    assert reg.find(f"error: {token[:FRAGMENT - 1]} …") == []
    assert reg.find(f"…{token[:14].upper()}…") != []  # case does not hide it
    assert reg.find("no secrets here 0123456") == []
    # 8 digits shared by chance with a 64-digit SHA-256: not a leak; 12 or more always are
    digest = "f" * 28 + token[3:11] + "e" * 28
    assert reg.find(f"sha256 {digest}") == []
    assert reg.find(f"sha256 {'f' * 26}{token[3:15]}{'e' * 26}") != []


INNER_TESTS = '''
import logging
from inspector.device import relay_lifecycle

def test_clean(capsys):
    token = relay_lifecycle.new_session_token()
    print("token <secret> used")
    assert "<secret>" in capsys.readouterr().out

def test_leaks_in_output_it_read(capsys):
    token = relay_lifecycle.new_session_token()
    print("error: the relay did not start: --es TOKEN " + token[:14])
    capsys.readouterr()

def test_leaks_in_uncaptured_output():
    token = relay_lifecycle.new_session_token()
    print("stray " + token[20:30])

def test_leaks_in_a_log_record():
    token = relay_lifecycle.new_session_token()
    logging.getLogger("inspector.device.x").info("start %s", token[5:13])

def test_leaks_into_a_file(tmp_path):
    token = relay_lifecycle.new_session_token()
    (tmp_path / "journal.jsonl").write_text('{"message": "' + token[30:40] + '"}')
'''


def test_a_run_that_leaks_a_token_fails(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text("from tests.token_leaks import *  # noqa\n")
    (tmp_path / "test_inner.py").write_text(INNER_TESTS)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
         f"--basetemp={tmp_path / 'base'}", "test_inner.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )
    out = proc.stdout
    assert proc.returncode == 1, out
    assert "test_inner.py::test_clean" not in out.split("short test summary")[-1]
    for name in ("test_leaks_in_output_it_read", "test_leaks_in_uncaptured_output",
                 "test_leaks_in_a_log_record"):
        assert f"FAILED test_inner.py::{name}" in out, out
    assert "token leaked into files" in out and "journal.jsonl" in out, out
