"""What the provider logged during a CLI command's calls (issue 16).

`--json` output carries every exchange's lines (bounded) and crash under `provider_logs`;
text output prints only what needs attention (a crash with its first trace lines, error
lines) to stderr, so stdout stays the result.
"""

from __future__ import annotations

from typing import Any, TextIO

from inspector.cli.terminal_text import safe_text
from inspector.protocol.exchange import Exchange, ExchangeStatus
from inspector.session.provider_logs import logs_doc
from inspector.session.session import Session

MAX_EXCHANGES = 20
MAX_TEXT_LINES = 20


def logged_exchanges(session: Session | None) -> list[Exchange]:
    """The session's exchanges that carry log lines or a crash (the last few)."""
    if session is None:
        return []
    found = [x for x in session.exchanges if x.logs or x.crash is not None]
    return found[-MAX_EXCHANGES:]


def provider_logs_json(session: Session | None) -> list[dict[str, Any]]:
    return [logs_doc(x) for x in logged_exchanges(session)]


def explain_crash(session: Session | None, execution: Any) -> None:
    """Say "the provider crashed" in a failed execution's message when its last call's
    crash was linked only after the reply (a phone's logcat lags behind the relay)."""
    if session is None or not getattr(execution, "exchange_ids", None):
        return
    last = session.recorder.by_id(execution.exchange_ids[-1])
    message = getattr(execution, "message", "") or ""
    if last is None or last.crash is None or "the provider crashed" in message:
        return
    if last.status != ExchangeStatus.TRANSPORT_ERROR:
        return
    execution.message = f"{last.crash.summary()}. {message}".strip()


def print_provider_trouble(session: Session | None, stream: TextIO) -> None:
    """Crashes and error lines of this command's calls, as plain bounded text."""
    for x in logged_exchanges(session):
        if not x.logged_errors:
            continue
        stream.write(f"provider log during {safe_text(x.method, 64, one_line=True)} "
                     f"({safe_text(x.package, 120, one_line=True)}):\n")
        if x.crash is not None:
            stream.write(f"  {safe_text(x.crash.summary(0), 300, one_line=True)}\n")
            for t in x.crash.trace[:MAX_TEXT_LINES]:
                stream.write(f"    {safe_text(t.strip(), 300, one_line=True)}\n")
            continue
        for ln in [ln for ln in x.logs if ln.is_error][:MAX_TEXT_LINES]:
            stream.write(f"  {safe_text(ln.text(), 400, one_line=True)}\n")
