"""The About dialog names a permission the relay lacks (hello held_permissions, issue 10)."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from inspector.relay.api import HelloInfo
from inspector.relay.hello import ACCESS_TOOLS
from inspector.ui.dialogs import AboutDialog


def _hello(held: tuple[str, ...]) -> HelloInfo:
    return HelloInfo(protocol_version=1, relay_version_code=3, relay_version_name="1.2.0",
                     capabilities=("ping",), caller_package="org.cetp.inspector.relay",
                     caller_uid=10234, caller_cert_sha256=(), device={},
                     requested_permissions=("a.B", ACCESS_TOOLS), held_permissions=held)


def test_missing_access_tools_is_shown_as_plain_text(qtbot: QtBot) -> None:
    dlg = AboutDialog(_hello(("a.B",)))
    qtbot.addWidget(dlg)
    assert f"Relay permission: {ACCESS_TOOLS} not granted" in dlg.version_text
    assert "Reinstall the relay" in dlg.version_text


def test_nothing_is_shown_when_the_relay_holds_everything(qtbot: QtBot) -> None:
    dlg = AboutDialog(_hello(("a.B", ACCESS_TOOLS)))
    qtbot.addWidget(dlg)
    assert "Relay permission" not in dlg.version_text
