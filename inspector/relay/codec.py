"""Typed-value codec of the relay protocol (docs/relay-protocol.md §2).

The encoding is deterministic (Bundle keys sorted by their UTF-8 bytes) so that shared test
vectors can be compared byte for byte across implementations. The decoder is strict: every
payload comes from another process (or a phone) and is untrusted, so anything off-spec is a
`CodecError` naming the byte offset and the reason, never a crash or a huge allocation.
"""

from __future__ import annotations

import struct
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
)

# Tags (§2)
T_NULL = 0x00
T_STRING = 0x01
T_INT = 0x02
T_LONG = 0x03
T_BOOLEAN = 0x04
T_INT_ARRAY = 0x05
T_STRING_ARRAY = 0x06
T_BUNDLE = 0x07
T_PENDING_INTENT = 0x08
T_FILE_DESCRIPTOR = 0x09
T_DOUBLE = 0x0A
T_BYTES = 0x0B
T_BUNDLE_ARRAY = 0x0C
T_UNSUPPORTED = 0x0D

MAX_DEPTH = 32
"""Maximum Bundle nesting: the outermost Bundle is depth 1 (Bundle[] adds no level)."""

NULL_ELEMENT = 0xFFFFFFFF

_U8 = struct.Struct(">B")
_U32 = struct.Struct(">I")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_F64 = struct.Struct(">d")
_unpack_u32 = _U32.unpack_from
_new_int = int.__new__


class CodecError(ValueError):
    """A payload that is not a valid typed value: `offset` is where decoding stopped."""

    def __init__(self, offset: int, reason: str) -> None:
        super().__init__(f"bad value at byte {offset}: {reason}")
        self.offset = offset
        self.reason = reason


class EncodeError(TypeError):
    """A Python value that has no wire form (e.g. a bare `int`); `path` names where."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path or 'value'}: {reason}")
        self.path = path
        self.reason = reason


# ---------------------------------------------------------------------------------------
# Encoding


def encode_value(value: Value) -> bytes:
    """Encode one typed value (tag + body), deterministically."""
    out = bytearray()
    try:
        _fast(value, out, 0)
    except (_Bad, EncodeError):
        # the fast path keeps no paths; encode again slowly to name where the problem is
        out = bytearray()
        _encode(value, out, 0, "")
        raise AssertionError("fast and path-tracking encoders disagree") from None
    return bytes(out)


class _Bad(Exception):
    pass


def _utf8_key(kv: tuple[bytes, str]) -> bytes:
    return kv[0]


def _fast(value: Any, out: bytearray, depth: int) -> None:
    """The encoder's hot path: exact-type dispatch, no path strings (see `_encode`)."""
    t = type(value)
    if t is str:
        try:
            b = value.encode("utf-8")
        except UnicodeEncodeError:
            raise _Bad from None
        out.append(T_STRING)
        out += _U32.pack(len(b))
        out += b
    elif t is Bundle:
        if depth >= MAX_DEPTH:
            raise _Bad
        out.append(T_BUNDLE)
        try:
            keyed = sorted([(k.encode("utf-8"), k) for k in value], key=_utf8_key)
        except UnicodeEncodeError:
            raise _Bad from None
        out += _U32.pack(len(keyed))
        for kb, k in keyed:
            out += _U32.pack(len(kb))
            out += kb
            _fast(value[k], out, depth + 1)
    elif value is None:
        out.append(T_NULL)
    elif t is Int:
        out.append(T_INT)
        out += _I32.pack(value)
    elif t is bool:
        out.append(T_BOOLEAN)
        out.append(1 if value else 0)
    elif t is Long:
        out.append(T_LONG)
        out += _I64.pack(value)
    else:
        _encode(value, out, depth, "")  # everything else: the general encoder


def _utf8(s: str, path: str) -> bytes:
    try:
        return s.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise EncodeError(path, f"string is not valid Unicode ({exc.reason})") from exc


def _put_str(out: bytearray, s: str, path: str) -> None:
    b = _utf8(s, path)
    out += _U32.pack(len(b))
    out += b


def _encode(value: Any, out: bytearray, depth: int, path: str) -> None:
    # bool first: it is an int subclass in Python, and Int/Long are int subclasses too.
    if value is None:
        out.append(T_NULL)
    elif isinstance(value, bool):
        out.append(T_BOOLEAN)
        out.append(1 if value else 0)
    elif isinstance(value, Int):
        out.append(T_INT)
        out += _I32.pack(value)
    elif isinstance(value, Long):
        out.append(T_LONG)
        out += _I64.pack(value)
    elif isinstance(value, Double):
        out.append(T_DOUBLE)
        out += _F64.pack(value)
    elif isinstance(value, str):
        out.append(T_STRING)
        _put_str(out, value, path)
    elif isinstance(value, IntArray):
        out.append(T_INT_ARRAY)
        out += _U32.pack(len(value))
        out += struct.pack(f">{len(value)}i", *value)
    elif isinstance(value, StringArray):
        out.append(T_STRING_ARRAY)
        out += _U32.pack(len(value))
        for i, s in enumerate(value):
            if s is None:
                out += _U32.pack(NULL_ELEMENT)
            else:
                _put_str(out, s, f"{path}[{i}]")
    elif isinstance(value, Bundle):
        if depth + 1 > MAX_DEPTH:
            raise EncodeError(path, f"Bundles nested deeper than {MAX_DEPTH}")
        out.append(T_BUNDLE)
        _encode_bundle_body(value, out, depth + 1, path)
    elif isinstance(value, BundleArray):
        out.append(T_BUNDLE_ARRAY)
        out += _U32.pack(len(value))
        for i, b in enumerate(value):
            _encode(b, out, depth, f"{path}[{i}]")
    elif isinstance(value, bytes | bytearray):
        out.append(T_BYTES)
        out += _U32.pack(len(value))
        out += value
    elif isinstance(value, PendingIntentHandle):
        out.append(T_PENDING_INTENT)
        _put_str(out, value.id, path)
        _put_str(out, value.creator_package, path)
        if not 0 <= value.flags <= 0xFFFFFFFF:
            raise EncodeError(path, f"PendingIntent flags out of u32 range: {value.flags}")
        out += _U32.pack(value.flags)
    elif isinstance(value, FileDescriptorHandle):
        out.append(T_FILE_DESCRIPTOR)
        _put_str(out, value.id, path)
        out += _I64.pack(value.size)
    elif isinstance(value, Unsupported):
        out.append(T_UNSUPPORTED)
        _put_str(out, value.class_name, path)
    else:
        hint = " (wrap it as Int(...) or Long(...))" if isinstance(value, int) else ""
        hint = " (wrap it as Double(...))" if isinstance(value, float) else hint
        raise EncodeError(path, f"{type(value).__name__} is not a Bundle value type{hint}")


def _encode_bundle_body(b: Bundle, out: bytearray, depth: int, path: str) -> None:
    keyed = sorted(((_utf8(k, path), k) for k in b), key=lambda kv: kv[0])
    out += _U32.pack(len(keyed))
    for kb, k in keyed:
        out += _U32.pack(len(kb))
        out += kb
        _encode(b[k], out, depth, f"{path}.{k}" if path else k)


# ---------------------------------------------------------------------------------------
# Decoding


def decode_value(data: bytes | bytearray | memoryview) -> Value:
    """Decode exactly one typed value filling all of `data`; raise CodecError otherwise."""
    dec = _Decoder(data)
    value = dec.value(0)
    if dec.pos != len(dec.buf):
        raise CodecError(dec.pos, f"{len(dec.buf) - dec.pos} trailing bytes after the value")
    return value


def decode_bundle(data: bytes | bytearray | memoryview) -> Bundle:
    """Decode a payload that must be a Bundle (every frame payload except CHUNK)."""
    value = decode_value(data)
    if not isinstance(value, Bundle):
        raise CodecError(0, f"expected a Bundle, got a {type(value).__name__} value")
    return value


class _Decoder:
    __slots__ = ("buf", "pos")

    def __init__(self, data: bytes | bytearray | memoryview) -> None:
        self.buf = memoryview(data).cast("B") if not isinstance(data, bytes) else data
        self.pos = 0

    def need(self, n: int, what: str) -> int:
        start = self.pos
        if n > len(self.buf) - start:
            raise CodecError(
                start, f"{what} needs {n} bytes but only {len(self.buf) - start} remain"
            )
        self.pos = start + n
        return start

    def u8(self, what: str) -> int:
        pos = self.pos
        if pos >= len(self.buf):
            raise CodecError(pos, f"{what} needs 1 bytes but only 0 remain")
        self.pos = pos + 1
        return self.buf[pos]

    def u32(self, what: str) -> int:
        pos = self.pos
        if pos + 4 > len(self.buf):
            raise CodecError(pos, f"{what} needs 4 bytes but only {len(self.buf) - pos} remain")
        self.pos = pos + 4
        return _unpack_u32(self.buf, pos)[0]

    def count(self, what: str, min_size: int) -> int:
        """An element count, checked against the bytes left before anything is allocated."""
        at = self.pos
        n = self.u32(what)
        if n * min_size > len(self.buf) - self.pos:
            raise CodecError(at, f"{what} {n} runs past the end of the payload")
        return n

    def string(self, what: str, length: int | None = None) -> str:
        buf, at = self.buf, self.pos
        size = len(buf)
        if length is None:
            if at + 4 > size:
                raise CodecError(at, f"{what} length needs 4 bytes but only {size - at} remain")
            n, start = _unpack_u32(buf, at)[0], at + 4
        else:
            n, start = length, at
        end = start + n
        if end > size:
            raise CodecError(start, f"{what} needs {n} bytes but only {size - start} remain")
        self.pos = end
        try:
            return str(buf[start:end], "utf-8")
        except UnicodeDecodeError as exc:
            raise CodecError(at, f"{what} is not valid UTF-8 ({exc.reason})") from None

    def value(self, depth: int) -> Value:
        at = self.pos
        tag = self.u8("tag")
        if tag == T_NULL:
            return None
        if tag == T_STRING:
            return self.string("String")
        if tag == T_INT:  # in range by construction: skip Int's Python-level check
            return _new_int(Int, _I32.unpack_from(self.buf, self.need(4, "int"))[0])
        if tag == T_LONG:
            return _new_int(Long, _I64.unpack_from(self.buf, self.need(8, "long"))[0])
        if tag == T_BOOLEAN:
            b = self.u8("boolean")
            if b > 1:
                raise CodecError(at + 1, f"boolean byte must be 0 or 1, not {b}")
            return b == 1
        if tag == T_INT_ARRAY:
            n = self.count("int[] count", 4)
            start = self.need(4 * n, "int[] elements")
            return IntArray(struct.unpack_from(f">{n}i", self.buf, start))
        if tag == T_STRING_ARRAY:
            n = self.count("String[] count", 4)
            items: list[str | None] = []
            for _ in range(n):
                ln = self.u32("String[] element length")
                items.append(None if ln == NULL_ELEMENT else self.string("String[] element", ln))
            return StringArray(items)
        if tag == T_BUNDLE:
            if depth + 1 > MAX_DEPTH:
                raise CodecError(at, f"Bundles nested deeper than {MAX_DEPTH}")
            return self.bundle_body(depth + 1)
        if tag == T_PENDING_INTENT:
            pid = self.string("PendingIntent id")
            creator = self.string("PendingIntent creator package")
            flags = self.u32("PendingIntent flags")
            return PendingIntentHandle(pid, creator, flags)
        if tag == T_FILE_DESCRIPTOR:
            fid = self.string("FileDescriptor id")
            size = _I64.unpack_from(self.buf, self.need(8, "FileDescriptor size"))[0]
            return FileDescriptorHandle(fid, size)
        if tag == T_DOUBLE:
            return Double(_F64.unpack_from(self.buf, self.need(8, "double"))[0])
        if tag == T_BYTES:
            n = self.u32("byte[] length")
            start = self.need(n, "byte[]")
            return bytes(self.buf[start : start + n])
        if tag == T_BUNDLE_ARRAY:
            n = self.count("Bundle[] count", 1)
            elems: list[Bundle | None] = []
            for _ in range(n):
                eat = self.pos
                etag = self.u8("Bundle[] element tag")
                if etag == T_NULL:
                    elems.append(None)
                elif etag == T_BUNDLE:
                    if depth + 1 > MAX_DEPTH:
                        raise CodecError(eat, f"Bundles nested deeper than {MAX_DEPTH}")
                    elems.append(self.bundle_body(depth + 1))
                else:
                    raise CodecError(
                        eat, f"Bundle[] element must be a Bundle or null, tag {etag:#04x}"
                    )
            return BundleArray(elems)
        if tag == T_UNSUPPORTED:
            return Unsupported(self.string("unsupported class name"))
        raise CodecError(at, f"unknown tag {tag:#04x}")

    def bundle_body(self, depth: int) -> Bundle:
        n = self.count("Bundle entry count", 5)
        out = Bundle()
        for _ in range(n):
            kat = self.pos
            key = self.string("Bundle key")
            if key in out:
                raise CodecError(kat, f"duplicate Bundle key {key!r:.80}")
            out[key] = self.value(depth)
        return out
