"""`virtual serve` (the standalone virtual device) and `virtual fault` (fault injection)."""

from __future__ import annotations

import secrets

from inspector.cli.context import Ctx
from inspector.cli.output import line
from inspector.session.devices import VIRTUAL_SERIAL
from inspector.session.errors import ExitCode, InspectorError


def cmd_virtual_serve(ctx: Ctx) -> int:
    """Delegates to `python -m inspector.virtual` (same options, same output)."""
    from inspector.virtual.__main__ import main as serve_main

    a = ctx.args
    token = a.serve_token or secrets.token_urlsafe(24)
    if not a.serve_token:
        ctx.err.write(f"token: {token}\n")
        ctx.err.flush()
    argv = ["--listen", a.listen, "--token", token]
    if a.state_dir:
        argv += ["--state-dir", a.state_dir]
    for p in a.plugin:
        argv += ["--plugin", p]
    if getattr(a, "android_api", None) is not None:
        argv += ["--android-api", str(a.android_api)]
    return serve_main(argv)


async def cmd_virtual_fault(ctx: Ctx) -> int:
    a = ctx.args
    session = await ctx.open_session(discover=False)
    if session.serial != VIRTUAL_SERIAL:
        raise InspectorError("NOT_VIRTUAL", "faults exist only on the virtual device",
                             hint="use -d virtual (or --relay-socket to a virtual device)")
    args: dict[str, object] = {}
    if a.package:
        args["package"] = a.package
    if a.ms is not None:
        args["ms"] = a.ms
    if a.when is not None:
        args["when"] = a.when
    if a.count is not None:
        args["count"] = a.count
    if a.mode is not None:
        args["mode"] = a.mode
    armed = await session.relay.fault(a.kind, **args)
    if ctx.json:
        ctx.emit({"fault": a.kind, "args": args, "armed": armed})
    else:
        line(f"fault {a.kind} {'armed' if armed else 'NOT armed'}", ctx.out)
    return ExitCode.OK if armed else ExitCode.DEVICE
