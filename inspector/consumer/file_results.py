"""Fetching a file result through the relay and recording its verification (§4.5).

The streaming and the checks live in `large_results`; this module wires them to a
session: the local read limit, the tool's output_schema, the recorded FILE exchange with a
finding per failed check, and closing a descriptor the user does not want to read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from inspector.consumer import errors as cerr
from inspector.consumer.execution import Execution
from inspector.consumer.findings import finding
from inspector.consumer.large_results import (
    FileVerdict,
    ProgressCallback,
    effective_read_limit,
    read_and_verify,
)
from inspector.consumer.outputs import validate
from inspector.protocol.exchange import ExchangeKind, ExchangeStatus
from inspector.relay.api import RelayError

if TYPE_CHECKING:
    from inspector.consumer.engine import ProviderSession


async def fetch_file(s: ProviderSession, ex: Execution, *, user_cap: int | None = None,
                     on_progress: ProgressCallback | None = None,
                     keep_content: bool = True) -> FileVerdict:
    """Stream and verify a file result (§4.5); the handle is always closed."""
    if ex.result_fd is None or ex.file is None:
        raise cerr.RequestRefused(cerr.WRONG_STATE,
                                  f"execution {ex.request_id} has no file result")
    negotiated = None
    if s.session is not None:
        v = s.session.raw_limits.get("max_file_result_bytes")
        negotiated = v if isinstance(v, int) and not isinstance(v, bool) else None
    limit = effective_read_limit(negotiated, user_cap or s.options.read_cap_bytes)
    tool = s.tool(ex.tool_name)
    handle = ex.result_fd
    x = s.recorder.start(ExchangeKind.FILE, handle.id, "read_file", package=s.package,
                         tool=ex.tool_name, request_id=ex.request_id,
                         parent_id=ex.last_exchange_id,
                         request={"handle": handle.id, "max_bytes": limit})
    ex.exchange_ids.append(x.id)
    verdict = await read_and_verify(
        s.relay, handle.id, declared_size=ex.file.size_bytes,
        declared_sha256=ex.file.sha256, declared_media_type=ex.file.media_type,
        output_schema=tool.output_schema if tool else None, validate=validate,
        read_limit=limit, fd_size=handle.size, on_progress=on_progress,
        parse_limit=s.options.parse_limit_bytes, keep_content=keep_content)
    found = [finding(f"file.{c.name}", "§4.5", c.message) for c in verdict.failed()]
    schema_check = verdict.check("output_schema")
    if schema_check is not None and schema_check.status == "pass":
        found.append(finding("file.output_schema", "§4.5", schema_check.message, ok=True))
    only_limit = all(c.name == "read_limit" for c in verdict.failed())
    status = (ExchangeStatus.SUCCESS if verdict.ok else
              ExchangeStatus.REFUSED if only_limit else ExchangeStatus.MALFORMED)
    s.recorder.finish(x, status, response_bytes=verdict.bytes_read,
                      decoded={"checks": [c.model_dump(mode="json")
                                          for c in verdict.checks]},
                      findings=found,
                      error_code=None if verdict.ok else "FILE_VERIFICATION_FAILED",
                      error_message=None if verdict.ok else
                      "; ".join(c.message for c in verdict.failed()))
    ex.file_verdict = verdict
    ex.result_fd = None
    if verdict.parsed and verdict.bytes_read <= s.options.keep_value_bytes:
        ex.value, ex.has_value = verdict.value, True
    ex.message = ("file verified" if verdict.ok else
                  "file verification failed: " + ", ".join(c.name for c in verdict.failed()))
    s._changed(ex)
    return verdict


async def close_result(s: ProviderSession, ex: Execution) -> bool:
    """Close a file result's descriptor without reading it."""
    if ex.result_fd is None:
        return False
    handle, ex.result_fd = ex.result_fd, None
    x = s.recorder.start(ExchangeKind.FILE, handle.id, "close_handle",
                         package=s.package, request_id=ex.request_id,
                         parent_id=ex.last_exchange_id)
    try:
        closed = await s.relay.close_handle(handle.id)
    except RelayError as exc:
        s.recorder.finish(x, ExchangeStatus.TRANSPORT_ERROR, error_code=exc.code,
                          error_message=exc.message)
        return False
    s.recorder.finish(x, ExchangeStatus.SUCCESS, decoded={"closed": closed})
    return closed
