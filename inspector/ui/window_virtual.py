"""The Virtual device menu: what `cetp-inspector virtual …` and `--virtual-plugin` do, in the
window — load a plugin, inject faults into the next calls, serve a bug report and stop.

Faults go through the relay's `fault` op (inspector/virtual/faults.py), so they show in the
traffic log like any other relay request and behave as the CLI's `virtual fault`."""

from __future__ import annotations

import contextlib
from typing import Any

from PySide6.QtWidgets import QFileDialog

from inspector.ui.text import bound

#: menu text, fault kind, extra args, needs the current provider's package
FAULTS: tuple[tuple[str, str, dict[str, Any], bool], ...] = (
    ("Delay the next call by 3 s", "delay", {"ms": 3000}, False),
    ("Drop the connection after the next call", "drop_connection", {}, False),
    ("Corrupt the next file result's digest", "corrupt_digest", {}, True),
    ("Restart the provider's process now", "restart_process", {"when": "now"}, True),
    ("Restart the provider after its next commit", "restart_process",
     {"when": "after_commit"}, True),
    ("Cold start the provider (acquire wakes it)", "cold_start", {"mode": "acquire"}, True),
    ("Cold start the provider (only a launch wakes it)", "cold_start", {"mode": "launch"},
     True),
)


class VirtualDeviceMenu:
    """Mixin of MainWindow: the Virtual device menu."""

    def _build_virtual_menu(self) -> None:
        self.served: dict[str, type | None] = {}  # package served → reference app it replaced
        menu = self.virtual_menu = self.menuBar().addMenu("Vi&rtual device")
        self.act_load_plugin = self._action(
            "Load plugin…", "tool", None, lambda: self.load_plugin(),
            "Install the apps of a Python plugin file on the virtual device "
            "(as --virtual-plugin does)",
        )
        menu.addAction(self.act_load_plugin)
        menu.addAction(self.act_serve_bundle)
        self.act_stop_serving = self._action(
            "Stop serving bug reports", "cancel", None, self.stop_serving,
            "Remove the recorded providers; the reference apps they replaced come back",
        )
        self.act_stop_serving.setEnabled(False)
        menu.addAction(self.act_stop_serving)
        faults = menu.addMenu("Inject a fault")
        faults.setToolTip("Into the virtual device's next calls (as `virtual fault` does)")
        faults.setToolTipsVisible(True)
        self.fault_actions = {}
        for text, kind, args, per_package in FAULTS:
            act = self._action(
                text, "error", None,
                lambda _=False, k=kind, a=args, p=per_package: self.inject_fault(k, p, **a),
                f"fault {kind}" + (" on the provider open in the window" if per_package else ""),
            )
            faults.addAction(act)
            self.fault_actions[text] = act

    def _virtual_package(self) -> str | None:
        """The package of the virtual device's provider or extension open now."""
        if (self.current_serial or "virtual") != "virtual":
            return None
        entry = self.controller.entry(self.current_key or "")
        if entry is not None:
            return entry.declaration.package
        if self.current_extension:
            _serial, host = self.controller.extensions[self.current_extension]
            return host.decl.package
        return None

    def inject_fault(self, kind: str, per_package: bool = False, **args: Any) -> bool:
        """Arm a fault on the virtual device; False (and a status saying why) if it cannot."""
        if per_package:
            package = self._virtual_package()
            if package is None:
                self.report(
                    f"Cannot inject {kind}",
                    "open a provider of the virtual device first: this fault applies to one "
                    "app",
                )
                return False
            args = {**args, "package": package}
        shown = ", ".join(f"{k}={v}" for k, v in args.items())

        async def go() -> None:
            await self.controller.fault("virtual", kind, **args)
            self._status.setText(bound(f"Fault armed on the virtual device: {kind} {shown}", 300))

        self.run(go(), f"fault:{kind}", f"Injecting {kind}")
        return True

    def load_plugin(self, path: str | None = None) -> list[str]:
        """Install a plugin's apps on the virtual device (docs/virtual-device.md)."""
        from inspector.virtual.plugins import PluginError

        if not path:
            path, _ = QFileDialog.getOpenFileName(
                self, "Load a virtual-device plugin", "", "Python files (*.py);;All files (*)"
            )
        if not path:
            return []
        try:
            packages = self.controller.virtual_device().load_plugin(path)
        except (PluginError, OSError) as exc:
            self.report("Cannot load the plugin", f"{exc} — see docs/virtual-device.md")
            return []
        self._status.setText(
            bound(f"Plugin loaded: {', '.join(packages) or 'no app'} on the virtual device", 300)
        )
        return packages

    def _remember_served(self, packages: list[str], before: dict[str, type | None]) -> None:
        for p in packages:
            self.served.setdefault(p, before.get(p))
        self.act_stop_serving.setEnabled(bool(self.served))

    def stop_serving(self) -> list[str]:
        """Uninstall the served recordings; reinstall the reference app each one replaced."""
        device = self.controller.virtual_device()
        stopped = []
        for package, original in list(self.served.items()):
            with contextlib.suppress(KeyError):  # already gone
                device.uninstall(package)
            if original is not None:
                try:
                    device.install(original())
                except Exception as exc:  # a plugin app may need arguments
                    self.report(f"Cannot reinstall {package}", str(exc))
            stopped.append(package)
            del self.served[package]
        self.act_stop_serving.setEnabled(False)
        if stopped:
            self._status.setText(bound(f"Stopped serving {', '.join(stopped)}", 300))
        return stopped
