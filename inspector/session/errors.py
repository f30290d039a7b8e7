"""Session-level errors with a stable shape: code, message, retryable, hint, exit code.

Every failure a front end shows (CLI or GUI) is turned into an `InspectorError` so that it
can be printed as a structured error instead of a traceback, and so the CLI can map it to
its documented exit code (docs/cli.md).
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from pydantic import BaseModel


class ExitCode(IntEnum):
    """The CLI's documented exit codes."""

    OK = 0
    PROVIDER_ERROR = 1  # the provider answered with an error (or broke the protocol)
    USAGE = 2  # bad command line, bad JSON, unknown provider/tool
    DEVICE = 3  # device, adb or relay failure (incl. disconnects and timeouts)
    VERIFICATION = 4  # digest, size or schema verification failed


class ErrorInfo(BaseModel):
    """The printable form of any error (the `error` object of `--json` output)."""

    code: str
    message: str
    retryable: bool = False
    hint: str = ""
    details: dict[str, Any] | None = None


class InspectorError(Exception):
    """A failure meant for people: what happened, whether a retry helps, what to try."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        hint: str = "",
        retryable: bool = False,
        exit_code: ExitCode = ExitCode.USAGE,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.hint = hint
        self.retryable = retryable
        self.exit_code = exit_code
        self.details = details

    def info(self) -> ErrorInfo:
        return ErrorInfo(
            code=self.code,
            message=self.message,
            retryable=self.retryable,
            hint=self.hint,
            details=self.details,
        )


class NotFoundError(InspectorError):
    """A provider, extension, tool, operation or device name matched nothing."""

    def __init__(self, what: str, name: str, candidates: list[str]) -> None:
        # provider-chosen names: a hostile 1 MB id must not become a 1 MB hint (issue 12)
        shown = ", ".join(c if len(c) <= 64 else c[:63] + "…" for c in candidates[:20]) + (
            " …" if len(candidates) > 20 else "")
        super().__init__(
            "NOT_FOUND",
            f"no {what} matches {name!r}",
            hint=f"known {what}s: {shown}" if candidates else f"no {what}s were discovered; rescan",
            exit_code=ExitCode.USAGE,
            details={"candidates": candidates},
        )


class AmbiguousError(InspectorError):
    """A name matched several providers/extensions; the user must be more specific."""

    def __init__(self, what: str, name: str, candidates: list[str]) -> None:
        super().__init__(
            "AMBIGUOUS",
            f"{name!r} matches {len(candidates)} {what}s",
            hint="use one of: " + ", ".join(candidates),
            exit_code=ExitCode.USAGE,
            details={"candidates": candidates},
        )
