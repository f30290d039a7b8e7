"""Bundles carry provider logs (redacted, opt-out) and file-result bytes (capped, digest
checked) that replay serves (issue 16)."""

from __future__ import annotations

import hashlib
import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import pytest

from inspector.consumer.engine import ProviderSession
from inspector.consumer.execution import ExecState
from inspector.consumer.recorder import Recorder
from inspector.protocol.logs import LogLine
from inspector.session.bundle_extras import recorded_file_results
from inspector.session.bundle_file import BundleError, create_bundle, open_bundle
from inspector.session.journal import JournalWriter, read_journal
from inspector.session.provider_logs import ProviderLogs
from inspector.virtual import VirtualDevice
from inspector.virtual.apps.replayed import install_bundle
from inspector.virtual.inprocess import connect_virtual_device

AUTHORITY = "com.example.pricealerts.clawseed.tools"
PACKAGE = "com.example.pricealerts"
BIG = 300_000  # over the inline limit: the export arrives as a file result


async def logging_recorder(client: Any) -> Recorder:
    """A recorder whose exchanges get the provider's lines (the device's log followed)."""
    await client.logcat(follow=True)
    recorder = Recorder(device="virtual")
    logs = ProviderLogs(recorder)
    client.add_event_handler(lambda e: logs.feed_event(e) if e.get("event") == "log" else None)
    return recorder


async def record(tmp_path: Path) -> tuple[Path, Path, str]:
    """Record negotiate + a file-result export with the provider's logs; save the bytes.
    Returns (journal path, saved file, session token)."""
    device = VirtualDevice(tmp_path / "device")
    client = await connect_virtual_device(device)
    try:
        recorder = await logging_recorder(client)
        writer = JournalWriter.create(name="export", device={"serial": "virtual"},
                                      directory=tmp_path / "sessions")
        recorder.add_listener(writer.on_exchange)
        provider = ProviderSession(client, AUTHORITY, package=PACKAGE, recorder=recorder)
        session = await provider.negotiate()
        ex = await provider.execute_tool("export_history", {"bytes": BIG})
        assert ex.state == ExecState.SUCCEEDED and ex.result_fd is not None
        verdict = await provider.fetch_file(ex, keep_content=True)
        assert verdict.ok and verdict.content_path
        saved = tmp_path / "export.json"
        shutil.copyfile(verdict.content_path, saved)
        verdict.discard()
        # a provider that logs its own session token: the bundle must scrub it there too
        neg = recorder.exchanges[0]
        neg.logs.append(LogLine.make(time_ms=neg.started_ms, level="W", tag="Leaky",
                                     message=f"token is {session.token}", package=PACKAGE))
        writer.on_exchange(neg)
        writer.close()
        return writer.path, saved, session.token
    finally:
        await client.close()
        await device.aclose()


async def replay_export(bundle: Path | object, tmp_path: Path, name: str) -> ExecState:
    device = VirtualDevice(tmp_path / name, apps=[])
    install_bundle(device, bundle)
    client = await connect_virtual_device(device)
    try:
        provider = ProviderSession(client, AUTHORITY, package=PACKAGE)
        await provider.negotiate()
        ex = await provider.execute_tool("export_history", {"bytes": BIG})
        assert ex.state == ExecState.SUCCEEDED
        verdict = await provider.fetch_file(ex)
        return ExecState.SUCCEEDED if verdict.ok else ExecState.FAILED
    except Exception as exc:
        return ExecState.FAILED if "NOT_FOUND" in str(exc) else ExecState.MALFORMED
    finally:
        await client.close()
        await device.aclose()


async def test_logs_travel_redacted_and_can_be_left_out(tmp_path: Path) -> None:
    journal, _saved, token = await record(tmp_path)
    contents = read_journal(journal)
    assert any(x.logs for x in contents.exchanges)
    bundle = create_bundle(tmp_path / "b.cetpbundle", contents)
    with zipfile.ZipFile(bundle) as z:
        raw = b"".join(z.read(n) for n in z.namelist())
    assert token.encode() not in raw  # scrubbed from the log line as from the replies
    opened = open_bundle(bundle)
    assert opened.manifest.model_dump()["logs_included"] is True
    neg = next(x for x in opened.exchanges if x.method == "negotiate")
    assert [ln.message for ln in neg.logs if ln.tag == "Leaky"] == ["token is [REDACTED]"]
    execute = next(x for x in opened.exchanges if x.method == "execute_tool")
    assert execute.logs and execute.logs[0].message.startswith("call execute_tool")

    without = open_bundle(create_bundle(tmp_path / "n.cetpbundle", contents,
                                        include_logs=False))
    assert all(not x.logs and x.crash is None for x in without.exchanges)
    assert without.manifest.model_dump()["logs_included"] is False


async def test_file_bytes_are_bundled_and_served_on_replay(tmp_path: Path) -> None:
    journal, saved, _token = await record(tmp_path)
    contents = read_journal(journal)
    sha = hashlib.sha256(saved.read_bytes()).hexdigest()
    assert recorded_file_results(contents) == {sha: BIG}

    plain = create_bundle(tmp_path / "plain.cetpbundle", contents)
    report = open_bundle(plain).manifest.model_dump()["file_results"]
    assert report[sha] == {"size": BIG, "included": False, "reason": "bytes not provided"}
    assert await replay_export(plain, tmp_path, "d1") == ExecState.FAILED  # NOT_FOUND

    full = create_bundle(tmp_path / "full.cetpbundle", contents, files=[saved])
    opened = open_bundle(full)
    assert opened.files == {sha: saved.read_bytes()}
    assert opened.manifest.model_dump()["file_results"][sha]["included"] is True
    # served on replay: the file verifies against the recorded digest
    assert await replay_export(full, tmp_path, "d2") == ExecState.SUCCEEDED

    capped = open_bundle(create_bundle(tmp_path / "cap.cetpbundle", contents, files=[saved],
                                       file_cap_bytes=1000))
    assert capped.files == {}
    m = capped.manifest.model_dump()
    assert m["file_cap_bytes"] == 1000
    assert m["file_results"][sha]["reason"] == f"over the cap ({BIG} > 1000 bytes)"

    stranger = tmp_path / "other.bin"
    stranger.write_bytes(b"not a recorded result")
    odd = open_bundle(create_bundle(tmp_path / "odd.cetpbundle", contents, files=[stranger]))
    assert odd.files == {}
    assert odd.manifest.model_dump()["file_results"]["unmatched:other.bin"]["reason"] == (
        "its sha256 matches no recorded file result")


async def test_a_file_member_that_does_not_hash_to_its_name_is_refused(tmp_path: Path) -> None:
    journal, saved, _ = await record(tmp_path)
    bundle = create_bundle(tmp_path / "full.cetpbundle", read_journal(journal), files=[saved])
    sha = hashlib.sha256(saved.read_bytes()).hexdigest()
    forged = tmp_path / "forged.cetpbundle"
    with zipfile.ZipFile(bundle) as src, zipfile.ZipFile(forged, "w") as dst:
        manifest = json.loads(src.read("manifest.json"))
        for n in src.namelist():
            if n == f"files/{sha}":  # other bytes, and a manifest that agrees with them
                data = b"X" + src.read(n)[1:]
                manifest["members"][n] = hashlib.sha256(data).hexdigest()
                dst.writestr(n, data)
            elif n != "manifest.json":
                dst.writestr(n, src.read(n))
        dst.writestr("manifest.json", json.dumps(manifest))
    with pytest.raises(BundleError, match="does not hash to its name"):
        open_bundle(forged)


async def test_bad_file_cap_is_an_error(tmp_path: Path) -> None:
    journal, saved, _ = await record(tmp_path)
    with pytest.raises(BundleError, match="file cap"):
        create_bundle(tmp_path / "x.cetpbundle", read_journal(journal), files=[saved],
                      file_cap_bytes=0)


async def test_replay_shows_the_recorded_log_beside_the_recorded_answer(tmp_path: Path) -> None:
    journal, _saved, _ = await record(tmp_path)
    bundle = create_bundle(tmp_path / "b.cetpbundle", read_journal(journal))
    device = VirtualDevice(tmp_path / "replay", apps=[])
    install_bundle(device, bundle)
    client = await connect_virtual_device(device)
    try:
        recorder = await logging_recorder(client)
        provider = ProviderSession(client, AUTHORITY, package=PACKAGE, recorder=recorder)
        await provider.negotiate()
    finally:
        await client.close()
        await device.aclose()
    neg = recorder.exchanges[0]
    # the replayed provider logs what the recorded one did for this call (the recorded,
    # redacted line included); the replaying app itself logs nothing of its own
    assert [(ln.level, ln.tag, ln.message) for ln in neg.logs] == [
        ("D", "CetpProvider", "call negotiate from uid 10200"),
        ("W", "Leaky", "token is [REDACTED]")]
