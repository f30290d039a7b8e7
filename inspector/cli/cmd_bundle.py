"""`bundle list|create|open`: recorded sessions (`--record NAME`) and bug-report bundles.

The journal and bundle formats live in `inspector.session.journal` and
`inspector.session.bundle_file`; this module only drives them from the command line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspector.cli.context import Ctx
from inspector.cli.output import line, table
from inspector.cli.terminal_text import safe_text
from inspector.session.errors import ExitCode, InspectorError, NotFoundError


def _journal() -> Any:
    from inspector.session import journal

    return journal


def find_session(name: str) -> Any:
    """A recorded session by id or name (the newest of that name)."""
    j = _journal()
    sessions = j.list_sessions()
    for s in sessions:
        if name in (s.session_id, s.name):
            return s
    raise NotFoundError("session", name, [s.name or s.session_id for s in sessions])


def cmd_bundle(ctx: Ctx) -> int:
    a = ctx.args
    action = a.bundle_command or "list"
    if action == "list":
        return bundle_list(ctx)
    if action == "create":
        return bundle_create(ctx)
    return bundle_open(ctx)


def bundle_list(ctx: Ctx) -> int:
    sessions = _journal().list_sessions()
    docs = [s.model_dump(mode="json") for s in sessions]
    if ctx.json:
        ctx.emit({"sessions": docs})
        return ExitCode.OK
    if not sessions:
        line("no recorded sessions (record one with --record NAME)", ctx.out)
        return ExitCode.OK
    table([[s.session_id, s.name, str(s.exchange_lines), str(s.device.get("serial", ""))]
           for s in sessions], ["SESSION", "NAME", "EXCHANGES", "DEVICE"], ctx.out)
    return ExitCode.OK


def bundle_create(ctx: Ctx) -> int:
    from inspector.session.bundle_file import BundleError, create_bundle

    a = ctx.args
    summary = find_session(a.session)
    j = _journal()
    try:
        contents = j.read_journal(summary.path)
        dest = Path(a.output or f"{summary.name or summary.session_id}.cetpbundle")
        path = create_bundle(dest, contents, note=a.note, redact=not a.no_redact)
    except (j.JournalError, BundleError) as exc:
        raise InspectorError("BUNDLE", str(exc), hint="check the session and the output path",
                             exit_code=ExitCode.USAGE) from exc
    doc = {"bundle": str(path), "session_id": summary.session_id, "name": summary.name,
           "exchanges": len(contents.exchanges), "redacted": not a.no_redact}
    if ctx.json:
        ctx.emit(doc)
    else:
        line(f"wrote {path} ({len(contents.exchanges)} exchanges, "
             f"{'secrets redacted' if not a.no_redact else 'NOT redacted'})", ctx.out)
    return ExitCode.OK


def bundle_open(ctx: Ctx) -> int:
    from inspector.session.bundle_file import BundleError, open_bundle

    try:
        report = open_bundle(ctx.args.file)
    except BundleError as exc:
        raise InspectorError("BAD_BUNDLE", str(exc), hint="is this a .cetpbundle file?",
                             exit_code=ExitCode.USAGE) from exc
    doc = {
        "bundle": report.path,
        "manifest": report.manifest.model_dump(mode="json"),
        "device": report.device,
        "exchanges": [
            {"id": e.id, "kind": e.kind.value, "target": e.target, "method": e.method,
             "tool": e.tool, "status": e.status.value, "error_code": e.error_code,
             "duration_ms": e.duration_ms}
            for e in report.exchanges
        ],
        "summary": report.summary,
    }
    if ctx.json:
        ctx.emit(doc)
        return ExitCode.OK
    line(safe_text(report.summary, 20_000), ctx.out)
    table([[e.method, e.target, e.tool or "", e.status.value, e.error_code or ""]
           for e in report.exchanges], ["METHOD", "TARGET", "TOOL", "STATUS", "ERROR"], ctx.out)
    return ExitCode.OK
