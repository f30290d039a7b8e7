"""`call` and `ops`: executions, confirmations, async operations and file results."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from inspector.cli.cmd_explore import provider_doc
from inspector.cli.context import Ctx
from inspector.cli.op_store import OperationStore, RememberedOperation, now_ms
from inspector.cli.output import line, pretty_value
from inspector.cli.progress import ProgressBar
from inspector.cli.provider_logs import (
    explain_crash,
    print_provider_trouble,
    provider_logs_json,
)
from inspector.cli.terminal_text import safe_text
from inspector.consumer.engine import ProviderSession
from inspector.consumer.errors import TransportFailure
from inspector.consumer.execution import ExecState, Execution
from inspector.consumer.large_results import FileVerdict
from inspector.consumer.v1 import V1ProviderSession
from inspector.protocol.discovery import CetpDeclaration
from inspector.relay.api import DISCONNECTED
from inspector.session.confirmations import ConfirmationRequest, fixed_policy
from inspector.session.devices import VIRTUAL_SERIAL
from inspector.session.errors import ErrorInfo, ExitCode, InspectorError
from inspector.session.session import Session

#: execution state → exit code when the call ends there
STATE_EXIT: dict[ExecState, ExitCode] = {
    ExecState.SUCCEEDED: ExitCode.OK,
    ExecState.ACCEPTED: ExitCode.OK,  # only with --no-wait
    ExecState.FAILED: ExitCode.PROVIDER_ERROR,
    ExecState.NEEDS_RESOLUTION: ExitCode.PROVIDER_ERROR,
    ExecState.RESOLUTION_DECLINED: ExitCode.PROVIDER_ERROR,
    ExecState.USER_CANCELLED: ExitCode.PROVIDER_ERROR,
    ExecState.CANCELLED: ExitCode.PROVIDER_ERROR,
    ExecState.MALFORMED: ExitCode.PROVIDER_ERROR,
    ExecState.OUTCOME_UNKNOWN: ExitCode.DEVICE,
    ExecState.TRANSPORT_FAILED: ExitCode.DEVICE,  # nothing was sent: the device failed
    ExecState.REFUSED: ExitCode.USAGE,
    ExecState.NEW: ExitCode.PROVIDER_ERROR,
    ExecState.RUNNING: ExitCode.PROVIDER_ERROR,
}


def read_args(ctx: Ctx) -> str:
    """The JSON arguments text from --args / --args-file (default `{}`), validated."""
    a = ctx.args
    if a.args_file:
        try:
            text = sys.stdin.read() if a.args_file == "-" else Path(a.args_file).read_text(
                encoding="utf-8")
        except OSError as exc:
            raise InspectorError("BAD_ARGS_FILE", f"cannot read {a.args_file}: {exc.strerror}",
                                 hint="check the path") from None
    else:
        text = a.args if a.args is not None else "{}"
    try:
        json.loads(text)
    except ValueError as exc:
        raise InspectorError("BAD_ARGS_JSON", f"the arguments are not valid JSON: {exc}",
                             hint="quote the JSON for your shell, e.g. --args "
                             "'{\"symbol\": \"ACME\"}'") from None
    return text


def confirmation_policy(ctx: Ctx) -> Any:
    """--approve / --deny answer the virtual device's screen; else ask on a terminal."""
    if ctx.args.approve:
        return fixed_policy(True)
    if ctx.args.deny:
        return fixed_policy(False)

    async def ask(req: ConfirmationRequest) -> bool:
        ctx.err.write("\nThe provider asks for confirmation (virtual device):\n")
        for label, value in (("title", req.title), ("target", req.target),
                             ("action", req.action), ("consequences", req.consequences)):
            if value:
                ctx.err.write(f"  {label:<13} {safe_text(value, 500, one_line=True)}\n")
        for k, v in req.parameters.items():
            ctx.err.write(f"  {safe_text(k, 60, one_line=True):<13} "
                          f"{safe_text(json.dumps(v), 300, one_line=True)}\n")
        ctx.err.write("Approve? [y/N] ")
        ctx.err.flush()
        answer = await asyncio.to_thread(sys.stdin.readline)
        return answer.strip().lower() in ("y", "yes")

    return ask


def can_answer(ctx: Ctx, session: Session) -> bool:
    """Whether a confirmation can be answered here (flags, a terminal, or a phone screen)."""
    if session.serial != VIRTUAL_SERIAL:
        return True  # the user answers on the phone
    return bool(ctx.args.approve or ctx.args.deny or stdin_is_terminal())


def stdin_is_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, OSError, ValueError):
        return False


def execution_doc(ex: Execution) -> dict[str, Any]:
    op = ex.operation
    return {
        "request_id": ex.request_id,
        "tool": ex.tool_name,
        "protocol_version": ex.protocol_version,
        "state": ex.state.value,
        "message": ex.message,
        "attempts": [a.model_dump(mode="json") for a in ex.attempts],
        "value": ex.value if ex.has_value else None,
        "has_value": ex.has_value,
        "operation_id": ex.operation_id,
        "operation": op.model_dump(mode="json") if op is not None else None,
        "provider_error": ex.error.model_dump(mode="json") if ex.error is not None else None,
        "resume_token": ex.resume_token,
        "resolution_result": ex.resolution_result,
        "file": ex.file.model_dump(mode="json") if ex.file is not None else None,
        "file_verdict": verdict_doc(ex.file_verdict),
        "output_findings": [f.model_dump(mode="json") for f in ex.output_findings],
        "cancel": ex.cancel.model_dump(mode="json") if ex.cancel is not None else None,
        "exchange_ids": list(ex.exchange_ids),
    }


def verdict_doc(v: FileVerdict | None) -> dict[str, Any] | None:
    if v is None:
        return None
    return {
        "ok": v.ok,
        "bytes_read": v.bytes_read,
        "sha256": v.sha256,
        "read_limit": v.read_limit,
        "complete": v.complete,
        "checks": [c.model_dump(mode="json") for c in v.checks],
    }


def exit_for(ex: Execution) -> ExitCode:
    if ex.file_verdict is not None and not ex.file_verdict.ok:
        return ExitCode.VERIFICATION
    if ex.state == ExecState.SUCCEEDED and any(not f.ok for f in ex.output_findings):
        return ExitCode.VERIFICATION
    return STATE_EXIT.get(ex.state, ExitCode.PROVIDER_ERROR)


def error_for(ex: Execution, session: Session | None = None) -> ErrorInfo | None:
    """The structured error of an execution that did not succeed."""
    code = exit_for(ex)
    if code == ExitCode.OK:
        return None
    if ex.state == ExecState.REFUSED and session is not None and ex.last_exchange_id:
        refused = session.recorder.by_id(ex.last_exchange_id)
        if refused is not None and refused.error_code:
            return ErrorInfo(code=refused.error_code, message=refused.error_message or ex.message,
                             hint="the inspector did not send this request")
    if code == ExitCode.VERIFICATION:
        failed = ([c.name for c in ex.file_verdict.failed()] if ex.file_verdict else
                  ["output_schema"])
        return ErrorInfo(code="VERIFICATION_FAILED", message=ex.message,
                         hint="the result does not match what the provider declared: "
                         + ", ".join(failed))
    if ex.error is not None and ex.state not in (ExecState.OUTCOME_UNKNOWN,):
        hint = ""
        if ex.state == ExecState.NEEDS_RESOLUTION:
            hint = ("the provider needs confirmation: rerun with --approve or --deny and the "
                    f"same --request-id {ex.request_id}")
        elif ex.error.error_code == "TOOL_NOT_FOUND" and session is not None:
            names = known_tools(session, ex)
            if names:
                hint = "tools this provider lists: " + ", ".join(names)
        elif ex.error.retryable:
            hint = f"retryable: rerun with --request-id {ex.request_id}"
            if ex.error.retry_after_ms:
                hint += f" after {ex.error.retry_after_ms} ms"
        return ErrorInfo(code=ex.error.error_code, message=ex.error.error_message,
                         retryable=bool(ex.error.retryable), hint=hint,
                         details={"error_details": ex.error.error_details}
                         if ex.error.error_details is not None else None)
    code_name = {ExecState.OUTCOME_UNKNOWN: "OUTCOME_UNKNOWN",
                 ExecState.RESOLUTION_DECLINED: "USER_DECLINED",
                 ExecState.MALFORMED: "MALFORMED_REPLY",
                 ExecState.REFUSED: "REFUSED", ExecState.CANCELLED: "CANCELLED",
                 ExecState.USER_CANCELLED: "USER_CANCELLED"}.get(ex.state, ex.state.value.upper())
    hint = (f"retry or query with the SAME --request-id {ex.request_id}"
            if ex.state == ExecState.OUTCOME_UNKNOWN else "")
    return ErrorInfo(code=code_name, message=ex.message,
                     retryable=ex.state == ExecState.OUTCOME_UNKNOWN, hint=hint)


def known_tools(session: Session, ex: Execution) -> list[str]:
    """Tool names of the provider session that ran `ex` (for a TOOL_NOT_FOUND hint)."""
    for ps in session.provider_sessions():
        if any(e is ex for e in ps.executions.values()) and ps.tools is not None:
            return [safe_text(t.name, 64, one_line=True) for t in ps.tools.tools][:50]
    return []


async def follow(ctx: Ctx, session: Session, ps: ProviderSession | V1ProviderSession,
                 ex: Execution) -> Execution:
    """Confirmation, async wait and file verification after the first reply."""
    if not isinstance(ps, ProviderSession):
        return ex
    if ex.state == ExecState.NEEDS_RESOLUTION and ex.resolution is not None \
            and can_answer(ctx, session):
        if session.serial != VIRTUAL_SERIAL and not ctx.json:
            ctx.err.write("Answer the provider's confirmation on the phone…\n")
        ex = await ps.launch_resolution(ex)
        if ex.state == ExecState.RESOLUTION_DECLINED and ex.resume_token:
            # ask the provider what the denial means for this execution (USER_CANCELLED)
            ex = await ps.resume(ex)
    if ex.state == ExecState.ACCEPTED and not getattr(ctx.args, "no_wait", False):
        ex = await wait_operation(ctx, ps, ex)
    if ex.state == ExecState.SUCCEEDED and ex.result_fd is not None:
        await fetch(ctx, ps, ex)
    return ex


async def wait_operation(ctx: Ctx, ps: ProviderSession, ex: Execution) -> Execution:
    bar = ProgressBar(f"operation {ex.operation_id}", ctx.err)

    def progress(e: Execution) -> None:
        op = e.operation
        if op is None:
            return
        p = op.progress
        bar.update(p.current if p else None, p.total if p else None,
                   f"{op.state.value} {(p.message or '') if p else ''}".strip())

    ex = await ps.wait_operation(ex, progress)
    bar.done(ex.operation.state.value if ex.operation else ex.state.value)
    return ex


async def fetch(ctx: Ctx, ps: ProviderSession, ex: Execution) -> None:
    total = ex.file.size_bytes if ex.file else None
    bar = ProgressBar("file result", ctx.err)
    verdict = await ps.fetch_file(
        ex, user_cap=getattr(ctx.args, "max_read_bytes", None),
        on_progress=lambda n, t: bar.update(n, t or total, "bytes"),
        keep_content=bool(getattr(ctx.args, "save", None)))
    bar.done("verified" if verdict.ok else "verification FAILED")


def save_result(ctx: Ctx, ex: Execution) -> str | None:
    """--save: the verified file bytes, else the inline JSON value."""
    target = getattr(ctx.args, "save", None)
    if not target:
        return None
    verdict = ex.file_verdict
    if verdict is not None and verdict.content_path:
        try:
            if not verdict.ok:  # never hand on bytes that failed verification
                ctx.err.write(f"not saved to {target}: the file result failed verification\n")
                return None
            shutil.copyfile(verdict.content_path, target)
        finally:
            verdict.discard()
        return target
    if ex.has_value:
        Path(target).write_text(json.dumps(ex.value, indent=2, ensure_ascii=False),
                                encoding="utf-8")
        return target
    return None


def report(ctx: Ctx, decl: CetpDeclaration, ex: Execution, saved: str | None,
           extra: dict[str, Any] | None = None,
           override: tuple[ExitCode, ErrorInfo | None] | None = None) -> int:
    code, err = override if override is not None else (exit_for(ex),
                                                       error_for(ex, ctx.session))
    doc: dict[str, Any] = {"provider": provider_doc(decl), "execution": execution_doc(ex),
                           "saved_to": saved}
    if extra:
        doc.update(extra)
    doc["provider_logs"] = provider_logs_json(ctx.session)  # issue 16
    if ctx.json:
        full = ctx.base_doc(code == ExitCode.OK)
        full.update(doc)
        if err is not None:
            full["error"] = err.model_dump()
        from inspector.cli.output import print_json

        print_json(full, ctx.out)
        return code
    out = ctx.out
    line(f"{ex.state.value}  request_id {ex.request_id}", out)
    if ex.message:
        line(safe_text(ex.message, 1000), out)
    if ex.operation_id:
        op = ex.operation
        state = f": {op.state.value}" if op is not None else ""
        prog = op.progress if op is not None else None
        if prog is not None and (prog.current is not None or prog.message):
            state += (f" ({prog.current if prog.current is not None else '?'}"
                      f"/{prog.total if prog.total is not None else '?'}"
                      f"{' ' + prog.message if prog.message else ''})")
        line(f"operation {safe_text(ex.operation_id, 200, one_line=True)}"
             f"{safe_text(state, 300, one_line=True)}", out)
    if ex.file_verdict is not None:
        for c in ex.file_verdict.checks:
            line(f"  {c.name:<14} {c.status.value:<8} {safe_text(c.message, 300, one_line=True)}",
                 out)
    for f in ex.output_findings:
        if not f.ok:
            line(f"  ! {safe_text(f.message, 300, one_line=True)}", out)
    if ex.has_value and not saved:
        line(pretty_value(ex.value), out)
    if saved:
        line(f"saved to {saved}", out)
    cancel = (extra or {}).get("cancel")
    if cancel:
        line(safe_text(cancel.get("message", ""), 500), out)
    print_provider_trouble(ctx.session, ctx.err)  # a crash / error lines (issue 16)
    if err is not None:
        from inspector.cli.output import print_error

        print_error(err, as_json=False, command=ctx.command, stream=ctx.err)
    return code


def remember_operations(ctx: Ctx, session: Session, decl: CetpDeclaration) -> None:
    """Remember each operation as soon as it is accepted, so that `ops get` can follow it
    even when this command is interrupted or times out while waiting."""
    store = OperationStore()
    seen: set[str] = set()

    def on_change(ex: Execution) -> None:
        if ex.operation_id and ex.operation_id not in seen:
            seen.add(ex.operation_id)
            store.remember(RememberedOperation(
                operation_id=ex.operation_id, request_id=ex.request_id, device=session.serial,
                provider=decl.package, authority=decl.authority or "", tool=ex.tool_name,
                started_at_ms=now_ms()))
        elif ex.operation_id and ex.operation is not None and ex.operation.is_terminal:
            store.update_state(session.serial, ex.operation_id, ex.operation.state.value)

    session.add_execution_listener(on_change)


async def ensure_negotiated(ps: ProviderSession) -> None:
    """Negotiate before the execution, so a failure is reported as what it is (device
    error, or a provider refusing v2) instead of as a failed call. negotiate has no side
    effect, so one retry after a lost connection is safe."""
    try:
        await ps.ensure_session()
    except TransportFailure as exc:
        if exc.code not in (DISCONNECTED, "IPC_FAILED"):
            raise
        await ps.ensure_session()


async def cmd_call(ctx: Ctx) -> int:
    a = ctx.args
    args_text = read_args(ctx)
    if a.resume_token and not a.request_id:
        raise InspectorError("BAD_INPUT", "--resume-token needs the --request-id of the "
                             "execution it belongs to",
                             hint="a resume_token is bound to one request_id (CETP v2 §4.3)")
    session = await ctx.open_session()
    session.confirmation_policy = confirmation_policy(ctx)
    decl = session.find_provider(a.provider)
    ps = session.provider_session(decl, v1=a.v1)
    remember_operations(ctx, session, decl)
    resume_token = getattr(a, "resume_token", None)
    if isinstance(ps, ProviderSession):
        await ensure_negotiated(ps)
        ex = Execution(tool_name=a.tool, args_json=args_text, protocol_version=2)
        if a.request_id:
            ex.request_id = a.request_id
        if resume_token:
            ex.resume_token = resume_token
            ps.executions[ex.request_id] = ex
            ex = await ps.resume(ex)
        else:
            ex = await ps.run(ex)
    else:
        if resume_token:
            raise InspectorError("V1_NO_RESUME", "CETP v1 has no resume tokens",
                                 hint="drop --resume-token")
        ex = Execution(tool_name=a.tool, args_json=args_text, protocol_version=1)
        if a.request_id:
            ex.request_id = a.request_id
        ex = await ps.run(ex)
    ex = await follow(ctx, session, ps, ex)
    if ex.state == ExecState.ACCEPTED and ex.operation_id:
        if not ctx.json:
            ctx.err.write(f"follow it with: cetp-inspector ops get {ex.operation_id} --wait\n")
        if session.serial == VIRTUAL_SERIAL and not a.relay_socket and not a.virtual_state:
            ctx.err.write("note: the embedded virtual device stops with this command and its "
                          "state is temporary; use --virtual-state DIR (or `cetp-inspector "
                          "virtual serve` and --relay-socket) to follow the operation later\n")
    await session.provider_logs.settle()  # a phone's logcat lags behind the reply
    explain_crash(session, ex)
    saved = save_result(ctx, ex)
    if exit_for(ex) != ExitCode.OK:
        await ctx.explain_failure()  # the app stopped or restricted on the phone?
        if not ctx.json:
            ctx.print_failure_diagnostics()
    return report(ctx, decl, ex, saved)


async def cmd_ops(ctx: Ctx) -> int:
    a = ctx.args
    store = OperationStore()
    if a.ops_command in (None, "list"):
        ops = store.load()
        if ctx.json:
            ctx.emit({"operations": [o.model_dump() for o in ops]})
            return ExitCode.OK
        if not ops:
            line("no remembered operations (start one with `call … --no-wait`)", ctx.out)
        from inspector.cli.output import table

        table([[o.operation_id, o.device, o.provider, o.tool, o.request_id, o.last_state]
               for o in ops], ["OPERATION", "DEVICE", "PROVIDER", "TOOL", "REQUEST_ID", "LAST"],
              ctx.out)
        return ExitCode.OK
    session = await ctx.open_session()
    remembered = store.find(a.operation_id, session.serial)
    provider = a.provider or (remembered.provider if remembered else None)
    request_id = a.request_id or (remembered.request_id if remembered else None)
    if not provider or not request_id:
        raise InspectorError(
            "UNKNOWN_OPERATION", f"operation {a.operation_id!r} was not started here",
            hint="pass --provider PROVIDER and --request-id ID (the execution's request_id, "
            "CETP v2 §4.1)")
    decl = session.find_provider(provider)
    ps, ex = session.adopt_operation(decl, a.operation_id, request_id,
                                     remembered.tool if remembered else "")
    await ensure_negotiated(ps)
    await ps.list_tools()  # the output schema of the tool, for verifying the result
    if a.ops_command == "cancel":
        outcome = await ps.cancel_operation(ex, confirm=True)
        store.update_state(session.serial, a.operation_id,
                           outcome.final_state or ("cancellation_requested"
                                                   if outcome.acknowledged else "unknown"))
        err = None if outcome.confirmed_cancelled else ErrorInfo(
            code="CONFLICT" if outcome.conflict else "NOT_CANCELLED", message=outcome.message,
            hint="only a queried terminal state 'cancelled' means no later effect (§4.4)")
        return report(ctx, decl, ex, None, {"cancel": outcome.model_dump(mode="json")},
                      override=(ExitCode.OK if err is None else ExitCode.PROVIDER_ERROR, err))
    if a.wait:
        ex = await wait_operation(ctx, ps, ex)
    else:
        ex = await ps.refresh_operation(ex)
    if ex.state == ExecState.SUCCEEDED and ex.result_fd is not None:
        await fetch(ctx, ps, ex)
    if ex.operation is not None:
        store.update_state(session.serial, a.operation_id, ex.operation.state.value)
    saved = save_result(ctx, ex)
    return report(ctx, decl, ex, saved)
