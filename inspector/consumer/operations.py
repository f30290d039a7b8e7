"""Async operations: polling get_operation and cancel_operation (CETP v2 §4.4).

request_id of every get_operation/cancel_operation is the id of the execution that created
the operation. Polls honour poll_after_ms. A cancel acknowledgement
(`cancellation_requested`) is not a cancellation: only a queried terminal `cancelled`
state counts, and CONFLICT after commit is reported as "not cancelled".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from inspector.consumer import errors as cerr
from inspector.consumer.calls import CallResult
from inspector.consumer.execution import CancelOutcome, ExecState, Execution
from inspector.consumer.findings import describe_error, finding, violation_finding
from inspector.protocol import errors as perr
from inspector.protocol.cetp import (
    CANCEL_OPERATION,
    CAP_ASYNC,
    CAP_CANCEL,
    GET_OPERATION,
    OpState,
    ProtocolViolation,
    operation_extras,
    parse_operation,
)
from inspector.protocol.exchange import ExchangeKind, ExchangeStatus

if TYPE_CHECKING:
    from inspector.consumer.engine import ProviderSession

ProgressListener = Callable[[Execution], None]


async def _op_call(s: ProviderSession, ex: Execution, method: str) -> CallResult:
    """One get/cancel_operation; refuses unnegotiated capabilities; re-negotiates once."""
    if not ex.operation_id:
        raise cerr.RequestRefused(cerr.WRONG_STATE,
                                  f"execution {ex.request_id} has no operation_id")
    cap = CAP_ASYNC if method == GET_OPERATION else CAP_CANCEL
    renegotiated = False
    while True:
        session = await s.ensure_session()
        if not session.has(cap):
            msg = (f"{method} needs the {cap} capability, which was not negotiated; "
                   "not sent (CETP v2 §2.3)")
            x = s.recorder.refused(ExchangeKind.CETP, s.authority, method,
                                   cerr.CAPABILITY_NOT_NEGOTIATED, msg, package=s.package,
                                   request_id=ex.request_id)
            ex.exchange_ids.append(x.id)
            raise cerr.RequestRefused(cerr.CAPABILITY_NOT_NEGOTIATED, msg, exchange_id=x.id)
        extras = operation_extras(session.token, ex.request_id, s.clock.now_ms()
                                  + s.options.deadline_ms, ex.operation_id)
        r = await s.caller.call(method, extras, v2=True, request_id=ex.request_id,
                                tool=ex.tool_name, parent_id=ex.exchange_ids[0]
                                if ex.exchange_ids else None)
        ex.exchange_ids.append(r.exchange.id)
        err = r.reply.error if r.reply else None
        if err is not None and err.error_code == perr.NEGOTIATION_REQUIRED and not renegotiated:
            renegotiated = True
            ex.renegotiated += 1
            await s._renegotiate(session.token)
            continue
        return r


def _apply_state(s: ProviderSession, ex: Execution, r: CallResult) -> bool:
    """Apply a get_operation reply; True when the operation reached a terminal state."""
    if r.transport is not None:
        ex.message = (f"{r.transport.code}: {r.transport.message}; query again (same request "
                      "id)")
        return False
    if r.violation is not None or r.reply is None:
        ex.state = ExecState.MALFORMED
        ex.message = f"get_operation reply broke the protocol: {r.violation}"
        return True
    reply = r.reply
    if reply.error is not None:
        ex.error = reply.error
        ex.state = ExecState.FAILED
        ex.message = "get_operation failed: " + describe_error(reply.error)
        return True
    try:
        op = parse_operation(reply.decoded)
    except ProtocolViolation as v:
        s._flag(r.exchange, [violation_finding(v)])
        r.exchange.status = ExchangeStatus.MALFORMED
        ex.state = ExecState.MALFORMED
        ex.message = f"operation state broke the protocol: {v}"
        return True
    if op.operation_id != ex.operation_id:
        s._flag(r.exchange, [finding("operation.id", "§4.4",
                                     f"asked for {ex.operation_id}, got {op.operation_id}")])
    ex.operation = op
    if op.poll_after_ms is not None:
        ex.poll_after_ms = op.poll_after_ms
    if not op.is_terminal:
        p = op.progress
        ex.message = f"operation {op.state.value}" + (
            f": {p.current}/{p.total} {p.message or ''}".rstrip() if p else "")
        return False
    if op.state == OpState.SUCCEEDED and op.result is not None:
        s._apply_result(ex, op.result, reply.result_fd, r.exchange)
    elif op.state == OpState.FAILED:
        ex.error = op.error
        ex.state = ExecState.FAILED
        ex.message = ("operation failed: " + describe_error(op.error)
                      if op.error else "operation failed")
    else:
        ex.state = ExecState.CANCELLED
        ex.message = "operation cancelled (queried terminal state)"
    return True


async def refresh(s: ProviderSession, ex: Execution) -> Execution:
    r = await _op_call(s, ex, GET_OPERATION)
    _apply_state(s, ex, r)
    await s.check_output(ex, r.exchange)
    s._changed(ex)
    return ex


async def wait(s: ProviderSession, ex: Execution,
               on_progress: ProgressListener | None = None) -> Execution:
    """Poll until terminal, sleeping poll_after_ms (or the default) before each query."""
    transport_failures = 0
    waited = 0
    for _ in range(s.options.max_polls):
        if ex.state != ExecState.ACCEPTED:
            return ex
        delay = ex.poll_after_ms if ex.poll_after_ms is not None else s.options.default_poll_ms
        if delay > s.options.max_auto_wait_ms:  # a hostile 2^63 must not hang the caller
            ex.message = (f"the provider asks to poll again after {delay} ms, longer than the "
                          f"{s.options.max_auto_wait_ms} ms the inspector waits on its own; "
                          "poll again later (same request id)")
            return ex
        if waited + delay > s.options.max_wait_total_ms:
            ex.message = (f"still {ex.operation.state.value if ex.operation else 'pending'} "
                          f"after waiting {waited} ms (the inspector waits at most "
                          f"{s.options.max_wait_total_ms} ms on its own); poll again later "
                          "(same request id)")
            return ex
        waited += delay
        await s.clock.sleep_ms(delay)
        r = await _op_call(s, ex, GET_OPERATION)
        done = _apply_state(s, ex, r)
        await s.check_output(ex, r.exchange)
        s._changed(ex)
        if on_progress is not None:
            on_progress(ex)
        if done:
            return ex
        if r.transport is not None:
            transport_failures += 1
            if transport_failures > s.options.max_auto_retries:
                return ex
    ex.message = f"still {ex.operation.state.value if ex.operation else 'pending'} after " \
                 f"{s.options.max_polls} polls; poll again later (same request id)"
    return ex


async def cancel(s: ProviderSession, ex: Execution, *, confirm: bool = True) -> CancelOutcome:
    outcome = CancelOutcome()
    ex.cancel = outcome
    r = await _op_call(s, ex, CANCEL_OPERATION)
    if r.transport is not None:
        outcome.message = (f"cancel request lost ({r.transport.code}); the operation may "
                           "continue — query its state")
    elif r.violation is not None or r.reply is None:
        outcome.message = f"cancel reply broke the protocol: {r.violation}"
    elif r.reply.error is not None:
        err = r.reply.error
        outcome.conflict = err.error_code == perr.CONFLICT
        outcome.message = (
            "not cancelled: the provider already committed (CONFLICT)"
            if outcome.conflict else "cancel refused: " + describe_error(err))
    else:
        try:
            ack = parse_operation(r.reply.decoded)
        except ProtocolViolation as v:
            s._flag(r.exchange, [violation_finding(v)])
            outcome.message = f"cancel acknowledgement broke the protocol: {v}"
        else:
            outcome.acknowledged = True
            if ack.state != OpState.CANCELLATION_REQUESTED:
                s._flag(r.exchange, [finding(
                    "cancel.ack_state", "§4.4",
                    f"cancel_operation answered state {ack.state.value!r}; a successful "
                    "cancel only acknowledges with 'cancellation_requested'",
                    level="SHOULD")])
            outcome.message = ("cancellation requested (acknowledged, not yet cancelled: "
                               "only a queried terminal state counts)")
    if confirm and ex.state == ExecState.ACCEPTED:
        await wait(s, ex)
    if ex.operation is not None and ex.operation.is_terminal:
        outcome.final_state = ex.operation.state.value
        outcome.confirmed_cancelled = ex.operation.state == OpState.CANCELLED
        if outcome.confirmed_cancelled:
            outcome.message = "cancelled: confirmed by a queried terminal state"
        else:
            outcome.message = (f"not cancelled: the operation ended {outcome.final_state}"
                               + (" after CONFLICT" if outcome.conflict else ""))
    ex.cancel = outcome
    s._changed(ex)
    return outcome
