"""Android API-level profiles: which platform release a virtual device plays.

A profile is only a number and its release name; what changes between profiles is which
rules of `inspector.android.rules` are in force (each rule carries its API range). The
virtual device plays API 34 (Android 14, what the relay targets) unless told otherwise
(`--android-api N`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

DEFAULT_API = 34


class ApiProfile(BaseModel):
    """One Android release the virtual device (or the host-JVM fake platform) can play."""

    model_config = ConfigDict(frozen=True)

    api: int
    release: str
    codename: str

    @property
    def label(self) -> str:
        return f"API {self.api} (Android {self.release})"


PROFILES: dict[int, ApiProfile] = {
    p.api: p
    for p in (
        ApiProfile(api=26, release="8.0", codename="Oreo"),
        ApiProfile(api=28, release="9", codename="Pie"),
        ApiProfile(api=29, release="10", codename="Q"),
        ApiProfile(api=30, release="11", codename="R"),
        ApiProfile(api=31, release="12", codename="S"),
        ApiProfile(api=33, release="13", codename="Tiramisu"),
        ApiProfile(api=34, release="14", codename="UpsideDownCake"),
        ApiProfile(api=35, release="15", codename="VanillaIceCream"),
    )
}
"""The profiles offered (the relay's minSdk is 26; 35 is the newest release modelled)."""


class UnknownApiLevel(ValueError):
    """An API level with no profile; the message lists the ones there are."""


def profile(api: int | None = None) -> ApiProfile:
    """The profile for `api` (default: `DEFAULT_API`)."""
    level = DEFAULT_API if api is None else api
    try:
        return PROFILES[level]
    except KeyError:
        raise UnknownApiLevel(
            f"no Android profile for API level {level!r}; choose one of "
            f"{', '.join(str(a) for a in sorted(PROFILES))}"
        ) from None
