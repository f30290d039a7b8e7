"""Bug-report bundles: one zip file that anyone can open and replay, no phone needed.

A bundle holds the session journal (redacted by default), device facts, the provider's
manifest declarations and descriptors, the conformance report when one was run, and a
short human summary. `open_bundle` reads it back read-only. A bundle comes from someone
else: member names are whitelisted, sizes bounded and digests checked before anything is
parsed, and its text is data, never markup or code.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import time
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from inspector.protocol.exchange import Exchange
from inspector.session import bundle_extras as extras
from inspector.session.journal import (
    JournalContents,
    JournalError,
    Redactor,
    journal_lines,
    parse_journal,
)

BUNDLE_FORMAT = "cetp-inspector-bug-report"
BUNDLE_VERSION = 1
BUNDLE_SUFFIX = ".cetpbundle"

M_MANIFEST = "manifest.json"
M_SESSION = "session.jsonl"
M_DEVICE = "device.json"
M_DECLARATIONS = "declarations.json"
M_DESCRIPTORS = "descriptors.json"
M_CONFORMANCE = "conformance.json"
M_SUMMARY = "SUMMARY.md"
MEMBERS = (M_MANIFEST, M_SESSION, M_DEVICE, M_DECLARATIONS, M_DESCRIPTORS, M_CONFORMANCE, M_SUMMARY)

#: Limits on what a bundle (someone else's file) may expand to, enforced while streaming
#: each member and before anything is parsed (issue 12: 276 KB once expanded to 6.7 GB).
#: A long session's journal is tens of MiB; JSON deflates ~5–30×, so 200× is generous.
MAX_BUNDLE_FILE_BYTES = 256 * 1024 * 1024
MAX_MEMBER_BYTES = 256 * 1024 * 1024
MAX_TOTAL_BYTES = 256 * 1024 * 1024
MAX_EXPANSION_RATIO = 200
RATIO_ALLOWANCE_BYTES = 1024 * 1024  # tiny members may expand past the ratio up to this
READ_PIECE_BYTES = 256 * 1024

DESCRIPTOR_METHODS = ("negotiate", "get_provider_info", "list_tools")
"""CETP reads whose latest answer per provider describes it (v1 and v2)."""


class BundleError(Exception):
    """A bundle that cannot be written or read; the message says why."""


class BundleManifest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow")

    format: str = BUNDLE_FORMAT
    version: int = BUNDLE_VERSION
    created_ms: float = Field(default_factory=lambda: time.time() * 1000.0)
    app: str = "cetp-inspector/0.1.0"
    session_id: str = ""
    name: str = ""
    redacted: bool = True
    redacted_keys: list[str] = Field(default_factory=list)
    members: dict[str, str] = Field(default_factory=dict)
    """member name → sha256 hex of its bytes."""
    lost_lines: int = 0
    """Journal lines that could not be read when the bundle was made (torn or damaged):
    what the bundle cannot contain, said rather than silently dropped (issue 12)."""


class BugReport(BaseModel):
    """An opened bundle (read-only)."""

    model_config = ConfigDict(frozen=True)

    path: str
    manifest: BundleManifest
    session: JournalContents
    device: dict[str, Any]
    declarations: Any
    descriptors: dict[str, Any]
    conformance: Any | None
    summary: str
    files: dict[str, bytes] = Field(default_factory=dict)
    """Included file-result bytes by sha256 (issue 16, `bundle_extras`)."""
    screenshots: dict[str, bytes] = Field(default_factory=dict)
    """Confirmation screenshots (PNG) by exchange id, when the reporter opted in."""

    @property
    def exchanges(self) -> list[Exchange]:
        return self.session.exchanges

    @property
    def warnings(self) -> list[str]:
        """What this bundle is missing, for the CLI and the viewer to say."""
        out = []
        if self.manifest.lost_lines:
            out.append(f"{self.manifest.lost_lines} journal line(s) were torn or damaged when "
                       "this bundle was made; the exchanges on them are missing")
        if self.session.damaged_lines:
            out.append(f"{self.session.damaged_lines} line(s) of the bundled session cannot "
                       "be read")
        return out


def descriptors_from(exchanges: Iterable[Exchange]) -> dict[str, Any]:
    """The latest successful descriptor reads per provider: `{authority: {method: {...}}}`."""
    out: dict[str, dict[str, Any]] = {}
    for ex in exchanges:
        if ex.kind != "cetp" or ex.method not in DESCRIPTOR_METHODS or ex.status != "success":
            continue
        out.setdefault(ex.target, {})[ex.method] = {
            "package": ex.package,
            "decoded": ex.decoded,
            "response": ex.response,
            "exchange_id": ex.id,
        }
    return out


def summarize(
    session: JournalContents,
    device: dict[str, Any],
    descriptors: dict[str, Any],
    conformance: Any | None,
    note: str = "",
    lost_lines: int | None = None,
) -> str:
    """A short Markdown summary for people reading the bundle without the inspector."""
    ex = session.exchanges
    statuses = Counter(str(e.status) for e in ex)
    lines = [f"# Bug report: {session.name or session.header.session_id}", ""]
    if note:
        lines += [note.strip(), ""]
    lost = session.damaged_lines if lost_lines is None else lost_lines
    if lost:
        lines += [f"**Incomplete:** {lost} journal line(s) were torn or damaged and are "
                  "not in this report.", ""]
    model = " ".join(str(device.get(k, "")) for k in ("manufacturer", "model")).strip()
    lines += [
        f"- Device: {model or device.get('serial', 'unknown')}"
        + (
            f" (Android {device['release']}, SDK {device.get('sdk_int', '?')})"
            if device.get("release")
            else ""
        ),
        f"- Relay: {device.get('relay_version_name', 'unknown')}",
        f"- Providers: {', '.join(sorted(descriptors)) or 'none recorded'}",
        f"- Exchanges: {len(ex)} ("
        + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
        + ")",
    ]
    if conformance is not None:
        lines.append("- Conformance report: included (conformance.json)")
    failures = [e for e in ex if e.error_code or str(e.status) in ("malformed", "transport_error")]
    if failures:
        lines += ["", "## Failures", ""]
        for e in failures[:20]:
            msg = (e.error_message or "").replace("\n", " ")[:160]
            lines.append(f"- `{e.method}` on `{e.target}`: {e.status} {e.error_code or ''} {msg}")
        if len(failures) > 20:
            lines.append(f"- … and {len(failures) - 20} more")
    lines += ["", "Open this file with CETP Inspector to browse and replay it."]
    return "\n".join(lines) + "\n"


def _json_bytes(obj: Any) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode()


def create_bundle(dest: Path | str, session: JournalContents, **kw: Any) -> Path:
    """Write a bug-report bundle (see `_create_bundle`); data too deep to walk safely is a
    BundleError, never a crash half-way through a redaction."""
    try:
        return _create_bundle(dest, session, **kw)
    except RecursionError:
        raise BundleError("the session holds data nested too deeply to redact and bundle "
                          "safely; export the journal without it") from None
    except ValueError as exc:  # pydantic: "Maximum serialization depth exceeded", …
        raise BundleError(f"the session cannot be bundled: {str(exc)[:200]}") from None


def _create_bundle(
    dest: Path | str,
    session: JournalContents,
    *,
    device: dict[str, Any] | None = None,
    declarations: Any = None,
    descriptors: dict[str, Any] | None = None,
    conformance: Any | None = None,
    note: str = "",
    redact: bool = True,
    secret_keys: Iterable[str] = (),
    include_logs: bool = True,
    files: Iterable[Path | str] = (),
    file_cap_bytes: int = extras.DEFAULT_FILE_CAP_BYTES,
    screenshots: Mapping[str, bytes] | None = None,
) -> Path:
    """Write a bug-report bundle; secrets are redacted unless `redact=False`.

    Missing parts default to what the journal recorded: device facts from the header and
    the latest `device` record, declarations from the latest `discovery` record, descriptors
    from the recorded negotiate/get_provider_info/list_tools answers.
    """
    keys = list(secret_keys)
    # issue 16: provider logs travel with their exchanges unless opted out; file bytes
    try:
        if not include_logs:
            session = extras.without_logs(session)
        file_members, file_report = extras.select_files(session, files, file_cap_bytes)
        file_members.update(extras.screenshot_members(screenshots or {}))
    except ValueError as exc:
        raise BundleError(str(exc)) from exc
    dev = dict(session.header.device)
    recorded_dev = session.latest("device")
    if isinstance(recorded_dev, dict):
        dev.update(recorded_dev)
    if device:
        dev.update(device)
    decl = declarations if declarations is not None else session.latest("discovery")
    desc = descriptors if descriptors is not None else descriptors_from(session.exchanges)
    conf = conformance if conformance is not None else session.latest("conformance")

    parts: dict[str, Any] = {M_DEVICE: dev, M_DECLARATIONS: decl, M_DESCRIPTORS: desc}
    if conf is not None:
        parts[M_CONFORMANCE] = conf
    redactor = Redactor(keys)
    if redact:
        # one redactor for everything: a token seen in the journal is scrubbed everywhere
        for line in journal_lines(session, redact=False):
            redactor.collect(json.loads(line))
        for v in parts.values():
            redactor.collect(v)
        parts = {k: redactor.apply(v) for k, v in parts.items()}
        note = redactor.apply_text(note)
    session_bytes = b"".join(
        _apply_lines(journal_lines(session, redact=False), redactor)
        if redact
        else journal_lines(session, redact=False)
    )
    redacted_session = parse_journal(session_bytes, "bundle session")
    summary = summarize(redacted_session, parts[M_DEVICE], parts[M_DESCRIPTORS], conf, note,
                        lost_lines=session.damaged_lines)
    if redact:
        summary = redactor.apply_text(summary)

    members: dict[str, bytes] = {M_SESSION: session_bytes, M_SUMMARY: summary.encode()}
    members.update({k: _json_bytes(v) for k, v in parts.items()})
    members.update(file_members)
    manifest = BundleManifest(
        session_id=session.header.session_id,
        name=session.name,
        redacted=redact,
        redacted_keys=sorted(redactor.keys) if redact else [],
        lost_lines=session.damaged_lines,
        members={k: hashlib.sha256(v).hexdigest() for k, v in sorted(members.items())},
        logs_included=include_logs,
        file_cap_bytes=file_cap_bytes,
        file_results=file_report,
        screenshots=sorted(n for n in file_members if extras.is_screen_member(n)),
    )
    d = Path(dest)
    tmp = d.with_name(d.name + ".tmp")
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
            z.writestr(M_MANIFEST, _json_bytes(manifest.model_dump(mode="json")))
            for name in MEMBERS:
                if name in members:
                    z.writestr(name, members[name])
            for name in sorted(file_members):  # files/<sha256>, screens/<id>.png (issue 16)
                z.writestr(name, members[name])
        os.replace(tmp, d)
    except OSError as exc:
        raise BundleError(f"cannot write the bundle {d}: {exc}") from exc
    return d


def _apply_lines(lines: list[bytes], redactor: Redactor) -> list[bytes]:
    out = []
    for i, line in enumerate(lines):
        obj = redactor.apply(json.loads(line))
        if i == 0:
            obj["redacted"] = True
            obj["redacted_keys"] = sorted(redactor.keys)
        out.append((json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode())
    return out


def _read_member(z: zipfile.ZipFile, name: str, budget: list[int], source: Path) -> bytes:
    """One member, decompressed in pieces under three limits checked while streaming
    (before anything is parsed): the member cap, what is left of the total budget, and an
    expansion ratio against its compressed size — a zip bomb stops within one piece."""
    info = z.getinfo(name)
    if info.flag_bits & 0x1:
        raise BundleError(f"{source}: member {name} is encrypted; bundles never are "
                          "(re-create it with CETP Inspector)")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise BundleError(f"{source}: member {name} uses compression method "
                          f"{info.compress_type}; bundles use only stored or deflate")
    cap = min(MAX_MEMBER_BYTES, budget[0])
    if info.file_size > cap:
        raise BundleError(f"{source}: member {name} declares {info.file_size:,} bytes, more "
                          f"than the {cap:,} a bundle may expand to")
    ratio_cap = max(RATIO_ALLOWANCE_BYTES, MAX_EXPANSION_RATIO * info.compress_size)
    out = bytearray()
    try:
        with z.open(info) as f:
            while True:
                piece = f.read(READ_PIECE_BYTES)
                if not piece:
                    break
                out += piece
                if len(out) > cap:
                    raise BundleError(f"{source}: member {name} expands past {cap:,} bytes "
                                      "(a zip bomb?); not opened")
                if len(out) > ratio_cap:
                    raise BundleError(
                        f"{source}: member {name} expands more than {MAX_EXPANSION_RATIO}× "
                        f"its compressed size ({info.compress_size:,} bytes); a zip bomb? "
                        "not opened")
    except BundleError:
        raise
    except zlib.error as exc:
        raise BundleError(f"{source}: member {name} has corrupt deflate data ({exc})") from None
    except zipfile.BadZipFile as exc:
        raise BundleError(f"{source}: member {name} is damaged ({exc})") from None
    except (NotImplementedError, RuntimeError, EOFError, OSError) as exc:
        raise BundleError(f"{source}: member {name} cannot be read ({exc})") from None
    budget[0] -= len(out)
    return bytes(out)


def open_bundle(path: Path | str) -> BugReport:
    """Open a bundle read-only; raise BundleError saying what is wrong with a bad one.

    A bundle is someone else's file: any failure while reading it — including ones no
    check foresaw — is a BundleError naming the file, never an inspector crash."""
    p = Path(path)
    try:
        return _open_bundle(p)
    except BundleError:
        raise
    except RecursionError:
        raise BundleError(f"{p}: the bundle's JSON is nested too deeply to read") from None
    except MemoryError:
        raise BundleError(f"{p}: the bundle needs more memory than is available") from None
    except Exception as exc:
        raise BundleError(f"{p}: cannot read the bundle ({type(exc).__name__}: "
                          f"{str(exc)[:200]})") from None


def _open_bundle(p: Path) -> BugReport:
    try:
        size = p.stat().st_size
        if size > MAX_BUNDLE_FILE_BYTES:
            raise BundleError(f"{p} is {size:,} bytes; bundles are at most "
                              f"{MAX_BUNDLE_FILE_BYTES:,}")
        raw = p.read_bytes()
    except OSError as exc:
        raise BundleError(f"cannot read {p}: {exc}") from exc
    try:
        z = zipfile.ZipFile(io.BytesIO(raw))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
        raise BundleError(f"{p} is not a bug-report bundle (not a zip file)") from exc
    with z:
        infos = z.infolist()
        names = {i.filename for i in infos}
        if len(names) != len(infos):
            raise BundleError(f"{p}: a member name appears twice; not a bundle we wrote")
        unknown = {n for n in names - set(MEMBERS)
                   if not (extras.is_file_member(n) or extras.is_screen_member(n))}
        if sum(1 for n in names if extras.is_file_member(n)) > extras.MAX_FILES:
            raise BundleError(f"{p}: more than {extras.MAX_FILES} file members")
        if sum(1 for n in names if extras.is_screen_member(n)) > extras.MAX_SCREENSHOTS:
            raise BundleError(f"{p}: more than {extras.MAX_SCREENSHOTS} screenshots")
        if unknown:
            raise BundleError(f"{p}: unexpected members {sorted(unknown)[:5]}")
        if M_MANIFEST not in names or M_SESSION not in names:
            raise BundleError(f"{p}: not a bug-report bundle (no manifest or session)")
        budget = [MAX_TOTAL_BYTES]
        try:
            manifest = BundleManifest.model_validate_json(
                _read_member(z, M_MANIFEST, budget, p))
        except ValidationError as exc:
            raise BundleError(f"{p}: bad manifest: {exc.errors()[0]['msg']}") from None
        if manifest.format != BUNDLE_FORMAT:
            raise BundleError(f"{p}: not a bug-report bundle (format {manifest.format!r})")
        if manifest.version > BUNDLE_VERSION:
            raise BundleError(
                f"{p}: bundle version {manifest.version} is newer than this inspector; update it"
            )
        data: dict[str, bytes] = {}
        for name in sorted(names - {M_MANIFEST}):
            blob = _read_member(z, name, budget, p)
            want = manifest.members.get(name)
            if want is None or hashlib.sha256(blob).hexdigest() != want:
                raise BundleError(f"{p}: member {name} does not match the manifest digest")
            data[name] = blob

    def load(name: str, default: Any) -> Any:
        if name not in data:
            return default
        try:
            return json.loads(data[name])
        except ValueError as exc:
            raise BundleError(f"{p}: {name} is not valid JSON ({exc})") from None
        except RecursionError:
            raise BundleError(f"{p}: {name} is JSON nested too deeply to read") from None

    try:
        session = parse_journal(data[M_SESSION], f"{p}:{M_SESSION}")
    except JournalError as exc:
        raise BundleError(str(exc)) from None
    device = load(M_DEVICE, {})
    descriptors = load(M_DESCRIPTORS, {})
    try:
        files = extras.files_from_members(data)
        screenshots = extras.screenshots_from_members(data)
    except ValueError as exc:
        raise BundleError(f"{p}: {exc}") from None
    return BugReport(
        path=str(p),
        manifest=manifest,
        session=session,
        device=device if isinstance(device, dict) else {},
        declarations=load(M_DECLARATIONS, None),
        descriptors=descriptors if isinstance(descriptors, dict) else {},
        conformance=load(M_CONFORMANCE, None),
        summary=data.get(M_SUMMARY, b"").decode("utf-8", "replace"),
        files=files,
        screenshots=screenshots,
    )
