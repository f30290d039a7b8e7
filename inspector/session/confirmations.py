"""The virtual device's confirmation "screen", answered by a front end.

On a phone the provider's confirmation Activity appears on the phone's screen and the user
answers there. The virtual device instead pushes a `confirmation_request` EVENT
(docs/relay-protocol.md §5) and waits for `answer_confirmation`; the session turns that
event into a `ConfirmationRequest` and asks the front end's policy: the GUI shows a dialog,
the CLI answers from `--approve` / `--deny`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, Field

from inspector.protocol.bundle import Bundle, to_jsonable


class ConfirmationRequest(BaseModel):
    """What the provider's confirmation UI shows (all of it untrusted provider text)."""

    confirmation_id: str
    package: str = ""
    title: str = ""
    target: str = ""
    action: str = ""
    parameters: dict[str, Any] = Field(default_factory=dict)  # JSON form of typed values
    consequences: str = ""

    @classmethod
    def from_event(cls, event: Bundle) -> ConfirmationRequest:
        params = event.get("parameters")
        shown: dict[str, Any] = {}
        if isinstance(params, Bundle):
            for k, v in params.items():
                j = to_jsonable(v)
                shown[k] = j.get("v") if isinstance(j, dict) else j
        return cls(
            confirmation_id=str(event.get("confirmation_id", "")),
            package=str(event.get("package") or ""),
            title=str(event.get("title") or ""),
            target=str(event.get("target") or ""),
            action=str(event.get("action") or ""),
            parameters=shown,
            consequences=str(event.get("consequences") or ""),
        )


#: answers True (approve) or False (deny); the GUI's may await a dialog
ConfirmationPolicy = Callable[[ConfirmationRequest], Awaitable[bool]]


def fixed_policy(approve: bool) -> ConfirmationPolicy:
    """A policy that always answers the same (the CLI's --approve / --deny)."""

    async def policy(_request: ConfirmationRequest) -> bool:
        return approve

    return policy
