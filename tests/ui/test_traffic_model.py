"""The traffic log model: batching, filtering (sync and threaded), refresh, model tester."""

from __future__ import annotations

import pytest

from inspector.protocol.exchange import ExchangeStatus
from inspector.ui import traffic_model
from inspector.ui.traffic_model import TrafficFilter, TrafficModel
from tests.ui.factories import exchange

pytestmark = pytest.mark.gui


def test_model_passes_model_tester_while_filling_and_filtering(qtmodeltester, qloop):
    model = TrafficModel()
    qtmodeltester.check(model, force_py=True)
    model.add_many(exchange(i) for i in range(200))
    model.set_filter("status:error")
    model.add_many(exchange(i) for i in range(200, 260))
    model.set_filter("")
    qtmodeltester.check(model, force_py=True)
    assert model.rowCount() == 260


def test_add_batches_rows_into_one_insert(qtbot, qloop):
    model = TrafficModel(batch_ms=10)
    inserts: list[tuple[int, int]] = []
    model.rowsInserted.connect(lambda _p, a, b: inserts.append((a, b)))
    for i in range(50):
        model.add(exchange(i))
    qtbot.waitUntil(lambda: model.rowCount() == 50)
    assert inserts == [(0, 49)]


def test_filter_words_fields_and_errors(qloop):
    model = TrafficModel()
    model.add_many(exchange(i) for i in range(70))
    model.set_filter("status:error")
    rows = [model.exchange_at(r) for r in range(model.rowCount())]
    assert rows and all(e.status == ExchangeStatus.PROVIDER_ERROR for e in rows)
    assert len(rows) == 10
    model.set_filter("tool:tool_4 method:execute")
    assert all(model.exchange_at(r).tool.startswith("tool_4") for r in range(model.rowCount()))
    assert model.rowCount() > 0
    model.set_filter("p12.cetp")
    assert {model.exchange_at(r).target for r in range(model.rowCount())} == {
        "com.example.p12.cetp"
    }
    model.set_filter("no-such-thing")
    assert model.rowCount() == 0


def test_rows_added_under_a_filter_only_show_when_they_match(qloop):
    model = TrafficModel()
    model.set_filter("code:invalid_args")
    model.add_many(exchange(i) for i in range(14))
    assert [model.exchange_at(r).seq for r in range(model.rowCount())] == [
        e.seq for e in [model._all[3], model._all[10]]
    ]


def test_refresh_updates_a_pending_row_and_its_filter_text(qloop):
    model = TrafficModel()
    ex = exchange(1, status=ExchangeStatus.PENDING)
    model.add_many([ex])
    changed: list[int] = []
    model.dataChanged.connect(lambda a, _b: changed.append(a.row()))
    ex.error_code = "UNAVAILABLE"
    ex.finish(ExchangeStatus.PROVIDER_ERROR)
    model.refresh(ex)
    assert changed == [0]
    model.set_filter("status:error")
    assert model.rowCount() == 1


def test_big_filter_runs_in_a_thread_and_newest_wins(qtbot, qloop, idle, monkeypatch):
    from inspector.tasks import spawn

    monkeypatch.setattr(traffic_model, "THREAD_THRESHOLD", 100)
    model = TrafficModel()
    model.add_many(exchange(i) for i in range(3000))
    spawn(model.set_filter_async("tool_5"), "f1")
    spawn(model.set_filter_async("status:error"), "f2")
    idle()
    assert model.rowCount() == sum(1 for i in range(3000) if i % 7 == 3)


def test_filter_parse():
    f = TrafficFilter.parse("Status:Error foo tool:x bogus:1")
    assert f.errors_only and f.words == ("foo", "bogus:1") and f.fields == (("tool", "x"),)
