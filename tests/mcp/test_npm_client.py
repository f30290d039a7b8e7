"""An MCP client nobody here wrote: the official MCP Inspector CLI (npm
@modelcontextprotocol/inspector-cli, pinned in tests/mcp/npm) against the bridge over
streamable HTTP with the bearer token. `./dev test` installs it (npm ci); docs/mcp.md
records why this package and version, and which of its methods pass."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / "tests/mcp/npm/node_modules/@modelcontextprotocol/inspector-cli/build/index.js"
TOKEN = "npm-client-token-0123456789"

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def bridge_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`cetp-inspector mcp --http 127.0.0.1:0` as a user starts it (virtual device)."""
    if shutil.which("node") is None or not CLI.exists():
        pytest.fail("the MCP Inspector CLI is not installed: run ./dev setup --system "
                    "(or npm ci in tests/mcp/npm)")
    home = tmp_path_factory.mktemp("npm-home")
    env = {**os.environ, "CETP_INSPECTOR_HOME": str(home), "CETP_INSPECTOR_NO_ADB": "1",
           "CETP_INSPECTOR_MCP_TOKEN": TOKEN}
    env.pop("CETP_INSPECTOR_MCP_TEST_ONLY_VIRTUAL_SCREEN", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "inspector", "mcp", "--http", "127.0.0.1:0",
         "--allow-mutations", "x_dice__roll_dice"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("listening on "):
        proc.kill()
        pytest.fail(f"bridge did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")
    yield line.split()[-1]
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    err = proc.stderr.read() if proc.stderr else ""
    assert TOKEN not in err  # a token from the environment is never printed


def inspector_cli(url: str, *args: str, token: str | None = TOKEN) -> tuple[int, str]:
    cmd = ["node", str(CLI), url, "--transport", "http", *args]
    if token is not None:
        cmd += ["--header", f"Authorization: Bearer {token}"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=CLI.parent)
    return r.returncode, r.stdout + r.stderr


def test_tools_list(bridge_url: str) -> None:
    code, out = inspector_cli(bridge_url, "--method", "tools/list")
    assert code == 0, out
    tools = {t["name"]: t for t in json.loads(out)["tools"]}
    assert tools["p_pricealerts__get_quote"]["annotations"]["readOnlyHint"] is True
    assert "x_hello_world__greet" in tools


def test_tools_call_read(bridge_url: str) -> None:
    code, out = inspector_cli(bridge_url, "--method", "tools/call", "--tool-name",
                              "p_pricealerts__get_quote", "--tool-arg", "symbol=ACME")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["isError"] is False and doc["structuredContent"]["symbol"] == "ACME"


def test_tools_call_extension(bridge_url: str) -> None:
    code, out = inspector_cli(bridge_url, "--method", "tools/call", "--tool-name",
                              "x_hello_world__greet", "--tool-arg", "name=Ada")
    assert code == 0, out
    assert "Hello, Ada" in json.loads(out)["content"][0]["text"]


def test_mutation_refused_as_a_tool_error(bridge_url: str) -> None:
    code, out = inspector_cli(bridge_url, "--method", "tools/call", "--tool-name",
                              "p_pricealerts__delete_alert", "--tool-arg", "alert_id=al_1")
    assert code == 0, out  # a tool error is a result, not a protocol error
    doc = json.loads(out)
    assert doc["isError"] is True and "--allow-mutations" in doc["content"][0]["text"]


def test_missing_token_refused(bridge_url: str) -> None:
    code, out = inspector_cli(bridge_url, "--method", "tools/list", token=None)
    assert code != 0 and "unauthorized" in out
