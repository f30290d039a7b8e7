"""Planted faults: the stock price-alert provider with exactly one spec violation each.

Every fault is a subclass of `PriceAlertsProvider` that overrides one behaviour — what a
provider author who gets one thing subtly wrong would write — and is installed through the
same plugin API an author uses (`register(device)`, docs/virtual-device.md). Built with
`broken=False` the same class behaves exactly like the stock provider (its *fault-free
variant*), so a test can prove both that the suite catches the fault and that the plugin
is otherwise conforming (tests/conformance/test_fault_matrix.py).

`PLANTED` maps each fault id to the checks that must fail (or warn, for a SHOULD) and the
checks it is run against; `plugin_source(fault_id)` is a plugin file for
`--virtual-plugin` / `VirtualDevice.load_plugin`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from inspector.virtual.apps.pricealerts import PriceAlertsProvider

PACKAGE_PREFIX = "com.example.fault."


class FaultyAlerts(PriceAlertsProvider):
    """Base of every planted fault: `broken` switches the one override on."""

    FAULT_ID = "none"

    def __init__(self, broken: bool = True, *, confirmation_ttl_ms: int | None = None) -> None:
        pkg = PACKAGE_PREFIX + self.FAULT_ID + ("" if broken else ".ok")
        super().__init__(pkg, f"Fault {self.FAULT_ID}" + ("" if broken else " (fixed)"),
                         confirmation_ttl_ms=confirmation_ttl_ms)
        self.broken = broken


@dataclass(frozen=True)
class Planted:
    id: str
    requirement: str  # the P-nnn statement of inspector.conformance.requirements it breaks
    checks: frozenset[str]  # the checks that must not pass (fail, or warn for a SHOULD)
    select: tuple[str, ...]  # what the test runs (ids, globs, categories)
    cls: type[FaultyAlerts]
    why: str = ""  # when more than one check fails: why they share this one cause
    #: failures the report groups under these checks as consequences (same outcome)
    then: frozenset[str] = frozenset()

    def make(self, broken: bool = True, **kw: object) -> FaultyAlerts:
        return self.cls(broken, **kw)  # type: ignore[arg-type]

    @property
    def package(self) -> str:
        return PACKAGE_PREFIX + self.id


PLANTED: dict[str, Planted] = {}


def planted(requirement: str, checks: set[str] | str, *, select: tuple[str, ...] = (),
            why: str = "", then: tuple[str, ...] = ()
            ) -> Callable[[type[FaultyAlerts]], type[FaultyAlerts]]:
    """Register a fault class under its FAULT_ID."""

    def deco(cls: type[FaultyAlerts]) -> type[FaultyAlerts]:
        ids = {checks} if isinstance(checks, str) else set(checks)
        if cls.FAULT_ID in PLANTED:  # pragma: no cover - programming error
            raise ValueError(f"duplicate fault {cls.FAULT_ID}")
        PLANTED[cls.FAULT_ID] = Planted(cls.FAULT_ID, requirement, frozenset(ids),
                                        select or tuple(sorted(ids)), cls, why,
                                        frozenset(then))
        return cls

    return deco


def plugin_source(fault_id: str, *, broken: bool = True,
                  confirmation_ttl_ms: int | None = None) -> str:
    """A plugin file installing one planted fault (or its fault-free variant)."""
    return (
        "from inspector.virtual.faultplugins import load_all\n\n\n"
        "def register(device):\n"
        f"    device.install(load_all()[{fault_id!r}].make({broken!r}, "
        f"confirmation_ttl_ms={confirmation_ttl_ms!r}))\n"
    )


def load_all() -> dict[str, Planted]:
    from inspector.virtual.faultplugins import breadth, effects, ids, protocol  # noqa: F401

    return PLANTED
