"""The PySide6 + qasync inspector window. Binds to the session layer; owns no protocol logic.

Importing the package applies `qt_compat.immortalize_none()` first: with PySide6 6.12 on
Python 3.11 every void Qt call drops a reference to None and a long session would abort.
"""

from inspector.ui.qt_compat import immortalize_none

immortalize_none()
