"""Where icons and themes live: `resources/` in a checkout, `inspector.resources` installed."""

from __future__ import annotations

from functools import cache
from pathlib import Path


@cache
def resources_dir() -> Path:
    """The resources folder, whether running from a checkout or an installed wheel."""
    try:
        from importlib.resources import files

        p = Path(str(files("inspector.resources")))
        if (p / "icons").is_dir():
            return p
    except (ModuleNotFoundError, TypeError):
        pass
    return Path(__file__).resolve().parents[2] / "resources"


def resource_text(*parts: str) -> str:
    return resources_dir().joinpath(*parts).read_text(encoding="utf-8")
