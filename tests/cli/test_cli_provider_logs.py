"""`call` shows what the provider logged and a crash linked to its call (issue 16)."""

from __future__ import annotations

import io
import json

from tests.cli.conftest import Cli

PRICE = "com.example.pricealerts"


def test_call_json_carries_each_exchanges_log_lines(cli: Cli) -> None:
    r = cli("call", PRICE, "list_alerts")
    assert r.code == 0, r.err
    logs = r.doc["provider_logs"]
    by_method = {d["method"]: d for d in logs}
    line = by_method["execute_tool"]["lines"][0]
    assert line["tag"] == "CetpProvider" and line["level"] == "D"
    assert line["message"].startswith("call execute_tool") and line["pid"] > 0
    assert line["package"] == PRICE and by_method["execute_tool"]["crash"] is None
    assert r.doc["execution"]["exchange_ids"][-1] == by_method["execute_tool"]["exchange_id"]


def test_a_crash_during_the_call_is_linked_and_printed(cli: Cli) -> None:
    assert cli("virtual", "fault", "crash", "--package", PRICE).code == 0
    r = cli("call", PRICE, "list_alerts", json_out=False)
    # the crash hits the first IPC (negotiate); the call then negotiates with the restarted
    # process and succeeds, and the crash is shown with the first lines of its trace
    assert r.code == 0, r.err
    assert "provider log during negotiate (com.example.pricealerts):" in r.err
    assert f"the provider crashed ({PRICE}, pid" in r.err
    assert "java.lang.IllegalStateException: injected crash (fault 'crash')" in r.err
    assert "at android.os.Handler.dispatchMessage" in r.err


def test_a_crash_in_json(cli: Cli) -> None:
    assert cli("virtual", "fault", "crash", "--package", PRICE).code == 0
    r = cli("call", PRICE, "list_alerts")
    assert r.code == 0 and r.doc["execution"]["state"] == "succeeded"
    crashed = [d for d in r.doc["provider_logs"] if d["crash"] is not None]
    assert [d["method"] for d in crashed] == ["negotiate"]
    c = crashed[0]["crash"]
    assert c["kind"] == "crash" and c["exception"].startswith("java.lang.IllegalStateException")
    assert any(ln["tag"] == "ActivityManager" and "has died" in ln["message"]
               for ln in crashed[0]["lines"])


def test_bundle_create_with_file_bytes_and_without_logs(cli: Cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    saved = tmp_path / "export.json"
    r = cli("call", PRICE, "export_history", "--args", '{"bytes": 300000}', "--save",
            str(saved), "--record", "exported")
    assert r.code == 0, r.out
    bundle = tmp_path / "b.cetpbundle"
    r = cli("bundle", "create", "exported", "-o", str(bundle), "--file", str(saved),
            "--no-logs")
    assert r.code == 0, r.err
    doc = r.doc
    assert doc["logs_included"] is False and doc["file_cap_bytes"] == 32 * 1024 * 1024
    [(sha, result)] = doc["file_results"].items()
    assert result == {"size": 300000, "included": True, "reason": ""}
    text = cli("bundle", "create", "exported", "-o", str(tmp_path / "c.cetpbundle"),
               "--file", str(saved), "--file-cap", "1000", json_out=False)
    assert "provider logs: included (redacted like the rest)" in text.out
    assert "file results (cap 1,000 bytes each; bytes are not redacted):" in text.out
    assert f"{sha}  300000 bytes  not included: over the cap (300000 > 1000 bytes)" in text.out


def test_confirmation_screenshots_are_opt_in_at_export(cli: Cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from inspector.session.bundle_file import open_bundle

    created = cli("call", PRICE, "create_alert", "--args", '{"symbol": "ACME", "price": 101.25}')
    alert = created.doc["execution"]["value"]["alert_id"]
    r = cli("call", PRICE, "delete_alert", "--args", json.dumps({"alert_id": alert}),
            "--approve", "--record", "shots")
    assert r.code == 0 and r.doc["execution"]["state"] == "succeeded", r.out
    plain = cli("bundle", "create", "shots", "-o", str(tmp_path / "p.cetpbundle"))
    assert plain.doc["screenshots"] == 0
    assert open_bundle(tmp_path / "p.cetpbundle").screenshots == {}
    shot = cli("bundle", "create", "shots", "-o", str(tmp_path / "s.cetpbundle"),
               "--screenshots")
    assert shot.doc["screenshots"] == 1
    report = open_bundle(tmp_path / "s.cetpbundle")
    [(xid, png)] = report.screenshots.items()
    launch = next(x for x in report.exchanges if x.id == xid)
    assert launch.kind == "resolution" and png.startswith(b"\x89PNG")
    from PIL import Image

    img = Image.open(io.BytesIO(png))
    assert img.size == (360, 640)
    # the frame is the confirmation screen: its Approve button is drawn (accent colour)
    assert img.convert("RGB").getpixel((300, 575)) == (21, 101, 192)
