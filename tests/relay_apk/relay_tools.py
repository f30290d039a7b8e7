"""Helpers shared by the relay APK tests: run a tool with readable failures, source digest."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess

import pytest

from tests.relay_apk.host_jvm import RELAY_DIR, REPO

VECTORS_DIR = REPO / "tests" / "vectors"
JUNIT_CLASSES = sorted(
    p.relative_to(RELAY_DIR / "test").with_suffix("").as_posix().replace("/", ".")
    for p in (RELAY_DIR / "test").rglob("*Test.java")
)
"""Every JUnit class under relay_apk/test (found by name, so a new one cannot be forgotten)."""


def run(cmd: list[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run a tool; on failure show its output so the test report says what went wrong."""
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n"
                    f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc


def require(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.fail(f"{tool} is not installed: run `./dev setup --system` (Debian packages)")
    return path


def sources_digest() -> str:
    """relay_apk/sources_digest.py, the same code build.sh records in relay.json."""
    spec = importlib.util.spec_from_file_location("relay_sources_digest",
                                                  RELAY_DIR / "sources_digest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return str(module.sources_digest(RELAY_DIR))
