"""Streaming verification of file results (CETP v2 §4.5).

A file result may be hundreds of MiB: the bytes are streamed from the relay through an
incremental SHA-256 into a temporary file on disk (never held whole in memory; hashing and
writing run in a worker thread, see `digest_sink`), under a
local read limit = min(negotiated allowance, user cap). The verdict lists each check with
the computed and the declared value so a person can see exactly what disagreed.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import tempfile
from collections.abc import AsyncIterator, Callable
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from inspector.digest_sink import DigestSink
from inspector.relay.api import TOO_LARGE, RelayApi, RelayError, StreamEnd

DEFAULT_USER_CAP = 64 * 1024 * 1024
#: JSON bigger than this is not parsed for the schema check (parsed JSON costs ~10× its size)
DEFAULT_PARSE_LIMIT = 4 * 1024 * 1024
PREVIEW_BYTES = 64 * 1024
#: Parsed JSON deeper than this is refused: every later walk (schema check, tree view,
#: json.dumps for display) would otherwise hit Python's recursion limit (issue 12).
MAX_JSON_DEPTH = 256
HEX_PREVIEW_BYTES = 4096
SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")
MEDIA_TYPE = re.compile(r"^[A-Za-z0-9][\w.+-]*/[A-Za-z0-9][\w.+-]*(\s*;.*)?$")

ProgressCallback = Callable[[int, int | None], None]  # bytes read so far, expected total
SchemaValidator = Callable[[dict[str, Any], Any], list[tuple[str, str]]]


class CheckStatus(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    SKIPPED = "skipped"


class FileCheck(BaseModel):
    # size | sha256 | relay_digest | fd_size | media_type | output_schema | read_limit |
    # handle_closed | stream
    name: str
    status: CheckStatus
    computed: Any = None
    declared: Any = None
    message: str = ""


class FileVerdict(BaseModel):
    """Outcome of reading and verifying one file result."""

    handle: str
    read_limit: int
    bytes_read: int = 0
    sha256: str | None = None
    complete: bool = False  # the whole stream was read
    checks: list[FileCheck] = Field(default_factory=list)
    content_path: str | None = None  # spooled bytes (caller deletes with `discard`)
    # parsed JSON when small enough and valid; not serialised (the bytes are in content_path)
    value: Any = Field(default=None, exclude=True)
    parsed: bool = False  # `value` holds the parsed content (which may be JSON null)
    preview: str = ""  # first bytes as text, for display (untrusted)
    preview_hex: str = ""  # hex dump of the first HEX_PREVIEW_BYTES (unverified display)

    @property
    def verified(self) -> bool:
        """Size and SHA-256 both matched: only then is the content interpreted (parsed,
        schema-checked, shown as a value); otherwise it is unverified bytes."""
        return all(c is not None and c.status == CheckStatus.PASS
                   for c in (self.check("size"), self.check("sha256"))) and (
            (rd := self.check("relay_digest")) is None or rd.status != CheckStatus.FAIL)

    @property
    def ok(self) -> bool:
        return all(c.status != CheckStatus.FAIL for c in self.checks)

    def check(self, name: str) -> FileCheck | None:
        return next((c for c in self.checks if c.name == name), None)

    def failed(self) -> list[FileCheck]:
        return [c for c in self.checks if c.status == CheckStatus.FAIL]

    def discard(self) -> None:
        """Delete the spooled content file."""
        if self.content_path:
            with contextlib.suppress(OSError):
                os.unlink(self.content_path)
            self.content_path = None


def effective_read_limit(negotiated_max: int | None, user_cap: int | None) -> int:
    """The local read limit: the smaller of the negotiated allowance and the user's cap."""
    limits = [x for x in (negotiated_max, user_cap) if x is not None and x > 0]
    return min(limits) if limits else DEFAULT_USER_CAP


def _is_json_media(media_type: str) -> bool:
    base = media_type.split(";", 1)[0].strip().lower()
    return base == "application/json" or base.endswith("+json")


async def read_and_verify(
    relay: RelayApi,
    handle: str,
    *,
    declared_size: int | None,
    declared_sha256: str | None,
    declared_media_type: str | None,
    output_schema: dict[str, Any] | None,
    validate: SchemaValidator | None,
    read_limit: int,
    fd_size: int = -1,
    chunk_size: int | None = None,
    on_progress: ProgressCallback | None = None,
    parse_limit: int = DEFAULT_PARSE_LIMIT,
    spool_dir: str | None = None,
    keep_content: bool = True,
) -> FileVerdict:
    """Stream `handle` into a temp file, verify it, close the handle; never raises for
    a bad file (that is a failed check), only for programming errors."""
    verdict = FileVerdict(handle=handle, read_limit=read_limit)
    checks = verdict.checks
    end: StreamEnd | None = None
    # A big result the caller will not keep is only hashed, never written: it is above the
    # parse limit, so nothing would read the file back anyway.
    spool = keep_content or declared_size is None or declared_size <= parse_limit
    fd, path = (tempfile.mkstemp(prefix="cetp-result-", suffix=".bin", dir=spool_dir)
                if spool else (-1, ""))
    head = bytearray()  # the first PREVIEW_BYTES, for the preview without re-reading
    over_limit_msg = ""
    stream_error = ""
    try:
        if declared_size is not None and declared_size > read_limit:
            over_limit_msg = (
                f"declared size {declared_size} bytes exceeds the local read limit of "
                f"{read_limit} bytes; not read (raise the cap if you trust this provider)"
            )
            verdict.sha256 = hashlib.sha256().hexdigest()
        else:
            with contextlib.ExitStack() as files:
                out = files.enter_context(os.fdopen(fd, "wb")) if spool else None
                fd = -1
                sink = DigestSink(out)
                try:
                    end, over_limit_msg, stream_error = await _pump(
                        relay.read_file(handle, read_limit, chunk_size), sink, verdict,
                        head, read_limit, declared_size, on_progress)
                    verdict.sha256 = await sink.finish()
                except OSError as exc:  # the spool file could not be written
                    stream_error = f"cannot write the spool file: {exc}"
                    verdict.sha256 = None
                finally:
                    sink.abort()  # no-op after finish(); stops the worker on errors
        verdict.complete = end is not None and not over_limit_msg and not stream_error
    finally:
        if fd >= 0:
            os.close(fd)
        closed_ok = False
        close_msg = ""
        try:
            closed_ok = bool(await relay.close_handle(handle))
            if not closed_ok:
                close_msg = "the relay reported the handle was not open any more"
        except RelayError as exc:
            close_msg = f"close failed: {exc.code}: {exc.message}"
    checks.append(FileCheck(
        name="read_limit",
        status=CheckStatus.FAIL if over_limit_msg else CheckStatus.PASS,
        computed=verdict.bytes_read, declared=read_limit,
        message=over_limit_msg or f"read {verdict.bytes_read} of at most {read_limit} bytes",
    ))
    if stream_error:
        checks.append(FileCheck(name="stream", status=CheckStatus.FAIL,
                                message=f"the stream failed: {stream_error}"))
    kept = False
    try:
        _size_and_digest_checks(verdict, declared_size, declared_sha256, fd_size, end)
        # Parsing and the schema check are CPU work on untrusted bytes: a worker thread
        # (the event loop is the GUI's UI thread), each bounded (depth, schema budget).
        await asyncio.to_thread(_interpret, verdict, path, declared_media_type, parse_limit,
                                output_schema, validate)
        checks.append(FileCheck(
            name="handle_closed",
            status=CheckStatus.PASS if closed_ok else CheckStatus.FAIL,
            computed=closed_ok, declared=True,
            message=close_msg or "file descriptor closed",
        ))
        verdict.preview = bytes(head).decode("utf-8", "replace")
        verdict.preview_hex = hex_dump(bytes(head[:HEX_PREVIEW_BYTES]))
        if keep_content and verdict.bytes_read and path:
            verdict.content_path = path
            kept = True
    finally:
        if path and not kept:  # never leave a spool file behind, whatever happened
            with contextlib.suppress(OSError):
                os.unlink(path)
    return verdict


def hex_dump(data: bytes, width: int = 16) -> str:
    """`offset  hex bytes  |printable|` lines: how unverified bytes are shown."""
    lines = []
    for off in range(0, len(data), width):
        row = data[off:off + width]
        hexes = " ".join(f"{b:02x}" for b in row)
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in row)
        lines.append(f"{off:08x}  {hexes:<{width * 3 - 1}}  |{text}|")
    return "\n".join(lines)


def _interpret(v: FileVerdict, path: str, media_type: str | None, parse_limit: int,
               schema: dict[str, Any] | None, validate: SchemaValidator | None) -> None:
    value = _media_type_check(v, path, media_type, parse_limit)
    _schema_check(v, value, schema, validate, media_type)


def json_depth_exceeds(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Is `value` nested deeper than `limit` (iterative: no recursion of our own)?"""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(node, dict):
            stack.extend((x, depth + 1) for x in node.values() if isinstance(x, dict | list))
        elif isinstance(node, list):
            stack.extend((x, depth + 1) for x in node if isinstance(x, dict | list))
    return False


async def _pump(
    stream: AsyncIterator[bytes | StreamEnd], sink: DigestSink, verdict: FileVerdict,
    head: bytearray, read_limit: int, declared_size: int | None,
    on_progress: ProgressCallback | None,
) -> tuple[StreamEnd | None, str, str]:
    """Feed the stream into `sink`; (END, over-limit message, stream error)."""
    end: StreamEnd | None = None
    try:
        async for item in stream:
            if isinstance(item, StreamEnd):
                end = item
                break
            if verdict.bytes_read + len(item) > read_limit:
                return None, (f"the stream went past the local read limit of {read_limit} "
                              "bytes; reading stopped"), ""
            if len(head) < PREVIEW_BYTES:
                head += item[: PREVIEW_BYTES - len(head)]
            await sink.feed(item)
            verdict.bytes_read += len(item)
            if on_progress is not None:
                on_progress(verdict.bytes_read, declared_size)
    except RelayError as exc:
        if exc.code == TOO_LARGE:
            return None, (f"the relay stopped at the read limit of {read_limit} bytes: "
                          f"{exc.message}"), ""
        return None, "", f"{exc.code}: {exc.message}"
    finally:
        closer = getattr(stream, "aclose", None)
        if closer is not None:  # stopping early must CANCEL the stream on the relay
            await closer()
    return end, "", ""


def _size_and_digest_checks(
    v: FileVerdict, declared_size: int | None, declared_sha: str | None, fd_size: int,
    end: StreamEnd | None,
) -> None:
    if not v.complete:
        for name in ("size", "sha256"):
            v.checks.append(FileCheck(
                name=name, status=CheckStatus.SKIPPED, declared=declared_size
                if name == "size" else declared_sha,
                message="not verified: the file was not read completely"))
    else:
        size_ok = declared_size is not None and declared_size == v.bytes_read
        v.checks.append(FileCheck(
            name="size", status=CheckStatus.PASS if size_ok else CheckStatus.FAIL,
            computed=v.bytes_read, declared=declared_size,
            message="size matches" if size_ok else
            f"read {v.bytes_read} bytes but the provider declared {declared_size}"))
        well_formed = isinstance(declared_sha, str) and bool(SHA256_HEX.match(declared_sha))
        sha_ok = well_formed and declared_sha == v.sha256
        if sha_ok:
            msg = "SHA-256 matches"
        elif not well_formed:
            msg = "declared sha256 is not 64 lowercase hex digits (CETP v2 §4.5)"
        else:
            msg = "SHA-256 of the bytes read differs from the declared digest"
        v.checks.append(FileCheck(
            name="sha256", status=CheckStatus.PASS if sha_ok else CheckStatus.FAIL,
            computed=v.sha256, declared=declared_sha, message=msg))
    if end is not None:
        agree = end.size == v.bytes_read and end.sha256.lower() == v.sha256
        v.checks.append(FileCheck(
            name="relay_digest", status=CheckStatus.PASS if agree else CheckStatus.FAIL,
            computed={"size": v.bytes_read, "sha256": v.sha256},
            declared={"size": end.size, "sha256": end.sha256},
            message="the relay's END digest matches the bytes received" if agree else
            "the relay's END size/digest differ from the bytes received (transport problem)"))
    if fd_size >= 0 and declared_size is not None:
        ok = fd_size == declared_size
        v.checks.append(FileCheck(
            name="fd_size", status=CheckStatus.PASS if ok else CheckStatus.FAIL,
            computed=fd_size, declared=declared_size,
            message="fstat size matches" if ok else
            "the descriptor's fstat size differs from the declared size_bytes"))


def _media_type_check(
    v: FileVerdict, path: str, media_type: str | None, parse_limit: int
) -> Any:
    if not media_type or not MEDIA_TYPE.match(media_type):
        v.checks.append(FileCheck(name="media_type", status=CheckStatus.FAIL,
                                  declared=media_type,
                                  message="media_type is missing or not a valid media type"))
        return None
    if not _is_json_media(media_type):
        v.checks.append(FileCheck(name="media_type", status=CheckStatus.PASS,
                                  declared=media_type,
                                  message="not JSON: content not interpreted"))
        return None
    if not v.complete:
        v.checks.append(FileCheck(name="media_type", status=CheckStatus.SKIPPED,
                                  declared=media_type, message="file not read completely"))
        return None
    if v.bytes_read > parse_limit:
        v.checks.append(FileCheck(
            name="media_type", status=CheckStatus.SKIPPED, declared=media_type,
            message=f"JSON larger than the parse limit ({parse_limit} bytes); not parsed"))
        return None
    if not path:  # not spooled: the declared size promised more than the parse limit
        v.checks.append(FileCheck(
            name="media_type", status=CheckStatus.SKIPPED, declared=media_type,
            message="content not kept (declared larger than the parse limit); not parsed"))
        return None
    if not v.verified:
        v.checks.append(FileCheck(
            name="media_type", status=CheckStatus.SKIPPED, declared=media_type,
            message="not parsed: size/SHA-256 verification failed, so the content is shown "
                    "only as unverified bytes"))
        return None
    try:
        with open(path, "rb") as f:
            value = json.load(f)
        too_deep = json_depth_exceeds(value)
    except RecursionError:
        too_deep, value = True, None
    except (ValueError, UnicodeDecodeError) as exc:
        v.checks.append(FileCheck(name="media_type", status=CheckStatus.FAIL,
                                  computed="not JSON", declared=media_type,
                                  message=f"declared JSON but the content does not parse: {exc}"))
        return None
    except OSError as exc:
        v.checks.append(FileCheck(name="media_type", status=CheckStatus.FAIL,
                                  declared=media_type,
                                  message=f"the spooled content cannot be read back: {exc}"))
        return None
    if too_deep:
        v.checks.append(FileCheck(
            name="media_type", status=CheckStatus.FAIL, computed="too deep",
            declared=media_type,
            message=f"JSON nested deeper than {MAX_JSON_DEPTH} levels: not interpreted "
                    "(the bytes are kept; save them to inspect)"))
        return None
    v.value = value
    v.parsed = True
    v.checks.append(FileCheck(name="media_type", status=CheckStatus.PASS, computed="JSON",
                              declared=media_type, message="content parses as JSON"))
    return value


def _schema_check(
    v: FileVerdict, value: Any, schema: dict[str, Any] | None,
    validate: SchemaValidator | None, media_type: str | None,
) -> None:
    if schema is None or validate is None:
        v.checks.append(FileCheck(name="output_schema", status=CheckStatus.SKIPPED,
                                  message="no output_schema to check against"))
        return
    if not v.parsed:
        why = ("content is not JSON" if media_type and not _is_json_media(media_type)
               else "content was not parsed")
        v.checks.append(FileCheck(name="output_schema", status=CheckStatus.SKIPPED,
                                  message=f"not validated: {why}"))
        return
    errors = validate(schema, value)
    v.checks.append(FileCheck(
        name="output_schema", status=CheckStatus.FAIL if errors else CheckStatus.PASS,
        computed=[f"{p or '/'}: {m}" for p, m in errors[:20]],
        message="matches output_schema" if not errors else
        f"{len(errors)} schema error(s), first: {errors[0][0] or '/'}: {errors[0][1]}"))
