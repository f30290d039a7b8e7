from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from inspector.protocol.bundle import Bundle, Long
from inspector.protocol.exchange import Exchange
from inspector.relay.api import HelloInfo, RelayError, ServerConnection
from inspector.relay.server import connect_in_process
from inspector.session.bundle_file import (
    M_SESSION,
    BundleError,
    create_bundle,
    open_bundle,
)
from inspector.session.journal import JournalWriter, read_journal
from inspector.session.replay import (
    ReplayAction,
    Replayer,
    ReplayKind,
    classify,
    read_only_tools_from,
    recorded_providers,
    replay_session,
)
from tests.session.journal_factories import (
    AUTHORITY,
    RESUME,
    TOKEN,
    TOOLS,
    reply,
    sample_session,
)


def _journal(tmp_path: Path) -> Path:
    w = JournalWriter.create(name="alerts bug", device={"serial": "virtual"}, directory=tmp_path)
    w.record(
        "device",
        {
            "manufacturer": "Virtual",
            "model": "Device",
            "release": "14",
            "sdk_int": 34,
            "relay_version_name": "0.1.0",
        },
    )
    w.record(
        "discovery",
        {"packages": [{"package": "com.example.alerts", "uid": 10001, "note": f"leaked {TOKEN}"}]},
    )
    for ex in sample_session():
        w.record_exchange(ex)
    w.close()
    return w.path


class LiveProvider:
    """A fake relay with one CETP provider; `alert_symbol` changes its read answer."""

    def __init__(self) -> None:
        self.alert_symbol = "ETH"
        self.calls: list[tuple[str, Bundle | None]] = []

    async def call(
        self,
        authority: str,
        method: str,
        extras: Bundle | None,
        *,
        arg: str | None = None,
        timeout_ms: int = 30_000,
    ) -> Bundle | None:
        self.calls.append((method, extras))
        rid = extras.get("request_id") if extras else None
        if method == "negotiate":
            return reply(
                {
                    "selected_version": 2,
                    "provider_id": "com.example.alerts",
                    "session_token": "fresh-token",
                }
            )
        assert extras is not None and extras["session_token"] == "fresh-token"
        if method == "list_tools":
            return reply(TOOLS, rid=rid)
        if extras.get("tool_name") == "list_alerts":
            return reply({"alerts": [{"symbol": self.alert_symbol, "above": 4000}]}, rid=rid)
        return reply({"created": True, "note": f"resumed with {RESUME}"}, rid=rid)


def test_bundle_round_trip_without_secrets(tmp_path: Path) -> None:
    session = read_journal(_journal(tmp_path))
    conformance = {"passed": 10, "failed": 1, "evidence": [f"token was {TOKEN}"]}
    path = create_bundle(
        tmp_path / "bug.cetpbundle",
        session,
        conformance=conformance,
        note="set_alert ignores the symbol",
    )
    raw = b"".join(zipfile.ZipFile(path).read(n) for n in zipfile.ZipFile(path).namelist())
    assert TOKEN.encode() not in raw and RESUME.encode() not in raw
    report = open_bundle(path)
    assert report.manifest.redacted and "session_token" in report.manifest.redacted_keys
    assert [e.method for e in report.exchanges] == [
        "negotiate",
        "list_tools",
        "execute_tool",
        "execute_tool",
    ]
    assert report.device["model"] == "Device" and report.device["serial"] == "virtual"
    assert report.declarations["packages"][0]["uid"] == 10001
    assert set(report.descriptors) == {AUTHORITY}
    assert set(report.descriptors[AUTHORITY]) == {"negotiate", "list_tools"}
    assert report.conformance["failed"] == 1
    assert "# Bug report: alerts bug" in report.summary
    assert "set_alert ignores the symbol" in report.summary
    with pytest.raises(Exception, match="frozen"):
        report.summary = "changed"  # type: ignore[misc]

    full = open_bundle(create_bundle(tmp_path / "full.cetpbundle", session, redact=False))
    assert not full.manifest.redacted
    assert json.dumps(full.exchanges[0].response).count(TOKEN) == 1


def test_tampered_or_foreign_bundles_are_refused(tmp_path: Path) -> None:
    session = read_journal(_journal(tmp_path))
    good = create_bundle(tmp_path / "a.cetpbundle", session)
    tampered = tmp_path / "t.cetpbundle"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(tampered, "w") as dst:
        for n in src.namelist():
            data = src.read(n)
            dst.writestr(n, data + b"\n" if n == M_SESSION else data)
    with pytest.raises(BundleError, match="does not match the manifest"):
        open_bundle(tampered)
    evil = tmp_path / "e.cetpbundle"
    with zipfile.ZipFile(evil, "w") as z:
        z.writestr("../../etc/passwd", "x")
    with pytest.raises(BundleError, match="unexpected members"):
        open_bundle(evil)
    (tmp_path / "n.cetpbundle").write_text("hello")
    with pytest.raises(BundleError, match="not a zip"):
        open_bundle(tmp_path / "n.cetpbundle")


def test_classification_uses_recorded_annotations() -> None:
    exchanges = sample_session()
    ro = read_only_tools_from(exchanges)
    assert ro == {"list_alerts"}
    kinds = [classify(e, ro) for e in exchanges]
    assert kinds == [ReplayKind.READ, ReplayKind.READ, ReplayKind.READ, ReplayKind.MUTATION]
    assert classify(exchanges[2]) is ReplayKind.MUTATION  # unknown tool: treated as mutation


async def test_replay_reissues_reads_and_diffs_a_changed_response(tmp_path: Path) -> None:
    report_file = create_bundle(
        tmp_path / "bug.cetpbundle", read_journal(_journal(tmp_path)), redact=False
    )
    session = open_bundle(report_file).session
    live = LiveProvider()
    live.alert_symbol = "BTC"
    report = await replay_session(session, live)  # type: ignore[arg-type]
    actions = [r.action for r in report.results]
    assert actions == [ReplayAction.REISSUED] * 3 + [ReplayAction.DECLINED]
    assert [m for m, _ in live.calls] == ["negotiate", "list_tools", "execute_tool"]
    # recorded request ids kept, deadline refreshed, the new session token substituted
    _, extras = live.calls[2]
    assert extras is not None and extras["request_id"] == "r-read"
    recorded_deadline = session.exchanges[2].request["v"]["deadline_at_ms"]["v"]
    assert isinstance(extras["deadline_at_ms"], Long)
    assert extras["deadline_at_ms"] >= recorded_deadline
    [changed] = report.changed
    assert changed.tool == "list_alerts"
    assert [(d.path, d.recorded, d.new) for d in changed.diff] == [
        ("data.alerts[0].symbol", "ETH", "BTC")
    ]


async def test_mutations_need_confirmation_and_new_ids_only_on_request(tmp_path: Path) -> None:
    session = read_journal(_journal(tmp_path))
    asked: list[Exchange] = []

    async def confirm(ex: Exchange) -> bool:
        asked.append(ex)
        return True

    live = LiveProvider()
    report = await replay_session(session, live, confirm=confirm)  # type: ignore[arg-type]
    assert [e.tool for e in asked] == ["set_alert"]
    assert report.results[3].action == ReplayAction.REISSUED and not report.changed
    assert live.calls[3][1]["request_id"] == "r-write"  # type: ignore[index]

    live = LiveProvider()
    r = Replayer(live, confirm=lambda ex: True, new_request_ids=True)  # type: ignore[arg-type]
    await r.replay(session.exchanges)
    ids = [e["request_id"] for _, e in live.calls[1:]]  # type: ignore[index]
    assert "r-write" not in ids and len(set(ids)) == 3


class RecordedBackend:
    """A relay backend serving a recorded provider (what the virtual device plugs in)."""

    def __init__(self, session: Any) -> None:
        self.providers = {p.authority: p for p in recorded_providers(session)}

    def hello_info(self, client: str) -> HelloInfo:
        return HelloInfo(1, 1, "replay", ("call",), "shell", 2000, ())

    async def handle(self, op: str, args: Bundle, conn: ServerConnection) -> Bundle:
        provider = self.providers.get(str(args["authority"]))
        if provider is None:
            raise RelayError("NOT_FOUND", "no such authority")
        extras = args.get("extras")
        return Bundle(
            reply=provider.answer(
                str(args["method"]), extras if isinstance(extras, Bundle) else None
            )
        )

    def connection_closed(self, conn: ServerConnection) -> None:
        pass


async def test_replay_as_a_virtual_provider_reproduces_the_session(tmp_path: Path) -> None:
    session = open_bundle(
        create_bundle(tmp_path / "b.cetpbundle", read_journal(_journal(tmp_path)))
    ).session
    [provider] = recorded_providers(session)
    assert provider.package_record is not None and provider.package_record["uid"] == 10001
    assert set(provider.descriptors) == {"negotiate", "list_tools"}
    client = await connect_in_process(RecordedBackend(session), "t")
    try:
        report = await replay_session(session, client, confirm=lambda ex: True)
    finally:
        await client.close()
    assert [r.action for r in report.results] == [ReplayAction.REISSUED] * 4
    assert report.changed == []
