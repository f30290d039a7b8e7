"""The session layer (no Qt; the GUI and the CLI share it).

- `devices`: `DeviceManager` — the virtual device (serial `virtual`) merged with adb devices.
- `session`: `Session` — one inspection session: relay link, discovery, engine sessions,
  exchanges, operations, confirmations.
- `relay_link`: `RelayLink` — a `RelayApi` that reconnects after a disconnect.
- `lookup`, `errors`, `confirmations`: names → providers, structured errors, the virtual
  device's confirmation screen.
- `journal`, `bundle_file`, `replay`: recorded sessions and bug-report bundles.
"""
