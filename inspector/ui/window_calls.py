"""Calls from the window: negotiation, Send, async operations, confirmations, results."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shlex
from typing import Any

import shiboken6
from PySide6.QtWidgets import (
    QFileDialog,
)

from inspector.consumer.engine import ProviderSession
from inspector.consumer.execution import ExecState, Execution
from inspector.protocol.exchange import Exchange
from inspector.session.confirmations import ConfirmationRequest
from inspector.ui.composer import CallComposer, CallRequest
from inspector.ui.dialogs import ConfirmationDialog
from inspector.ui.text import bound
from inspector.ui.traffic_panel import copy_text


class CallFlow:
    """Mixin of MainWindow: routes composer/result signals to the controller and back."""

    def _negotiate(self, versions: tuple, caps: tuple) -> None:
        if self.current_key:
            self.run(
                self.controller.negotiate(self.current_key, versions, caps),
                f"negotiate:{self.current_key}",
                "Negotiation",
            )

    def _send(self, req: CallRequest) -> None:
        key = self.current_key
        if key is None:
            return
        self.current_request_id = req.request_id
        self.result.show_execution(None)
        self.result.show_pending(req.tool_name, req.request_id)
        self.composer.set_in_flight(req)
        task = self.run(
            self.controller.execute(
                key, req.tool_name, req.args_text, req.request_id, req.deadline_ms
            ),
            f"execute:{req.request_id}",
            f"Calling {req.tool_name}",
        )
        self.track_call(req.request_id, task, self.composer)

    def track_call(self, call_id: str, task: asyncio.Task, composer: CallComposer) -> None:
        """Remember a running call (closing asks first) until its task ends; then the
        composer it was sent from no longer shows it as in flight."""
        self.in_flight[call_id] = task

        def ended(_t: asyncio.Task) -> None:
            self.in_flight.pop(call_id, None)
            if not shiboken6.isValid(composer):  # the window is gone (app closing)
                return
            if composer.in_flight is not None and composer.in_flight.request_id == call_id:
                composer.set_in_flight(None)

        task.add_done_callback(ended)

    def _find_call(self, exchange_id: str) -> tuple[Any, Execution] | None:
        """The open provider's execution behind a traffic row, or None (and why)."""
        ex = next((x for x in self.controller.exchanges() if x.id == exchange_id), None)
        entry = self.controller.entry(self.current_key or "")
        if ex is None or entry is None or ex.package != entry.declaration.package:
            pkg = ex.package if ex is not None else "its provider"
            self.report("Cannot reopen the call", f"open {pkg} first, then pick the call again")
            return None
        execution = self.controller.execution(entry.key, ex.request_id or "")
        if execution is None:
            self.report("Cannot reopen the call", "this call was not made from this window")
            return None
        return entry, execution

    def reopen_call(self, exchange_id: str) -> bool:
        """History: a past call back in the composer (its tool and arguments), to re-send."""
        found = self._find_call(exchange_id)
        if found is None:
            return False
        entry, execution = found
        v1 = entry.engine is not None and not isinstance(entry.engine, ProviderSession)
        self.compose(execution.tool_name, 1 if v1 else 2)
        if self.composer.target is None or self.composer.target.name != execution.tool_name:
            self.report("Cannot reopen the call", f"{execution.tool_name} is no longer listed")
            return False
        try:
            self.composer.set_args(json.loads(execution.args_json or "{}"))
        except ValueError:
            self.composer.raw.setPlainText(execution.args_json)
        self._status.setText(
            bound(f"Reopened {execution.tool_name} ({execution.request_id}): Send to run it "
                  "again — “reuse (retry)” keeps its request_id", 300)
        )
        return True

    def copy_call_command(self, exchange_id: str) -> str:
        """History: the call as a `cetp-inspector call …` command line (on the clipboard)."""
        found = self._find_call(exchange_id)
        if found is None:
            return ""
        entry, execution = found
        parts = ["cetp-inspector", "call"]
        if entry.serial != "virtual":
            parts += ["-d", entry.serial]
        parts += [entry.declaration.package, execution.tool_name]
        args = execution.args_json or "{}"
        with contextlib.suppress(ValueError):
            args = json.dumps(json.loads(args), ensure_ascii=False, separators=(",", ":"))
        parts += ["--args", args]
        if entry.engine is not None and not isinstance(entry.engine, ProviderSession):
            parts.append("--v1")
        line = shlex.join(parts)
        copy_text(line)
        self._status.setText(bound(f"Copied: {line}", 300))
        return line

    def _cancel_in_flight(self, request_id: str) -> None:
        """The composer's Cancel: an async operation is cancelled on the provider; any
        other call stops being waited for, and its outcome is said to be unknown."""
        ex = self.controller.execution(self.current_key or "", request_id)
        if ex is not None and ex.operation_id and ex.state == ExecState.ACCEPTED:
            self._cancel(request_id)
            return
        task = self.in_flight.get(request_id)
        if task is not None:
            task.cancel()
        if request_id == self.current_request_id:
            self.result.state.setText(
                "Stopped waiting — the outcome on the device is unknown. Send again with "
                "the same request_id (reuse) to learn it without acting twice."
            )
        self.composer.set_in_flight(None)

    def _execution_changed(self, serial: str, ex: Execution) -> None:
        if (
            self.current_key is None
            or self.controller.execution(self.current_key, ex.request_id) is not ex
        ):
            return
        if ex.operation_id:
            self.operations.update_execution(ex)
        if ex.request_id == self.current_request_id:
            t = self.controller.timing(serial, ex)
            self.result.show_execution(
                ex, started_ms=t[0] if t else None, finished_ms=t[1] if t else None
            )

    def _launch(self, request_id: str) -> None:
        if self.current_key:
            self.run(
                self.controller.launch_resolution(self.current_key, request_id),
                f"resolution:{request_id}",
                "Launching the confirmation",
            )

    def _retry(self, request_id: str) -> None:
        ex = self.controller.execution(self.current_key or "", request_id)
        if ex is not None and self.current_key:
            self.run(
                self.controller.execute(
                    self.current_key,
                    ex.tool_name,
                    ex.args_json,
                    request_id,
                    self.composer.deadline.value() * 1000,
                ),
                f"retry:{request_id}",
                "Retry",
            )

    def _cancel(self, request_id: str) -> None:
        if self.current_key:
            self.run(
                self.controller.cancel_operation(self.current_key, request_id),
                f"cancel:{request_id}",
                "Cancel",
            )

    def _save_file(self, request_id: str) -> None:
        ex = self.controller.execution(self.current_key or "", request_id)
        v = ex.file_verdict if ex else None
        if v is None or not v.content_path:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Save the result", save_name(ex))
        if path:
            self.save_result_to(request_id, path)

    def save_result_to(self, request_id: str, path: str) -> bool:
        ex = self.controller.execution(self.current_key or "", request_id)
        v = ex.file_verdict if ex else None
        if v is None or not v.content_path:
            return False
        import shutil

        shutil.copyfile(v.content_path, path)
        self._status.setText(f"Saved {bound(path, 200)}")
        return True

    def _transfer(self, request_id: str, done: int, total: int) -> None:
        if request_id == self.current_request_id:
            self.result.file_box.setVisible(True)
            self.result.set_transfer_progress(done, total)

    def _exchange(self, ex: Exchange) -> None:
        self.traffic.model.refresh(ex)

    def _confirmation(self, serial: str, request: ConfirmationRequest) -> None:
        dlg = ConfirmationDialog(request.model_dump(mode="json"), self)
        dlg.answered.connect(self.controller.answer)
        self.confirmation_dialog = dlg
        dlg.open()



#: media type → file extension for the default save name
_EXTENSIONS = {
    "application/json": "json", "text/csv": "csv", "text/plain": "txt",
    "application/pdf": "pdf", "image/png": "png", "image/jpeg": "jpg",
    "application/zip": "zip", "application/x-ndjson": "jsonl",
}


def save_name(ex: Execution, now: float | None = None) -> str:
    """`<tool>-<YYYYmmdd-HHMMSS>.<ext>` from the tool, the time and the declared media type
    (never a generic result.bin); the name is sanitised for any file system."""
    import re
    import time

    media = (ex.file.media_type if ex.file else "").split(";")[0].strip().lower()
    ext = _EXTENSIONS.get(media) or (media.rsplit("/", 1)[-1] if "/" in media else "") or "bin"
    ext = re.sub(r"[^a-z0-9]+", "", ext)[:10] or "bin"
    tool = re.sub(r"[^A-Za-z0-9_.-]+", "_", ex.tool_name)[:64] or "result"
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    return f"{tool}-{stamp}.{ext}"
