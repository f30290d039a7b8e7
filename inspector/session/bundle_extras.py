"""What issue 16 adds to bug-report bundles: provider logs (opt-out) and file-result bytes.

- **Logs.** Each exchange's `logs` / `crash` travel inside `session.jsonl` like the rest of
  the exchange, redacted by the same redactor (a token a provider logged is scrubbed like a
  token in a reply). `without_logs` removes them when the reporter opts out.
- **File-result bytes.** A recording holds a file result's digest and size, never its bytes,
  so replaying a bug about a large result used to fail with NOT_FOUND. The reporter may add
  the bytes (e.g. the file `call --save` wrote): each one whose sha256 matches a recorded
  file result, and whose size is within the cap, becomes the member `files/<sha256>`. The
  manifest keeps the cap and, per recorded file result, whether its bytes are included and
  why not. On opening, a file member must hash to its own name (digest kept end to end);
  replay serves it for the recorded descriptor (`inspector.virtual.replayed_files`).
  File bytes are not redacted (they are opaque): the export says so.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from inspector.session.journal import JournalContents

FILES_PREFIX = "files/"
#: Default cap per included file (bytes); the whole bundle stays under its own limits.
DEFAULT_FILE_CAP_BYTES = 32 * 1024 * 1024
MAX_FILE_CAP_BYTES = 256 * 1024 * 1024
MAX_FILES = 64
_MEMBER = re.compile(r"^files/([0-9a-f]{64})$")
SCREENS_PREFIX = "screens/"
_SCREEN = re.compile(r"^screens/([0-9a-f]{32})\.png$")
MAX_SCREENSHOTS = 32
MAX_SCREENSHOT_BYTES = 8 * 1024 * 1024
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def is_screen_member(name: str) -> bool:
    return _SCREEN.match(name) is not None


def screenshot_members(screenshots: Mapping[str, bytes]) -> dict[str, bytes]:
    """exchange id → PNG as bundle members `screens/<exchange id>.png` (PNGs only, bounded).
    Screenshots show the phone's screen as it was: they are not redacted."""
    out: dict[str, bytes] = {}
    for xid, png in list(screenshots.items())[:MAX_SCREENSHOTS]:
        if (re.fullmatch(r"[0-9a-f]{32}", xid) and png.startswith(PNG_MAGIC)
                and len(png) <= MAX_SCREENSHOT_BYTES):
            out[f"{SCREENS_PREFIX}{xid}.png"] = png
    return out


def screenshots_from_members(data: Mapping[str, bytes]) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for name, blob in data.items():
        m = _SCREEN.match(name)
        if m is not None:
            if not blob.startswith(PNG_MAGIC):
                raise ValueError(f"member {name} is not a PNG")
            out[m.group(1)] = blob
    return out


def is_file_member(name: str) -> bool:
    return _MEMBER.match(name) is not None


def file_member(sha256: str) -> str:
    return FILES_PREFIX + sha256


def without_logs(session: JournalContents) -> JournalContents:
    """The session with every exchange's provider log lines and crash removed."""
    exchanges = [x.model_copy(update={"logs": [], "logs_dropped": 0, "crash": None})
                 for x in session.exchanges]
    return session.model_copy(update={"exchanges": exchanges})


def _file_results(value: Any, out: dict[str, int], depth: int = 0) -> None:
    if depth > 12:
        return
    if isinstance(value, dict):
        sha = value.get("sha256")
        if value.get("kind") == "file" and isinstance(sha, str) and re.fullmatch(
                r"[0-9a-f]{64}", sha):
            size = value.get("size_bytes")
            out[sha] = size if isinstance(size, int) and not isinstance(size, bool) else -1
        for v in value.values():
            _file_results(v, out, depth + 1)
    elif isinstance(value, list):
        for v in value[:1000]:
            _file_results(v, out, depth + 1)


def recorded_file_results(session: JournalContents) -> dict[str, int]:
    """sha256 → declared size of every file result the session's replies announced."""
    out: dict[str, int] = {}
    for x in session.exchanges:
        _file_results(x.decoded, out)
    return out


def select_files(session: JournalContents, sources: Iterable[Path | str],
                 cap_bytes: int = DEFAULT_FILE_CAP_BYTES
                 ) -> tuple[dict[str, bytes], dict[str, dict[str, Any]]]:
    """(members to add, report per recorded file result) for the given files.

    A file is included when its sha256 matches a recorded file result and it is at most
    `cap_bytes`; the report says for each recorded result whether it is in and why not.
    Raises ValueError for a cap out of range or a file that cannot be read."""
    if not 0 < cap_bytes <= MAX_FILE_CAP_BYTES:
        raise ValueError(f"the file cap must be 1 … {MAX_FILE_CAP_BYTES} bytes")
    recorded = recorded_file_results(session)
    report: dict[str, dict[str, Any]] = {
        sha: {"size": size, "included": False, "reason": "bytes not provided"}
        for sha, size in recorded.items()}
    members: dict[str, bytes] = {}
    for src in list(sources)[:MAX_FILES]:
        p = Path(src)
        try:
            size = p.stat().st_size
        except OSError as exc:
            raise ValueError(f"cannot read {p}: {exc}") from exc
        if size > cap_bytes:
            digest = _sha_of(p)
            if digest in report:
                report[digest].update(reason=f"over the cap ({size} > {cap_bytes} bytes)")
            continue
        data = p.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if digest not in report:
            report.setdefault("unmatched:" + p.name[:100], {
                "size": size, "included": False,
                "reason": "its sha256 matches no recorded file result"})
            continue
        members[file_member(digest)] = data
        report[digest].update(included=True, reason="", size=len(data))
    return members, report


def _sha_of(p: Path) -> str:
    h = hashlib.sha256()
    with p.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def files_from_members(data: Mapping[str, bytes]) -> dict[str, bytes]:
    """sha256 → bytes of the file members; raises ValueError when one does not hash to its
    own name (the digest is what replay trusts)."""
    out: dict[str, bytes] = {}
    for name, blob in data.items():
        m = _MEMBER.match(name)
        if m is None:
            continue
        if hashlib.sha256(blob).hexdigest() != m.group(1):
            raise ValueError(f"member {name} does not hash to its name")
        out[m.group(1)] = blob
    return out


def export_report(bundle_path: Path | str) -> dict[str, Any]:
    """What a written bundle holds of issue 16's additions (for the export's messages):
    `{logs_included, file_cap_bytes, file_results, screenshots}`."""
    from inspector.session.bundle_file import open_bundle

    m = open_bundle(bundle_path).manifest.model_dump(mode="json")
    return {"logs_included": m.get("logs_included", True),
            "file_cap_bytes": m.get("file_cap_bytes"),
            "file_results": m.get("file_results", {}),
            "screenshots": len(m.get("screenshots", []))}


def export_note(report: Mapping[str, Any]) -> str:
    """One line for people: logs, file bytes (with the cap) and screenshots included."""
    parts = ["provider logs " + ("included" if report.get("logs_included") else "left out")]
    results = {k: v for k, v in (report.get("file_results") or {}).items()
               if not k.startswith("unmatched:")}
    if results:
        n = sum(1 for v in results.values() if v.get("included"))
        parts.append(f"{n} of {len(results)} file result(s) included "
                     f"(cap {report.get('file_cap_bytes') or 0:,} bytes each)")
    unmatched = len(report.get("file_results") or {}) - len(results)
    if unmatched:
        parts.append(f"{unmatched} file(s) matched no recorded file result")
    if report.get("screenshots"):
        parts.append(f"{report['screenshots']} screenshot(s)")
    return "; ".join(parts)
