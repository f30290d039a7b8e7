"""Evidence rows say which call they were: time, method, tool and outcome (issue 14)."""

from __future__ import annotations

import time

from inspector.protocol.exchange import Exchange
from inspector.ui.conformance_models import describe_exchange


def test_an_evidence_row_names_time_method_tool_and_outcome() -> None:
    started = 1_780_000_000_123.0
    ex = Exchange.model_validate({"kind": "cetp", "target": "p", "method": "execute_tool",
                                  "tool": "create_alert", "started_ms": started})
    text = describe_exchange(ex)
    clock = time.strftime("%H:%M:%S", time.localtime(started / 1000)) + ".123"
    assert text.startswith("execute_tool create_alert →")
    assert text.endswith(" · " + clock)


def test_a_record_without_a_time_still_reads() -> None:
    assert describe_exchange({"method": "list_tools", "status": "success"}) == (
        "list_tools → success")
