"""What an app's manifest declares that the Android rules look at, read from the APK's
binary AndroidManifest.xml (or from manifest source text, for tests and variants).

Runtime choice (issue 10): a small bounded parser of Android's binary XML here, not
androguard: androguard is a test dependency only (tests/android/test_manifest.py checks
this parser against it on the shipped APK), and the inspector needs only a handful of
facts (package, version, SDK levels, <uses-permission>, <permission>, <queries>). Every
read is bounds-checked and the input size, string count and element count are capped, so
a damaged or hostile APK gives `ManifestError`, never a crash or a runaway parse.
Format: frameworks/base libs/androidfw/include/androidfw/ResourceTypes.h (ResChunk_header,
ResStringPool_header, ResXMLTree_attrExt, Res_value).
"""

from __future__ import annotations

import struct
import xml.etree.ElementTree as ET
from collections.abc import Iterator

from pydantic import BaseModel, ConfigDict

from inspector.android.rules import PermissionDef, VisibilityFacts

MAX_MANIFEST_BYTES = 2 * 1024 * 1024
MAX_STRINGS = 100_000
MAX_ELEMENTS = 20_000
ANDROID_NS = "http://schemas.android.com/apk/res/android"

# ResourceTypes.h chunk types
_RES_XML_TYPE = 0x0003
_RES_STRING_POOL_TYPE = 0x0001
_RES_XML_RESOURCE_MAP_TYPE = 0x0180
_RES_XML_START_ELEMENT_TYPE = 0x0102
_RES_XML_END_ELEMENT_TYPE = 0x0103
_UTF8_FLAG = 1 << 8
_NO_INDEX = 0xFFFFFFFF
# Res_value data types
_TYPE_STRING = 0x03
_TYPE_INT_DEC = 0x10
_TYPE_INT_HEX = 0x11
_TYPE_INT_BOOLEAN = 0x12
# android:* attribute resource ids (frameworks/base core/res/res/values/public.xml), used
# when an attribute's name string is empty (stripped/obfuscated manifests)
_ATTR_BY_ID = {
    0x01010003: "name",
    0x0101021B: "versionCode",
    0x0101021C: "versionName",
    0x0101020C: "minSdkVersion",
    0x01010270: "targetSdkVersion",
    0x01010018: "authorities",
    0x01010009: "protectionLevel",
}
# protectionLevel base values (android.content.pm.PermissionInfo)
_PROTECTION = {0: "normal", 1: "dangerous", 2: "signature", 3: "signature"}


class ManifestError(ValueError):
    """The manifest cannot be read; the message says where and why."""


class ManifestFacts(BaseModel):
    """The facts of one app's manifest the rules need."""

    model_config = ConfigDict(frozen=True)

    package: str
    version_code: int | None = None
    version_name: str | None = None
    min_sdk: int | None = None
    target_sdk: int | None = None
    uses_permissions: tuple[str, ...] = ()
    defined_permissions: tuple[PermissionDef, ...] = ()
    query_actions: tuple[str, ...] = ()
    query_packages: tuple[str, ...] = ()
    query_authorities: tuple[str, ...] = ()

    def visibility(self, granted: frozenset[str]) -> VisibilityFacts:
        return VisibilityFacts(
            package=self.package, granted=granted, query_actions=frozenset(self.query_actions),
            query_packages=frozenset(self.query_packages),
            query_authorities=frozenset(self.query_authorities))


Element = tuple[tuple[str, ...], dict[str, object]]
"""(path of tag names from the root, attributes by local name)."""


def _facts(elements: Iterator[Element]) -> ManifestFacts:
    package = ""
    fields: dict[str, object] = {}
    uses: list[str] = []
    defined: list[PermissionDef] = []
    actions: list[str] = []
    packages: list[str] = []
    authorities: list[str] = []
    for path, attrs in elements:
        tag = path[-1]
        name = attrs.get("name")
        if path == ("manifest",):
            package = str(attrs.get("package") or "")
            fields["version_code"] = _int(attrs.get("versionCode"))
            vn = attrs.get("versionName")
            fields["version_name"] = None if vn is None else str(vn)
        elif path == ("manifest", "uses-sdk"):
            fields["min_sdk"] = _int(attrs.get("minSdkVersion"))
            fields["target_sdk"] = _int(attrs.get("targetSdkVersion"))
        elif path == ("manifest", "uses-permission") and isinstance(name, str):
            uses.append(name)
        elif path == ("manifest", "permission") and isinstance(name, str):
            level = _int(attrs.get("protectionLevel")) or 0
            defined.append(PermissionDef(name=name, protection=_PROTECTION.get(level & 0xF,
                                                                                "signature")))
        elif path[:2] == ("manifest", "queries") and isinstance(name, str):
            if tag == "action" and "intent" in path:
                actions.append(name)
            elif tag == "package":
                packages.append(name)
        elif path[:2] == ("manifest", "queries") and tag == "provider":
            authorities.extend(a for a in str(attrs.get("authorities") or "").split(";") if a)
    if not package:
        raise ManifestError("the manifest has no <manifest package=…>")
    return ManifestFacts(
        package=package, uses_permissions=tuple(uses),
        defined_permissions=tuple(PermissionDef(name=d.name, protection=d.protection,
                                                defined_by=package) for d in defined),
        query_actions=tuple(actions), query_packages=tuple(packages),
        query_authorities=tuple(authorities), **fields)  # type: ignore[arg-type]


def _int(v: object) -> int | None:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, str):
        try:
            return int(v, 0)
        except ValueError:
            return None
    return None


def facts_from_xml_text(text: str) -> ManifestFacts:
    """Facts from manifest *source* (AndroidManifest.xml as written, not compiled)."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ManifestError(f"the manifest text is not XML: {exc}") from None

    def walk(el: ET.Element, path: tuple[str, ...]) -> Iterator[Element]:
        here = (*path, el.tag)
        attrs = {k.rpartition("}")[2]: v for k, v in el.attrib.items()}
        yield here, attrs
        for child in el:
            yield from walk(child, here)

    return _facts(walk(root, ()))


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def u16(self, off: int) -> int:
        return int(self._unpack("<H", off, 2))

    def u32(self, off: int) -> int:
        return int(self._unpack("<I", off, 4))

    def _unpack(self, fmt: str, off: int, n: int) -> int:
        if off < 0 or off + n > len(self.data):
            raise ManifestError(f"binary manifest truncated at byte {off}")
        return int(struct.unpack_from(fmt, self.data, off)[0])


def _string_pool(r: _Reader, start: int, size: int) -> list[str]:
    count = r.u32(start + 8)
    flags = r.u32(start + 16)
    strings_start = start + r.u32(start + 20)
    if count > MAX_STRINGS:
        raise ManifestError(f"the manifest's string pool has {count} strings (cap {MAX_STRINGS})")
    end = start + size
    out: list[str] = []
    for i in range(count):
        off = strings_start + r.u32(start + r.u16(start + 2) + 4 * i)
        if off >= end:
            raise ManifestError("a manifest string lies outside its pool")
        if flags & _UTF8_FLAG:
            n = r.data[off]
            off += 2 if n & 0x80 else 1  # UTF-16 length, skipped
            n = r.data[off]
            if n & 0x80:
                n = ((n & 0x7F) << 8) | r.data[off + 1]
                off += 1
            off += 1
            raw = r.data[off : off + n]
            text = raw.decode("utf-8", "replace")
        else:
            n = r.u16(off)
            off += 2
            if n & 0x8000:
                n = ((n & 0x7FFF) << 16) | r.u16(off)
                off += 2
            raw = r.data[off : off + 2 * n]
            text = raw.decode("utf-16-le", "replace")
        if len(raw) != (n if flags & _UTF8_FLAG else 2 * n) or off + len(raw) > end:
            raise ManifestError("a manifest string runs past its pool")
        out.append(text)
    return out


def _binary_elements(data: bytes) -> Iterator[Element]:
    r = _Reader(data)
    if r.u16(0) != _RES_XML_TYPE:
        raise ManifestError("not a binary Android XML file (bad magic)")
    total = min(r.u32(4), len(data))
    strings: list[str] = []
    res_ids: list[int] = []
    path: list[str] = []
    seen = 0
    off = r.u16(2)
    while off + 8 <= total:
        ctype, hsize, csize = r.u16(off), r.u16(off + 2), r.u32(off + 4)
        if csize < 8 or off + csize > total:
            raise ManifestError(f"bad chunk size {csize} at byte {off}")
        if ctype == _RES_STRING_POOL_TYPE:
            strings = _string_pool(r, off, csize)
        elif ctype == _RES_XML_RESOURCE_MAP_TYPE:
            res_ids = [r.u32(off + hsize + 4 * i) for i in range((csize - hsize) // 4)]
        elif ctype == _RES_XML_START_ELEMENT_TYPE:
            seen += 1
            if seen > MAX_ELEMENTS:
                raise ManifestError(f"the manifest has more than {MAX_ELEMENTS} elements")
            ext = off + hsize
            path.append(_str(strings, r.u32(ext + 4)))
            attrs: dict[str, object] = {}
            a_start, a_size, a_count = r.u16(ext + 8), r.u16(ext + 10), r.u16(ext + 12)
            for i in range(a_count):
                a = ext + a_start + i * a_size
                idx = r.u32(a + 4)
                name = _str(strings, idx)
                if not name and idx < len(res_ids):
                    name = _ATTR_BY_ID.get(res_ids[idx], "")
                raw, dtype, value = r.u32(a + 8), r.data[a + 15], r.u32(a + 16)
                if raw != _NO_INDEX:
                    attrs[name] = _str(strings, raw)
                elif dtype == _TYPE_STRING:
                    attrs[name] = _str(strings, value)
                elif dtype == _TYPE_INT_BOOLEAN:
                    attrs[name] = value != 0
                elif dtype in (_TYPE_INT_DEC, _TYPE_INT_HEX):
                    attrs[name] = value - (1 << 32) if value & 0x80000000 else value
                else:
                    attrs[name] = value
            yield tuple(path), attrs
        elif ctype == _RES_XML_END_ELEMENT_TYPE and path:
            path.pop()
        off += csize


def _str(strings: list[str], idx: int) -> str:
    if idx == _NO_INDEX:
        return ""
    if idx >= len(strings):
        raise ManifestError(f"string index {idx} outside the pool ({len(strings)})")
    return strings[idx]


def facts_from_binary_xml(data: bytes) -> ManifestFacts:
    """Facts from a compiled (binary) AndroidManifest.xml, as stored in an APK."""
    if len(data) > MAX_MANIFEST_BYTES:
        raise ManifestError(f"the manifest is {len(data)} bytes (cap {MAX_MANIFEST_BYTES})")
    try:
        return _facts(_binary_elements(data))
    except IndexError:
        raise ManifestError("binary manifest truncated") from None
