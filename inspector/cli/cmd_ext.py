"""`ext-call`: an AndyClaw extension function through one of the four bridges."""

from __future__ import annotations

import json

from inspector.cli.cmd_call import read_args
from inspector.cli.cmd_explore import extension_doc
from inspector.cli.context import Ctx
from inspector.cli.output import line, pretty_value, print_error, print_json
from inspector.cli.terminal_text import safe_text
from inspector.protocol import andyclaw as ac
from inspector.session.errors import ErrorInfo, ExitCode, InspectorError


async def cmd_ext_call(ctx: Ctx) -> int:
    a = ctx.args
    params = json.loads(read_args(ctx))
    session = await ctx.open_session()
    decl = session.find_extension(a.extension)
    bridge = ac.Bridge(a.bridge) if a.bridge else None
    if bridge is not None and decl.component(bridge) is None:
        raise InspectorError(
            "NO_BRIDGE", f"{decl.package} has no {bridge.value} bridge",
            hint="its bridges: " + (", ".join(b.bridge.value for b in decl.bridges) or "none"))
    host = session.extension_host(decl)
    if decl.manifest_resource_id is not None and not host.functions:
        try:
            await host.read_manifest()  # requiresApproval comes from the manifest
        except Exception as exc:  # the call itself may still work; say why it was skipped
            line(f"(manifest not read: {safe_text(str(exc), 200, one_line=True)})", ctx.err)
    reply = await host.execute(a.function, params, bridge=bridge, approved=bool(a.approve))
    ok = reply.ok and not reply.in_band_error
    code = ExitCode.OK if ok else (ExitCode.DEVICE if reply.outcome == "timeout"
                                   else ExitCode.PROVIDER_ERROR)
    err: ErrorInfo | None = None
    if not ok:
        err = ErrorInfo(code=(reply.outcome.upper() if not reply.in_band_error
                              else "IN_BAND_ERROR"),
                        message=reply.error or reply.in_band_error or reply.exception_message
                        or reply.outcome,
                        retryable=reply.outcome == "timeout",
                        hint="; ".join(reply.problems))
    doc = ctx.base_doc(ok)
    doc.update({
        "extension": extension_doc(decl), "function": a.function,
        "bridge": reply.bridge.value, "reply": reply.model_dump(mode="json"),
    })
    if ctx.json:
        if err is not None:
            doc["error"] = err.model_dump()
        print_json(doc, ctx.out)
        return code
    line(f"{reply.bridge.value} bridge: {reply.outcome}", ctx.out)
    if reply.launched is not None:
        line(f"launched: {reply.launched} {safe_text(reply.component or '', 200, one_line=True)}",
             ctx.out)
    if reply.result is not None:
        line(pretty_value(reply.decoded) if reply.result_is_json else safe_text(reply.result),
             ctx.out)
    for p in reply.problems:
        line(f"  ! {safe_text(p, 300, one_line=True)}", ctx.out)
    if err is not None:
        print_error(err, as_json=False, command=ctx.command, stream=ctx.err)
    return code
