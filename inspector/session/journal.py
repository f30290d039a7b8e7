"""Session journals: every inspection session recorded to disk as it happens.

One append-only JSON Lines file per session (`<sessions dir>/<session_id>.jsonl`): a header
line, then one line per event — mostly finished exchanges. Each line is flushed when it is
written, so killing the process loses at most the exchange in flight; a torn last line is
skipped on reading and cut off before appending. The schema is in docs/sessions.md; older
format versions are migrated on reading (`migrate_file` rewrites them on disk).

Journals hold provider data and are read back as untrusted input: every line is parsed
defensively and unknown record types are kept but ignored.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from inspector.protocol.exchange import Exchange, ExchangeStatus
from inspector.relay.api import HelloInfo
from inspector.session.journal_repair import TornTail, salvage, seal_torn_tail
from inspector.session.redaction import (  # noqa: F401  (re-exported)
    DEFAULT_SECRET_KEYS,
    REDACTED,
    Redactor,
)

log = logging.getLogger(__name__)

FORMAT = "cetp-inspector-journal"
FORMAT_VERSION = 1
SUFFIX = ".jsonl"
HOME_ENV = "CETP_INSPECTOR_HOME"
MAX_LINE_BYTES = 64 * 1024 * 1024
"""A line longer than this is treated as corrupt (protects readers from a hostile file)."""

# Record types (the "type" field of every line after the header).
REC_EXCHANGE = "exchange"
REC_META = "meta"
REC_REPAIR = "journal_repair"  # a torn tail found and kept aside when the journal continued


class JournalError(Exception):
    """A journal that cannot be read or written; the message says which file and why."""


def data_home() -> Path:
    """The inspector's data folder: $CETP_INSPECTOR_HOME, else the XDG data dir."""
    override = os.environ.get(HOME_ENV)
    if override:
        return Path(override).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "cetp-inspector"


def sessions_dir(directory: Path | str | None = None) -> Path:
    """Where session journals live (created on demand)."""
    d = Path(directory) if directory is not None else data_home() / "sessions"
    d.mkdir(parents=True, exist_ok=True)
    return d


def _now_ms() -> float:
    return time.time() * 1000.0


class JournalHeader(BaseModel):
    """The first line of a journal."""

    model_config = ConfigDict(extra="allow")

    format: Literal["cetp-inspector-journal"] = FORMAT
    version: int = FORMAT_VERSION
    session_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    name: str = ""
    created_ms: float = Field(default_factory=_now_ms)
    device: dict[str, Any] = Field(default_factory=dict)
    app: str = "cetp-inspector/0.1.0"


class JournalContents(BaseModel):
    """A journal read back: header, exchanges (latest state of each), other records."""

    header: JournalHeader
    name: str
    exchanges: list[Exchange]
    records: list[dict[str, Any]] = Field(default_factory=list)
    """Non-exchange lines in file order (`{"type": …, "data": …, "at_ms": …}`)."""
    path: str | None = None
    migrated_from: int | None = None
    damaged_lines: int = 0
    """Lines that could not be parsed (normally 0, or 1 for a torn last line)."""

    def records_of(self, kind: str) -> list[Any]:
        return [r.get("data") for r in self.records if r.get("type") == kind]

    def latest(self, kind: str) -> Any:
        found = self.records_of(kind)
        return found[-1] if found else None


class SessionSummary(BaseModel):
    """What a session list shows without loading every exchange."""

    session_id: str
    name: str
    path: str
    created_ms: float
    modified_ms: float
    size_bytes: int
    exchange_lines: int  # journal lines holding exchanges (an updated exchange adds a line)
    exchange_count: int = 0  # distinct exchanges: what a session list shows
    device: dict[str, Any]
    version: int
    damaged: str | None = None
    """Why this journal cannot be read (listed anyway, so one bad file hides nothing)."""


# ---------------------------------------------------------------------------------------
# Writing


def _dump(obj: Any) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


class JournalWriter:
    """Appends to one session journal; attach `on_exchange` to a Recorder.

    Only finished exchanges are written (a pending one has nothing to replay); an exchange
    republished later (e.g. findings added) is written again and the last line wins.
    """

    def __init__(self, path: Path, header: JournalHeader, *, fsync: bool = False) -> None:
        self.path = path
        self.header = header
        self.fsync = fsync
        self._file = open(path, "ab")  # noqa: SIM115  (kept open for the whole session)
        self.torn: TornTail | None = None  # what reopen found at the end of the file

    @classmethod
    def create(
        cls,
        *,
        name: str = "",
        device: dict[str, Any] | None = None,
        directory: Path | str | None = None,
        session_id: str | None = None,
        fsync: bool = False,
    ) -> JournalWriter:
        """Start a new journal in the sessions folder."""
        header = JournalHeader(name=name, device=dict(device or {}))
        if session_id:
            header.session_id = _safe_id(session_id)
        path = sessions_dir(directory) / f"{header.session_id}{SUFFIX}"
        if path.exists():
            raise JournalError(f"session {header.session_id} already exists at {path}")
        path.write_bytes(_dump(header.model_dump(mode="json")))
        return cls(path, header, fsync=fsync)

    @classmethod
    def reopen(cls, path: Path | str, *, fsync: bool = False) -> JournalWriter:
        """Continue an existing journal: repair a torn tail, migrate an old version first."""
        p = Path(path)
        migrate_file(p)
        torn = seal_torn_tail(p, MAX_LINE_BYTES)
        contents = read_journal(p)
        writer = cls(p, contents.header, fsync=fsync)
        writer.torn = torn
        if torn is not None and torn.kept_in:
            writer.record(REC_REPAIR, torn.model_dump(mode="json"))  # said in the journal
        return writer

    @property
    def session_id(self) -> str:
        return self.header.session_id

    def _append(self, obj: dict[str, Any]) -> None:
        if self._file.closed:
            raise JournalError(f"journal {self.path} is closed")
        self._file.write(_dump(obj))
        self._file.flush()
        if self.fsync:
            os.fsync(self._file.fileno())

    def record_exchange(self, exchange: Exchange) -> None:
        """Write a finished exchange (pending ones are skipped)."""
        if exchange.status == ExchangeStatus.PENDING or exchange.finished_ms is None:
            return
        self._append({"type": REC_EXCHANGE, "exchange": exchange.model_dump(mode="json")})

    def attach(self, recorder: Any) -> Callable[[], None]:
        """Journal every exchange a `Recorder` finishes; returns the unsubscribe function."""
        remove: Callable[[], None] = recorder.add_listener(self.on_exchange)
        return remove

    def on_exchange(self, exchange: Exchange) -> None:
        """Recorder listener: `recorder.add_listener(writer.on_exchange)`."""
        try:
            self.record_exchange(exchange)
        except (OSError, JournalError, ValueError):
            log.exception("could not journal exchange %s", exchange.id)

    def record(self, kind: str, data: Any) -> None:
        """Append any other event (device facts, discovery, descriptors, conformance …)."""
        if kind in (REC_EXCHANGE, REC_META):
            raise ValueError(f"use record_exchange/rename for {kind!r} records")
        self._append({"type": kind, "data": data, "at_ms": _now_ms()})

    def rename(self, name: str) -> None:
        self._append({"type": REC_META, "name": name, "at_ms": _now_ms()})
        self.header.name = name

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()

    def __enter__(self) -> JournalWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _safe_id(session_id: str) -> str:
    if not session_id or any(c in session_id for c in "/\\\0") or session_id.startswith("."):
        raise JournalError(f"invalid session id {session_id!r:.80}")
    return session_id


def device_facts(serial: str, hello: HelloInfo | None = None) -> dict[str, Any]:
    """Device facts for the journal and bug reports (model, Android version, relay build)."""
    facts: dict[str, Any] = {"serial": serial}
    if hello is not None:
        facts.update(
            {
                str(k): (int(v) if isinstance(v, int) and not isinstance(v, bool) else v)
                for k, v in hello.device.items()
            }
        )
        facts.update(
            relay_version_name=hello.relay_version_name,
            relay_version_code=hello.relay_version_code,
            protocol_version=hello.protocol_version,
            capabilities=list(hello.capabilities),
        )
        facts["serial"] = serial  # the adb serial wins over what the relay reports
    return facts


# ---------------------------------------------------------------------------------------
# Reading and migration


def _lines(path: Path) -> Iterator[bytes]:
    """The file's lines (bounded: a monster line is cut and then fails to parse)."""
    with open(path, "rb") as f:
        while True:
            line = f.readline(MAX_LINE_BYTES + 1)
            if not line:
                return
            yield line


def _parse_header(first: bytes, path: Path | str) -> dict[str, Any]:
    try:
        obj = json.loads(first)
    except ValueError as exc:
        raise JournalError(f"{path}: the first line is not a journal header ({exc})") from None
    except RecursionError:
        raise JournalError(f"{path}: the first line is JSON nested too deeply to be a journal "
                           "header") from None
    if not isinstance(obj, dict):
        raise JournalError(f"{path}: the first line is not a journal header")
    return obj


def header_version(obj: dict[str, Any]) -> int:
    """The format version a header line declares (v0 headers say `journal: 0`)."""
    if obj.get("format") == FORMAT and isinstance(obj.get("version"), int):
        return int(obj["version"])
    if obj.get("journal") == 0:
        return 0
    raise JournalError("not a CETP Inspector session journal (unknown header)")


def read_journal(path: Path | str) -> JournalContents:
    """Read a journal of any supported version (older ones migrated in memory)."""
    p = Path(path)
    try:
        contents = _guarded(lambda: _read_lines(_lines(p), str(p)), str(p))
    except OSError as exc:
        raise JournalError(f"cannot read journal {p}: {exc}") from exc
    contents.path = str(p)
    return contents


def parse_journal(data: bytes, source: str = "<memory>") -> JournalContents:
    """Read a journal held in memory (e.g. from a bug-report bundle)."""
    return _guarded(lambda: _read_lines(iter(data.splitlines(keepends=True)), source), source)


def _guarded(read: Callable[[], JournalContents], source: str) -> JournalContents:
    """A journal may come from anywhere (a bundle, a crashed run): any failure reading it
    is a JournalError naming it, never an inspector crash (issue 12)."""
    try:
        return read()
    except (JournalError, OSError):
        raise
    except RecursionError:
        raise JournalError(f"{source}: JSON nested too deeply to read") from None
    except MemoryError:
        raise JournalError(f"{source}: needs more memory than is available") from None
    except Exception as exc:  # untrusted input: every failure is the file's
        raise JournalError(f"{source}: cannot read the journal ({type(exc).__name__}: "
                           f"{str(exc)[:200]})") from None


def _read_lines(it: Iterator[bytes], source: str) -> JournalContents:
    first = next(it, None)
    if first is None:
        raise JournalError(f"{source}: empty file, not a journal")
    raw_header = _parse_header(first, source)
    try:
        version = header_version(raw_header)
    except JournalError as exc:
        raise JournalError(f"{source}: {exc}") from None
    if version > FORMAT_VERSION:
        raise JournalError(
            f"{source}: journal format {version} is newer than this inspector "
            f"(reads up to {FORMAT_VERSION}); update the inspector"
        )
    migrate_line = MIGRATIONS_TO_CURRENT.get(version)
    if migrate_line is None:
        raise JournalError(f"{source}: unknown journal format version {version}")
    try:
        header = JournalHeader.model_validate(_migrate_header(raw_header, version))
    except ValidationError as exc:
        raise JournalError(f"{source}: bad journal header: {exc.errors()[0]['msg']}") from None
    contents = _fold(header, (migrate_line(line) for line in _parsed(it)))
    contents.migrated_from = version if version != FORMAT_VERSION else None
    return contents


class _Damaged:
    pass


def _parsed(it: Iterable[bytes]) -> Iterator[dict[str, Any] | _Damaged]:
    for line in it:
        if not line.strip():
            continue
        try:  # a torn last line usually fails here; if it parses whole, it is whole
            obj = json.loads(line)
        except (ValueError, RecursionError):
            obj = None
        if isinstance(obj, dict):
            yield obj
            continue
        yield _Damaged()
        salvaged = salvage(line)
        if salvaged is not None:
            yield salvaged


def _fold(header: JournalHeader, lines: Iterable[dict[str, Any] | _Damaged]) -> JournalContents:
    exchanges: dict[str, Exchange] = {}
    records: list[dict[str, Any]] = []
    name = header.name
    damaged = 0
    for obj in lines:
        if isinstance(obj, _Damaged):
            damaged += 1
            continue
        kind = obj.get("type")
        if kind == REC_EXCHANGE:
            try:
                ex = Exchange.model_validate(obj.get("exchange"))
            except (ValidationError, RecursionError, TypeError, ValueError):
                damaged += 1
                continue
            exchanges[ex.id] = ex  # a later line is a later state of the same exchange
        elif kind == REC_META:
            if isinstance(obj.get("name"), str):
                name = obj["name"]
        elif isinstance(kind, str):
            records.append(obj)
        else:
            damaged += 1
    return JournalContents(
        header=header,
        name=name,
        exchanges=sorted(exchanges.values(), key=lambda e: (e.started_ms, e.seq)),
        records=records,
        damaged_lines=damaged,
    )


# -- v0 ----------------------------------------------------------------------------------
# The first, unreleased format (see tests/session/fixtures/journal-v0.jsonl): header
# `{"journal": 0, "id", "title", "created": <unix seconds>, "device": "<serial>"}`, then one
# bare exchange object per line with times in seconds (`started`, `finished`), the error as
# `{"error": {"code", "message"}}`, and `request`/`response` in the same typed JSON form.


def _migrate_header(raw: dict[str, Any], version: int) -> dict[str, Any]:
    if version == FORMAT_VERSION:
        return raw
    created = raw.get("created")
    device = raw.get("device")
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "session_id": str(raw.get("id") or uuid.uuid4().hex),
        "name": str(raw.get("title") or ""),
        "created_ms": float(created) * 1000.0 if isinstance(created, int | float) else _now_ms(),
        "device": {"serial": device} if isinstance(device, str) else {},
        "app": "cetp-inspector (journal v0)",
        "migrated_from": 0,
    }


def _migrate_line_v0(obj: dict[str, Any] | _Damaged) -> dict[str, Any] | _Damaged:
    if isinstance(obj, _Damaged):
        return obj
    ex = dict(obj)
    for old, new in (("started", "started_ms"), ("finished", "finished_ms")):
        if old in ex:
            v = ex.pop(old)
            ex[new] = float(v) * 1000.0 if isinstance(v, int | float) else None
    err = ex.pop("error", None)
    if isinstance(err, dict):
        ex["error_code"] = err.get("code")
        ex["error_message"] = err.get("message")
    if ex.get("finished_ms") is None:
        ex.pop("finished_ms", None)
    return {"type": REC_EXCHANGE, "exchange": ex}


def _identity(obj: dict[str, Any] | _Damaged) -> dict[str, Any] | _Damaged:
    return obj


MIGRATIONS_TO_CURRENT = {0: _migrate_line_v0, FORMAT_VERSION: _identity}


def migrate_file(path: Path | str) -> int | None:
    """Rewrite an old-format journal as the current format; return the old version or None.

    The original is kept next to it as `<name>.v<N>.bak`; the rewrite is atomic.
    """
    p = Path(path)
    with open(p, "rb") as f:
        first = f.readline(MAX_LINE_BYTES + 1)
    version = header_version(_parse_header(first, p))
    if version == FORMAT_VERSION:
        return None
    contents = read_journal(p)
    tmp = p.with_name(p.name + ".migrating")
    with open(tmp, "wb") as f:
        f.write(_dump(contents.header.model_dump(mode="json")))
        for ex in contents.exchanges:
            f.write(_dump({"type": REC_EXCHANGE, "exchange": ex.model_dump(mode="json")}))
        for rec in contents.records:
            f.write(_dump(rec))
        if contents.name != contents.header.name:
            f.write(_dump({"type": REC_META, "name": contents.name, "at_ms": _now_ms()}))
        f.flush()
        os.fsync(f.fileno())
    backup = p.with_name(f"{p.stem}.v{version}.bak")
    if backup.exists():
        backup = p.with_name(f"{p.stem}.v{version}.{int(time.time())}.bak")
    os.replace(p, backup)
    os.replace(tmp, p)
    return version


# ---------------------------------------------------------------------------------------
# The sessions folder


def session_path(session_id: str, directory: Path | str | None = None) -> Path:
    p = sessions_dir(directory) / f"{_safe_id(session_id)}{SUFFIX}"
    if not p.exists():
        raise JournalError(f"no session {session_id!r} in {p.parent}")
    return p


# The exchange id is the first field of a dumped Exchange: found without parsing the line.
_EXCHANGE_ID = re.compile(rb'"id":\s*"([^"]+)"')


def _summary(p: Path) -> SessionSummary:
    st = p.stat()
    it = _lines(p)
    first = next(it, None)
    if first is None:
        raise JournalError(f"{p}: empty file")
    raw = _parse_header(first, p)
    version = header_version(raw)
    if version not in MIGRATIONS_TO_CURRENT:
        raise JournalError(f"{p}: journal format {version} is not supported by this inspector")
    header = JournalHeader.model_validate(_migrate_header(raw, version))
    name, count = header.name, 0
    ids: set[bytes] = set()
    meta_prefix, exchange_prefix = b'{"type":"meta"', b'{"type":"exchange"'
    for line in it:
        if line.startswith(meta_prefix):
            with contextlib.suppress(ValueError, AttributeError):
                n = json.loads(line).get("name")
                name = n if isinstance(n, str) else name
        elif line.startswith(exchange_prefix) or (version == 0 and line.strip()):
            count += 1
            m = _EXCHANGE_ID.search(line)
            ids.add(m.group(1) if m else line)
    return SessionSummary(
        session_id=p.stem,  # the file name is what open/rename/delete use
        name=name,
        path=str(p),
        created_ms=header.created_ms,
        modified_ms=st.st_mtime * 1000.0,
        size_bytes=st.st_size,
        exchange_lines=count,
        exchange_count=len(ids),
        device=header.device,
        version=version,
    )


def list_sessions(directory: Path | str | None = None) -> list[SessionSummary]:
    """Every readable journal in the folder, newest first (unreadable files are skipped)."""
    out: list[SessionSummary] = []
    for p in sessions_dir(directory).glob(f"*{SUFFIX}"):
        try:
            out.append(_summary(p))
        except Exception as exc:
            out.append(_damaged_summary(p, exc))
    return sorted(out, key=lambda s: s.created_ms, reverse=True)


def _damaged_summary(p: Path, exc: BaseException) -> SessionSummary:
    """A journal that cannot be read, listed as damaged (issue 12)."""
    if isinstance(exc, RecursionError):
        why = "JSON nested too deeply to read"
    elif isinstance(exc, JournalError | OSError):
        why = str(exc)
    else:
        why = f"{type(exc).__name__}: {str(exc)[:200]}"
    log.warning("damaged journal %s: %s", p, why)
    try:
        st = p.stat()
        mtime, size = st.st_mtime * 1000.0, st.st_size
    except OSError:
        mtime, size = 0.0, 0
    return SessionSummary(session_id=p.stem, name="", path=str(p), created_ms=mtime,
                          modified_ms=mtime, size_bytes=size, exchange_lines=0, device={},
                          version=-1, damaged=why)


def open_session(session_id: str, directory: Path | str | None = None) -> JournalContents:
    return read_journal(session_path(session_id, directory))


def rename_session(session_id: str, name: str, directory: Path | str | None = None) -> None:
    """Rename by appending a meta line (the journal stays append-only)."""
    p = session_path(session_id, directory)
    seal_torn_tail(p)
    with open(p, "ab") as f:
        f.write(_dump({"type": REC_META, "name": name, "at_ms": _now_ms()}))


def delete_session(session_id: str, directory: Path | str | None = None) -> None:
    p = session_path(session_id, directory)
    p.unlink()
    for bak in p.parent.iterdir():  # migration backups; no glob: ids may hold "[" or "*"
        if bak.name.startswith((f"{p.stem}.v", f"{p.stem}.torn-")) and bak.name.endswith(
                ".bak"):
            bak.unlink()


# ---------------------------------------------------------------------------------------
# Export (redaction itself: inspector.session.redaction)

def journal_lines(
    contents: JournalContents,
    *,
    redact: bool = True,
    secret_keys: Iterable[str] = (),
) -> list[bytes]:
    """The journal as current-format lines, redacted unless `redact=False`."""
    header = contents.header.model_dump(mode="json")
    header["name"] = contents.name
    body: list[dict[str, Any]] = [
        {"type": REC_EXCHANGE, "exchange": ex.model_dump(mode="json")} for ex in contents.exchanges
    ]
    body += contents.records
    if redact:
        r = Redactor(secret_keys)
        r.collect(header)
        for obj in body:
            r.collect(obj)
        header = r.apply(header)
        body = [r.apply(obj) for obj in body]
        header["redacted_keys"] = sorted(r.keys)
    header["redacted"] = redact
    return [_dump(header)] + [_dump(obj) for obj in body]


def export_session(
    contents: JournalContents,
    dest: Path | str,
    *,
    redact: bool = True,
    secret_keys: Iterable[str] = (),
) -> Path:
    """Write a shareable copy of a session journal; secrets redacted by default."""
    d = Path(dest)
    tmp = d.with_name(d.name + ".tmp")
    try:
        lines = journal_lines(contents, redact=redact, secret_keys=secret_keys)
    except (RecursionError, ValueError) as exc:  # recorded data too deep to walk safely
        raise JournalError(f"the session cannot be exported: {str(exc)[:200] or 'too deep'}"
                           ) from None
    tmp.write_bytes(b"".join(lines))
    os.replace(tmp, d)
    return d
