"""Work-arounds for the Qt binding in use.

PySide6 6.12 wheels return `None` from every void method without taking a reference
(fine on Python ≥ 3.12, where None is immortal). On Python 3.11 each call of e.g.
`QLabel.setText` or `QSyntaxHighlighter.setFormat` drops one reference to None, and after
enough calls (a few seconds of highlighting a big result) the interpreter aborts with
"none_dealloc: deallocating None". `immortalize_none()` gives None a reference count so
large it cannot reach zero, which is what Python 3.12 does by design.
"""

from __future__ import annotations

import ctypes
import sys

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
