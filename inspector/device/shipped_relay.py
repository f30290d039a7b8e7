"""The relay APK shipped inside the Python package (`inspector.resources/relay/`).

`relay.json` beside the APK records its version and SHA-256; the bytes are checked against
that digest before anything is installed, so a damaged wheel never reaches a phone.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from inspector.device.errors import RELAY_NOT_SHIPPED, DeviceError

RELAY_PACKAGE = "org.cetp.inspector.relay"
APK_NAME = "cetp-relay.apk"
META_NAME = "relay.json"


class ShippedRelay(BaseModel):
    """The APK the inspector installs, with the facts recorded at build time."""

    model_config = ConfigDict(frozen=True)

    package: str = RELAY_PACKAGE
    version_code: int
    version_name: str
    sha256: str
    apk_path: Path

    def read_apk(self) -> bytes:
        """The APK bytes, verified against relay.json's SHA-256."""
        data = self.apk_path.read_bytes()
        actual = hashlib.sha256(data).hexdigest()
        if actual != self.sha256.lower():
            raise DeviceError(
                RELAY_NOT_SHIPPED,
                f"The shipped relay APK is damaged (sha256 {actual[:12]}…, relay.json says "
                f"{self.sha256[:12]}…).",
                "Reinstall the inspector package.",
            )
        return data


def resources_dir() -> Path:
    """`inspector.resources` as installed, or the source tree's `resources/` folder.

    In a source checkout that is not pip-installed, the `inspector.resources` package
    mapping does not exist, so fall back to the folder next to `inspector/`.
    """
    try:
        root = importlib.resources.files("inspector.resources")
        return Path(str(root))
    except ModuleNotFoundError:
        return Path(__file__).resolve().parents[2] / "resources"


def _pick(meta: dict[str, Any], *names: str) -> Any:
    for n in names:
        if n in meta:
            return meta[n]
    raise KeyError(names[0])


def load_shipped_relay(folder: Path | None = None) -> ShippedRelay:
    """Read `relay/relay.json` (snake_case or camelCase keys) and locate the APK."""
    folder = folder or resources_dir() / "relay"
    meta_path = folder / META_NAME
    try:
        meta = json.loads(meta_path.read_text("utf-8"))
        apk = folder / str(meta.get("apk", APK_NAME))
        relay = ShippedRelay(
            package=str(meta.get("package", RELAY_PACKAGE)),
            version_code=int(_pick(meta, "version_code", "versionCode")),
            version_name=str(_pick(meta, "version_name", "versionName")),
            sha256=str(meta["sha256"]).lower(),
            apk_path=apk,
        )
    except FileNotFoundError:
        raise DeviceError(
            RELAY_NOT_SHIPPED,
            f"No relay APK ships with this inspector ({meta_path} is missing).",
            "Build it with `relay_apk/build.sh --install-into-resources`, or reinstall the "
            "inspector package.",
        ) from None
    except (KeyError, ValueError, TypeError) as e:
        raise DeviceError(
            RELAY_NOT_SHIPPED, f"{meta_path} is malformed ({e!r}).", "Rebuild the relay."
        ) from None
    if not relay.apk_path.is_file():
        raise DeviceError(
            RELAY_NOT_SHIPPED,
            f"relay.json names {relay.apk_path.name}, which is missing.",
            "Rebuild the relay with `relay_apk/build.sh --install-into-resources`.",
        )
    return relay
