"""Typed Android Bundle values as the desktop sees them.

Java keeps `int` and `long` apart, so a Python `int` alone is ambiguous: values carry their
Java type through small wrapper classes. The relay codec (`inspector.relay.codec`) encodes
exactly these types, and `to_jsonable`/`from_jsonable` give a loss-free JSON form used by
recorded exchanges, session journals and test vectors.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias


class Int(int):
    """A Java `int` (32-bit signed)."""

    def __new__(cls, value: int = 0) -> Int:
        v = int(value)
        if not -(2**31) <= v < 2**31:
            raise ValueError(f"int out of 32-bit range: {v}")
        return super().__new__(cls, v)

    def __repr__(self) -> str:
        return f"Int({int(self)})"


class Long(int):
    """A Java `long` (64-bit signed)."""

    def __new__(cls, value: int = 0) -> Long:
        v = int(value)
        if not -(2**63) <= v < 2**63:
            raise ValueError(f"long out of 64-bit range: {v}")
        return super().__new__(cls, v)

    def __repr__(self) -> str:
        return f"Long({int(self)})"


class Double(float):
    """A Java `double`."""

    def __repr__(self) -> str:
        return f"Double({float(self)!r})"


class IntArray(tuple):
    """A Java `int[]`."""

    def __new__(cls, values: Iterable[int] = ()) -> IntArray:
        return super().__new__(cls, (Int(v) for v in values))


class StringArray(tuple):
    """A Java `String[]` (elements may be null)."""

    def __new__(cls, values: Iterable[str | None] = ()) -> StringArray:
        items = tuple(values)
        for v in items:
            if v is not None and not isinstance(v, str):
                raise TypeError(f"String[] element must be str or None, not {type(v).__name__}")
        return super().__new__(cls, items)


class Bundle(dict):
    """An Android Bundle: string keys, typed values (see `Value`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for k in self:
            if not isinstance(k, str):
                raise TypeError(f"Bundle keys must be str, not {type(k).__name__}")


class BundleArray(tuple):
    """A `Bundle[]` / `Parcelable[]` of Bundles (elements may be null)."""

    def __new__(cls, values: Iterable[Bundle | None] = ()) -> BundleArray:
        items = tuple(values)
        for v in items:
            if v is not None and not isinstance(v, Bundle):
                raise TypeError(f"Bundle[] element must be Bundle or None, not {type(v).__name__}")
        return super().__new__(cls, items)


@dataclass(frozen=True)
class PendingIntentHandle:
    """A PendingIntent held by the relay; `id` is valid for one relay connection."""

    id: str
    creator_package: str = ""
    flags: int = 0

    IMMUTABLE_KNOWN = 1
    IMMUTABLE = 2
    KIND_KNOWN = 4
    ACTIVITY = 8

    @property
    def immutable(self) -> bool | None:
        if not self.flags & self.IMMUTABLE_KNOWN:
            return None
        return bool(self.flags & self.IMMUTABLE)

    @property
    def targets_activity(self) -> bool | None:
        if not self.flags & self.KIND_KNOWN:
            return None
        return bool(self.flags & self.ACTIVITY)


@dataclass(frozen=True)
class FileDescriptorHandle:
    """A ParcelFileDescriptor held by the relay; `size` from fstat, -1 when unknown."""

    id: str
    size: int = -1


@dataclass(frozen=True)
class Unsupported:
    """A reply value the relay could not map; never dropped silently."""

    class_name: str


Value: TypeAlias = (
    str
    | bool
    | Int
    | Long
    | Double
    | IntArray
    | StringArray
    | Bundle
    | BundleArray
    | bytes
    | PendingIntentHandle
    | FileDescriptorHandle
    | Unsupported
    | None
)


def type_name(value: Any) -> str:
    """The Java-ish type name of a value, for UIs and error messages."""
    names: list[tuple[type, str]] = [
        (bool, "boolean"),
        (Int, "int"),
        (Long, "long"),
        (Double, "double"),
        (str, "String"),
        (IntArray, "int[]"),
        (StringArray, "String[]"),
        (BundleArray, "Bundle[]"),
        (Bundle, "Bundle"),
        (bytes, "byte[]"),
        (PendingIntentHandle, "PendingIntent"),
        (FileDescriptorHandle, "ParcelFileDescriptor"),
        (Unsupported, "unsupported"),
    ]
    if value is None:
        return "null"
    for t, n in names:
        if isinstance(value, t):
            return n
    return type(value).__name__


def check_value(value: Any, path: str = "") -> None:
    """Raise TypeError naming the path when `value` is not a typed Bundle value."""
    if value is None or isinstance(
        value,
        str | bool | Int | Long | Double | IntArray | StringArray | bytes
        | PendingIntentHandle | FileDescriptorHandle | Unsupported,
    ):
        return
    if isinstance(value, Bundle):
        for k, v in value.items():
            check_value(v, f"{path}.{k}" if path else k)
        return
    if isinstance(value, BundleArray):
        for i, v in enumerate(value):
            if v is not None:
                check_value(v, f"{path}[{i}]")
        return
    hint = " (wrap it as Int(...) or Long(...))" if isinstance(value, int) else ""
    raise TypeError(f"{path or 'value'}: {type(value).__name__} is not a Bundle value type{hint}")


def to_jsonable(value: Value) -> Any:
    """Loss-free JSON form: `{"t": type, "v": value}` for every typed value."""
    if value is None:
        return {"t": "null"}
    if isinstance(value, bool):
        return {"t": "boolean", "v": value}
    if isinstance(value, Int):
        return {"t": "int", "v": int(value)}
    if isinstance(value, Long):
        return {"t": "long", "v": int(value)}
    if isinstance(value, Double):
        return {"t": "double", "v": float(value)}
    if isinstance(value, str):
        return {"t": "String", "v": value}
    if isinstance(value, IntArray):
        return {"t": "int[]", "v": [int(v) for v in value]}
    if isinstance(value, StringArray):
        return {"t": "String[]", "v": list(value)}
    if isinstance(value, Bundle):
        return {"t": "Bundle", "v": {k: to_jsonable(v) for k, v in value.items()}}
    if isinstance(value, BundleArray):
        return {"t": "Bundle[]", "v": [None if b is None else to_jsonable(b) for b in value]}
    if isinstance(value, bytes):
        return {"t": "byte[]", "v": base64.b64encode(value).decode("ascii")}
    if isinstance(value, PendingIntentHandle):
        return {
            "t": "PendingIntent",
            "v": {"id": value.id, "creator_package": value.creator_package, "flags": value.flags},
        }
    if isinstance(value, FileDescriptorHandle):
        return {"t": "ParcelFileDescriptor", "v": {"id": value.id, "size": value.size}}
    if isinstance(value, Unsupported):
        return {"t": "unsupported", "v": value.class_name}
    raise TypeError(f"{type(value).__name__} is not a Bundle value type")


def from_jsonable(obj: Mapping[str, Any]) -> Value:
    """Inverse of `to_jsonable`; raises ValueError naming what is wrong."""
    if not isinstance(obj, Mapping) or "t" not in obj:
        raise ValueError(f"typed value must be an object with 't', got {obj!r:.80}")
    t, v = obj["t"], obj.get("v")
    try:
        if t == "null":
            return None
        if t == "boolean":
            if not isinstance(v, bool):
                raise ValueError("boolean value must be true or false")
            return v
        if t == "int":
            return Int(v)
        if t == "long":
            return Long(v)
        if t == "double":
            return Double(v)
        if t == "String":
            if not isinstance(v, str):
                raise ValueError("String value must be a string")
            return v
        if t == "int[]":
            return IntArray(v)
        if t == "String[]":
            return StringArray(v)
        if t == "Bundle":
            return Bundle({k: from_jsonable(x) for k, x in v.items()})
        if t == "Bundle[]":
            return BundleArray(None if b is None else from_jsonable(b) for b in v)
        if t == "byte[]":
            return base64.b64decode(v, validate=True)
        if t == "PendingIntent":
            return PendingIntentHandle(str(v["id"]), str(v.get("creator_package", "")),
                                       int(v.get("flags", 0)))
        if t == "ParcelFileDescriptor":
            return FileDescriptorHandle(str(v["id"]), int(v.get("size", -1)))
        if t == "unsupported":
            return Unsupported(str(v))
    except (TypeError, KeyError, AttributeError) as exc:
        raise ValueError(f"bad {t} value: {exc}") from exc
    raise ValueError(f"unknown value type {t!r}")


def bundle_to_jsonable(b: Bundle | None) -> Any:
    """JSON form of a whole Bundle (or null)."""
    return to_jsonable(b)


def bundle(**items: Value) -> Bundle:
    """Shorthand: `bundle(status="success", protocol_version=Int(2))`."""
    b = Bundle(items)
    check_value(b)
    return b
