"""The v1 side of a dual-stack `CetpProvider` (§2.1, §8): read-only tools only."""

from __future__ import annotations

from typing import Any

from inspector.protocol.bundle import Bundle
from inspector.virtual.app import (
    CallContext,
)
from inspector.virtual.cetp_model import (
    JsonFile,
    ToolCall,
    ToolSpec,
)
from inspector.virtual.cetp_wire import (
    CetpError,
    v1_error,
    v1_success,
)


class V1Mixin:
    """Mixed into `CetpProvider` (inspector.virtual.cetp_provider)."""

    # --- v1 (reference notes) -------------------------------------------------------------------
    def v1_tools(self) -> list[ToolSpec]:
        """A dual-stack provider lists only read-only tools to v1 (§2.1)."""
        return [s for s in self.tool_specs() if s.in_v1 and s.is_read]

    def v1_provider_info(self) -> dict[str, Any]:
        return {
            "provider_name": self.PROVIDER_NAME,
            "description": self.DESCRIPTION,
            "scopes": [{"name": s.name, "description": s.description} for s in self.scopes()],
        }

    async def handle_v1(self, ctx: CallContext, method: str, extras: Bundle) -> Bundle:
        if method == "list_tools":
            return v1_success(
                {
                    "tools": [
                        {"name": s.name, "description": s.description, "parameters": s.input_schema}
                        for s in self.v1_tools()
                    ]
                }
            )
        if method == "get_provider_info":
            return v1_success(self.v1_provider_info())
        if method != "execute_tool":
            return v1_error("TOOL_NOT_FOUND", f"unknown method {method[:64]!r}")
        name = extras.get("tool_name")
        if not isinstance(name, str) or not name:
            return v1_error("INVALID_ARGS", "tool_name is required")
        spec = next((s for s in self.v1_tools() if s.name == name), None)
        if spec is None:
            return v1_error("TOOL_NOT_FOUND", f"no tool named {name[:64]!r}")
        args_text = extras.get("args")
        args_text = args_text if isinstance(args_text, str) else "{}"
        rid = extras.get("request_id")
        try:
            args = self.parse_args(spec, args_text)
            rid_text = rid if isinstance(rid, str) else ""
            call = ToolCall(ctx, None, spec, args, args_text, rid_text, None)
            value = self.run_read(call)
            if isinstance(value, JsonFile):
                if value.source.size > self.LIMITS["max_inline_result_bytes"]:
                    raise CetpError("INTERNAL_ERROR", "the result is too large for CETP v1")
                return v1_success((await self.read_small(value.source)).decode("utf-8"))
            return v1_success(value)
        except CetpError as err:
            return v1_error(err.code, err.message)

