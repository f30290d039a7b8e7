"""The APK committed in resources/relay/ must be the one the current sources build.

CI fails here when someone edits relay_apk/ without running
`relay_apk/build.sh --install-into-resources`.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from inspector.device.shipped_relay import load_shipped_relay
from tests.relay_apk.host_jvm import RELAY_DIR, REPO
from tests.relay_apk.relay_tools import run, sources_digest

pytestmark = pytest.mark.java

RESOURCES = REPO / "resources" / "relay"
REBUILD = "run `relay_apk/build.sh --install-into-resources` and commit resources/relay/"


def _meta() -> dict[str, object]:
    return json.loads((RESOURCES / "relay.json").read_text("utf-8"))


def test_relay_json_matches_the_sources_now() -> None:
    assert _meta()["sources_sha256"] == sources_digest(), \
        f"relay_apk/ changed since the shipped APK was built: {REBUILD}"


def test_relay_json_describes_the_committed_apk() -> None:
    meta = _meta()
    apk = RESOURCES / str(meta["apk"])
    assert hashlib.sha256(apk.read_bytes()).hexdigest() == meta["sha256"]
    manifest = (RELAY_DIR / "AndroidManifest.xml").read_text("utf-8")
    assert f'android:versionCode="{meta["version_code"]}"' in manifest
    assert f'android:versionName="{meta["version_name"]}"' in manifest
    shipped = load_shipped_relay()
    assert shipped.package == meta["package"] == "org.cetp.inspector.relay"
    assert shipped.read_apk() == apk.read_bytes()


def test_fresh_build_is_byte_identical_to_the_committed_apk(built_apk: Path) -> None:
    """Reproducible builds: same sources and Debian tools → the same APK, signature included."""
    meta = _meta()
    built = hashlib.sha256(built_apk.read_bytes()).hexdigest()
    assert built == meta["sha256"], f"fresh build differs from the shipped APK: {REBUILD}"


def test_committed_apk_is_signed_with_the_committed_key(built_apk: Path) -> None:
    def cert(apk: Path) -> str:
        out = run(["apksigner", "verify", "--print-certs", str(apk)]).stdout
        m = re.search(r"certificate SHA-256 digest: ([0-9a-f]{64})", out)
        assert m, out
        return m.group(1)

    assert cert(RESOURCES / str(_meta()["apk"])) == cert(built_apk), \
        "the signing key changed: phones with the old relay cannot upgrade in place"
