"""Hostile bug-report bundles (issue 12): bounded in memory, every failure a BundleError."""

from __future__ import annotations

import io
import time
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.session import bundle_file
from inspector.session.bundle_file import (
    M_DEVICE,
    M_SESSION,
    MAX_EXPANSION_RATIO,
    BundleError,
    create_bundle,
    open_bundle,
)
from inspector.session.journal import read_journal
from tests.session.bundle_attacks import (
    corrupt_deflate,
    deep_json_bundle,
    patch_member,
    write_bundle,
    zip_bomb,
)
from tests.session.test_bundle_replay import _journal

MiB = 1024 * 1024


def test_zip_bomb_stops_while_streaming_with_bounded_memory(tmp_path: Path) -> None:
    path = zip_bomb(tmp_path / "bomb.cetpbundle", expanded=128 * MiB)
    assert path.stat().st_size < 512 * 1024  # ~1000:1
    tracemalloc.start()
    t0 = time.monotonic()
    with pytest.raises(BundleError, match=f"more than {MAX_EXPANSION_RATIO}×"):
        open_bundle(path)
    took = time.monotonic() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # stops at ratio × compressed size (~25 MiB here), never the 128 MiB expansion
    assert peak < 64 * MiB, peak
    assert took < 10


def test_absolute_limit_is_checked_before_reading(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(bundle_file, "MAX_TOTAL_BYTES", 1 * MiB)
    path = write_bundle(tmp_path / "big.cetpbundle",
                        {M_DEVICE: b'{"pad":"' + b"x" * (2 * MiB) + b'"}'},
                        compress=zipfile.ZIP_STORED)
    with pytest.raises(BundleError, match=r"declares .* bytes, more than"):
        open_bundle(path)


def test_deep_json_member_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match="nested too deeply"):
        open_bundle(deep_json_bundle(tmp_path / "deep.cetpbundle"))


def test_deep_session_header_is_a_clear_error(tmp_path: Path) -> None:
    path = write_bundle(tmp_path / "deep-session.cetpbundle",
                        {M_SESSION: b"[" * 100_000 + b"]" * 100_000 + b"\n"})
    with pytest.raises(BundleError, match="nested too deeply"):
        open_bundle(path)


def test_encrypted_member_is_refused(tmp_path: Path) -> None:
    path = write_bundle(tmp_path / "enc.cetpbundle", {M_DEVICE: b"{}"})
    patch_member(path, M_DEVICE, flag_bits=0x1)
    with pytest.raises(BundleError, match="encrypted"):
        open_bundle(path)


@pytest.mark.parametrize("method", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_other_compression_methods_are_refused(tmp_path: Path, method: int) -> None:
    path = write_bundle(tmp_path / "m.cetpbundle", {M_DEVICE: b"{}"}, compress=method)
    with pytest.raises(BundleError, match=f"compression method {method}"):
        open_bundle(path)


def test_unknown_compression_id_is_refused(tmp_path: Path) -> None:
    path = write_bundle(tmp_path / "u.cetpbundle", {M_DEVICE: b"{}"},
                        compress=zipfile.ZIP_STORED)
    patch_member(path, M_DEVICE, method=99)
    with pytest.raises(BundleError, match="compression method 99"):
        open_bundle(path)


def test_bad_deflate_data_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match=r"corrupt deflate data|damaged|cannot be read"):
        open_bundle(corrupt_deflate(tmp_path / "bad.cetpbundle"))


def test_bundle_from_a_torn_journal_says_what_was_lost(tmp_path: Path) -> None:
    jpath = _journal(tmp_path)
    lines = jpath.read_bytes().splitlines(keepends=True)
    # tear two exchange lines in the middle (what a crash between writers leaves)
    lines[-2] = lines[-2][:40] + b"\n"
    lines[-3] = lines[-3][:55] + b"\n"
    jpath.write_bytes(b"".join(lines))
    contents = read_journal(jpath)
    assert contents.damaged_lines == 2
    report = open_bundle(create_bundle(tmp_path / "torn.cetpbundle", contents))
    assert report.manifest.lost_lines == 2
    assert any("2 journal line(s) were torn or damaged" in w for w in report.warnings)
    assert "Incomplete:" in report.summary


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_damage_to_a_bundle_is_a_bundle_error(tmp_path: Path, data) -> None:
    good = tmp_path / "good.cetpbundle"
    if not good.exists():
        create_bundle(good, read_journal(_journal(tmp_path)))
    raw = bytearray(good.read_bytes())
    for _ in range(data.draw(st.integers(1, 8))):
        i = data.draw(st.integers(0, len(raw) - 1))
        raw[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.one_of(st.none(), st.integers(0, len(raw))))
    bad = tmp_path / "bad.cetpbundle"
    bad.write_bytes(bytes(raw[:cut] if cut is not None else raw))
    try:
        report = open_bundle(bad)
    except BundleError as exc:
        assert str(exc)
    else:
        assert report.manifest.format == "cetp-inspector-bug-report"


def test_in_memory_zip_helpers_round_trip(tmp_path: Path) -> None:
    path = write_bundle(tmp_path / "ok.cetpbundle", {M_DEVICE: b'{"model": "X"}'})
    assert open_bundle(path).device == {"model": "X"}
    assert zipfile.ZipFile(io.BytesIO(path.read_bytes())).testzip() is None


def test_too_deep_recorded_data_is_a_bundle_error_not_a_crash(tmp_path: Path) -> None:
    from inspector.session.journal import JournalWriter
    from tests.session.journal_factories import exchange, reply, v2_extras

    deep: list = []
    cur = deep
    for _ in range(900):  # parseable (under the JSON parser's limit), too deep to walk
        nxt: list = []
        cur.append(nxt)
        cur = nxt
    import json

    w = JournalWriter.create(name="deep", directory=tmp_path)
    w.close()
    doc = exchange("execute_tool", v2_extras({}), reply({"v": 1})).model_dump(mode="json")
    doc["decoded"] = deep  # written by hand: the writer itself refuses such depth
    with open(w.path, "a") as f:
        f.write(json.dumps({"type": "exchange", "exchange": doc}) + "\n")
    contents = read_journal(w.path)  # readable: the parser's own limit is higher
    with pytest.raises(BundleError, match=r"depth|nested too deeply"):
        create_bundle(tmp_path / "d.cetpbundle", contents)
    assert not (tmp_path / "d.cetpbundle").exists()
