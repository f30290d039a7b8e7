"""Hostile file results (issue 12): deep nesting is a clear failed check (no RecursionError,
no leaked spool file); bytes whose digest fails are never parsed — unverified bytes only."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.consumer.large_results import (
    MAX_JSON_DEPTH,
    CheckStatus,
    hex_dump,
    json_depth_exceeds,
    read_and_verify,
)
from inspector.consumer.outputs import validate
from tests.consumer.test_large_results import _BytesRelay, statuses


def nested(depth: int, opener: str = "[") -> bytes:
    closer = {"[": "]", "{": "}"}[opener]
    if opener == "[":
        return ("[" * depth + "]" * depth).encode()
    return ('{"a":' * depth + "1" + closer * depth).encode()


async def _verify(data: bytes, tmp_path, *, sha: str | None = None, keep: bool = False,
                  schema=None, validator=None):
    return await read_and_verify(
        _BytesRelay(data), "fd-h", declared_size=len(data),
        declared_sha256=sha or hashlib.sha256(data).hexdigest(),
        declared_media_type="application/json", output_schema=schema, validate=validator,
        read_limit=len(data) + 1, keep_content=keep, spool_dir=str(tmp_path))


@pytest.mark.parametrize("opener", ["[", "{"])
async def test_200k_deep_nesting_is_a_clear_failed_check(tmp_path, opener) -> None:
    data = nested(200_000, opener)
    v = await _verify(data, tmp_path, schema={"type": "array"}, validator=validate)
    mt = v.check("media_type")
    assert mt.status == CheckStatus.FAIL and f"deeper than {MAX_JSON_DEPTH}" in mt.message
    assert not v.parsed and v.value is None
    assert statuses(v)["output_schema"] == "skipped"
    assert statuses(v)["sha256"] == "pass"  # the bytes are fine; only their shape is hostile
    assert list(tmp_path.iterdir()) == []  # no spool file left


async def test_deep_result_kept_leaves_exactly_its_own_file(tmp_path) -> None:
    v = await _verify(nested(200_000), tmp_path, keep=True)
    assert [str(p) for p in tmp_path.iterdir()] == [v.content_path]
    v.discard()
    assert list(tmp_path.iterdir()) == []


async def test_moderate_depth_past_the_limit_parses_but_is_refused(tmp_path) -> None:
    v = await _verify(nested(MAX_JSON_DEPTH + 1), tmp_path)
    assert v.check("media_type").status == CheckStatus.FAIL and not v.parsed
    ok = await _verify(nested(MAX_JSON_DEPTH), tmp_path)
    assert ok.parsed and ok.check("media_type").status == CheckStatus.PASS


async def test_spool_file_removed_even_when_a_check_raises(tmp_path) -> None:
    def boom(schema, value):
        raise RuntimeError("validator bug")

    with pytest.raises(RuntimeError):
        await _verify(b'{"a": 1}', tmp_path, schema={"type": "object"}, validator=boom,
                      keep=True)
    assert list(tmp_path.iterdir()) == []


async def test_digest_failure_is_shown_as_unverified_bytes_never_parsed(tmp_path) -> None:
    data = json.dumps({"trusted": "no"}).encode()
    v = await _verify(data, tmp_path, sha="0" * 64, schema={"type": "object"},
                      validator=validate)
    assert not v.verified and not v.parsed and v.value is None
    assert "unverified bytes" in v.check("media_type").message
    assert statuses(v)["output_schema"] == "skipped"
    assert v.preview_hex.startswith("00000000  7b 22 74 72")  # {"tr
    assert v.preview.startswith('{"trusted"')


async def test_file_result_with_bad_digest_gives_the_execution_no_value() -> None:
    from tests.consumer.factories import v2_rig
    from tests.consumer.test_large_results import file_execution

    rig = v2_rig(file_declared={"sha256": "0" * 64})
    ex = await file_execution(rig)
    v = await rig.session.fetch_file(ex, user_cap=64 * 1024 * 1024)
    assert not v.verified and not v.parsed and not ex.has_value
    v.discard()


def test_hex_dump_lines() -> None:
    assert hex_dump(b"AB\x00") == "00000000  41 42 00" + " " * 39 + "  |AB.|"
    assert len(hex_dump(bytes(range(40))).splitlines()) == 3


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(depth=st.integers(MAX_JSON_DEPTH + 1, 300_000),
       shape=st.lists(st.sampled_from("[{"), min_size=1, max_size=4))
def test_any_deep_nesting_never_raises(depth, shape) -> None:
    import asyncio
    import tempfile
    from pathlib import Path

    opens, closes = [], []
    for i in range(depth):
        o = shape[i % len(shape)]
        opens.append('{"k":' if o == "{" else "[")
        closes.append("}" if o == "{" else "]")
    data = ("".join(opens) + "0" + "".join(reversed(closes))).encode()
    with tempfile.TemporaryDirectory() as d:
        v = asyncio.run(_verify(data, Path(d)))
        assert v.check("media_type").status == CheckStatus.FAIL and not v.parsed
        assert list(Path(d).iterdir()) == []


def test_depth_walk_is_iterative() -> None:
    deep: list = []
    cur = deep
    for _ in range(100_000):
        nxt: list = []
        cur.append(nxt)
        cur = nxt
    assert json_depth_exceeds(deep)
    assert not json_depth_exceeds({"a": [1, {"b": 2}]}, limit=3)


async def test_deep_file_result_through_the_engine_is_reported_not_lost(tmp_path,
                                                                         monkeypatch) -> None:
    import tempfile

    from tests.consumer.factories import v2_rig
    from tests.consumer.test_large_results import file_execution

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    rig = v2_rig(file_data=nested(200_000))
    ex = await file_execution(rig)
    v = await rig.session.fetch_file(ex, user_cap=64 * 1024 * 1024, keep_content=False)
    assert v.check("media_type").status == CheckStatus.FAIL
    assert "media_type" in ex.message and not ex.has_value
    assert list(tmp_path.iterdir()) == []  # no spool file left per call
