"""The reference apps installed on a fresh virtual device."""

from __future__ import annotations

from inspector.virtual.app import VirtualApp


def default_apps() -> list[VirtualApp]:
    """One fresh instance of every reference app, in a stable order."""
    from inspector.virtual.apps.badprovider import BadProvider
    from inspector.virtual.apps.extensions import (
        DiceExtension,
        FlashlightExtension,
        HelloWorldExtension,
        UnitConverterExtension,
    )
    from inspector.virtual.apps.finance import FinanceProvider
    from inspector.virtual.apps.pricealerts import PriceAlertsProvider

    return [
        PriceAlertsProvider(),
        FinanceProvider(),
        HelloWorldExtension(),
        UnitConverterExtension(),
        DiceExtension(),
        FlashlightExtension(),
        BadProvider(),
    ]
