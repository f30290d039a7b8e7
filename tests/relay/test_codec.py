from __future__ import annotations

import contextlib
import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    to_jsonable,
)
from inspector.relay.codec import (
    MAX_DEPTH,
    CodecError,
    EncodeError,
    _encode,
    decode_bundle,
    decode_value,
    encode_value,
)


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "ünïcödé 😀",
        True,
        False,
        Int(-(2**31)),
        Int(2**31 - 1),
        Long(-(2**63)),
        Long(2**63 - 1),
        Double(1.25),
        Double(-0.0),
        IntArray([1, -2, 3]),
        StringArray(["x", None, ""]),
        b"\x00\x01\xff",
        PendingIntentHandle("pi", "com.a", 15),
        FileDescriptorHandle("fd", -1),
        Unsupported("android.os.Binder"),
        Bundle(a=Int(1), b=Bundle(c=None)),
        BundleArray([Bundle(), None]),
    ],
)
def test_every_type_round_trips_with_its_java_type(value: object) -> None:
    data = encode_value(value)  # type: ignore[arg-type]
    back = decode_value(data)
    assert type(back) is type(value)
    assert to_jsonable(back) == to_jsonable(value)  # type: ignore[arg-type]
    assert encode_value(back) == data


def test_int_and_long_are_different_on_the_wire() -> None:
    assert encode_value(Int(5)) == b"\x02\x00\x00\x00\x05"
    assert encode_value(Long(5)) == b"\x03" + struct.pack(">q", 5)
    assert type(decode_value(encode_value(Long(5)))) is Long


def test_nan_double_keeps_its_bits() -> None:
    data = encode_value(Double(math.nan))
    assert math.isnan(decode_value(data))  # type: ignore[arg-type]
    assert encode_value(decode_value(data)) == data


def test_keys_are_sorted_by_utf8_bytes_regardless_of_insertion_order() -> None:
    a = Bundle({"😀": Int(1), "～": Int(2), "b": Int(3), "B": Int(4)})
    b = Bundle({"B": Int(4), "b": Int(3), "～": Int(2), "😀": Int(1)})
    assert encode_value(a) == encode_value(b)
    # "～" (EF BD 9E) < "😀" (F0 9F 98 80) in UTF-8 although UTF-16 orders them the other way
    data = encode_value(a)
    assert data.index("～".encode()) < data.index("😀".encode())
    assert data.index(b"B") < data.index(b"b")


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (5, "Int(...)"),
        (1.5, "Double(...)"),
        ([1], "list"),
        (Bundle(x=7), "x: int"),
        ("\udc80", "not valid Unicode"),
        (Bundle(outer=Bundle(inner={"k": 1})), "outer.inner"),
    ],
)
def test_encoder_refuses_untyped_values_naming_the_path(value: object, words: str) -> None:
    with pytest.raises(EncodeError, match=None) as info:
        encode_value(value)  # type: ignore[arg-type]
    assert words in str(info.value)


def _nest(depth: int) -> Bundle:
    b = Bundle()
    for _ in range(depth - 1):
        b = Bundle(x=b)
    return b


def test_depth_limit_is_32_bundles_both_ways() -> None:
    ok = encode_value(_nest(MAX_DEPTH))
    assert isinstance(decode_value(ok), Bundle)
    with pytest.raises(EncodeError, match="deeper than 32"):
        encode_value(_nest(MAX_DEPTH + 1))
    too_deep = b"\x07\x00\x00\x00\x01\x00\x00\x00\x01x" + ok
    with pytest.raises(CodecError, match="deeper than 32") as info:
        decode_value(too_deep)
    assert info.value.offset == len(too_deep) - len(ok) + 10 * (MAX_DEPTH - 1)


def test_bundle_array_elements_count_as_nesting() -> None:
    prefix = b"\x07\x00\x00\x00\x01\x00\x00\x00\x01a"  # a Bundle {a: …}: depth 1
    assert decode_value(prefix + encode_value(BundleArray([_nest(MAX_DEPTH - 1)])))
    with pytest.raises(CodecError, match="deeper"):
        decode_value(prefix + encode_value(BundleArray([_nest(MAX_DEPTH)])))


@pytest.mark.parametrize(
    ("data", "offset", "words"),
    [
        (b"\x07\x00\x00\x00\x02\x00\x00\x00\x01k\x00\x00\x00\x00\x01k\x00", 11, "duplicate"),
        (b"\x01\x00\x00\x00\x02\xc3\x28", 1, "UTF-8"),
        (b"\x00\x00", 1, "trailing"),
        (b"\x0f", 0, "unknown tag"),
        (b"\x04\x07", 1, "0 or 1"),
        (b"\x0b\x00\x00\x10\x00abc", 5, "needs 4096 bytes"),
        (b"\x07\xff\xff\xff\xff", 1, "runs past"),
        (b"\x0c\x00\x00\x00\x01\x01\x00\x00\x00\x00", 5, "Bundle or null"),
    ],
)
def test_decoder_rejects_with_offset_and_reason(data: bytes, offset: int, words: str) -> None:
    with pytest.raises(CodecError) as info:
        decode_value(data)
    assert info.value.offset == offset
    assert words in info.value.reason


def test_decode_bundle_requires_a_bundle() -> None:
    with pytest.raises(CodecError, match="expected a Bundle"):
        decode_bundle(encode_value("x"))


# -- property tests ------------------------------------------------------------------------

_text = st.text(max_size=12)
_scalars = st.one_of(
    st.none(),
    _text,
    st.booleans(),
    st.integers(-(2**31), 2**31 - 1).map(Int),
    st.integers(-(2**63), 2**63 - 1).map(Long),
    st.floats(allow_nan=False).map(Double),
    st.lists(st.integers(-(2**31), 2**31 - 1), max_size=5).map(IntArray),
    st.lists(st.none() | _text, max_size=5).map(StringArray),
    st.binary(max_size=20),
    st.builds(PendingIntentHandle, _text, _text, st.integers(0, 15)),
    st.builds(FileDescriptorHandle, _text, st.integers(-1, 2**40)),
    st.builds(Unsupported, _text),
)
values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.dictionaries(_text, inner, max_size=5).map(Bundle),
        st.lists(st.none() | st.dictionaries(_text, inner, max_size=3).map(Bundle), max_size=3).map(
            BundleArray
        ),
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(values)
def test_any_value_round_trips_byte_for_byte(value: object) -> None:
    data = encode_value(value)  # type: ignore[arg-type]
    assert encode_value(decode_value(data)) == data


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=64))
def test_random_bytes_decode_or_raise_codec_error(data: bytes) -> None:
    try:
        value = decode_value(data)
    except CodecError as exc:
        assert 0 <= exc.offset <= len(data)
    else:
        again = encode_value(value)
        assert encode_value(decode_value(again)) == again


@settings(max_examples=300, deadline=None)
@given(values, st.data())
def test_mutated_encodings_never_escape_codec_error(value: object, data: st.DataObject) -> None:
    enc = bytearray(encode_value(value))  # type: ignore[arg-type]
    i = data.draw(st.integers(0, len(enc) - 1))
    enc[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(enc)))
    for candidate in (bytes(enc), bytes(enc[:cut])):
        with contextlib.suppress(CodecError):
            decode_value(candidate)


@settings(max_examples=200, deadline=None)
@given(values)
def test_fast_encoder_matches_the_path_tracking_encoder(value: object) -> None:
    out = bytearray()
    _encode(value, out, 0, "")
    assert encode_value(value) == bytes(out)  # type: ignore[arg-type]
