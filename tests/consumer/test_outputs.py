"""Output validation of hostile output schemas (issue 12): bounded, never on the event loop."""

from __future__ import annotations

import threading
import time

from inspector.consumer import outputs
from inspector.consumer.execution import ExecState
from inspector.protocol import schema as schemas
from inspector.protocol.hostile_schemas import doubling_chain, pattern_schema
from tests.consumer.factories import v2_rig
from tests.consumer.fakes import default_v2_tools


def _rig_with_output_schema(output_schema):
    tools = default_v2_tools()
    for t in tools:
        if t["name"] == "get_quote":
            t["output_schema"] = output_schema
    return v2_rig(tools=tools)


async def test_doubling_chain_output_schema_gives_a_too_costly_verdict(monkeypatch) -> None:
    loop_thread = threading.get_ident()
    seen: list[int] = []
    real = outputs.output_findings

    def spy(schema, instance, tool):
        seen.append(threading.get_ident())
        return real(schema, instance, tool)

    monkeypatch.setattr("inspector.consumer.engine.output_findings", spy)
    rig = _rig_with_output_schema(doubling_chain(28, leaf={"type": "string"}))
    t0 = time.monotonic()
    ex = await rig.session.execute_tool("get_quote", {"symbol": "X"})
    took = time.monotonic() - t0
    assert seen and all(t != loop_thread for t in seen)  # validated in a worker thread
    assert ex.state == ExecState.SUCCEEDED
    bad = [f for f in ex.output_findings if not f.ok]
    assert bad and schemas.TOO_COSTLY in bad[0].message
    assert schemas.TOO_COSTLY in ex.message
    assert took < 10  # budget (5 s max) plus a loaded machine


async def test_nested_quantifier_output_pattern_is_linear() -> None:
    rig = _rig_with_output_schema({"type": "object", "properties": {
        "price": {"type": "number"}, "note": pattern_schema()}})
    t0 = time.monotonic()
    ex = await rig.session.execute_tool("get_quote", {"symbol": "X"})
    assert time.monotonic() - t0 < 5
    assert [f.ok for f in ex.output_findings] == [True]


async def test_listener_sees_the_checked_output_once() -> None:
    rig = v2_rig(bad_output=True)
    seen: list[tuple[str, int]] = []
    rig.session.add_execution_listener(
        lambda e: seen.append((e.state.value, len(e.output_findings))))
    await rig.session.execute_tool("get_quote", {"symbol": "X"})
    assert seen == [("running", 0), ("succeeded", 1)]
