"""The GUI suite's event-loop stall watchdog catches work on the UI thread and says where."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import QTimer

from tests.ui.stall_watchdog import ALLOWLIST, Watchdog

pytestmark = [pytest.mark.gui, pytest.mark.allow_stall]


def busy_handler(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:  # CPU on the UI thread, as a slow slot would burn it
        pass


def test_a_slot_busy_for_250_ms_is_a_stall_reported_with_its_stack(qtbot):
    dog = Watchdog()
    dog.start()
    try:
        QTimer.singleShot(0, lambda: busy_handler(0.25))
        qtbot.wait(500)
    finally:
        stalls = dog.stop()
    assert len(stalls) == 1
    assert stalls[0].seconds > 0.1 and stalls[0].cpu_seconds > 0.1
    assert "busy_handler" in stalls[0].describe()


def test_short_slots_and_the_tests_own_code_are_not_stalls(qtbot):
    dog = Watchdog()
    dog.start()
    try:
        for _ in range(5):
            QTimer.singleShot(0, lambda: busy_handler(0.02))
        qtbot.wait(200)
        busy_handler(0.2)  # the test's own straight-line code: not the event loop
        qtbot.wait(50)
    finally:
        stalls = dog.stop()
    assert stalls == []


def test_every_allowlist_entry_says_why():
    assert all(reason.strip() for reason in ALLOWLIST.values())
