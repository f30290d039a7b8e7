"""Before Qt starts on X11: name the Debian packages of missing xcb libraries.

Without them Qt aborts (exit 134) with "Could not load the Qt platform plugin xcb" and
blames xcb-cursor0 even when that one is installed. This check loads each library the
PySide6 xcb plugin links (from `ldd libqxcb.so`) and, when some are missing, says which
packages to install. No Qt here: it must run before the QApplication exists.
"""

from __future__ import annotations

import ctypes
import os
import sys

#: soname → Debian package (the same list as SYSTEM_PACKAGES in ./dev)
XCB_LIBRARIES: dict[str, str] = {
    "libxcb.so.1": "libxcb1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxkbcommon.so.0": "libxkbcommon0",
}


def uses_xcb(env: dict[str, str] | None = None) -> bool:
    """Will Qt pick the xcb platform? (Linux, an X display, no other platform forced.)"""
    env = dict(os.environ if env is None else env)
    if not sys.platform.startswith("linux"):
        return False
    forced = env.get("QT_QPA_PLATFORM", "")
    if forced:
        return forced.split(":")[0] == "xcb"
    if env.get("WAYLAND_DISPLAY"):
        return False
    return bool(env.get("DISPLAY"))


def missing_packages(load=ctypes.CDLL) -> list[str]:
    """Debian packages whose library cannot be loaded, in a stable order."""
    out = []
    for soname, package in XCB_LIBRARIES.items():
        try:
            load(soname)
        except OSError:
            out.append(package)
    return out


def explain(packages: list[str]) -> str:
    return (
        "cannot open the window: Qt's X11 (xcb) platform needs libraries that are not "
        f"installed: {', '.join(packages)}\n"
        f"install them:  sudo apt-get install {' '.join(packages)}\n"
        "(or run ./dev setup --system, which installs them; other distributions name these "
        "packages similarly, e.g. xcb-util-wm, xcb-util-keysyms)"
    )
