"""Launching a provider's resolution PendingIntent and resuming (CETP v2 §4.3).

The relay launches the PendingIntent from its own Activity and reports the Activity result;
RESULT_OK resumes the same execution (same request_id, same args bytes, the single-use
resume_token); RESULT_CANCELED is reported as declined and nothing is resumed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from inspector.consumer import errors as cerr
from inspector.consumer.execution import ExecState, Execution
from inspector.consumer.findings import finding
from inspector.protocol.exchange import ExchangeKind, ExchangeStatus, Finding
from inspector.relay.api import RelayError

if TYPE_CHECKING:
    from inspector.consumer.engine import ProviderSession


async def launch_resolution(s: ProviderSession, ex: Execution, *, resume: bool = True) -> Execution:
    """Launch the provider's PendingIntent; on RESULT_OK resume (same id + token)."""
    handle = ex.resolution
    if handle is None or ex.state != ExecState.NEEDS_RESOLUTION:
        raise cerr.RequestRefused(cerr.WRONG_STATE,
                                  f"execution {ex.request_id} has no resolution to launch")
    found: list[Finding] = []
    if handle.creator_package and s.package and handle.creator_package != s.package:
        found.append(finding("resolution.creator", "§7.2",
                             f"the PendingIntent was created by {handle.creator_package}, "
                             f"not the provider {s.package}"))
    x = s.recorder.start(ExchangeKind.RESOLUTION, handle.id, "launch_pending_intent",
                         package=s.package, tool=ex.tool_name,
                         request_id=ex.request_id, parent_id=ex.last_exchange_id,
                         request={"handle": handle.id,
                                  "creator_package": handle.creator_package,
                                  "flags": handle.flags})
    ex.exchange_ids.append(x.id)
    try:
        result = await s.relay.launch_pending_intent(handle.id)
    except RelayError as exc:
        s.recorder.finish(x, ExchangeStatus.TRANSPORT_ERROR, error_code=exc.code,
                          error_message=exc.message, findings=found)
        ex.message = f"could not launch the resolution: {exc.code}: {exc.message}"
        s._changed(ex)
        return ex
    # the Java relay tells an immediate new-task RESULT_CANCELED from a person's "no"
    # (docs/relay-protocol.md §4, launch_pending_intent outcomes)
    new_task = result.outcome == "cancelled_new_task"
    if new_task:
        found.append(finding("resolution.new_task", "§4.3",
                             "the resolution starts its activity in a new task "
                             "(FLAG_ACTIVITY_NEW_TASK or singleTask), so Android cancels its "
                             "result at once and the user's answer can never come back",
                             level="SHOULD"))
    s.recorder.finish(
        x, ExchangeStatus.SUCCESS if result.ok else ExchangeStatus.PROVIDER_ERROR,
        decoded={"result_code": result.result_code, "outcome": result.outcome,
                 "detail": result.detail}, findings=found,
        error_code=None if result.ok else "RESULT_CANCELED")
    if not result.ok:
        ex.resolution_result = "cancelled_new_task" if new_task else "declined"
        ex.state = ExecState.RESOLUTION_DECLINED
        ex.message = ("RESULT_CANCELED came at once, before the confirmation screen could "
                      "answer: the provider launches it in a new task (a provider bug, not the "
                      "user's no); nothing was resumed." if new_task else
                      "the user denied or backed out of the provider's confirmation "
                      "(RESULT_CANCELED); nothing was resumed. Resume anyway to see the "
                      "provider's answer, or start a new execution.")
        s._changed(ex)
        return ex
    ex.resolution_result = "approved"
    ex.message = "resolution completed"
    s._changed(ex)
    if resume:
        return await s.resume(ex)
    return ex
