"""The shared vectors in tests/vectors/ decode to their JSON and re-encode byte for byte."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path

import pytest

from inspector.protocol.bundle import from_jsonable, to_jsonable
from inspector.relay.api import BAD_FRAME, RelayError
from inspector.relay.codec import CodecError, decode_value, encode_value
from inspector.relay.frames import FrameType, frame_bytes, read_frame
from tests.vectors.generate import all_files

VECTORS = Path(__file__).resolve().parents[1] / "vectors"


def _names(prefix: str) -> list[str]:
    return sorted(p.stem for p in VECTORS.glob(f"{prefix}*.bin"))


def test_vector_files_match_the_generator() -> None:
    expected = all_files()
    on_disk = {p.name for p in VECTORS.iterdir() if p.suffix in (".bin", ".json")}
    assert on_disk == set(expected), "run: .venv/bin/python -m tests.vectors.generate"
    for name, data in expected.items():
        assert (VECTORS / name).read_bytes() == data, name
    assert len(_names("bundle-")) >= 30 and len(_names("invalid-")) >= 25


@pytest.mark.parametrize("name", _names("bundle-"))
def test_bundle_vector(name: str) -> None:
    data = (VECTORS / f"{name}.bin").read_bytes()
    expected = json.loads((VECTORS / f"{name}.json").read_text("utf-8"))
    value = decode_value(data)
    assert to_jsonable(value) == expected
    assert encode_value(value) == data
    assert encode_value(from_jsonable(expected)) == data


def _read_all(data: bytes) -> list:
    async def go() -> list:
        r = asyncio.StreamReader()
        r.feed_data(data)
        r.feed_eof()
        frames = []
        while (f := await read_frame(r)) is not None:
            frames.append(f)
        return frames

    return asyncio.run(go())


@pytest.mark.parametrize("name", _names("frame-"))
def test_frame_vector(name: str) -> None:
    data = (VECTORS / f"{name}.bin").read_bytes()
    meta = json.loads((VECTORS / f"{name}.json").read_text("utf-8"))
    [frame] = _read_all(data)
    assert frame.type is FrameType[meta["type"]] and int(frame.type) == meta["type_code"]
    assert frame.request_id == meta["request_id"]
    if "raw_base64" in meta:
        raw = base64.b64decode(meta["raw_base64"])
        assert frame.payload == raw
    else:
        assert to_jsonable(decode_value(frame.payload)) == meta["value"]
        raw = encode_value(from_jsonable(meta["value"]))
    assert frame_bytes(frame.type, frame.request_id, raw) == data


@pytest.mark.parametrize("name", _names("invalid-value-"))
def test_invalid_value_vector(name: str) -> None:
    data = (VECTORS / f"{name}.bin").read_bytes()
    meta = json.loads((VECTORS / f"{name}.json").read_text("utf-8"))
    with pytest.raises(CodecError) as info:
        decode_value(data)
    assert meta["error"] == "CodecError"
    assert info.value.offset == meta["offset"]
    assert meta["reason_contains"] in info.value.reason


@pytest.mark.parametrize("name", _names("invalid-frame-"))
def test_invalid_frame_vector(name: str) -> None:
    data = (VECTORS / f"{name}.bin").read_bytes()
    meta = json.loads((VECTORS / f"{name}.json").read_text("utf-8"))
    with pytest.raises(RelayError) as info:
        _read_all(data)
    assert meta["error"] == BAD_FRAME == info.value.code
    assert meta["reason_contains"] in info.value.message
