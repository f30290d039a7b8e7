"""The virtual device: a relay that behaves like a phone with reference apps installed.

`VirtualDevice` is the `RelayBackend`; `connect_virtual_device(device)` gives a connected
`RelayClient` in-process; `python -m inspector.virtual --listen …` serves it standalone.
"""

from inspector.virtual.app import (
    CallContext,
    Caller,
    ConfirmationScreen,
    FileSource,
    PendingActivity,
    TransactResult,
    VirtualApp,
)
from inspector.virtual.device import SERIAL, ConfirmationRequest, VirtualDevice

__all__ = [
    "SERIAL",
    "CallContext",
    "Caller",
    "ConfirmationRequest",
    "ConfirmationScreen",
    "FileSource",
    "PendingActivity",
    "TransactResult",
    "VirtualApp",
    "VirtualDevice",
    "connect_virtual_device",
]


def __getattr__(name: str) -> object:
    # imported lazily: the relay client is not needed to build or unit-test the backend
    if name == "connect_virtual_device":
        from inspector.virtual.inprocess import connect_virtual_device

        return connect_virtual_device
    raise AttributeError(name)
