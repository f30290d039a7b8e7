"""`bundle list|create|open|serve|replay`: recorded sessions (`--record NAME`) and
bug-report bundles. `serve` plays a bundle's recorded providers back on a standalone virtual
device (`inspector.virtual.apps.replayed`); `--virtual-bundle FILE` does the same in-process.

The journal and bundle formats live in `inspector.session.journal` and
`inspector.session.bundle_file`; this module only drives them from the command line.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import secrets
import signal
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
    if action == "serve":
        return bundle_serve(ctx)
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
    table([[s.session_id, s.name, str(s.exchange_count), str(s.device.get("serial", ""))]
           if not s.damaged else
           [s.session_id, f"DAMAGED: {s.damaged[:100]}", "-", "-"]
           for s in sessions], ["SESSION", "NAME", "EXCHANGES", "DEVICE"], ctx.out)
    return ExitCode.OK


def saved_screenshots(journal_path: Any) -> dict[str, bytes]:
    from inspector.session.screenshots import saved_screenshots as saved

    return saved(journal_path)


def bundle_extras_doc(path: Path) -> dict[str, Any]:
    """What issue 16 put in the bundle: logs or not, each file result's bytes and the cap."""
    from inspector.session.bundle_extras import export_report

    return export_report(path)


def print_bundle_extras(doc: dict[str, Any], out: Any) -> None:
    line("provider logs: " + ("included (redacted like the rest)" if doc["logs_included"]
                              else "left out (--no-logs)"), out)
    if doc.get("screenshots"):
        line(f"confirmation screenshots: {doc['screenshots']} (not redacted)", out)
    results = doc.get("file_results") or {}
    if results:
        line(f"file results (cap {doc['file_cap_bytes']:,} bytes each; bytes are not "
             "redacted):", out)
        for sha, r in sorted(results.items()):
            state = "included" if r.get("included") else f"not included: {r.get('reason', '')}"
            line(f"  {safe_text(sha, 80, one_line=True)}  {r.get('size', '?')} bytes  "
                 f"{safe_text(state, 200, one_line=True)}", out)


def bundle_create(ctx: Ctx) -> int:
    from inspector.session.bundle_file import BundleError, create_bundle

    a = ctx.args
    summary = find_session(a.session)
    j = _journal()
    try:
        contents = j.read_journal(summary.path)
        dest = Path(a.output or f"{summary.name or summary.session_id}.cetpbundle")
        path = create_bundle(dest, contents, note=a.note, redact=not a.no_redact,
                             include_logs=not a.no_logs, files=a.file,
                             file_cap_bytes=a.file_cap,
                             screenshots=saved_screenshots(summary.path)
                             if a.screenshots else None)
    except (j.JournalError, BundleError) as exc:
        raise InspectorError("BUNDLE", str(exc), hint="check the session and the output path",
                             exit_code=ExitCode.USAGE) from exc
    doc = {"bundle": str(path), "session_id": summary.session_id, "name": summary.name,
           "exchanges": len(contents.exchanges), "redacted": not a.no_redact,
           "lost_lines": contents.damaged_lines}
    doc.update(bundle_extras_doc(path))  # logs, file bytes and the cap (issue 16)
    if contents.damaged_lines:
        line(f"warning: {contents.damaged_lines} journal line(s) are torn or damaged; "
             "the bundle says so and cannot contain them", ctx.err)
    if ctx.json:
        ctx.emit(doc)
    else:
        line(f"wrote {path} ({len(contents.exchanges)} exchanges, "
             f"{'secrets redacted' if not a.no_redact else 'NOT redacted'})", ctx.out)
        print_bundle_extras(doc, ctx.out)
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
        "warnings": report.warnings,
    }
    for w in report.warnings:
        line(f"warning: {w}", ctx.err)
    if ctx.json:
        ctx.emit(doc)
        return ExitCode.OK
    line(safe_text(report.summary, 20_000), ctx.out)
    table([[e.method, e.target, e.tool or "", e.status.value, e.error_code or ""]
           for e in report.exchanges], ["METHOD", "TARGET", "TOOL", "STATUS", "ERROR"], ctx.out)
    return ExitCode.OK


def bundle_serve(ctx: Ctx) -> int:
    """A standalone virtual device holding only the bundle's recorded providers, with the
    same `--listen/--token` contract as `virtual serve` (one `listening on …` line on
    stdout once it accepts connections; runs until SIGINT/SIGTERM)."""
    from inspector.virtual.__main__ import parse_listen

    a = ctx.args
    try:
        listen = parse_listen(a.listen)
    except argparse.ArgumentTypeError as exc:
        raise InspectorError("BAD_SOCKET", f"--listen {a.listen!r}: {exc}",
                             hint="use unix:PATH or tcp:127.0.0.1:PORT",
                             exit_code=ExitCode.USAGE) from exc
    token = a.serve_token or secrets.token_urlsafe(24)
    if not a.serve_token:
        ctx.err.write(f"token: {token}\n")
        ctx.err.flush()
    return asyncio.run(_serve_bundle(ctx, listen, token))


def _replay_device(ctx: Ctx) -> Any:
    """A virtual device with no reference apps, the bundle's providers installed."""
    from inspector.virtual.apps.replayed import ReplayLoadError, install_bundle
    from inspector.virtual.device import VirtualDevice
    from inspector.virtual.plugins import PluginError

    a = ctx.args
    try:
        device = VirtualDevice(Path(a.state_dir) if a.state_dir else None, apps=[],
                               plugins=[Path(p) for p in a.plugin])
    except PluginError as exc:
        raise InspectorError("BAD_PLUGIN", str(exc), hint="check the file against "
                             "docs/virtual-device.md", exit_code=ExitCode.USAGE) from exc
    try:
        packages = install_bundle(device, a.file, notify=False)
    except ReplayLoadError as exc:
        raise InspectorError("BAD_BUNDLE", str(exc), hint="give a .cetpbundle file (cetp-"
                             "inspector bundle create) or a session journal",
                             exit_code=ExitCode.USAGE) from exc
    authorities = sorted(a for app in device.apps.values() for a in app.manifest.authorities())
    ctx.err.write(safe_text(f"replaying {', '.join(packages)} ({', '.join(authorities)}) "
                            f"from {a.file}", 2000) + "\n")
    ctx.err.flush()
    return device


async def _serve_bundle(ctx: Ctx, listen: tuple[str, str, int], token: str) -> int:
    from inspector.relay.server import RelayServer

    device = _replay_device(ctx)
    try:
        server = RelayServer(device, token)
        kind, where, port = listen
        handle = await (server.serve_unix(where) if kind == "unix"
                        else server.serve_tcp(where, port))
        address = handle.address if kind == "unix" else f"{handle.address[0]}:{handle.address[1]}"
        ctx.out.write(f"listening on {kind}:{address}\n")
        ctx.out.flush()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)
        try:
            await stop.wait()
        finally:
            handle.close()
            await handle.wait_closed()
    finally:
        await device.aclose()
    return ExitCode.OK


def _load_source(source: str) -> Any:
    """A bundle file's session, else a recorded session by id or name."""
    j = _journal()
    if Path(source).is_file():
        from inspector.session.bundle_file import BundleError, open_bundle

        try:
            return open_bundle(source).session
        except BundleError as exc:
            raise InspectorError("BAD_BUNDLE", str(exc), exit_code=ExitCode.USAGE) from exc
    try:
        return j.read_journal(find_session(source).path)
    except j.JournalError as exc:
        raise InspectorError("JOURNAL", str(exc), exit_code=ExitCode.USAGE) from exc


async def cmd_bundle_replay(ctx: Ctx) -> int:
    """Replay reads (and, if allowed, mutations) and diff recorded vs new answers.
    Exit 0 when every answer matches, 4 when some differ (docs/cli.md)."""
    from inspector.session.replay import replay_session

    a = ctx.args
    recorded = _load_source(a.source)
    session = await ctx.open_session(discover=False)
    report = await replay_session(recorded, session.relay,
                                  confirm=lambda _ex: bool(a.allow_mutations),
                                  new_request_ids=bool(a.new_request_ids))
    changed = report.changed
    results = [r.model_dump(mode="json") | {"changed": r.changed} for r in report.results]
    code = ExitCode.OK if not changed else ExitCode.VERIFICATION
    if ctx.json:
        doc = ctx.base_doc(not changed)
        doc.update({"results": results, "changed": len(changed)})
        if changed:
            doc["error"] = {"code": "REPLAY_DIFFERS", "retryable": False, "details": None,
                            "message": f"{len(changed)} answer(s) differ from the recording",
                            "hint": "see results[].diff"}
        from inspector.cli.output import print_json

        print_json(doc, ctx.out)
        return code
    table([[r.method, r.tool or "", r.action.value, r.kind.value,
            "CHANGED" if r.changed else "", r.reason] for r in report.results],
          ["METHOD", "TOOL", "ACTION", "KIND", "", "NOTE"], ctx.out)
    for r in changed:
        head = f"{r.method} {r.tool or ''}:" + (f" {r.error_code}" if r.error_code else "")
        line(safe_text(head, 200, one_line=True), ctx.out)
        for d in r.diff[:20]:
            line(f"  {safe_text(d.path, 200, one_line=True)}: "
                 f"{safe_text(repr(d.recorded), 200, one_line=True)} → "
                 f"{safe_text(repr(d.new), 200, one_line=True)}", ctx.out)
    return code
