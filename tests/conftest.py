"""Suite-wide hooks: the relay session token must never leak (tests/token_leaks.py)."""

from tests.token_leaks import (  # noqa: F401  (pytest finds hooks by name)
    pytest_configure,
    pytest_runtest_makereport,
    pytest_sessionfinish,
)
