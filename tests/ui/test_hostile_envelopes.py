"""The window against hostile reply envelopes (issue 12's sweep, `tests/cli/plugins/
hostile_envelopes.py`): opening such a provider ends with a specific error on its entry —
never an `inspector bug`, never a stuck load — and a call whose operation asks to be polled
after 2^63 ms stops waiting with a message."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.fixtures import Harness

pytestmark = pytest.mark.gui

PLUGIN = Path(__file__).parents[1] / "cli" / "plugins" / "hostile_envelopes.py"


def _open(harness: Harness, case: str):
    w = harness.window
    package = f"com.example.he.{case}"
    harness.device.load_plugin(PLUGIN)
    harness.wait(lambda: any(d.package == package
                             for d in harness.controller.discovery("virtual").cetp))
    decl = next(x for x in harness.controller.discovery("virtual").cetp if x.package == package)
    assert w.navigator.select("virtual", decl.key)
    harness.wait(lambda: (e := harness.controller.entry(w.current_key or "")) is not None
                 and (e.loaded or bool(e.error)))
    return harness.controller.entry(w.current_key or "")


@pytest.mark.parametrize(("case", "expected"), [
    ("data_deep", "not valid JSON"),
    ("neg_token_int", "session_token: expected a string"),
    ("tools_not_list", "data.tools: expected an array"),
])
def test_hostile_load_ends_with_a_specific_error(harness: Harness, case: str,
                                                 expected: str) -> None:
    entry = _open(harness, case)
    assert not entry.loaded
    assert expected in entry.error and "inspector bug" not in entry.error


def test_huge_poll_after_stops_waiting(harness: Harness) -> None:
    entry = _open(harness, "op_poll_huge")
    assert entry.loaded
    harness.compose("get_quote", {"symbol": "ACME"})
    rid = harness.send()
    harness.wait(lambda: (ex := harness.execution(rid)) is not None
                 and "poll again after" in (ex.message or ""))
