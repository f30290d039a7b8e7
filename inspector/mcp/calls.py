"""One bridged tools/call, through the consumer engine and the session layer.

Nothing here speaks CETP itself: `ProviderSession.run` / `launch_resolution` / `resume` /
`wait_operation` / `cancel_operation` / `fetch_file` and `ExtensionHost.execute` do, exactly
as for the CLI's `call` (inspector/cli/cmd_call.py `follow`). This module decides what an
MCP client may do and turns the outcome into a `CallToolResult`:

- a gated tool (see catalog) that the user did not allow → tool error saying how to allow it;
- a provider confirmation → "confirm on the phone" progress, then the provider's own
  PendingIntent is launched on the device (or, when the client supports elicitation, the
  client is asked first; declining there launches nothing); the bridge never answers it;
- an async operation → MCP progress from get_operation; MCP cancellation → CETP
  cancel_operation (queried until terminal, §4.4);
- a file result → read and verified (size + SHA-256, §4.5) before it is returned as an
  embedded resource (small) or a resource link (large); refused when verification fails;
- OUTCOME_UNKNOWN → retried once with the SAME request_id (the provider deduplicates).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types

from inspector.consumer import errors as cerr
from inspector.consumer.engine import ProviderSession
from inspector.consumer.execution import ExecState, Execution
from inspector.consumer.v1 import V1ProviderSession
from inspector.mcp.catalog import BridgedTool
from inspector.protocol import andyclaw as ac
from inspector.protocol.text import one_line
from inspector.relay.api import DISCONNECTED
from inspector.tasks import spawn

log = logging.getLogger(__name__)

#: file results up to this size are embedded; larger ones become resource links
EMBED_LIMIT = 1024 * 1024
RESULT_URI = "cetp-result://{request_id}"
#: seconds between "confirm on the phone" reminders while the provider's screen is up
REMIND_S = 5.0

Progress = Callable[[float, float | None, str], Awaitable[None]]
Elicit = Callable[[str], Awaitable[bool]]
Note = Callable[[str, dict[str, Any]], None]


@dataclass
class CallHooks:
    """What the bridge gives one call (all optional but `note`)."""

    note: Note
    progress: Progress | None = None
    #: asks the MCP client's user; True = go on to the provider's confirmation
    elicit: Elicit | None = None
    #: "phone" or "virtual device" — where the provider's confirmation appears
    screen: str = "phone"
    #: verified file results kept for resources/read (uri → (media type, path))
    resources: dict[str, tuple[str, str]] = field(default_factory=dict)
    max_read_bytes: int | None = None
    remind_s: float = REMIND_S


def text_result(text: str, *, error: bool = False, meta: dict[str, Any] | None = None,
                structured: dict[str, Any] | None = None) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                isError=error, structuredContent=structured,
                                _meta=meta)


def refusal(bt: BridgedTool) -> types.CallToolResult:
    return text_result(
        f"MUTATION_NOT_ALLOWED: {bt.name} was not called: {bt.gate_reason}. The bridge only "
        f"calls such tools when the user allows them: restart it with --allow-mutations "
        f"{bt.name} (or {bt.remote_name}, or * for every tool).", error=True,
        meta={"cetp-inspector/error": {"code": "MUTATION_NOT_ALLOWED", "tool": bt.name}})


async def _progress(hooks: CallHooks, current: float, total: float | None, msg: str) -> None:
    if hooks.progress is None:
        return
    try:
        await hooks.progress(current, total, msg)
    except Exception as exc:  # a client gone away must not fail the provider call
        log.info("progress notification failed: %s", exc)


async def ensure_negotiated(ps: ProviderSession) -> None:
    """negotiate has no side effect, so one retry after a lost connection is safe."""
    try:
        await ps.ensure_session()
    except cerr.TransportFailure as exc:
        if exc.code not in (DISCONNECTED, "IPC_FAILED"):
            raise
        await ps.ensure_session()


async def call_v2(ps: ProviderSession, bt: BridgedTool, args: dict[str, Any],
                  hooks: CallHooks) -> tuple[types.CallToolResult, Execution | None]:
    if not bt.allowed:
        return refusal(bt), None
    await ensure_negotiated(ps)
    ex = ps.new_execution(bt.remote_name, args)
    hooks.note("execution", {"tool": bt.name, "request_id": ex.request_id})
    ex = await ps.run(ex)
    if ex.state == ExecState.OUTCOME_UNKNOWN:
        hooks.note("retry", {"tool": bt.name, "request_id": ex.request_id,
                             "why": one_line(ex.message, 200)})
        ex = await ps.run(ex)  # the same Execution: the same request_id
    if ex.state == ExecState.NEEDS_RESOLUTION and ex.resolution is not None:
        ex = await _confirm(ps, ex, bt, hooks)
        if ex.state == ExecState.NEEDS_RESOLUTION:
            return text_result(
                "USER_DECLINED: the user declined in the MCP client, so the provider's "
                f"confirmation was not opened on the {hooks.screen} and nothing was done "
                f"(request_id {ex.request_id}).", error=True), ex
    if ex.state == ExecState.ACCEPTED:
        ex = await _wait(ps, ex, bt, hooks)
    if ex.state == ExecState.SUCCEEDED and ex.result_fd is not None:
        return await _file(ps, ex, bt, hooks), ex
    return result_for(ex, bt), ex


async def _confirm(ps: ProviderSession, ex: Execution, bt: BridgedTool,
                   hooks: CallHooks) -> Execution:
    """The provider asked for the user's confirmation (§4.3): it is answered on the
    provider's own screen; an elicitation only decides whether to open that screen."""
    if hooks.elicit is not None:
        go_on = await hooks.elicit(
            f"{bt.remote_name} ({bt.package}) needs your confirmation. Continue to open the "
            f"provider's confirmation on the {hooks.screen}? You still approve or deny it "
            "there.")
        if not go_on:
            hooks.note("confirmation", {"tool": bt.name, "request_id": ex.request_id,
                                        "state": "declined_in_client"})
            return ex
    hooks.note("confirmation", {"tool": bt.name, "request_id": ex.request_id,
                                "state": "pending", "screen": hooks.screen})
    ask = (f"confirm on the {hooks.screen}: {bt.package} asks for confirmation of "
           f"{bt.remote_name}")

    async def remind() -> None:
        # a reminder every few seconds: the user sees it, and clients that reset their
        # request timeout on progress keep waiting for the person on the phone
        waited = 0.0
        while True:
            await _progress(hooks, waited, None, ask + (f" (waiting {waited:.0f} s)"
                                                        if waited else ""))
            await anyio.sleep(hooks.remind_s)
            waited += hooks.remind_s

    async with anyio.create_task_group() as tg:
        tg.start_soon(remind)
        try:
            ex = await ps.launch_resolution(ex)
        finally:
            tg.cancel_scope.cancel()
    approved = ex.resolution_result == "approved"
    hooks.note("confirmation", {"tool": bt.name, "request_id": ex.request_id,
                                "state": "approved" if approved else "denied"})
    if ex.state == ExecState.RESOLUTION_DECLINED and ex.resume_token:
        ex = await ps.resume(ex)  # the provider's own verdict (USER_CANCELLED)
    return ex


async def _wait(ps: ProviderSession, ex: Execution, bt: BridgedTool,
                hooks: CallHooks) -> Execution:
    """Poll the operation, forwarding progress; on MCP cancellation cancel it (§4.4)."""
    queue: asyncio.Queue[tuple[float, float | None, str]] = asyncio.Queue()

    def on_change(e: Execution) -> None:
        op = e.operation
        if op is None:
            return
        p = op.progress
        queue.put_nowait((float(p.current) if p and p.current is not None else 0.0,
                          float(p.total) if p and p.total is not None else None,
                          f"{op.state.value} {(p.message or '') if p else ''}".strip()))

    async def pump() -> None:
        while True:
            cur, total, msg = await queue.get()
            await _progress(hooks, cur, total, one_line(msg, 200))

    hooks.note("operation", {"tool": bt.name, "request_id": ex.request_id,
                             "operation_id": ex.operation_id, "state": "accepted"})
    async with anyio.create_task_group() as tg:
        tg.start_soon(pump)
        try:
            ex = await ps.wait_operation(ex, on_change)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                outcome = await ps.cancel_operation(ex, confirm=True)
                hooks.note("operation", {
                    "tool": bt.name, "request_id": ex.request_id,
                    "operation_id": ex.operation_id, "state": "cancel_requested_by_client",
                    "confirmed_cancelled": outcome.confirmed_cancelled,
                    "message": one_line(outcome.message, 300)})
            raise
        finally:
            tg.cancel_scope.cancel()
    return ex


async def _file(ps: ProviderSession, ex: Execution, bt: BridgedTool,
                hooks: CallHooks) -> types.CallToolResult:
    total = ex.file.size_bytes if ex.file else None

    last = [-1.0]

    def on_bytes(n: int, t: int | None) -> None:
        # bounded: one notification per 10 % (or per MiB without a total)
        size = t or total
        step = size / 10 if size else 1024 * 1024
        if hooks.progress is not None and n - last[0] >= step:
            last[0] = n
            spawn(_progress(hooks, n, float(size) if size else None,
                            "reading and verifying the file result"), "mcp-file-progress")

    verdict = await ps.fetch_file(ex, user_cap=hooks.max_read_bytes, on_progress=on_bytes,
                                  keep_content=True)
    checks = {c.name: {"status": c.status.value, "message": one_line(c.message, 300)}
              for c in verdict.checks}
    meta = {"cetp-inspector/file": {"request_id": ex.request_id, "bytes": verdict.bytes_read,
                                    "sha256": verdict.sha256, "checks": checks}}
    if not verdict.ok or not verdict.content_path or ex.file is None:
        failed = ", ".join(f"{c.name}: {one_line(c.message, 200)}" for c in verdict.failed())
        verdict.discard()
        return text_result(
            f"VERIFICATION_FAILED: the file result of {ex.tool_name} (request_id "
            f"{ex.request_id}) does not match what the provider declared ({failed}); it is "
            "not returned. Call again, or report the provider.", error=True, meta=meta)
    f = ex.file
    uri = RESULT_URI.format(request_id=ex.request_id)
    summary = (f"verified file result: {f.media_type}, {verdict.bytes_read} bytes, sha256 "
               f"{verdict.sha256} (matches the provider's declaration)")
    path = Path(verdict.content_path)
    if verdict.bytes_read <= EMBED_LIMIT:
        data = path.read_bytes()
        verdict.discard()
        resource: types.TextResourceContents | types.BlobResourceContents
        if f.media_type.startswith("text/") or "json" in f.media_type:
            try:
                resource = types.TextResourceContents(uri=uri, mimeType=f.media_type,
                                                      text=data.decode("utf-8"))
            except UnicodeDecodeError:
                resource = types.BlobResourceContents(
                    uri=uri, mimeType=f.media_type, blob=base64.b64encode(data).decode())
        else:
            resource = types.BlobResourceContents(uri=uri, mimeType=f.media_type,
                                                  blob=base64.b64encode(data).decode())
        content: list[Any] = [types.TextContent(type="text", text=summary),
                              types.EmbeddedResource(type="resource", resource=resource)]
    else:
        hooks.resources[uri] = (f.media_type, str(path))
        content = [types.TextContent(type="text", text=summary + "; read it with "
                                     "resources/read"),
                   types.ResourceLink(type="resource_link", uri=uri, name=f"{ex.tool_name} "
                                      f"result", mimeType=f.media_type,
                                      size=verdict.bytes_read)]
    # a tool with an MCP outputSchema must return structuredContent: the verified document
    structured = verdict.value if (bt.output_schema is not None and verdict.parsed
                                   and isinstance(verdict.value, dict)) else None
    return types.CallToolResult(content=content, isError=False, _meta=meta,
                                structuredContent=structured)


def result_for(ex: Execution, bt: BridgedTool) -> types.CallToolResult:
    """An execution that ended (inline value or error) as a CallToolResult."""
    meta = {"cetp-inspector/execution": {
        "request_id": ex.request_id, "state": ex.state.value,
        "operation_id": ex.operation_id, "attempts": len(ex.attempts)}}
    if ex.state == ExecState.SUCCEEDED and ex.has_value:
        bad = [f for f in ex.output_findings if not f.ok]
        if bad:
            return text_result(
                "VERIFICATION_FAILED: the result does not match the tool's output_schema: "
                + "; ".join(one_line(f.message, 200) for f in bad[:5]), error=True, meta=meta)
        text = json.dumps(ex.value, ensure_ascii=False)
        structured = ex.value if (bt.output_schema is not None
                                  and isinstance(ex.value, dict)) else None
        return text_result(text, meta=meta, structured=structured)
    if ex.state == ExecState.SUCCEEDED:
        return text_result("succeeded (no value)", meta=meta)
    code = ex.error.error_code if ex.error is not None else {
        ExecState.RESOLUTION_DECLINED: "USER_DECLINED",
        ExecState.OUTCOME_UNKNOWN: "OUTCOME_UNKNOWN",
        ExecState.MALFORMED: "MALFORMED_REPLY"}.get(ex.state, ex.state.value.upper())
    message = ex.error.error_message if ex.error is not None else ex.message
    hint = ""
    if ex.state == ExecState.OUTCOME_UNKNOWN:
        hint = " The outcome is unknown: calling again sends a new request."
    elif ex.error is not None and ex.error.retryable:
        hint = " Retryable."
    return text_result(f"{code}: {one_line(message, 2000)} (request_id {ex.request_id}, "
                       f"state {ex.state.value}).{hint}", error=True, meta=meta)


async def call_v1(ps: V1ProviderSession, bt: BridgedTool, args: dict[str, Any],
                  hooks: CallHooks) -> tuple[types.CallToolResult, Execution | None]:
    if not bt.allowed:
        return refusal(bt), None
    ex = ps.new_execution(bt.remote_name, args)
    hooks.note("execution", {"tool": bt.name, "request_id": ex.request_id})
    ex = await ps.run(ex)
    return result_for(ex, bt), ex


async def call_extension(host: Any, bt: BridgedTool, args: dict[str, Any],
                         hooks: CallHooks) -> types.CallToolResult:
    if not bt.allowed:
        return refusal(bt)
    try:
        reply: ac.ExtensionReply = await host.execute(bt.remote_name, args, approved=bt.allowed)
    except cerr.RequestRefused as exc:
        return text_result(f"{exc.code}: {exc.message}", error=True)
    meta = {"cetp-inspector/extension": {"bridge": reply.bridge.value,
                                         "outcome": reply.outcome,
                                         "problems": reply.problems[:10]}}
    if reply.ok:
        if reply.result is None:
            return text_result(f"{reply.outcome} via the {reply.bridge.value} bridge"
                               + (" (activity launched)" if reply.launched else ""), meta=meta)
        return text_result(reply.result, meta=meta)
    message = (reply.error or reply.in_band_error or reply.exception_message
               or reply.outcome)
    code = "IN_BAND_ERROR" if reply.in_band_error else reply.outcome.upper()
    return text_result(f"{code}: {one_line(message, 2000)}", error=True, meta=meta)
