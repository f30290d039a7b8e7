"""Factories for hostile bundles: a valid bundle, then one member (or its zip header)
made hostile, with the manifest digest matching so only the attack can fail it."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

from inspector.session.bundle_file import M_DEVICE, M_MANIFEST, M_SESSION, BundleManifest
from inspector.session.journal import JournalHeader


def _session_bytes() -> bytes:
    header = JournalHeader(name="hostile").model_dump(mode="json")
    return (json.dumps(header) + "\n").encode()


def write_bundle(path: Path, members: dict[str, bytes], *,
                 compress: int = zipfile.ZIP_DEFLATED, encrypted: set[str] | None = None,
                 digests: dict[str, str] | None = None) -> Path:
    """A bundle holding `members` (plus a session unless given) under a matching manifest."""
    files = {M_SESSION: _session_bytes(), **members}
    manifest = BundleManifest(members={k: hashlib.sha256(v).hexdigest()
                                       for k, v in files.items()} | (digests or {}))
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(M_MANIFEST, manifest.model_dump_json())
        for name, data in files.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = compress
            if encrypted and name in encrypted:
                info.flag_bits |= 0x1
            z.writestr(info, data)
    return path


def zip_bomb(path: Path, expanded: int = 64 * 1024 * 1024) -> Path:
    """A session member of `expanded` bytes of one repeated line: ~1000:1 deflate."""
    line = b'{"type":"x","data":0}\n'
    return write_bundle(path, {M_SESSION: _session_bytes() + line * (expanded // len(line))})


def deep_json_bundle(path: Path, depth: int = 200_000) -> Path:
    return write_bundle(path, {M_DEVICE: b"[" * depth + b"]" * depth})


def corrupt_deflate(path: Path) -> Path:
    """A valid bundle whose session member's compressed bytes are overwritten mid-stream."""
    data = _session_bytes() + b'{"type":"note","data":"' + bytes(range(32, 127)) * 400 + b'"}\n'
    write_bundle(path, {M_SESSION: data})
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        info = z.getinfo(M_SESSION)
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    mid = start + info.compress_size // 2
    raw[mid:mid + 64] = b"\xff" * 64
    path.write_bytes(bytes(raw))
    return path


def patch_member(path: Path, name: str, *, flag_bits: int | None = None,
                 method: int | None = None) -> Path:
    """Rewrite a member's general-purpose flags / compression method in both its local
    header and its central directory entry (zipfile's writer resets them)."""
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        off = z.getinfo(name).header_offset
    spots = [(off, 6, 8)]  # local header: flags at +6, method at +8
    i = raw.find(b"PK\x01\x02")
    while i >= 0:
        n = int.from_bytes(raw[i + 28:i + 30], "little")
        if bytes(raw[i + 46:i + 46 + n]) == name.encode():
            spots.append((i, 8, 10))  # central entry: flags at +8, method at +10
        i = raw.find(b"PK\x01\x02", i + 4)
    for base, f_at, m_at in spots:
        if flag_bits is not None:
            raw[base + f_at:base + f_at + 2] = flag_bits.to_bytes(2, "little")
        if method is not None:
            raw[base + m_at:base + m_at + 2] = method.to_bytes(2, "little")
    path.write_bytes(bytes(raw))
    return path
