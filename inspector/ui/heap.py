"""Keep the garbage collector's full passes off the user's back.

CPython's generation-2 collection walks every tracked object; in a window that holds a
session's exchanges, models and Qt wrappers that is 50–200 ms of UI-thread time (measured
in the conformance panel's test: 194 ms), a visible stall. Objects alive once the window is
up (modules, the window, its models) live as long as the app, so they are moved out of the
collector's reach with `gc.freeze()`: later full passes only walk what was made since.
"""

from __future__ import annotations

import gc


def freeze_heap() -> None:
    """Collect once, then exempt every surviving object from future collections."""
    gc.collect()
    gc.freeze()
