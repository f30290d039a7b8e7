"""Hostile AndyClaw extensions (issue 12's sweep, `plugins/hostile_extensions.py`): odd
manifest shapes, deep JSON, 1 MB names, HTML/control characters, wrong meta-data types. Every
`ext-manifest` / `ext-call` ends with a clear outcome: no traceback, no `inspector bug`, raw
control characters never reach the terminal, hints stay short."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli.main import main
from tests.cli.plugins.hostile_extensions import CASES

#: manifest cases whose extension is still listed (its id/meta-data stay usable)
LISTED = [c for c in CASES if not c.startswith("meta_") or c == "meta_resource_missing"]
#: cases chosen for the slower human-mode pass
HUMAN = ["manifest_not_json", "manifest_deep", "manifest_evil_text", "manifest_fields_odd",
         "meta_id_evil", "meta_resource_missing"]


def _plugin(tmp_path: Path, *cases: str) -> str:
    """A one-line plugin file that installs only `cases` (fast discovery)."""
    f = tmp_path / "hx_plugin.py"
    f.write_text("from tests.cli.plugins.hostile_extensions import install\n"
                 f"def register(device):\n    install(device, *{cases!r})\n")
    return str(f)


def _clean(text: str) -> None:
    assert "Traceback" not in text and "inspector bug" not in text
    for raw in ("\x1b", "\x00", "\u202e"):
        assert raw not in text


@pytest.mark.parametrize("case", [c for c in LISTED if c not in ("manifest_many",
                                                                 "manifest_1mb_name")])
def test_hostile_manifest_json(case: str, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["ext-manifest", f"hx_{case}", "--json", "--virtual-plugin",
                 _plugin(tmp_path, case)])
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    _clean(cap.err)
    assert "inspector bug" not in cap.out
    if case == "meta_resource_missing":
        assert code != 0 and doc["error"]["code"] == "NOT_FOUND"
        assert "0x7f0f0999" in doc["error"]["message"]
    else:
        assert code == 0 and doc["ok"] is True


@pytest.mark.parametrize("case", HUMAN)
def test_hostile_extension_human(case: str, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    plugin = _plugin(tmp_path, case)
    main(["ext-manifest", f"hx_{case}", "--virtual-plugin", plugin])
    main(["ext-call", f"hx_{case}", "f", "--args", "{}", "--virtual-plugin", plugin])
    cap = capsys.readouterr()
    _clean(cap.out + cap.err)


def test_hostile_ids_keep_the_not_found_hint_short(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A 4.5 kB HTML/control-character extension id used to be pasted whole into the hint."""
    code = main(["ext-manifest", "nope", "--virtual-plugin",
                 _plugin(tmp_path, "meta_id_evil", "manifest_object")])
    err = capsys.readouterr().err
    _clean(err)
    assert code == 2 and "NOT_FOUND" in err and "known extensions:" in err
    hint = next(line for line in err.splitlines() if "known extensions:" in line)
    assert len(hint) < 20 * 80  # ≤ 20 names of ≤ 64 characters (escaped) each
