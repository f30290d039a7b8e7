"""Serve a bundle's file-result bytes when a replayed provider hands out its descriptor.

A recorded reply's FileDescriptor handle belonged to the recording's relay connection. When
the bundle carries the bytes of that file result (`inspector.session.bundle_extras`), the
replayed app hands out a live descriptor over exactly those bytes, matched by the sha256
the reply declares; the digest therefore verifies as it did. Without the bytes the handle
stays as recorded, and reading it fails with NOT_FOUND (as before issue 16).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from inspector.protocol.bundle import Bundle, FileDescriptorHandle
from inspector.virtual.app import CallContext, FileSource


def _declared_sha(value: Any, depth: int = 0) -> str | None:
    if depth > 8:
        return None
    if isinstance(value, dict):
        sha = value.get("sha256")
        if value.get("kind") == "file" and isinstance(sha, str):
            return sha
        for v in value.values():
            found = _declared_sha(v, depth + 1)
            if found:
                return found
    elif isinstance(value, list):
        for v in value[:100]:
            found = _declared_sha(v, depth + 1)
            if found:
                return found
    return None


def declared_sha(reply: Bundle) -> str | None:
    """The sha256 of the file result a CETP reply announces (in its `data` JSON)."""
    data = reply.get("data")
    if not isinstance(data, str) or len(data) > 4 * 1024 * 1024:
        return None
    try:
        return _declared_sha(json.loads(data))
    except ValueError:
        return None


def fresh_file_handles(reply: Bundle, ctx: CallContext, files: Mapping[str, bytes]) -> int:
    """Replace recorded descriptors by live ones over the bundled bytes; returns how many."""
    if not files:
        return 0
    sha = declared_sha(reply)
    data = files.get(sha) if sha else None
    if data is None:
        return 0
    n = 0
    for key, value in list(reply.items()):
        if isinstance(value, FileDescriptorHandle):
            reply[key] = ctx.file_descriptor(FileSource.from_bytes(data))
            n += 1
    return n


def load_with_files(path: Path | str) -> tuple[Any, Any, Mapping[str, bytes]]:
    """(session, declarations, file bytes by sha256) of a bundle or journal file."""
    from inspector.session.bundle_file import BundleError, open_bundle
    from inspector.virtual.apps.replayed import ReplayLoadError, load_session

    p = Path(path)
    try:
        with p.open("rb") as f:
            is_zip = f.read(4) == b"PK\x03\x04"
    except OSError:
        is_zip = False
    if not is_zip:
        session, decl = load_session(p)
        return session, decl, {}
    try:
        report = open_bundle(p)
    except BundleError as exc:
        raise ReplayLoadError(str(exc)) from exc
    return report.session, report.declarations, report.files
