"""CETP tools and AndyClaw functions mapped onto MCP tools (docs/mcp.md, "Mapping").

What is carried across:
- input schema: passed through unchanged when it is a valid JSON Schema (the provider's
  dialect, inspector.protocol.schema) with `"type": "object"` (MCP requires an object
  schema). Otherwise the MCP tool gets `{"type": "object"}`, the problem is written into its
  description and `_meta`, logged and listed by the CLI at start — never silently dropped.
- CETP annotations (v2 §3.4) → MCP ToolAnnotations: readOnlyHint (effect=read and not
  destructive), destructiveHint (destructive or effect=delete), idempotentHint, openWorldHint;
  effect, risk, confirmation, execution, scopes and which annotations were defaulted go into
  `_meta["cetp-inspector/cetp"]` and a one-line summary at the end of the description.
- output schema (v2): MCP outputSchema when it is a valid object schema; else only `_meta`.
- v1 tools (no annotations at all): no hints are claimed, and calling one counts as a
  mutation (the bridge cannot know it reads only) — allowed only with --allow-mutations.
- AndyClaw functions: inputSchema as above; `requiresApproval` functions count as
  mutations (the user's --allow-mutations is the host's explicit approval).
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import mcp.types as types

from inspector.mcp import naming
from inspector.protocol import andyclaw as ac
from inspector.protocol.cetp import Effect, ToolDescriptor, V1Tool
from inspector.protocol.schema import check_schema
from inspector.protocol.text import one_line

log = logging.getLogger(__name__)

META_KEY = "cetp-inspector/cetp"
MAX_DESCRIPTION = 4000


class SourceKind(StrEnum):
    V2 = "cetp_v2"
    V1 = "cetp_v1"
    EXTENSION = "extension"


@dataclass
class BridgedTool:
    """One MCP tool and where its calls go."""

    name: str
    kind: SourceKind
    package: str
    remote_name: str
    tool: types.Tool
    authority: str = ""
    extension_id: str = ""
    #: needs --allow-mutations (mutating/risky v2 tool, any v1 tool, requiresApproval)
    gated: bool = False
    gate_reason: str = ""
    allowed: bool = False
    problems: list[str] = field(default_factory=list)
    output_schema: dict[str, Any] | None = None

    def matches(self, pattern: str) -> bool:
        """An --allow-mutations entry: `*`, the MCP name, the tool name, or PACKAGE:TOOL."""
        keys = {"*", self.name, self.remote_name, f"{self.package}:{self.remote_name}"}
        if self.extension_id:
            keys.add(f"{self.extension_id}:{self.remote_name}")
        return pattern in keys

def schema_problems(schema: Any, dialect: str | None = None) -> list[str]:
    """Why `schema` cannot be an MCP inputSchema/outputSchema as it is (empty: it can)."""
    if not isinstance(schema, dict):
        return [f"the schema is a {type(schema).__name__}, MCP needs a JSON object schema"]
    problems = [f"{p or '/'}: {m}" for p, m in check_schema(schema, dialect)]
    if not problems and schema.get("type") != "object":
        problems.append(f"MCP needs \"type\": \"object\" at the top, the schema has "
                        f"{json.dumps(schema.get('type'))[:60]}")
    return problems


def _input_schema(schema: Any, what: str, problems: list[str],
                  dialect: str | None = None) -> dict[str, Any]:
    found = schema_problems(schema, dialect)
    if not found:
        return dict(schema)
    problems.extend(f"input schema not usable by MCP ({what}): {p}" for p in found[:5])
    return {"type": "object"}


def _describe(text: str, summary: str, gate: str, problems: list[str]) -> str:
    parts = [text.strip()] if text.strip() else []
    parts.append(summary)
    if gate:
        parts.append(gate)
    parts.extend(f"Problem: {p}" for p in problems)
    out = "\n\n".join(parts)
    return out if len(out) <= MAX_DESCRIPTION else out[: MAX_DESCRIPTION - 1] + "…"


def _gate_text(name: str, allowed: bool, reason: str) -> str:
    if allowed:
        return f"Mutations allowed for this tool ({reason})."
    return (f"Not callable yet: {reason}. The user allows it by restarting the bridge with "
            f"--allow-mutations {name}.")


def map_v2(ns: str, package: str, authority: str, desc: ToolDescriptor, revision: str,
           allow: list[str], dialect: str | None = None) -> BridgedTool:
    a = desc.annotations
    name = naming.tool_name(ns, desc.name)
    problems: list[str] = []
    input_schema = _input_schema(desc.input_schema, "input_schema", problems, dialect)
    output: dict[str, Any] | None = None
    if desc.output_schema is not None:
        out_problems = schema_problems(desc.output_schema, dialect)
        if out_problems:
            problems.append("output_schema kept in _meta only (not a valid MCP outputSchema): "
                            + out_problems[0])
        else:
            output = dict(desc.output_schema)  # type: ignore[arg-type]
    read_only = a.effect == Effect.READ and not a.destructive
    gated = a.mutating_or_risky
    reason = (f"effect={a.effect.value}" + (", destructive" if a.destructive else "")
              + (f", risk={a.risk.value}" if a.risk.value == "high" else ""))
    bt = BridgedTool(name=name, kind=SourceKind.V2, package=package, remote_name=desc.name,
                     authority=authority, tool=types.Tool(name=name, inputSchema={}),
                     gated=gated, gate_reason=reason, problems=problems, output_schema=output)
    bt.allowed = not gated or any(bt.matches(p) for p in allow)
    summary = (f"[CETP v2 tool {desc.name!r} of {package}: effect={a.effect.value}, "
               f"risk={a.risk.value}, confirmation={a.confirmation.value}, "
               f"execution={a.execution.value}"
               + (f", scopes={','.join(desc.scopes)}" if desc.scopes else "") + "]")
    meta = {
        "kind": SourceKind.V2.value, "package": package, "authority": authority,
        "tool": desc.name, "revision": revision, "effect": a.effect.value,
        "risk": a.risk.value, "confirmation": a.confirmation.value,
        "execution": a.execution.value, "destructive": a.destructive,
        "idempotent": a.idempotent, "open_world": a.open_world,
        "defaulted": sorted(a.defaulted), "scopes": list(desc.scopes),
        "gated": gated, "mutations_allowed": bt.allowed, "problems": problems,
    }
    if problems and input_schema == {"type": "object"} and desc.input_schema is not None:
        meta["provider_input_schema"] = desc.input_schema
    if output is None and desc.output_schema is not None:
        meta["provider_output_schema"] = desc.output_schema
    bt.tool = types.Tool(
        name=name, title=desc.title or None,
        description=_describe(desc.description, summary,
                              _gate_text(name, bt.allowed, reason) if gated else "", problems),
        inputSchema=input_schema, outputSchema=output,
        annotations=types.ToolAnnotations(
            title=desc.title or None, readOnlyHint=read_only,
            destructiveHint=bool(a.destructive or a.effect == Effect.DELETE),
            idempotentHint=a.idempotent, openWorldHint=a.open_world),
        _meta={META_KEY: meta},
    )
    return bt


def map_v1(ns: str, package: str, authority: str, t: V1Tool, allow: list[str]) -> BridgedTool:
    name = naming.tool_name(ns, t.name)
    problems: list[str] = []
    input_schema = _input_schema(t.parameters or {"type": "object"}, "parameters", problems)
    reason = "CETP v1 declares no effect, so the bridge cannot tell whether it only reads"
    bt = BridgedTool(name=name, kind=SourceKind.V1, package=package, remote_name=t.name,
                     authority=authority, tool=types.Tool(name=name, inputSchema={}),
                     gated=True, gate_reason=reason, problems=problems)
    bt.allowed = any(bt.matches(p) for p in allow)
    bt.tool = types.Tool(
        name=name, description=_describe(
            t.description, f"[CETP v1 tool {t.name!r} of {package}: no annotations]",
            _gate_text(name, bt.allowed, reason), problems),
        inputSchema=input_schema,
        _meta={META_KEY: {"kind": SourceKind.V1.value, "package": package,
                          "authority": authority, "tool": t.name, "gated": True,
                          "mutations_allowed": bt.allowed, "problems": problems}},
    )
    return bt


def map_extension(ns: str, ext_id: str, package: str, fn: ac.ExtensionFunction,
                  bridge: str, allow: list[str]) -> BridgedTool:
    name = naming.tool_name(ns, fn.name)
    problems: list[str] = []
    input_schema = _input_schema(fn.inputSchema, "inputSchema", problems)
    reason = "requiresApproval=true (the AndyClaw host asks the user every time)"
    bt = BridgedTool(name=name, kind=SourceKind.EXTENSION, package=package,
                     remote_name=fn.name, extension_id=ext_id,
                     tool=types.Tool(name=name, inputSchema={}), gated=fn.requiresApproval,
                     gate_reason=reason, problems=problems)
    bt.allowed = not bt.gated or any(bt.matches(p) for p in allow)
    bt.tool = types.Tool(
        name=name, description=_describe(
            fn.description, f"[AndyClaw extension {ext_id!r} ({package}) function "
            f"{fn.name!r} via the {bridge} bridge"
            + (f"; permissions {','.join(fn.requiredPermissions)}"
               if fn.requiredPermissions else "") + "]",
            _gate_text(name, bt.allowed, reason) if bt.gated else "", problems),
        inputSchema=input_schema,
        _meta={META_KEY: {"kind": SourceKind.EXTENSION.value, "package": package,
                          "extension": ext_id, "function": fn.name, "bridge": bridge,
                          "requires_approval": fn.requiresApproval,
                          "required_permissions": list(fn.requiredPermissions),
                          "gated": bt.gated, "mutations_allowed": bt.allowed,
                          "problems": problems}},
    )
    return bt


@dataclass
class Catalog:
    """The bridged tools by MCP name, plus what could not be bridged and why."""

    tools: dict[str, BridgedTool] = field(default_factory=dict)
    #: human-readable lines: invalid descriptors, unreadable manifests, schema problems
    problems: list[str] = field(default_factory=list)
    #: (source, revision) for every provider: a change means tools/list_changed
    revisions: dict[str, str] = field(default_factory=dict)

    def add(self, bt: BridgedTool) -> None:
        if bt.name in self.tools:  # two remote names folded to the same MCP name
            bt.name = naming.tool_name(bt.name[:40], hashlib.sha256(
                f"{bt.package}/{bt.remote_name}".encode()).hexdigest()[:6])
            bt.tool = bt.tool.model_copy(update={"name": bt.name})
        self.tools[bt.name] = bt
        for p in bt.problems:
            self.problems.append(f"{bt.name}: {one_line(p, 300)}")

    def fingerprint(self) -> str:
        """Changes whenever anything a client sees in tools/list changes."""
        doc = [t.tool.model_dump(mode="json", by_alias=True, exclude_none=True)
               for t in sorted(self.tools.values(), key=lambda b: b.name)]
        return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()
