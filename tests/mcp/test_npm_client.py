"""MCP clients nobody here wrote, against the bridge over streamable HTTP with the bearer
token: the official MCP Inspector CLI (npm @modelcontextprotocol/inspector-cli) and the MCP
conformance suite's server scenarios (npm @modelcontextprotocol/conformance, through a
token-adding loopback proxy since it cannot send headers), both pinned in tests/mcp/npm.
`./dev test` installs them (npm ci); docs/mcp.md records why these versions and which
scenarios pass."""

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
NPM = ROOT / "tests/mcp/npm/node_modules/@modelcontextprotocol"
CLI = NPM / "inspector-cli/build/index.js"
CONFORMANCE = NPM / "conformance/dist/index.js"
#: the conformance suite's server scenarios that test what a bridge has (the others call
#: the reference test server's fixed tools, prompts and resources; docs/mcp.md)
APPLICABLE = ("server-initialize", "ping", "tools-list", "resources-list",
              "server-sse-multiple-streams")
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


@pytest.fixture(scope="module")
def proxied_url(bridge_url: str) -> Iterator[str]:
    """tests/mcp/auth_proxy.py in front of the bridge: adds the bearer token."""
    proc = subprocess.Popen([sys.executable, "-m", "tests.mcp.auth_proxy", bridge_url, TOKEN],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("listening on "):
        proc.kill()
        pytest.fail(f"proxy did not start: {line!r}")
    yield line.split()[-1]
    proc.terminate()
    proc.wait(10)


@pytest.mark.parametrize("scenario", APPLICABLE)
def test_conformance_server_scenario(proxied_url: str, scenario: str, tmp_path: Path) -> None:
    r = subprocess.run(["node", str(CONFORMANCE), "server", "--url", proxied_url,
                        "--scenario", scenario, "-o", str(tmp_path)],
                       capture_output=True, text=True, timeout=120, cwd=CONFORMANCE.parent)
    found = list(tmp_path.rglob("checks.json"))
    assert found, r.stdout + r.stderr
    checks = json.loads(found[0].read_text())
    bad = [(c["id"], c["status"], c.get("errorMessage")) for c in checks
           if c["status"] not in ("SUCCESS", "INFO")]
    assert checks and not bad, bad
