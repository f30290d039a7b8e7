"""Provider log lines and crashes attached to exchanges (inspector.session.provider_logs)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from inspector.consumer.execution import ExecState
from inspector.consumer.options import EngineOptions
from inspector.consumer.recorder import Recorder
from inspector.protocol.exchange import ExchangeKind, ExchangeStatus
from inspector.protocol.logs import LogLine
from inspector.session.devices import VIRTUAL_SERIAL, DeviceManager
from inspector.session.provider_logs import ProviderLogs
from inspector.session.session import Session
from inspector.tasks import Spawner
from tests.session.test_session_session import manager as manager  # fixture

PRICE = "com.example.pricealerts"


@pytest.fixture
async def session(manager: DeviceManager) -> AsyncIterator[Session]:
    s = Session(VIRTUAL_SERIAL, manager.connector(VIRTUAL_SERIAL), spawner=Spawner(),
                options=EngineOptions(max_auto_retries=0))
    await s.open()
    yield s
    await s.close()
    await s.spawner.cancel_all()


async def test_each_exchange_gets_the_lines_its_provider_logged(session: Session) -> None:
    ps = session.provider_session(session.find_provider(PRICE))
    ex = await ps.execute_tool("list_alerts", {})
    assert ex.state == ExecState.SUCCEEDED
    by_method = {x.method: x for x in session.exchanges if x.package == PRICE}
    for method in ("negotiate", "execute_tool"):
        x = by_method[method]
        assert [ln.message.split(" from")[0] for ln in x.logs] == [f"call {method}"], method
        assert all(ln.tag == "CetpProvider" and ln.level == "D" for ln in x.logs)
        assert all(x.started_ms - 1 <= ln.time_ms <= (x.finished_ms or 0) for ln in x.logs)
    discover = next(x for x in session.exchanges if x.method == "discover")
    assert discover.logs == []  # no package: nothing attached
    assert not any(e.get("event") == "log" for e in session.events)  # lines are not events


async def test_a_provider_error_logs_a_warning(session: Session) -> None:
    ps = session.provider_session(session.find_provider(PRICE))
    ex = await ps.execute_tool("no_such_tool", {})
    assert ex.state == ExecState.FAILED
    x = next(x for x in session.exchanges if x.method == "execute_tool")
    assert [ln.level for ln in x.logs] == ["D", "W"]
    assert "TOOL_NOT_FOUND" in x.logs[1].message and not x.logged_errors


async def test_a_crash_is_linked_to_the_call_and_its_error_says_so(session: Session) -> None:
    ps = session.provider_session(session.find_provider(PRICE))
    await ps.list_tools()
    await session.link.fault("crash", package=PRICE, message="alerts table is gone")
    ex = await ps.execute_tool("list_alerts", {}, auto_retry=False)
    crashed = next(x for x in session.exchanges if x.method == "execute_tool")
    assert crashed.status == ExchangeStatus.TRANSPORT_ERROR and crashed.crash is not None
    assert crashed.crash.kind == "crash"
    assert crashed.crash.exception == "java.lang.IllegalStateException: alerts table is gone"
    assert crashed.error_message is not None
    assert crashed.error_message.startswith(f"the provider crashed ({PRICE}, pid ")
    assert "DeadObjectException" in crashed.error_message  # the relay's words are kept
    assert crashed.logged_errors
    assert ex.state in (ExecState.OUTCOME_UNKNOWN, ExecState.FAILED)
    assert "the provider crashed" in ex.message and "alerts table is gone" in ex.message
    # later calls (a fresh process) carry no crash
    again = await ps.execute_tool("list_alerts", {})
    assert again.state == ExecState.SUCCEEDED
    assert all(x.crash is None for x in session.exchanges if x.started_ms > crashed.started_ms)


async def test_logs_keep_flowing_after_a_reconnect(session: Session) -> None:
    await session.reconnect()
    ps = session.provider_session(session.find_provider(PRICE))
    await ps.execute_tool("list_alerts", {})
    last = [x for x in session.exchanges if x.method == "execute_tool"][-1]
    assert last.logs and last.logs[0].message.startswith("call execute_tool")


# --- the attacher on its own (a phone-like source: late lines, chatty providers) ----------
def line(t: float, msg: str = "m", pkg: str = PRICE, **kw: object) -> LogLine:
    return LogLine.make(time_ms=t, pid=7, uid=kw.pop("uid", 10100), level=kw.pop("level", "I"),
                        tag=kw.pop("tag", "T"), message=msg, package=pkg, **kw)


def test_late_lines_inside_a_finished_exchange_are_attached_within_the_grace() -> None:
    now = [0.0]
    rec = Recorder()
    logs = ProviderLogs(rec, grace_ms=1000, now_ms=lambda: now[0])
    x = rec.start(ExchangeKind.CETP, "a", "m", package=PRICE)
    x.started_ms = 100.0
    rec.finish(x, ExchangeStatus.SUCCESS)
    x.finished_ms = 200.0
    republished: list[str] = []
    rec.add_listener(lambda e: republished.append(e.id))
    now[0] = 700.0
    assert logs.feed(line(150.0, "late")) == [x]
    assert republished == [x.id]
    assert logs.feed(line(250.0, "after the call")) == []  # outside the call
    now[0] = 5000.0
    assert logs.feed(line(180.0, "too late")) == []  # past the grace
    assert [ln.message for ln in x.logs] == ["late"]


def test_a_late_crash_still_reaches_its_call() -> None:
    now = [0.0]
    rec = Recorder()
    logs = ProviderLogs(rec, now_ms=lambda: now[0])
    x = rec.start(ExchangeKind.CETP, "a", "execute_tool", package=PRICE)
    x.started_ms = 100.0
    rec.finish(x, ExchangeStatus.TRANSPORT_ERROR, error_code="IPC_FAILED",
               error_message="dead binder")
    x.finished_ms = 300.0
    now[0] = 400.0
    for msg in ("FATAL EXCEPTION: main", f"Process: {PRICE}, PID: 7",
                "java.lang.RuntimeException: late"):
        logs.feed(line(250.0, msg, level="E", tag="AndroidRuntime"))
    assert x.crash is not None and x.crash.exception == "java.lang.RuntimeException: late"
    assert x.error_message is not None and x.error_message.startswith("the provider crashed")


def test_lines_are_bounded_per_exchange_but_a_crash_is_kept() -> None:
    rec = Recorder()
    logs = ProviderLogs(rec, max_lines=5)
    x = rec.start(ExchangeKind.CETP, "a", "m", package=PRICE)
    t = x.started_ms + 1
    for i in range(20):
        logs.feed(line(t, f"chatty {i}"))
    logs.feed(line(t, "other app", pkg="com.other"))
    logs.feed(line(t, "FATAL EXCEPTION: main", level="E", tag="AndroidRuntime"))
    assert len(x.logs) == 6 and x.logs_dropped == 15
    assert x.logs[-1].tag == "AndroidRuntime"


def test_system_lines_about_the_package_attach_but_other_apps_mentions_do_not() -> None:
    rec = Recorder()
    logs = ProviderLogs(rec)
    x = rec.start(ExchangeKind.CETP, "a", "m", package=PRICE)
    t = x.started_ms + 1
    death = f"Process {PRICE} (pid 7) has died"
    logs.feed(LogLine.make(time_ms=t, pid=1000, uid=1000, level="I", tag="ActivityManager",
                           message=death))
    logs.feed(line(t, death, pkg="com.evil", uid=10500))
    assert [ln.pid for ln in x.logs] == [1000]


def test_a_late_line_of_the_previous_call_does_not_go_to_the_next_one() -> None:
    now = [0.0]
    rec = Recorder()
    logs = ProviderLogs(rec, tolerance_ms=250, now_ms=lambda: now[0])
    first = rec.start(ExchangeKind.CETP, "a", "list_tools", package=PRICE)
    first.started_ms = 1000.0
    rec.finish(first, ExchangeStatus.SUCCESS)
    first.finished_ms = 1020.0
    second = rec.start(ExchangeKind.CETP, "a", "execute_tool", package=PRICE)
    second.started_ms = 1030.0
    now[0] = 1100.0
    # logged during the first call, delivered while the second runs (a phone's lag)
    assert logs.feed(line(1010.0, "from the first call")) == [first]
    # logged between the calls, inside neither: the tolerance gives it to the running one
    assert logs.feed(line(1025.0, "between")) == [second]
    assert logs.feed(line(1040.0, "from the second call")) == [second]
    assert [ln.message for ln in first.logs] == ["from the first call"]
    assert [ln.message for ln in second.logs] == ["between", "from the second call"]
