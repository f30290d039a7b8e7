"""The PySide6 + qasync inspector window. Binds to the session layer; owns no protocol logic.

Importing the package first checks the Qt binding for the None-reference leak of PySide6
6.12 on Python 3.11 (see `qt_compat`); the project pins a binding without it, and a leaking
one found anyway (a user's own environment) is neutralised instead of crashing later.
"""

from inspector.ui.qt_compat import guard_against_none_leak

guard_against_none_leak()
