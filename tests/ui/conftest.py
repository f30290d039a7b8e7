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
from tests.ui.fixtures import adb_source as adb_source
from tests.ui.fixtures import harness as harness  # the window fixture, re-exported
from tests.ui.fixtures import journal_dir as journal_dir

pytestmark = pytest.mark.gui


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
