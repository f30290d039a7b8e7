"""The Android rules layer: API-level profiles and the platform rules the virtual device
and the host-JVM fake platform enforce (pure Python: no Qt, no I/O).

`profiles` — which release a device plays; `rules` — each modelled platform behaviour with
its AOSP source and a pure decision function; `manifest` — the manifest facts the rules
need, read from an APK's binary AndroidManifest.xml or from manifest text.
"""

from inspector.android.profiles import DEFAULT_API, PROFILES, ApiProfile, profile
from inspector.android.rules import RULES, Rule, Verdict, rules_in_force

__all__ = [
    "DEFAULT_API",
    "PROFILES",
    "RULES",
    "ApiProfile",
    "Rule",
    "Verdict",
    "profile",
    "rules_in_force",
]
