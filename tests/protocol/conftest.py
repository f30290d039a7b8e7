from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


def load(name: str) -> Any:
    """A fixture's decoded JSON (a fresh copy each time)."""
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


@pytest.fixture
def spec_tools() -> dict[str, Any]:
    return load("spec_list_tools.json")


@pytest.fixture
def spec_info() -> dict[str, Any]:
    return load("spec_provider_info.json")


@pytest.fixture
def spec_negotiate() -> dict[str, Any]:
    return load("spec_negotiate.json")


def tool(**over: Any) -> dict[str, Any]:
    """The spec's create_alert tool with top-level or annotation overrides
    (`annotations={...}` merges)."""
    t = copy.deepcopy(load("spec_list_tools.json")["tools"][0])
    ann = over.pop("annotations", None)
    t.update(over)
    if ann:
        t["annotations"].update(ann)
    return t
