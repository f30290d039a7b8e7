"""Work-arounds for the Qt binding in use.

PySide6 6.12 wheels return `None` from every void method without taking a reference
(fine on Python ≥ 3.12, where None is immortal). On Python 3.11 each call of e.g.
`QLabel.setText` or `QSyntaxHighlighter.setFormat` drops one reference to None, and after
enough calls (a few seconds of highlighting a big result) the interpreter aborts with
"none_dealloc: deallocating None". `immortalize_none()` gives None a reference count so
large it cannot reach zero, which is what Python 3.12 does by design.

pyproject.toml excludes the leaking release, so normally nothing is done; the guard only acts
when the leak is measured (someone installed 6.12 by hand), and logs that it did.
"""

from __future__ import annotations

import ctypes
import logging
import sys

log = logging.getLogger(__name__)

_BALLAST = 1 << 48


def none_leaks_per_void_call() -> int:
    """How many None references one void Qt call drops (0 on a healthy binding)."""
    from PySide6.QtGui import QStandardItem

    item = QStandardItem()
    before = sys.getrefcount(None)
    for _ in range(100):
        item.setText("x")
    return max(0, round((before - sys.getrefcount(None)) / 100))


def immortalize_none() -> bool:
    """Raise None's reference count far out of reach on Python < 3.12. Idempotent."""
    if sys.version_info >= (3, 12):
        return False
    refcnt = ctypes.c_ssize_t.from_address(id(None))
    if refcnt.value < _BALLAST // 2:
        refcnt.value += _BALLAST
    return True


def guard_against_none_leak() -> bool:
    """Measure the leak and neutralise it only when present; True when it acted."""
    if sys.version_info >= (3, 12) or none_leaks_per_void_call() == 0:
        return False
    log.warning("this PySide6 build leaks references to None on every void call; "
                "install the pinned version (pip install 'pyside6<6.12') to avoid a crash")
    return immortalize_none()
