"""Session-wide check: no 8-character piece of a relay session token in any test's output.

Every token the device layer generates goes through
`inspector.device.relay_lifecycle.new_session_token`; this plugin wraps it, so the test
process knows every token. It then scans, for every test:
- what the test read back from capsys/capfd (`readouterr()`: CLI output the test consumed),
- the captured stdout/stderr/log sections and the failure text of each report,
- every log record of the `inspector` loggers (DEBUG and up, exception text included),
and, at the end of the session, every file under pytest's temporary folder (journals,
bundles, logs). A token fragment anywhere fails the test (or the session, for files).

Hook functions are imported into tests/conftest.py (`from tests.token_leaks import *`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

FRAGMENT = 8  # issue 11: no 8-character piece of a token may appear anywhere
MAX_FILE_BYTES = 8 * 1024 * 1024
_HEX_RUN = re.compile(rf"[0-9a-fA-F]{{{FRAGMENT},}}")


class TokenRegistry:
    """The tokens this process generated, and a fast fragment search over text.

    Any piece of SURE_LENGTH (12) or more characters is a leak wherever it is. A piece of
    8–11 characters is a leak when it makes up at least half of the hex run around it: a
    cut token ("…TOKEN 0a1b2c3d4e5f6a7b") is flagged, while a SHA-256 digest that shares 8
    hex digits with a token by chance (likely somewhere among the many digests a full run
    prints: 41 pieces × tokens / 16^8 per window) is not.
    """

    SURE_LENGTH = 12

    def __init__(self) -> None:
        self.tokens: list[str] = []
        self._hex: dict[str, list[tuple[int, int]]] = {}  # piece → (token index, offset)
        self._other: list[str] = []

    def add(self, token: str) -> None:
        index = len(self.tokens)
        self.tokens.append(token)
        if _HEX_RUN.fullmatch(token):
            low = token.lower()
            for i in range(len(low) - FRAGMENT + 1):
                self._hex.setdefault(low[i : i + FRAGMENT], []).append((index, i))
        else:
            self._other.extend(token[i : i + FRAGMENT] for i in range(len(token) - FRAGMENT + 1))

    def _longest(self, run: str) -> str:
        """The longest piece of a token inside the hex `run` (≥ 8 characters, or "")."""
        best = ""
        for i in range(len(run) - FRAGMENT + 1):
            for t, off in self._hex.get(run[i : i + FRAGMENT], ()):
                token = self.tokens[t].lower()
                n = FRAGMENT
                while i + n < len(run) and off + n < len(token) and run[i + n] == token[off + n]:
                    n += 1
                if n > len(best):
                    best = run[i : i + n]
        return best

    def find(self, text: str) -> list[str]:
        """The token fragments present in `text` (empty when clean)."""
        if not text or not self.tokens:
            return []
        found: list[str] = []
        for run in _HEX_RUN.findall(text):
            piece = self._longest(run.lower())
            if piece and (len(piece) >= self.SURE_LENGTH or 2 * len(piece) >= len(run)):
                found.append(piece)
        found.extend(p for p in self._other if p in text)
        return found


REGISTRY = TokenRegistry()
_leaks: list[str] = []  # found during the running test (readouterr, logs)


def _note(where: str, text: str) -> None:
    hits = REGISTRY.find(text)
    if hits:
        _leaks.append(f"{where}: token fragment {hits[0]!r} in {text[:300]!r}")


class _LeakHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
            if record.exc_info:
                text += "\n" + logging.Formatter().formatException(record.exc_info)
        except Exception:  # a broken log call is not this check's business
            return
        _note(f"log {record.name}", text)


def install() -> None:
    """Wrap the token factory, readouterr and the inspector loggers (once per process)."""
    from _pytest.capture import CaptureFixture

    from inspector.device import relay_lifecycle

    if getattr(relay_lifecycle.new_session_token, "_leak_checked", False):
        return
    original = relay_lifecycle.new_session_token

    def registered_token() -> str:
        token = original()
        REGISTRY.add(token)
        return token

    registered_token._leak_checked = True  # type: ignore[attr-defined]
    relay_lifecycle.new_session_token = registered_token  # type: ignore[assignment]

    read = CaptureFixture.readouterr

    def readouterr(self: Any) -> Any:
        result = read(self)
        _note("captured output the test read", f"{result.out}\n{result.err}")
        return result

    CaptureFixture.readouterr = readouterr  # type: ignore[method-assign]
    logger = logging.getLogger("inspector")
    logger.addHandler(_LeakHandler(logging.DEBUG))
    if logger.level == logging.NOTSET or logger.level > logging.DEBUG:
        logger.setLevel(logging.DEBUG)


def scan_files(root: Path) -> Iterable[str]:
    """Token fragments in files under `root` (journals, bundles, logs tests wrote)."""
    if not REGISTRY.tokens or not root.is_dir():
        return
    for path in root.rglob("*"):
        try:
            if not path.is_file() or path.is_symlink() or path.stat().st_size > MAX_FILE_BYTES:
                continue
            data = path.read_bytes()
        except OSError:
            continue
        if b"\0" in data[:4096]:
            continue  # binary (APKs, zip bundles): their text is not readable output
        text = data.decode("utf-8", "replace")
        hits = REGISTRY.find(text)
        if hits:
            yield f"{path}: token fragment {hits[0]!r}"


# -- pytest hooks (imported into tests/conftest.py) -------------------------------------------
def pytest_configure(config: pytest.Config) -> None:
    install()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    texts = [content for _name, content in report.sections]
    if report.failed:
        texts.append(report.longreprtext)
    for text in texts:
        _note("captured output", text)
    if call.when == "teardown" or (call.when == "call" and _leaks):
        leaks, _leaks[:] = list(_leaks), []
        if leaks and report.outcome != "failed":
            report.outcome = "failed"
            report.longrepr = "A relay session token leaked (issue 11):\n" + "\n".join(leaks)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is None or not REGISTRY.tokens:
        return
    try:
        root = factory.getbasetemp()
    except (OSError, ValueError):
        return
    found = list(scan_files(root))
    if found:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line("A relay session token leaked into files (issue 11):", red=True)
            for f in found[:20]:
                reporter.write_line(f"  {f}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
