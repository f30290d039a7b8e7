"""Names shared by the main window's parts (tab titles, settings keys, file filters)."""

TABS = ("Overview", "Tools", "Call composer", "Operations")
#: the provider's traffic is the traffic dock filtered to it (no duplicate tab)
PROVIDER_TRAFFIC_SHORTCUT = f"Ctrl+{len(TABS) + 1}"
CONFORMANCE_SHORTCUT = f"Ctrl+{len(TABS) + 2}"
HOTPLUG_MS = 3000
SETTINGS_ORG = "cetp-inspector"
SETTINGS_APP = "CETP Inspector"
BUG_REPORT_FILTER = "Bug reports (*.cetpbundle);;Session journals (*.jsonl);;All files (*)"
