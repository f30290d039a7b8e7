#!/usr/bin/env python3
"""Digest of the relay sources that go into the APK (printed as lowercase hex).

`build.sh --install-into-resources` records it in resources/relay/relay.json, and the tests
recompute it: a mismatch means someone changed the relay without rebuilding the shipped APK.
Only inputs of the APK count (manifest, resources, core and app Java, signing key, build
scripts); host-only code and tests do not. Paths are hashed with '/' separators and file
bytes as stored, so the digest is the same on every machine.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
INPUTS = ("AndroidManifest.xml", "res", "src/core", "src/app", "keystore", "build.sh",
          "toolchain.sh")


def source_files(root: Path = ROOT) -> list[Path]:
    """Every APK input file under `root`, sorted by relative path."""
    files: list[Path] = []
    for name in INPUTS:
        p = root / name
        if p.is_file():
            files.append(p)
        elif p.is_dir():
            files.extend(f for f in p.rglob("*") if f.is_file() and "__pycache__" not in f.parts)
    return sorted(files, key=lambda f: f.relative_to(root).as_posix())


def sources_digest(root: Path = ROOT) -> str:
    h = hashlib.sha256()
    for f in source_files(root):
        rel = f.relative_to(root).as_posix().encode()
        h.update(rel + b"\0" + hashlib.sha256(f.read_bytes()).hexdigest().encode() + b"\n")
    return h.hexdigest()


if __name__ == "__main__":
    print(sources_digest(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT))
