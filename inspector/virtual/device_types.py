"""The virtual device's constants and small shared types: the relay identity it reports,
app uid numbering, activity result codes, the confirmation screen it shows and the
per-connection handle table entry (split out of inspector/virtual/device.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from inspector.protocol.bundle import Bundle
from inspector.relay.hello import OPS as RELAY_OPS
from inspector.virtual.app import FileSource, PendingActivity

SERIAL = "virtual"
RELAY_VERSION_CODE = 1
RELAY_VERSION_NAME = "virtual-0.1.0"
# The virtual device serves every whitelisted relay op (docs/relay-protocol.md §4).
CAPABILITIES = tuple(sorted(RELAY_OPS))
EXTENSION_AUTHORITY_SUFFIX = ".andyclaw.extension"
FIRST_APP_UID = 10_100
RESULT_OK = -1
RESULT_CANCELED = 0


class ConfirmationRequest(BaseModel):
    """What the confirmation "screen" shows (the `confirmation_request` event, §5)."""

    model_config = ConfigDict(frozen=True)

    confirmation_id: str
    package: str
    title: str
    target: str
    action: str
    parameters: dict[str, str]
    consequences: str

    def to_event(self) -> Bundle:
        return Bundle(
            event="confirmation_request",
            confirmation_id=self.confirmation_id,
            package=self.package,
            title=self.title,
            target=self.target,
            action=self.action,
            parameters=Bundle(self.parameters),
            consequences=self.consequences,
        )


ConfirmationHandler = Callable[[ConfirmationRequest], Awaitable[bool | None] | bool | None]
"""Front-end policy: return True/False to answer, None to wait for `answer_confirmation`."""


@dataclass
class Handle:
    """A PendingIntent or file descriptor handed to one connection (and only usable there)."""

    connection_id: str
    target: PendingActivity | FileSource
