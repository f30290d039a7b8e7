"""File results: streamed, bounded, verified per check, handle always closed."""

from __future__ import annotations

import hashlib
import json
import os
import tracemalloc

from inspector.consumer.execution import ExecState
from inspector.consumer.large_results import CheckStatus, effective_read_limit, read_and_verify
from inspector.consumer.options import EngineOptions
from inspector.relay.api import StreamEnd
from tests.consumer.factories import v2_rig
from tests.consumer.fakes import bytes_source, fixture, repeated_source

MiB = 1024 * 1024


def statuses(verdict) -> dict[str, str]:
    return {c.name: c.status.value for c in verdict.checks}


async def file_execution(rig):
    ex = await rig.session.execute_tool("export_history", {})
    assert ex.state == ExecState.SUCCEEDED and ex.file is not None and ex.result_fd
    return ex


def test_spec_file_envelope_shape_is_what_the_engine_reads() -> None:
    env = fixture("spec_file_result.json")
    assert set(env) == {"kind", "media_type", "size_bytes", "sha256"}


async def test_conforming_file_is_verified_and_closed() -> None:
    rig = v2_rig()
    ex = await file_execution(rig)
    progress: list[int] = []
    v = await rig.session.fetch_file(ex, user_cap=8 * MiB,
                                     on_progress=lambda n, total: progress.append(n))
    assert v.ok, v.failed()
    assert statuses(v) == {"read_limit": "pass", "size": "pass", "sha256": "pass",
                           "relay_digest": "pass", "fd_size": "pass", "media_type": "pass",
                           "output_schema": "pass", "handle_closed": "pass"}
    data = rig.provider.file_data
    assert v.sha256 == hashlib.sha256(data).hexdigest() and v.bytes_read == len(data)
    assert progress == sorted(progress) and progress[-1] == len(data)
    assert rig.relay.read_limits == [8 * MiB]
    assert rig.relay.closed_handles == [v.handle]
    with open(v.content_path, "rb") as f:
        assert f.read() == data
    assert v.value == json.loads(data)
    assert len(data) > MiB and not ex.has_value  # big: read it from content_path
    assert "value" not in v.model_dump()  # parsed content is not serialised
    path = v.content_path
    v.discard()
    assert not os.path.exists(path)


async def test_digest_mismatch_shows_computed_and_declared() -> None:
    rig = v2_rig(file_declared={"sha256": "0" * 64})
    v = await rig.session.fetch_file(await file_execution(rig))
    sha = v.check("sha256")
    assert sha.status == CheckStatus.FAIL
    assert sha.declared == "0" * 64 and sha.computed == v.sha256
    assert statuses(v)["size"] == "pass" and statuses(v)["handle_closed"] == "pass"
    v.discard()


async def test_size_mismatch() -> None:
    rig = v2_rig()
    rig.provider.file_declared = {"size_bytes": len(rig.provider.file_data) + 10}
    v = await rig.session.fetch_file(await file_execution(rig))
    size = v.check("size")
    assert size.status == CheckStatus.FAIL
    assert size.computed == len(rig.provider.file_data)
    v.discard()


async def test_declared_size_beyond_read_limit_is_not_read() -> None:
    rig = v2_rig(file_source=repeated_source(b"x" * 65536, 64))  # 4 MiB
    ex = await file_execution(rig)
    v = await rig.session.fetch_file(ex, user_cap=1 * MiB)
    assert statuses(v)["read_limit"] == "fail"
    assert rig.relay.read_limits == []  # nothing streamed
    assert statuses(v)["handle_closed"] == "pass"
    assert v.bytes_read == 0


async def test_lying_size_with_huge_stream_stops_at_the_read_limit() -> None:
    rig = v2_rig(file_source=repeated_source(b"x" * 65536, 64),
                 file_declared={"size_bytes": 1000})
    v = await rig.session.fetch_file(await file_execution(rig), user_cap=1 * MiB)
    assert statuses(v)["read_limit"] == "fail"
    assert v.bytes_read <= 1 * MiB
    assert statuses(v)["size"] == "skipped" and statuses(v)["sha256"] == "skipped"
    assert statuses(v)["handle_closed"] == "pass"
    v.discard()


async def test_relay_end_digest_is_compared() -> None:
    rig = v2_rig()
    rig.relay.end_override = StreamEnd(1, "ab" * 32)
    v = await rig.session.fetch_file(await file_execution(rig))
    assert statuses(v)["relay_digest"] == "fail"
    assert statuses(v)["sha256"] == "pass"
    v.discard()


async def test_declared_json_that_is_not_json() -> None:
    rig = v2_rig(file_data=b"not json at all")
    v = await rig.session.fetch_file(await file_execution(rig))
    assert statuses(v)["media_type"] == "fail"
    assert statuses(v)["output_schema"] == "skipped"
    v.discard()


async def test_non_json_media_type_is_not_interpreted() -> None:
    rig = v2_rig(file_data=b"a,b\n1,2\n", file_declared={"media_type": "text/csv"})
    v = await rig.session.fetch_file(await file_execution(rig))
    assert statuses(v)["media_type"] == "pass"
    assert statuses(v)["output_schema"] == "skipped"
    assert v.ok
    v.discard()


async def test_file_output_schema_mismatch() -> None:
    rig = v2_rig(file_data=json.dumps({"rows": "nope"}).encode())
    ex = await file_execution(rig)
    v = await rig.session.fetch_file(ex)
    assert statuses(v)["output_schema"] == "fail"
    assert ex.has_value and ex.value == {"rows": "nope"}  # small: kept as the value
    x = rig.recorder.by_id(ex.exchange_ids[-1])
    assert "file.output_schema" in [f.rule_id for f in x.findings if not f.ok]
    v.discard()


async def test_large_stream_uses_bounded_memory() -> None:
    rig = v2_rig(EngineOptions(read_cap_bytes=64 * MiB),
                 file_source=repeated_source(b"y" * 262144, 128),  # 32 MiB
                 file_declared={"media_type": "application/octet-stream"})
    ex = await file_execution(rig)
    tracemalloc.start()
    try:
        v = await rig.session.fetch_file(ex, keep_content=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert v.ok and v.bytes_read == 32 * MiB
    assert v.content_path is None
    assert peak < 4 * MiB, peak


async def test_without_large_results_the_provider_refuses() -> None:
    rig = v2_rig(EngineOptions(capabilities=("async_operations",)))
    ex = await rig.session.execute_tool("export_history", {})
    assert ex.state == ExecState.FAILED
    assert ex.error.error_code == "RESULT_TOO_LARGE"


def test_effective_read_limit() -> None:
    assert effective_read_limit(10, 20) == 10
    assert effective_read_limit(None, 20) == 20
    assert effective_read_limit(30, 20) == 20


class _ClosedRelay:
    """A relay whose handle is already gone at close time."""

    def read_file(self, handle, max_bytes, chunk_size=None):
        async def gen():
            data = b'{"rows": []}'
            yield data
            yield StreamEnd(len(data), hashlib.sha256(data).hexdigest())
        return gen()

    async def close_handle(self, handle: str) -> bool:
        return False


async def test_handle_not_closed_is_a_failed_check() -> None:
    data = b'{"rows": []}'
    v = await read_and_verify(
        _ClosedRelay(), "fd-9", declared_size=len(data),
        declared_sha256=hashlib.sha256(data).hexdigest(), declared_media_type="application/json",
        output_schema=None, validate=None, read_limit=1024, keep_content=False)
    assert statuses(v)["handle_closed"] == "fail"
    assert statuses(v)["sha256"] == "pass"
    assert v.parsed and v.value == {"rows": []}


async def test_bytes_source_helper_round_trips() -> None:
    assert b"".join(bytes_source(b"abc" * 100, 7)()) == b"abc" * 100


async def test_json_beyond_the_parse_limit_is_verified_but_not_parsed() -> None:
    rig = v2_rig(EngineOptions(parse_limit_bytes=1000))
    v = await rig.session.fetch_file(await file_execution(rig))
    assert statuses(v)["sha256"] == "pass"
    assert statuses(v)["media_type"] == "skipped"
    assert statuses(v)["output_schema"] == "skipped"
    assert v.ok and not v.parsed
    v.discard()


class _BytesRelay:
    """Streams `data` in 100 kB pieces, with a correct END."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def read_file(self, handle, max_bytes, chunk_size=None):
        async def gen():
            for off in range(0, len(self.data), 100_000):
                yield self.data[off:off + 100_000]
            yield StreamEnd(len(self.data), hashlib.sha256(self.data).hexdigest())
        return gen()

    async def close_handle(self, handle: str) -> bool:
        return True


async def test_big_result_not_kept_is_hashed_without_a_spool_file(tmp_path) -> None:
    data = b'{"rows": [' + b'"row",' * 200_000 + b'"end"]}'
    v = await read_and_verify(
        _BytesRelay(data), "fd-1", declared_size=len(data),
        declared_sha256=hashlib.sha256(data).hexdigest(), declared_media_type="application/json",
        output_schema=None, validate=None, read_limit=len(data), parse_limit=1000,
        keep_content=False, spool_dir=str(tmp_path))
    assert v.ok and v.complete and statuses(v)["sha256"] == "pass"
    assert statuses(v)["relay_digest"] == "pass" and statuses(v)["media_type"] == "skipped"
    assert list(tmp_path.iterdir()) == []  # nothing written to disk
    assert v.preview.startswith('{"rows": ["row",') and len(v.preview) == 64 * 1024


async def test_big_result_kept_is_spooled_byte_for_byte(tmp_path) -> None:
    data = os.urandom(1_234_567)
    v = await read_and_verify(
        _BytesRelay(data), "fd-2", declared_size=len(data),
        declared_sha256=hashlib.sha256(data).hexdigest(),
        declared_media_type="application/octet-stream", output_schema=None, validate=None,
        read_limit=len(data), keep_content=True, spool_dir=str(tmp_path))
    assert v.ok and v.content_path is not None
    with open(v.content_path, "rb") as f:
        assert f.read() == data
    v.discard()
    assert list(tmp_path.iterdir()) == []


async def test_declared_big_but_short_json_is_not_misreported_as_unparseable(tmp_path) -> None:
    data = b'{"rows": []}'
    v = await read_and_verify(
        _BytesRelay(data), "fd-3", declared_size=5000,
        declared_sha256=hashlib.sha256(data).hexdigest(), declared_media_type="application/json",
        output_schema=None, validate=None, read_limit=10_000, parse_limit=1000,
        keep_content=False, spool_dir=str(tmp_path))
    assert statuses(v)["size"] == "fail"
    assert statuses(v)["media_type"] == "skipped"
