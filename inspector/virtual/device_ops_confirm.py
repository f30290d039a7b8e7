"""PendingIntents and the confirmation screen: `launch_pending_intent` under the Android
rules, the `confirmation_request` event and `answer_confirmation` (docs/relay-protocol.md
§4-5)."""

from __future__ import annotations

import asyncio
import inspect
import secrets

from inspector.protocol.bundle import (
    Bundle,
    Int,
)
from inspector.relay.api import (
    BAD_ARGS,
    TIMEOUT,
    RelayError,
    ServerConnection,
)
from inspector.virtual.app import (
    PendingActivity,
)
from inspector.virtual.device_args import arg_str
from inspector.virtual.device_types import (
    RESULT_CANCELED,
    ConfirmationRequest,
)


class ConfirmationOpsMixin:
    """Mixed into `VirtualDevice` (inspector.virtual.device)."""

    async def _op_launch_pending_intent(self, args: Bundle, conn: ServerConnection) -> Bundle:
        activity: PendingActivity = self._handle(args, conn, PendingActivity)
        launch = self.platform().pending_intent(
            arg_str(args, "handle"), kind=activity.kind, new_task=activity.new_task)
        if launch.outcome == "cancelled":
            raise self.android.error(launch.verdict)
        if launch.outcome == "no_result":
            # a service/broadcast PendingIntent runs, but the relay's onActivityResult never
            # comes: the phone relay waits out its timeout (rule pending_intent_non_activity)
            self.android.started(activity.package)
            raise self.android.error(launch.verdict, TIMEOUT)
        self.android.started(activity.package)
        if launch.outcome == "cancelled_new_task":
            # the screen shows in its own task; the result was RESULT_CANCELED at once
            self.spawner.spawn(self._answer_later(activity), name="new-task-confirmation")
            return Bundle(result_code=Int(RESULT_CANCELED), data=None)
        approved = True
        if activity.screen is not None:
            approved = await self.show_confirmation(activity)
        app = self.app(activity.package)
        app.ensure_process()
        code, data = await activity.on_result(approved)
        return Bundle(result_code=Int(code), data=data)

    async def _answer_later(self, activity: PendingActivity) -> None:
        """A NEW_TASK confirmation: the user still answers it, the relay never hears."""
        approved = True if activity.screen is None else await self.show_confirmation(activity)
        self.app(activity.package).ensure_process()
        await activity.on_result(approved)

    async def show_confirmation(self, activity: PendingActivity) -> bool:
        """Put the provider's confirmation screen up and wait for the user's answer."""
        assert activity.screen is not None
        s = activity.screen
        req = ConfirmationRequest(
            confirmation_id="cr_" + secrets.token_hex(8),
            package=activity.package,
            title=s.title,
            target=s.target,
            action=s.action,
            parameters=dict(s.parameters),
            consequences=s.consequences,
        )
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._confirmations[req.confirmation_id] = fut
        self.pending_confirmations[req.confirmation_id] = req
        try:
            self.emit_all(req.to_event())
            if self.confirmation_handler is not None:
                answer = self.confirmation_handler(req)
                if inspect.isawaitable(answer):
                    answer = await answer
                if answer is not None and not fut.done():
                    fut.set_result(bool(answer))
            return await fut
        finally:
            self._confirmations.pop(req.confirmation_id, None)
            self.pending_confirmations.pop(req.confirmation_id, None)

    def answer(self, confirmation_id: str, approve: bool) -> bool:
        """Answer a confirmation screen (in-process front ends call this directly)."""
        fut = self._confirmations.get(confirmation_id)
        if fut is None or fut.done():
            return False
        fut.set_result(approve)
        return True

    async def _op_answer_confirmation(self, args: Bundle, conn: ServerConnection) -> Bundle:
        cid = arg_str(args, "confirmation_id")
        approve = args.get("approve")
        if not isinstance(approve, bool):
            raise RelayError(BAD_ARGS, "approve must be a boolean")
        return Bundle(accepted=self.answer(cid, approve))
