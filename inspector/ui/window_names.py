"""Names shared by the main window's parts (tab titles, settings keys, file filters)."""

TABS = ("Overview", "Tools", "Call composer", "Operations", "Traffic")
HOTPLUG_MS = 3000
SETTINGS_ORG = "cetp-inspector"
SETTINGS_APP = "CETP Inspector"
BUG_REPORT_FILTER = "Bug reports (*.cetpbundle);;Session journals (*.jsonl);;All files (*)"
