"""Plugins: extra virtual apps loaded from Python files (docs/virtual-device.md).

A plugin is a `.py` file defining `register(device)`, which installs apps with
`device.install(app)`. It may subclass any reference app (e.g. `PriceAlertsProvider`) and
change one behaviour, so a bug report can be reproduced as a file.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from inspector.virtual.device import VirtualDevice


class PluginError(Exception):
    """A plugin file could not be loaded; the message says why and what to fix."""


class _Recorder:
    """The `device` a plugin's register() sees: installs and remembers the packages."""

    def __init__(self, device: VirtualDevice, notify: bool) -> None:
        self._device = device
        self._notify = notify
        self.installed: list[str] = []

    def install(self, app: object, *, stopped: bool | None = None) -> None:
        """`stopped=False` installs an app that counts as used before (rule stopped_state)."""
        from inspector.virtual.app import VirtualApp

        if not isinstance(app, VirtualApp):
            raise PluginError(f"install() needs a VirtualApp, got {type(app).__name__}")
        self._device.install(app, notify=self._notify, stopped=stopped)
        self.installed.append(app.package)

    def __getattr__(self, name: str) -> object:
        return getattr(self._device, name)


def load_plugin(device: VirtualDevice, path: Path, *, notify: bool = True) -> list[str]:
    """Import `path` and call its `register(device)`; returns the packages it installed."""
    if not path.is_file():
        raise PluginError(f"plugin file {path} does not exist")
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:10]
    name = f"cetp_virtual_plugin_{path.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise PluginError(f"{path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(name, None)
        raise PluginError(f"plugin {path} failed to import: {type(exc).__name__}: {exc}") from exc
    register = getattr(module, "register", None)
    if not callable(register):
        raise PluginError(f"plugin {path} defines no register(device) function")
    recorder = _Recorder(device, notify)
    try:
        register(recorder)
    except PluginError:
        raise
    except Exception as exc:
        raise PluginError(f"plugin {path} register() failed: {type(exc).__name__}: {exc}") from exc
    if not recorder.installed:
        raise PluginError(f"plugin {path} installed no app (call device.install(app))")
    return recorder.installed
