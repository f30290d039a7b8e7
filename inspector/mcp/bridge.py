"""The MCP server: a device session's providers and extensions as MCP tools.

Built on the official MCP Python SDK's low-level `Server` (mcp 1.x), so the same object
serves stdio (what desktop agents launch) and streamable HTTP (inspector.mcp.http). The
tool list is built by `inspector.mcp.catalog` from the session's discovery; each call goes
through `inspector.mcp.calls` (consumer engine + session). A package change on the device
(rescan) or a revision change noticed during a call rebuilds the list and, when anything a
client sees changed, sends `notifications/tools/list_changed` to every connected client.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import time
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp.types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.session import ServerSession
from pydantic import AnyUrl

from inspector.consumer import errors as cerr
from inspector.consumer.engine import ProviderSession
from inspector.consumer.v1 import V1ProviderSession
from inspector.mcp import calls, naming
from inspector.mcp.catalog import (
    BridgedTool,
    Catalog,
    SourceKind,
    map_extension,
    map_v1,
    map_v2,
)
from inspector.mcp.feed import REC_MCP, wait_answer
from inspector.protocol.discovery import CetpDeclaration, ExtensionDeclaration
from inspector.protocol.text import one_line
from inspector.session.confirmations import ConfirmationRequest
from inspector.session.devices import VIRTUAL_SERIAL
from inspector.session.errors import InspectorError
from inspector.session.session import Session

log = logging.getLogger(__name__)

SERVER_NAME = "cetp-inspector"
#: TEST ONLY: `approve`/`deny` answers the *virtual* device's confirmation screen for
#: automated tests (never honoured for a phone; the bridge prints a warning when set)
TEST_ONLY_SCREEN_ENV = "CETP_INSPECTOR_MCP_TEST_ONLY_VIRTUAL_SCREEN"


@dataclass
class BridgeOptions:
    providers: list[str] = field(default_factory=list)  # empty: every usable provider
    extensions: list[str] = field(default_factory=list)  # empty: every extension
    no_extensions: bool = False
    allow_mutations: list[str] = field(default_factory=list)
    #: how long the virtual device's screen waits for a person before it counts as denied
    confirm_timeout_s: float = 120.0
    #: TEST ONLY (see TEST_ONLY_SCREEN_ENV): answer the virtual device's screen
    test_only_virtual_screen: bool | None = None
    elicit: bool = True
    max_read_bytes: int | None = None
    #: seconds between "confirm on the phone" progress reminders
    remind_s: float = calls.REMIND_S


class Bridge:
    """One MCP server over one device session (see module docstring)."""

    def __init__(self, session: Session, options: BridgeOptions, journal: Any = None) -> None:
        self.session = session
        self.options = options
        self.journal = journal
        self.catalog = Catalog()
        self._fingerprint = ""
        self._clients: weakref.WeakSet[ServerSession] = weakref.WeakSet()
        self._seen_clients: weakref.WeakSet[ServerSession] = weakref.WeakSet()
        self._refresh_lock = asyncio.Lock()
        self.resources: dict[str, tuple[str, str]] = {}
        self.call_count = 0
        self.server: Server[Any, Any] = Server(
            SERVER_NAME, version=_version(),
            instructions="Tools of the Android device's CETP providers and AndyClaw "
            "extensions. Mutating tools need the user's --allow-mutations; provider "
            "confirmations are answered by the user on the phone.")
        self._register()

    # ------------------------------------------------------------------ journal
    def note(self, event: str, data: dict[str, Any]) -> None:
        """One `mcp` record in the session journal (the Bridge view tails them)."""
        if self.journal is None:
            return
        try:
            self.journal.record(REC_MCP, {"event": event, **data})
        except Exception as exc:  # the journal must never break a call
            log.warning("could not journal %s: %s", event, exc)

    @property
    def journal_path(self) -> Path | None:
        return Path(self.journal.path) if self.journal is not None else None

    # ------------------------------------------------------------------ catalog
    async def start(self) -> Catalog:
        """Discover, build the tool list, install the virtual screen's answerer."""
        await self.session.ensure_discovery()
        if self.session.serial == VIRTUAL_SERIAL:
            self.session.confirmation_policy = self._virtual_screen
        self.session.add_discovery_listener(self._on_discovery)
        await self.refresh(notify=False)
        self.note("bridge_started", {"device": self.session.serial,
                                     "tools": sorted(self.catalog.tools),
                                     "problems": self.catalog.problems[:200],
                                     "allow_mutations": list(self.options.allow_mutations)})
        return self.catalog

    def _on_discovery(self, _discovery: Any) -> None:
        self.session.spawner.spawn(self.refresh(), "mcp-refresh")

    async def refresh(self, *, notify: bool = True) -> bool:
        """Rebuild the tool list; True (and list_changed sent) when clients see a change."""
        async with self._refresh_lock:
            catalog = await build_catalog(self.session, self.options)
            fp = catalog.fingerprint()
            changed = bool(self._fingerprint) and fp != self._fingerprint
            self.catalog, self._fingerprint = catalog, fp
        if changed and notify:
            self.note("tools_list_changed", {"tools": sorted(catalog.tools)})
            for client in list(self._clients):
                try:
                    await client.send_tool_list_changed()
                except Exception as exc:
                    log.info("list_changed to a client failed: %s", exc)
        return changed

    # ------------------------------------------------------------------ virtual screen
    async def _virtual_screen(self, req: ConfirmationRequest) -> bool:
        """The virtual device's confirmation screen: a person answers it (Bridge view or
        an answer file; docs/mcp.md). Nobody answering in time counts as denied."""
        self.note("confirmation_screen", {
            "confirmation_id": req.confirmation_id, "package": req.package,
            "title": one_line(req.title, 300), "target": one_line(req.target, 300),
            "action": one_line(req.action, 300),
            "consequences": one_line(req.consequences, 500)})
        answer = self.options.test_only_virtual_screen
        if answer is None and self.journal_path is not None:
            answer = await wait_answer(self.journal_path, req.confirmation_id,
                                       self.options.confirm_timeout_s)
        self.note("confirmation_answer", {"confirmation_id": req.confirmation_id,
                                          "approved": bool(answer),
                                          "by": "test_only_hook"
                                          if self.options.test_only_virtual_screen is not None
                                          else ("screen" if answer is not None
                                                else "timeout")})
        return bool(answer)

    # ------------------------------------------------------------------ MCP handlers
    def _register(self) -> None:
        server = self.server

        @server.list_tools()
        async def list_tools() -> list[types.Tool]:
            self._track_client()
            return [bt.tool for bt in self.catalog.tools.values()]

        @server.call_tool(validate_input=False)
        async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
            self._track_client()
            return await self.call(name, arguments)

        @server.list_resources()
        async def list_resources() -> list[types.Resource]:
            return [types.Resource(uri=AnyUrl(uri), name=uri.rsplit("/", 1)[-1],
                                   mimeType=media)
                    for uri, (media, _p) in self.resources.items()]

        @server.read_resource()
        async def read_resource(uri: AnyUrl) -> Iterable[ReadResourceContents]:
            found = self.resources.get(str(uri))
            if found is None:
                raise ValueError(f"unknown resource {str(uri)[:200]}: only verified file "
                                 "results of this bridge session can be read")
            media, path = found
            data = await asyncio.to_thread(Path(path).read_bytes)
            if media.startswith("text/") or "json" in media:
                with contextlib.suppress(UnicodeDecodeError):
                    return [ReadResourceContents(content=data.decode("utf-8"), mime_type=media)]
            return [ReadResourceContents(content=data, mime_type=media)]

    def _track_client(self) -> None:
        ctx = self.server.request_context
        sess = ctx.session
        self._clients.add(sess)
        if sess not in self._seen_clients:
            self._seen_clients.add(sess)
            params = sess.client_params
            info = params.clientInfo if params is not None else None
            self.note("client", {"name": one_line(info.name, 100) if info else "?",
                                 "version": one_line(info.version, 50) if info else "",
                                 "protocol": params.protocolVersion if params else "",
                                 "elicitation": self._client_elicits(sess)})

    @staticmethod
    def _client_elicits(sess: ServerSession) -> bool:
        try:
            return sess.check_client_capability(
                types.ClientCapabilities(elicitation=types.ElicitationCapability()))
        except Exception:
            return False

    def client_name(self) -> str:
        with contextlib.suppress(LookupError, AttributeError):
            params = self.server.request_context.session.client_params
            if params is not None:
                return one_line(params.clientInfo.name, 100)
        return "?"

    def _hooks(self) -> calls.CallHooks:
        ctx = self.server.request_context
        token = ctx.meta.progressToken if ctx.meta is not None else None
        sess = ctx.session

        async def progress(cur: float, total: float | None, msg: str) -> None:
            if token is not None:
                await sess.send_progress_notification(token, cur, total, message=msg,
                                                      related_request_id=ctx.request_id)

        async def elicit(message: str) -> bool:
            result = await sess.elicit(message, {"type": "object", "properties": {}},
                                       related_request_id=ctx.request_id)
            return result.action == "accept"

        hooks = calls.CallHooks(note=self.note, progress=progress if token is not None
                                else None,
                                screen="phone" if self.session.serial != VIRTUAL_SERIAL
                                else "virtual device's screen",
                                resources=self.resources,
                                max_read_bytes=self.options.max_read_bytes,
                                remind_s=self.options.remind_s)
        if self.options.elicit and self._client_elicits(sess):
            hooks.elicit = elicit
        return hooks

    async def call(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """One tools/call, journalled from start to finish."""
        bt = self.catalog.tools.get(name)
        call_id = f"mcp_{int(time.time() * 1000)}_{self.call_count}"
        self.call_count += 1
        client = self.client_name()
        if bt is None:
            known = ", ".join(sorted(self.catalog.tools)[:30])
            self.note("call_finished", {"call_id": call_id, "client": client, "tool": name,
                                        "is_error": True, "summary": "unknown tool"})
            return calls.text_result(f"UNKNOWN_TOOL: no tool named {name[:80]!r} on this "
                                     f"bridge. Tools: {known}", error=True)
        self.note("call_started", {"call_id": call_id, "client": client, "tool": name,
                                   "kind": bt.kind.value, "package": bt.package,
                                   "remote": bt.remote_name, "arguments": arguments,
                                   "allowed": bt.allowed})
        hooks = self._hooks()
        base_note = hooks.note
        hooks.note = lambda ev, d: base_note(ev, {"call_id": call_id, **d})
        request_id = None
        try:
            result, request_id = await self._dispatch(bt, arguments or {}, hooks)
        except InspectorError as exc:
            result = calls.text_result(f"{exc.code}: {exc.message}"
                                       + (f" ({exc.hint})" if exc.hint else ""), error=True)
        except cerr.ConsumerError as exc:
            result = calls.text_result(f"{exc.code}: {exc.message}"
                                       + (f" ({exc.hint})" if exc.hint else ""), error=True)
        except (asyncio.CancelledError, KeyboardInterrupt):
            self.note("call_finished", {"call_id": call_id, "client": client, "tool": name,
                                        "is_error": True, "summary": "cancelled by the client"})
            raise
        text = " ".join(c.text for c in result.content if isinstance(c, types.TextContent))
        self.note("call_finished", {"call_id": call_id, "client": client, "tool": name,
                                    "request_id": request_id, "is_error": bool(result.isError),
                                    "summary": one_line(text, 500)})
        if bt.kind == SourceKind.V2:
            self.session.spawner.spawn(self._check_revision(bt), "mcp-revision")
        return result

    async def _dispatch(self, bt: BridgedTool, args: dict[str, Any],
                        hooks: calls.CallHooks) -> tuple[types.CallToolResult, str | None]:
        if bt.kind == SourceKind.EXTENSION:
            decl = self.session.find_extension(bt.extension_id or bt.package)
            host = self.session.extension_host(decl)
            return await calls.call_extension(host, bt, args, hooks), None
        decl = _decl_for(self.session, bt)
        ps = self.session.provider_session(decl, v1=bt.kind == SourceKind.V1)
        if isinstance(ps, ProviderSession):
            result, ex = await calls.call_v2(ps, bt, args, hooks)
        else:
            result, ex = await calls.call_v1(ps, bt, args, hooks)
        return result, ex.request_id if ex is not None else None

    async def _check_revision(self, bt: BridgedTool) -> None:
        """A call may reveal a new revision (the engine re-lists on TOOLS_CHANGED)."""
        meta = (bt.tool.meta or {}).get("cetp-inspector/cetp", {})
        for ps in self.session.provider_sessions():
            if isinstance(ps, ProviderSession) and ps.authority == bt.authority \
                    and ps.tools is not None and ps.tools.revision != meta.get("revision"):
                await self.refresh()
                return

    def initialization_options(self) -> Any:
        return self.server.create_initialization_options(
            notification_options=NotificationOptions(tools_changed=True))


def _decl_for(session: Session, bt: BridgedTool) -> CetpDeclaration:
    for d in session.providers:
        if d.package == bt.package and d.authority == bt.authority:
            return d
    raise InspectorError("PROVIDER_GONE", f"{bt.package} ({bt.authority}) is no longer on "
                         "the device", hint="list the tools again (the bridge re-scans on "
                         "package changes)")


def _selected_providers(session: Session, options: BridgeOptions,
                        problems: list[str]) -> list[CetpDeclaration]:
    if options.providers:
        return [session.find_provider(p) for p in options.providers]
    out: list[CetpDeclaration] = []
    for d in session.providers:
        if not d.authority:
            problems.append(f"{d.package}: not bridged: it declares no authority")
        elif d.provider is None or (d.authority_owner and d.authority_owner != d.package):
            # no ContentProvider of this package serves the authority (§2.1): calls would
            # reach another app, or nothing
            why = d.problems[0] if d.problems else (f"no ContentProvider of {d.package} "
                                                    f"serves {d.authority}")
            problems.append(f"{d.package}: not bridged: {one_line(why, 300)}")
        elif not (d.supports_v2 or d.supports_v1):
            problems.append(f"{d.package}: not bridged: versions {list(d.versions)}")
        else:
            out.append(d)
    return out


def _selected_extensions(session: Session, options: BridgeOptions) -> list[ExtensionDeclaration]:
    if options.no_extensions:
        return []
    if options.extensions:
        return [session.find_extension(e) for e in options.extensions]
    return list(session.extensions)


async def build_catalog(session: Session, options: BridgeOptions) -> Catalog:
    """List every selected provider's tools and extension's functions as MCP tools."""
    cat = Catalog()
    decls = _selected_providers(session, options, cat.problems)
    exts = _selected_extensions(session, options)
    kinds = [("p" if d.supports_v2 else "v1", d.package, d.authority or "") for d in decls]
    kinds += [("x", e.id or e.package, e.package) for e in exts]
    bases = [naming.namespace(k, p, i, False) for k, p, i in kinds]
    allow = options.allow_mutations
    for (kind, pkg, ident), base in zip(kinds[: len(decls)], bases, strict=False):
        ns = naming.namespace(kind, pkg, ident, bases.count(base) > 1)
        decl = next(d for d in decls if d.authority == ident and d.package == pkg)
        try:
            ps = session.provider_session(decl)
            if isinstance(ps, ProviderSession):
                await calls.ensure_negotiated(ps)
                tools = await ps.list_tools()
                dialect = ps.info.schema_dialect if ps.info is not None else None
                cat.revisions[ident] = tools.revision
                for v in ps.tool_violations:
                    cat.problems.append(f"{pkg}: a tool descriptor is invalid and not "
                                        f"bridged: {one_line(str(v), 300)}")
                for t in tools.tools:
                    cat.add(map_v2(ns, pkg, ident, t, tools.revision, allow, dialect))
            elif isinstance(ps, V1ProviderSession):
                v1 = await ps.list_tools()
                for t1 in v1.tools:
                    cat.add(map_v1(ns, pkg, ident, t1, allow))
        except (InspectorError, cerr.ConsumerError) as exc:
            cat.problems.append(f"{pkg}: not bridged: {getattr(exc, 'code', '')}: "
                                f"{one_line(getattr(exc, 'message', str(exc)), 300)}")
        except Exception as exc:  # one broken provider must not take the others down
            log.exception("listing %s failed", pkg)
            cat.problems.append(f"{pkg}: not bridged: {type(exc).__name__}: "
                                f"{one_line(str(exc), 300)}")
    for (kind, ext_id, pkg), base in zip(kinds[len(decls):], bases[len(decls):], strict=False):
        ns = naming.namespace(kind, ext_id, pkg, bases.count(base) > 1)
        decl_e = next(e for e in exts if e.package == pkg)
        host = session.extension_host(decl_e)
        try:
            functions = await _functions(host, decl_e)
        except (InspectorError, cerr.ConsumerError) as exc:
            cat.problems.append(f"{pkg}: extension not bridged: {exc.code}: "
                                f"{one_line(exc.message, 300)}")
            continue
        if not functions:
            cat.problems.append(f"{pkg}: extension not bridged: its manifest lists no "
                                "valid function")
        bridge = decl_e.bridge.value if decl_e.bridge is not None else "none"
        for fn in functions:
            cat.add(map_extension(ns, ext_id, pkg, fn, bridge, allow))
    for line in cat.problems:
        log.warning("mcp bridge: %s", line)
    return cat


async def _functions(host: Any, decl: ExtensionDeclaration) -> list[Any]:
    """The manifest the AndyClaw host registers: the raw resource, else GET_MANIFEST."""
    if decl.manifest_resource_id is not None:
        fns = await host.read_manifest()
        if fns:
            return list(fns)
    from inspector.protocol import andyclaw as ac

    if decl.component(ac.Bridge.SERVICE) is not None:
        return list((await host.get_manifest()).functions)
    return []


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("cetp-inspector")
    except Exception:
        return "0"


def test_only_screen_from_env(serial: str, err: Any = None) -> bool | None:
    """TEST ONLY: the virtual screen's scripted answer from TEST_ONLY_SCREEN_ENV."""
    value = os.environ.get(TEST_ONLY_SCREEN_ENV, "").strip().lower()
    if not value:
        return None
    if serial != VIRTUAL_SERIAL:
        (err or sys.stderr).write(f"warning: {TEST_ONLY_SCREEN_ENV} is ignored: it only "
                                  "answers the virtual device's screen\n")
        return None
    (err or sys.stderr).write(f"warning: TEST ONLY: {TEST_ONLY_SCREEN_ENV}={value} answers "
                              "every confirmation on the virtual device's screen\n")
    return value == "approve"
