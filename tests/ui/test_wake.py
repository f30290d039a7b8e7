"""A provider whose process is not running ("Unknown authority"): the window says so, and
with View ▸ Wake providers it wakes the app and retries with the same request_id."""

from __future__ import annotations

import pytest

from inspector.tasks import spawn
from inspector.virtual.inprocess import connect_virtual_device
from tests.ui.fixtures import PRICEALERTS, Harness

pytestmark = pytest.mark.gui


async def _arm_cold(harness: Harness) -> bool:
    client = await connect_virtual_device(harness.device)
    try:
        return await client.fault("cold_start", package=PRICEALERTS, mode="launch")
    finally:
        await client.close()


def test_a_cold_provider_is_woken_only_when_asked(harness: Harness) -> None:
    w = harness.window
    harness.open_provider()
    armed = spawn(_arm_cold(harness), "test-arm-cold")
    harness.wait(armed.done)
    assert armed.result() is True

    harness.compose("get_quote", {"symbol": "ACME"})
    first = harness.send()
    harness.wait(lambda: w.result.state.text() not in ("", "Running…")
                 and "No call yet" not in w.result.state.text())
    assert w.result.state.text() != "Success"
    wakes = [x for x in w.controller.session("virtual").exchanges if x.method == "wake_provider"]
    assert wakes == []  # nothing woken behind the user's back

    assert not w.act_wake.isChecked()
    w.act_wake.trigger()  # View ▸ Wake providers that are not running
    assert w.act_wake.isChecked() and w.controller.options.wake_and_retry
    harness.compose("get_quote", {"symbol": "ACME"})
    harness.send()
    harness.wait(lambda: w.result.state.text() == "Success", timeout=20_000)
    steps = [x for x in w.controller.session("virtual").exchanges
             if x.method in ("wake_provider", "execute_tool")]
    second = [i for i, x in enumerate(steps) if x.request_id and x.request_id != first]
    assert len({steps[i].request_id for i in second}) == 1  # every retry kept its request_id
    fail, done = steps[second[0]], steps[second[-1]]
    assert fail.status.value == "transport_error" and done.status.value == "success"
    woken = [x for x in steps[second[0]:second[-1]] if x.method == "wake_provider"]
    assert any(x.status.value == "success" for x in woken)  # each step in the traffic log
