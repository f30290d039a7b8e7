"""On a stock desktop without Qt's xcb libraries the app names the packages to install."""

from __future__ import annotations

import sys

import pytest

from inspector.ui import app, xcb_check


def test_xcb_is_recognised_from_the_environment(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    assert xcb_check.uses_xcb({"DISPLAY": ":0"})
    assert xcb_check.uses_xcb({"DISPLAY": ":0", "QT_QPA_PLATFORM": "xcb"})
    assert not xcb_check.uses_xcb({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"})
    assert not xcb_check.uses_xcb({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"})
    assert not xcb_check.uses_xcb({})


def test_missing_libraries_are_named_by_their_package():
    absent = {"libxcb-icccm.so.4", "libxcb-keysyms.so.1"}

    def load(name: str) -> object:
        if name in absent:
            raise OSError(f"{name}: cannot open shared object file")
        return object()

    missing = xcb_check.missing_packages(load)
    assert missing == ["libxcb-icccm4", "libxcb-keysyms1"]
    text = xcb_check.explain(missing)
    assert "sudo apt-get install libxcb-icccm4 libxcb-keysyms1" in text


def test_the_app_says_what_to_install_instead_of_aborting(monkeypatch, capsys):
    monkeypatch.setattr(xcb_check, "uses_xcb", lambda env=None: True)
    monkeypatch.setattr(xcb_check, "missing_packages", lambda load=None: ["libxcb-icccm4"])
    assert app.run_gui([]) == 3
    assert "apt-get install libxcb-icccm4" in capsys.readouterr().err


@pytest.mark.parametrize("soname", sorted(xcb_check.XCB_LIBRARIES))
def test_every_library_has_a_package_in_dev_setup(soname):
    from pathlib import Path

    dev = (Path(__file__).resolve().parents[2] / "dev").read_text()
    assert xcb_check.XCB_LIBRARIES[soname] in dev
