"""`cetp-inspector`: the window with no argument, headless subcommands otherwise.

Every failure is printed as a structured error (code, message, retryable, hint) and mapped
to a documented exit code (docs/cli.md); a traceback is shown only with
`CETP_INSPECTOR_DEBUG=1`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from inspector.cli.context import Ctx
from inspector.cli.output import make_streams_safe, print_error
from inspector.cli.parser import UsageError, build_parser
from inspector.session.errors import ErrorInfo, ExitCode, InspectorError

DEBUG_ENV = "CETP_INSPECTOR_DEBUG"


def run_gui(argv: list[str], args: object = None) -> int:
    """Open the window; say clearly when Qt cannot start here."""
    if sys.platform.startswith("linux") and not any(
        os.environ.get(v) for v in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    ):
        print_error(ErrorInfo(
            code="NO_DISPLAY", message="cannot open the window: no display ($DISPLAY and "
            "$WAYLAND_DISPLAY are unset)",
            hint="run it in a desktop session, or use the subcommands, which need no display: "
            "cetp-inspector --help"), as_json=False, command="gui")
        return ExitCode.DEVICE
    try:
        from inspector.ui.app import run_gui as ui_run_gui
    except ImportError as exc:
        print_error(ErrorInfo(
            code="NO_GUI", message=f"cannot open the window: {exc}",
            hint="install PySide6 and qasync (pip install cetp-inspector), or use the "
            "subcommands: cetp-inspector --help"), as_json=False, command="gui")
        return ExitCode.DEVICE
    # Qt options are not ours to pass through; the common options (-d, --virtual-*) are
    return int(ui_run_gui(sys.argv[:1], args) or 0)


def error_info(exc: BaseException) -> tuple[ErrorInfo, ExitCode]:
    """Any failure → (printable error, exit code)."""
    from inspector.consumer import errors as cerr
    from inspector.protocol.cetp import ProtocolViolation
    from inspector.relay.api import RelayError

    if isinstance(exc, InspectorError):
        return exc.info(), exc.exit_code
    if isinstance(exc, cerr.ProviderError):
        info = exc.info
        return ErrorInfo(code=info.error_code, message=info.error_message,
                         retryable=bool(info.retryable), hint=exc.hint,
                         details={"error_details": info.error_details}
                         if info.error_details is not None else None), ExitCode.PROVIDER_ERROR
    if isinstance(exc, cerr.TransportFailure):
        return ErrorInfo(code=exc.code, message=exc.message, hint=exc.hint,
                         retryable=exc.code in ("TIMEOUT", "DISCONNECTED", "BUSY")), \
            ExitCode.DEVICE
    if isinstance(exc, cerr.RequestRefused):
        return ErrorInfo(code=exc.code, message=exc.message, hint=exc.hint), ExitCode.USAGE
    if isinstance(exc, cerr.ConsumerError):  # NegotiationFailed, MalformedReply
        return ErrorInfo(code=exc.code, message=exc.message, hint=exc.hint), \
            ExitCode.PROVIDER_ERROR
    if isinstance(exc, RelayError):
        return ErrorInfo(code=exc.code, message=exc.message, hint=exc.hint,
                         retryable=exc.code in ("TIMEOUT", "DISCONNECTED", "BUSY")), \
            ExitCode.DEVICE
    if isinstance(exc, ProtocolViolation):
        return ErrorInfo(code="PROTOCOL_VIOLATION", message=str(exc)), ExitCode.PROVIDER_ERROR
    if isinstance(exc, TimeoutError):
        return ErrorInfo(code="TIMEOUT", message="the command did not finish in time",
                         retryable=True, hint="raise --timeout, or check the device"), \
            ExitCode.DEVICE
    if isinstance(exc, OSError):
        return ErrorInfo(code="OS_ERROR", message=str(exc)), ExitCode.DEVICE
    return ErrorInfo(code="INTERNAL", message=f"{type(exc).__name__}: {exc}",
                     hint=f"this is an inspector bug; rerun with {DEBUG_ENV}=1 for a "
                     "traceback and report it"), ExitCode.PROVIDER_ERROR


def _handlers() -> dict[str, Callable[[Ctx], Awaitable[int]]]:
    from inspector.cli import (
        cmd_bundle,
        cmd_call,
        cmd_conformance,
        cmd_explore,
        cmd_ext,
        cmd_virtual,
    )

    return {
        "devices": cmd_explore.cmd_devices,
        "providers": cmd_explore.cmd_providers,
        "negotiate": cmd_explore.cmd_negotiate,
        "info": cmd_explore.cmd_info,
        "tools": cmd_explore.cmd_tools,
        "extensions": cmd_explore.cmd_extensions,
        "ext-manifest": cmd_explore.cmd_ext_manifest,
        "call": cmd_call.cmd_call,
        "ops": cmd_call.cmd_ops,
        "ext-call": cmd_ext.cmd_ext_call,
        "virtual fault": cmd_virtual.cmd_virtual_fault,
        "conformance": cmd_conformance.cmd_conformance,
        "bundle replay": cmd_bundle.cmd_bundle_replay,
    }


async def run_command(ctx: Ctx) -> int:
    """Run one async command with the overall timeout; always close the session."""
    key = ctx.command if ctx.args.command in ("virtual", "bundle") else ctx.args.command
    handler = _handlers()[key]
    try:
        return await asyncio.wait_for(handler(ctx), ctx.args.timeout)
    except Exception:
        await ctx.explain_failure()  # a phone app stopped or restricted? (docs/devices.md)
        raise
    finally:
        try:
            await asyncio.wait_for(ctx.close(), 5)
        except Exception:  # closing must not hide the command's own outcome
            logging.getLogger(__name__).debug("closing the session failed", exc_info=True)


def main(argv: list[str] | None = None) -> int:
    """Console entry point (`cetp-inspector`)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    make_streams_safe()
    if not argv:
        return run_gui(argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        as_json = "--json" in argv
        if not as_json:
            sys.stderr.write(exc.usage)
        print_error(ErrorInfo(code="USAGE", message=exc.message,
                              hint="cetp-inspector --help, or COMMAND --help"),
                    as_json=as_json, command=next((a for a in argv if not a.startswith("-")),
                                                  ""))
        return ExitCode.USAGE
    except SystemExit as exc:  # --help / --version
        return int(exc.code or 0) if isinstance(exc.code, int) else ExitCode.USAGE
    if args.command is None:
        return run_gui(argv, args)
    if args.command == "virtual" and args.virtual_command is None:
        print_error(ErrorInfo(code="USAGE", message="virtual needs an action",
                              hint="cetp-inspector virtual serve|fault --help"),
                    as_json=args.json, command="virtual")
        return ExitCode.USAGE
    if args.command == "ops" and args.ops_command is None:
        args.ops_command = "list"
    ctx = Ctx(args)
    if not os.environ.get(DEBUG_ENV):
        logging.basicConfig(level=logging.CRITICAL)
    try:
        if args.command == "virtual" and args.virtual_command == "serve":
            from inspector.cli.cmd_virtual import cmd_virtual_serve

            return cmd_virtual_serve(ctx)
        if args.command == "mcp":  # issue 15: serves until stopped (no --timeout)
            from inspector.cli.cmd_mcp import cmd_mcp

            return cmd_mcp(ctx)
        if args.command == "bundle" and args.bundle_command != "replay":
            from inspector.cli.cmd_bundle import cmd_bundle

            return cmd_bundle(ctx)
        return asyncio.run(run_command(ctx))
    except KeyboardInterrupt:
        print_error(ErrorInfo(code="INTERRUPTED", message="interrupted",
                              hint="an operation may still be running on the provider: "
                              "`cetp-inspector ops list`"), as_json=args.json,
                    command=ctx.command)
        return 130
    except BaseException as exc:
        if isinstance(exc, SystemExit):
            raise
        if os.environ.get(DEBUG_ENV):
            import traceback

            traceback.print_exc()
        info, code = error_info(exc)
        extra: dict[str, Any] = {"device": ctx.serial or None, **ctx.error_extra()}
        print_error(info, as_json=args.json, command=ctx.command, stream=ctx.out
                    if args.json else ctx.err, extra=extra)
        if not args.json:
            ctx.print_failure_diagnostics()
        return int(code)


if __name__ == "__main__":
    sys.exit(main())
