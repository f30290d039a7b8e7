"""GUI test plumbing: offscreen Qt, one qasync loop for the whole tests/ui package.

Rules (DESIGN.md): the loop is created once with already_running=True and never stopped
(stopping it quits the app and every later qtbot.wait* returns at once); tests are plain
functions that wait with qtbot.waitUntil; background tasks go through inspector.tasks.
At the end of the package the loop is only unregistered as "running", so async tests in
other folders that run later still get their own pytest-asyncio loops.
"""

from __future__ import annotations

import asyncio
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
import qasync
from PySide6.QtCore import QCoreApplication, QSettings

from inspector.tasks import spawner
from inspector.ui import theme, workers
from inspector.ui.heap import freeze_heap
from tests.ui.fixtures import adb_source as adb_source
from tests.ui.fixtures import harness as harness  # the window fixture, re-exported
from tests.ui.fixtures import journal_dir as journal_dir
from tests.ui.stall_watchdog import Watchdog

pytestmark = pytest.mark.gui

_watchdog: Watchdog | None = None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """Every GUI test fails when the UI thread stalls > 100 ms inside the event loop
    (tests/ui/stall_watchdog.py); `@pytest.mark.allow_stall` is for the watchdog's own test."""
    global _watchdog
    names = set(getattr(item, "fixturenames", ()))
    if item.get_closest_marker("allow_stall") or not names & {"qtbot", "qapp", "qloop"}:
        return (yield)
    _watchdog = _watchdog or Watchdog()
    # a known, documented stall gets a named, larger limit, never an exemption
    limit = item.get_closest_marker("stall_limit")
    _watchdog.limit_s = (limit.kwargs["ms"] if limit else 100) / 1000
    freeze_heap()  # what the app does once its window is up (inspector/ui/heap.py)
    _watchdog.start()
    try:
        result = yield
    finally:
        stalls = _watchdog.stop()
    if stalls:
        worst = max(stalls, key=lambda s: s.seconds)
        pytest.fail(f"{len(stalls)} event-loop stall(s) over {_watchdog.limit_s * 1000:.0f} ms;"
                    " the worst:\n"
                    + worst.describe(), pytrace=False)
    return result


@pytest.fixture(scope="package")
def qloop(qapp):
    QCoreApplication.setOrganizationName("cetp-inspector-tests")
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    theme.apply_theme(qapp, "light")
    loop = qasync.QEventLoop(qapp, already_running=True)
    asyncio.set_event_loop(loop)
    yield loop
    workers.shutdown()
    default = getattr(loop, "_QEventLoop__default_executor", None)  # lower layers use it
    if default is not None:
        default.shutdown(wait=True)
    asyncio.events._set_running_loop(None)
    asyncio.set_event_loop(None)


@pytest.fixture
def idle(qtbot, qloop):
    """Wait until every background task spawned through inspector.tasks has finished."""

    def wait(timeout: int = 10_000) -> None:
        qtbot.waitUntil(spawner().is_idle, timeout=timeout)

    return wait
