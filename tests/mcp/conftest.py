"""Fixtures: a standalone virtual device (as in tests/cli) and an isolated data folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import VirtualServer, start_virtual, stop_virtual


@pytest.fixture
def virtual_server(tmp_path: Path) -> Iterator[VirtualServer]:
    """A fresh device per test: alerts, confirmations and faults never leak between tests."""
    (tmp_path / "virtual").mkdir()
    server = start_virtual(tmp_path / "virtual")
    yield server
    stop_virtual(server)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("CETP_INSPECTOR_HOME", str(h))
    monkeypatch.setenv("CETP_INSPECTOR_NO_ADB", "1")
    return h
