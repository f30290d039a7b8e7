"""Generate the shared relay-protocol test vectors (see README.md in this folder).

Run `.venv/bin/python -m tests.vectors.generate` from the repository root after a change to
the protocol; `tests/relay/test_vectors.py` fails when the files on disk differ from what
this script produces, so the vectors and the Python implementation never drift apart.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
import sys
from pathlib import Path
from typing import Any

from inspector.protocol.bundle import (
    Bundle,
    BundleArray,
    Double,
    FileDescriptorHandle,
    Int,
    IntArray,
    Long,
    PendingIntentHandle,
    StringArray,
    Unsupported,
    Value,
    to_jsonable,
)
from inspector.relay.codec import encode_value
from inspector.relay.frames import MAGIC, MAX_CHUNK, MAX_FRAME_PAYLOAD, FrameType, frame_bytes

HERE = Path(__file__).resolve().parent


def _nested(depth: int) -> Bundle:
    b = Bundle(leaf=Int(depth))
    for i in range(depth - 1, 0, -1):
        b = Bundle(level=Int(i), child=b)
    return b


def bundle_values() -> dict[str, Value]:
    """Valid typed values: name → value (each becomes bundle-NAME.bin/.json)."""
    return {
        "null": None,
        "string-empty": "",
        "string-unicode": "héllo wörld ✓ 日本語 😀",
        "int-zero": Int(0),
        "int-min": Int(-(2**31)),
        "int-max": Int(2**31 - 1),
        "long-min": Long(-(2**63)),
        "long-max": Long(2**63 - 1),
        "long-small": Long(5),
        "boolean-true": True,
        "boolean-false": False,
        "double-pi": Double(3.141592653589793),
        "double-negative-zero": Double(-0.0),
        "double-large": Double(-1.5e300),
        "int-array": IntArray([0, 1, -1, 2**31 - 1, -(2**31)]),
        "int-array-empty": IntArray(),
        "string-array": StringArray(["a", None, "", "ü"]),
        "bytes": bytes(range(256)),
        "bytes-empty": b"",
        "pending-intent": PendingIntentHandle("pi-1", "com.example.provider", 0b1011),
        "file-descriptor": FileDescriptorHandle("fd-7", 1_048_576),
        "file-descriptor-unknown-size": FileDescriptorHandle("fd-8", -1),
        "unsupported": Unsupported("android.graphics.Bitmap"),
        "bundle-empty": Bundle(),
        # Keys are ordered by UTF-8 bytes, NOT by Java's UTF-16 String.compareTo: "～"
        # (U+FF5E, EF BD 9E) sorts before "😀" (U+1F600, F0 9F 98 80) here, after it in UTF-16.
        "bundle-key-order": Bundle(
            {
                "😀": Int(4),
                "～": Int(3),
                "b": Int(2),
                "B": Int(1),
                "é": Int(5),
                "ab": Int(6),
                "a": Int(7),
                "": Int(8),
            }
        ),
        # Supplementary characters (4 UTF-8 bytes, surrogate pairs in UTF-16) sort after
        # every BMP character by UTF-8 bytes, but before U+E000…U+FFFF in UTF-16 order.
        "bundle-supplementary-keys": Bundle(
            {
                "\U0010ffff": Int(1),
                "\U00010000": Int(2),
                "\U0001f600x": Int(3),
                "\U0001f600": Int(4),
                "\uffff": Int(5),
                "\ue000": Int(6),
                "\ud7ff": Int(7),
            }
        ),
        "bundle-all-types": Bundle(
            s="text",
            i=Int(-7),
            l=Long(1_700_000_000_000),
            z=True,
            d=Double(0.5),
            ia=IntArray([1, 2]),
            sa=StringArray(["x", None]),
            b=Bundle(inner="yes"),
            ba=BundleArray([Bundle(k=Int(1)), None, Bundle()]),
            bytes=b"\x00\xff",
            pi=PendingIntentHandle("pi-2", "com.example", 3),
            fd=FileDescriptorHandle("fd-2", 10),
            u=Unsupported("android.net.Uri"),
            n=None,
        ),
        "bundle-array": BundleArray([None, Bundle(a="b"), None]),
        "bundle-array-empty": BundleArray(),
        "bundle-depth-32": _nested(32),
        "request-call": Bundle(
            op="call",
            args=Bundle(
                authority="com.example.cetp",
                method="invoke_tool",
                arg=None,
                extras=Bundle(
                    protocol_version=Int(2),
                    request_id="6f1c0e3a-1b2c-4d5e-8f90-123456789abc",
                    tool="set_price_alert",
                    arguments_json='{"symbol":"ETH","above":4000}',
                ),
                timeout_ms=Int(30_000),
            ),
        ),
    }


def frames() -> dict[str, tuple[FrameType, int, Value | bytes]]:
    """Valid frames: name → (type, request id, typed payload or raw CHUNK bytes)."""
    return {
        "request-hello": (
            FrameType.REQUEST,
            1,
            Bundle(
                op="hello",
                args=Bundle(
                    protocol_version=Int(1),
                    token="0123456789abcdef",
                    client="cetp-inspector/0.1.0",
                    events=True,
                ),
            ),
        ),
        "request-ping": (FrameType.REQUEST, 2, Bundle(op="ping", args=Bundle())),
        "request-read-file": (
            FrameType.REQUEST,
            0xFFFFFFFF,
            Bundle(
                op="read_file",
                args=Bundle(handle="fd-7", max_bytes=Long(8_388_608), chunk_size=Int(MAX_CHUNK)),
            ),
        ),
        "response-ping": (FrameType.RESPONSE, 2, Bundle(time_ms=Long(1_764_547_200_000))),
        "error-unsupported-version": (
            FrameType.ERROR,
            1,
            Bundle(
                code="UNSUPPORTED_VERSION",
                message="protocol version 2 is not supported",
                details=Bundle(supported=IntArray([1])),
            ),
        ),
        "error-bad-frame": (
            FrameType.ERROR,
            0,
            Bundle(code="BAD_FRAME", message="bad magic"),
        ),
        "chunk": (FrameType.CHUNK, 3, bytes(range(256)) * 4),
        "chunk-one-byte": (FrameType.CHUNK, 3, b"\x2a"),
        "end": (
            FrameType.END,
            3,
            Bundle(
                size=Long(1025),
                sha256=hashlib.sha256(bytes(range(256)) * 4 + b"\x2a").hexdigest(),
            ),
        ),
        "event-package-changed": (
            FrameType.EVENT,
            0,
            Bundle(event="package_changed", change="added", package="com.example.new"),
        ),
        "cancel": (FrameType.CANCEL, 3, b""),
    }


def _header(
    magic: bytes = MAGIC,
    version: int = 1,
    ftype: int = 1,
    flags: int = 0,
    rid: int = 1,
    length: int = 0,
) -> bytes:
    return struct.pack(">4sBBHII", magic, version, ftype, flags, rid, length)


def _string(b: bytes) -> bytes:
    return b"\x01" + struct.pack(">I", len(b)) + b


def _bundle(*entries: tuple[bytes, bytes]) -> bytes:
    out = b"\x07" + struct.pack(">I", len(entries))
    for k, v in entries:
        out += struct.pack(">I", len(k)) + k + v
    return out


def _deep(depth: int) -> bytes:
    body = b"\x00"
    for _ in range(depth):
        body = _bundle((b"x", body))
    return body


def invalid_values() -> dict[str, tuple[bytes, int, str]]:
    """Invalid value payloads: name → (bytes, offset, words the reason contains)."""
    return {
        "empty": (b"", 0, "tag needs 1 bytes"),
        "unknown-tag": (b"\x0e", 0, "unknown tag 0x0e"),
        "trailing-bytes": (b"\x02\x00\x00\x00\x01\x00", 5, "trailing"),
        "truncated-int": (b"\x02\x00\x00", 1, "int needs 4 bytes"),
        "truncated-string": (b"\x01\x00\x00\x00\x05abc", 5, "String needs 5 bytes"),
        "boolean-two": (b"\x04\x02", 1, "boolean byte must be 0 or 1"),
        "duplicate-key": (_bundle((b"a", b"\x00"), (b"a", b"\x00")), 11, "duplicate Bundle key"),
        "invalid-utf8-string": (_string(b"\xc3\x28"), 1, "not valid UTF-8"),
        "invalid-utf8-key": (_bundle((b"\xff", b"\x00")), 5, "not valid UTF-8"),
        "overlong-utf8": (_string(b"\xc0\xaf"), 1, "not valid UTF-8"),
        "surrogate-utf8": (_string(b"\xed\xa0\x80"), 1, "not valid UTF-8"),
        # Java's "modified UTF-8" (DataOutputStream.writeUTF): NUL as C0 80, and U+1F600 as
        # two encoded surrogates (CESU-8) instead of one 4-byte sequence.
        "modified-utf8-nul": (_string(b"a\xc0\x80b"), 1, "not valid UTF-8"),
        "cesu8-supplementary-key": (
            _bundle((b"\xed\xa0\xbd\xed\xb8\x80", b"\x00")),
            5,
            "not valid UTF-8",
        ),
        "depth-33": (_deep(33), 32 * 10, "nested deeper than 32"),
        "count-past-end": (b"\x05\xff\xff\xff\xff", 1, "runs past the end"),
        "bundle-count-past-end": (b"\x07\x00\x00\x01\x00" + b"\x00" * 16, 1, "runs past the end"),
        "bundle-array-bad-element": (
            b"\x0c\x00\x00\x00\x01\x02\x00\x00\x00\x01",
            5,
            "must be a Bundle or null",
        ),
        "string-array-truncated": (
            b"\x06\x00\x00\x00\x02\xff\xff\xff\xff\x00\x00\x00\x05ab",
            13,
            "String[] element needs 5 bytes",
        ),
    }


def invalid_frames() -> dict[str, tuple[bytes, str]]:
    """Invalid frames (BAD_FRAME): name → (bytes, words the reason contains).

    Frames whose header is bad carry no payload bytes at all: a receiver must reject them
    from the 16-byte header alone.
    """
    return {
        "bad-magic": (b"CETX" + _header()[4:], "bad magic"),
        "bad-version": (_header(version=2), "unknown frame version"),
        "nonzero-flags": (_header(flags=1), "reserved flags"),
        "type-zero": (_header(ftype=0), "unknown frame type"),
        "type-eight": (_header(ftype=8), "unknown frame type"),
        "too-large": (_header(length=MAX_FRAME_PAYLOAD + 1), "exceeds"),
        "length-max-u32": (_header(length=0xFFFFFFFF), "exceeds"),
        "chunk-empty": (_header(ftype=4), "CHUNK payload"),
        "chunk-too-big": (_header(ftype=4, length=MAX_CHUNK + 1), "CHUNK payload"),
        "cancel-with-payload": (_header(ftype=7, length=1) + b"\x00", "CANCEL payload"),
        "event-nonzero-id": (_header(ftype=6, rid=5, length=1) + b"\x00", "EVENT frames"),
        "truncated-header": (_header()[:9], "inside a frame header"),
        "truncated-payload": (_header(length=10) + b"\x00" * 4, "inside a REQUEST payload"),
    }


def _json(obj: Any) -> bytes:
    return (json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=True) + "\n").encode()


def all_files() -> dict[str, bytes]:
    """Every vector file name → content (the on-disk set must equal this exactly)."""
    files: dict[str, bytes] = {}
    for name, value in bundle_values().items():
        files[f"bundle-{name}.bin"] = encode_value(value)
        files[f"bundle-{name}.json"] = _json(to_jsonable(value))
    for name, (ftype, rid, payload) in frames().items():
        meta: dict[str, Any] = {"type": ftype.name, "type_code": int(ftype), "request_id": rid}
        if ftype in (FrameType.CHUNK, FrameType.CANCEL):
            assert isinstance(payload, bytes)
            raw = payload
            meta["raw_base64"] = base64.b64encode(payload).decode("ascii")
        else:
            raw = encode_value(payload)
            meta["value"] = to_jsonable(payload)
        files[f"frame-{name}.bin"] = frame_bytes(ftype, rid, raw)
        files[f"frame-{name}.json"] = _json(meta)
    for name, (data, offset, reason) in invalid_values().items():
        files[f"invalid-value-{name}.bin"] = data
        files[f"invalid-value-{name}.json"] = _json(
            {"error": "CodecError", "offset": offset, "reason_contains": reason}
        )
    for name, (data, reason) in invalid_frames().items():
        files[f"invalid-frame-{name}.bin"] = data
        files[f"invalid-frame-{name}.json"] = _json(
            {"error": "BAD_FRAME", "reason_contains": reason}
        )
    return files


def main() -> int:
    files = all_files()
    for old in HERE.glob("*.bin"):
        if old.name not in files:
            old.unlink()
    for old in HERE.glob("*.json"):
        if old.name not in files:
            old.unlink()
    for name, data in files.items():
        (HERE / name).write_bytes(data)
    print(f"wrote {len(files)} files to {HERE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
