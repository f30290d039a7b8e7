"""Read-only commands: devices, providers, negotiate, info, tools, extensions, ext-manifest."""

from __future__ import annotations

from typing import Any

from inspector.cli.context import Ctx, android_profile_doc
from inspector.cli.output import line, pretty_value, table
from inspector.cli.terminal_text import safe_text
from inspector.consumer.engine import ProviderSession
from inspector.protocol.discovery import CetpDeclaration, ExtensionDeclaration
from inspector.protocol.exchange import Finding
from inspector.relay.api import HelloInfo
from inspector.relay.hello import permission_problems
from inspector.session.errors import ExitCode, InspectorError

STACK_LABEL = {"dual_stack": "v1+v2", "v1_only": "v1", "v2_only": "v2"}


def mask_token(token: str) -> str:
    """Enough to recognise a token, not enough to use it."""
    if len(token) <= 8:
        return "*" * len(token)
    return f"{token[:4]}…{token[-2:]} ({len(token)} chars)"


def provider_doc(d: CetpDeclaration) -> dict[str, Any]:
    return {
        "package": d.package,
        "label": d.label,
        "authority": d.authority,
        "service": d.service,
        "versions": list(d.versions),
        "stack": STACK_LABEL.get(d.stack, d.stack),
        "exported": d.exported,
        "permission": d.permission,
        # what Android enforces on ContentResolver.call (the relay must hold it)
        "provider_permission": d.provider.permission if d.provider else None,
        "uid": d.uid,
        "version_code": d.version_code,
        "same_package": d.same_package,
        "problems": list(d.problems),
    }


def extension_doc(e: ExtensionDeclaration) -> dict[str, Any]:
    return {
        "id": e.id,
        "name": e.name,
        "package": e.package,
        "enabled": e.enabled,
        "bridge": e.bridge.value if e.bridge else None,
        "bridges": [b.bridge.value for b in e.bridges],
        "manifest_resource_id": e.manifest_resource_id,
        "uid": e.uid,
        "problems": list(e.problems),
    }


def findings_doc(findings: list[Finding]) -> list[dict[str, Any]]:
    return [f.model_dump(mode="json") for f in findings]


def print_findings(ctx: Ctx, findings: list[Finding]) -> None:
    bad = [f for f in findings if not f.ok]
    for f in bad:
        line(f"  ! {f.level} {f.section} {safe_text(f.message, 300, one_line=True)}", ctx.out)


async def cmd_devices(ctx: Ctx) -> int:
    manager = ctx.device_manager()
    devices = await manager.refresh()
    try:  # what a command without -d would use, or why it would stop (issue 11)
        default, default_note = await manager.choose_default()
    except InspectorError as exc:
        default, default_note = None, f"{exc.message} ({exc.hint})" if exc.hint else exc.message
    ctx.serial = default or ""
    docs = [d.model_dump() for d in devices]
    if ctx.json:
        ctx.emit({"devices": docs, "default": default, "default_note": default_note or None,
                  "adb_error": manager.adb_error or None})
        return ExitCode.OK
    table([[("* " if d.serial == default else "  ") + d.serial, d.kind, d.state, d.model,
             str(d.sdk or ""), d.message] for d in devices],
          ["  SERIAL", "KIND", "STATE", "MODEL", "SDK", "NOTE"], ctx.out)
    for d in devices:
        if d.android_rules:
            line(f"{d.serial}: Android {d.release} (API {d.sdk}) rules in force: "
                 + ", ".join(d.android_rules), ctx.out)
        for diag in d.diagnostics:
            text = f"{diag.get('message', '')} {diag.get('hint', '')}".strip()
            line(f"  ! {safe_text(d.serial, 100, one_line=True)}: "
                 f"{safe_text(text, 600, one_line=True)}", ctx.out)
    if manager.adb_error:
        line(f"({safe_text(manager.adb_error, 300, one_line=True)})", ctx.err)
    if default_note:
        line(f"note: {safe_text(default_note, 600, one_line=True)}", ctx.err)
    return ExitCode.OK


def relay_permissions_doc(hello: HelloInfo) -> dict[str, Any]:
    """What the relay reported holding (hello, relay versionCode 3+); None lists = unknown."""
    return {
        "requested": None if hello.requested_permissions is None
        else list(hello.requested_permissions),
        "held": None if hello.held_permissions is None else list(hello.held_permissions),
        "missing": list(hello.missing_permissions),
        "problems": permission_problems(hello),
    }


async def cmd_providers(ctx: Ctx) -> int:
    session = await ctx.open_session()
    providers = session.providers
    hello = session.link.hello_info
    if ctx.json:
        ctx.emit({"providers": [provider_doc(d) for d in providers],
                  "relay_permissions": relay_permissions_doc(hello)})
        return ExitCode.OK
    for problem in permission_problems(hello):
        line(f"! relay: {safe_text(problem, 400, one_line=True)}", ctx.out)
    if not providers:
        line("no CETP providers found on this device", ctx.out)
        return ExitCode.OK
    table([[d.package, d.authority or "-", STACK_LABEL.get(d.stack, d.stack),
            "yes" if d.exported else "NO",
            (d.provider.permission if d.provider else None) or d.permission or "-",
            f"{len(d.problems)} problem(s)" if d.problems else ""] for d in providers],
          ["PACKAGE", "AUTHORITY", "VERSIONS", "EXPORTED", "PERMISSION", ""], ctx.out)
    for d in providers:
        for p in d.problems:
            line(f"  ! {safe_text(d.package, 100, one_line=True)}: "
                 f"{safe_text(p, 300, one_line=True)}", ctx.out)
    return ExitCode.OK


async def cmd_negotiate(ctx: Ctx) -> int:
    session = await ctx.open_session()
    decl = session.find_provider(ctx.args.provider)
    ps = session.provider_session(decl)
    if not isinstance(ps, ProviderSession):
        raise_v1_only(decl)
    neg = await ps.negotiate()
    r = neg.result
    doc = {
        "provider": provider_doc(decl),
        "negotiation": {
            "selected_version": r.selected_version,
            "provider_id": r.provider_id,
            "provider_name": r.provider_name,
            "session_token_masked": mask_token(r.session_token),
            "session_token_bytes": len(r.session_token.encode("utf-8")),
            "expires_at": r.expires_at,
            "capabilities": list(r.capabilities),
            "requested_capabilities": list(neg.requested_capabilities),
            "usable_capabilities": sorted(neg.capabilities),
            "limits": r.limits.model_dump(),
        },
        "findings": findings_doc(ps.findings),
    }
    if ctx.json:
        ctx.emit(doc)
        return ExitCode.OK
    out = ctx.out
    line(f"provider      {safe_text(r.provider_name, 200, one_line=True)} "
         f"({safe_text(r.provider_id, 200, one_line=True)})", out)
    line(f"version       {r.selected_version}", out)
    line(f"session token {safe_text(mask_token(r.session_token), 100, one_line=True)}"
         f"  expires {safe_text(r.expires_at or '-', 60, one_line=True)}", out)
    line("capabilities  " + safe_text(", ".join(r.capabilities) or "-", 300, one_line=True), out)
    for k, v in r.limits.model_dump().items():
        line(f"  {k:<28} {v}", out)
    print_findings(ctx, ps.findings)
    return ExitCode.OK


def raise_v1_only(decl: CetpDeclaration) -> None:
    from inspector.session.errors import InspectorError

    raise InspectorError("V1_ONLY", f"{decl.package} speaks CETP v1 only: there is nothing "
                         "to negotiate", hint="use `tools`/`call` (v1 needs no negotiation)",
                         exit_code=ExitCode.USAGE)


async def cmd_info(ctx: Ctx) -> int:
    session = await ctx.open_session()
    decl = session.find_provider(ctx.args.provider)
    ps = session.provider_session(decl, v1=ctx.args.v1)
    info = await ps.get_provider_info()
    data = info.model_dump(mode="json")
    if ctx.json:
        ctx.emit({"provider": provider_doc(decl), "protocol_version": ps.version, "info": data})
        return ExitCode.OK
    line(f"{safe_text(data.get('provider_name') or decl.package, 200, one_line=True)}"
         f"  (CETP v{ps.version})", ctx.out)
    if data.get("description"):
        line(safe_text(data["description"], 2000), ctx.out)
    scopes = data.get("scopes") or []
    if scopes:
        table([[s.get("name", ""), s.get("access", "-"), s.get("sensitivity", "-"),
                s.get("title") or s.get("description", "")] for s in scopes],
              ["SCOPE", "ACCESS", "SENSITIVITY", "TITLE"], ctx.out)
    return ExitCode.OK


def annotation_badges(a: Any) -> str:
    parts = [a.effect.value, f"risk={a.risk.value}"]
    if a.destructive:
        parts.append("destructive")
    if a.idempotent:
        parts.append("idempotent")
    if a.open_world:
        parts.append("open-world")
    parts.append(f"confirm={a.confirmation.value}")
    parts.append(a.execution.value)
    return " ".join(parts)


async def cmd_tools(ctx: Ctx) -> int:
    session = await ctx.open_session()
    decl = session.find_provider(ctx.args.provider)
    ps = session.provider_session(decl, v1=ctx.args.v1)
    tools = await ps.list_tools()
    if isinstance(ps, ProviderSession):
        doc: dict[str, Any] = {
            "provider": provider_doc(decl), "protocol_version": 2,
            "revision": tools.revision,
            "tools": [t.model_dump(mode="json") for t in tools.tools],
            "invalid_tools": [str(v) for v in ps.tool_violations],
            "findings": findings_doc(ps.findings),
        }
    else:
        doc = {"provider": provider_doc(decl), "protocol_version": 1, "revision": None,
               "tools": [t.model_dump(mode="json") for t in tools.tools],
               "invalid_tools": [], "findings": []}
    if ctx.json:
        ctx.emit(doc)
        return ExitCode.OK
    if isinstance(ps, ProviderSession):
        line(f"revision {safe_text(tools.revision, 200, one_line=True)}  (CETP v2)", ctx.out)
        table([[t.name, annotation_badges(t.annotations), ",".join(t.scopes),
                t.title or t.description] for t in tools.tools],
              ["TOOL", "ANNOTATIONS", "SCOPES", "TITLE"], ctx.out)
        for v in ps.tool_violations:
            line(f"  ! invalid tool: {safe_text(str(v), 300, one_line=True)}", ctx.out)
        print_findings(ctx, ps.findings)
    else:
        line("(CETP v1: read-only tools, no annotations)", ctx.out)
        table([[t.name, t.description] for t in tools.tools], ["TOOL", "DESCRIPTION"], ctx.out)
    return ExitCode.OK


async def cmd_extensions(ctx: Ctx) -> int:
    session = await ctx.open_session()
    exts = session.extensions
    if ctx.json:
        ctx.emit({"extensions": [extension_doc(e) for e in exts]})
        return ExitCode.OK
    if not exts:
        line("no AndyClaw extensions found on this device", ctx.out)
        return ExitCode.OK
    table([[e.id, e.name, e.package, e.bridge.value if e.bridge else "-",
            ",".join(b.bridge.value for b in e.bridges),
            f"{len(e.problems)} problem(s)" if e.problems else ""] for e in exts],
          ["ID", "NAME", "PACKAGE", "BRIDGE", "ALL BRIDGES", ""], ctx.out)
    return ExitCode.OK


async def cmd_ext_manifest(ctx: Ctx) -> int:
    from inspector.consumer.andyclaw_host import function_name_findings
    from inspector.protocol import andyclaw as ac

    session = await ctx.open_session()
    decl = session.find_extension(ctx.args.extension)
    host = session.extension_host(decl)
    raw = await host.read_manifest() if decl.manifest_resource_id is not None else []
    service = None
    if decl.component(ac.Bridge.SERVICE) is not None:
        service = await host.get_manifest()
    # the virtual device reports the relay's grants: requiredPermissions are then checked
    # (Android rule andyclaw_required_permissions), otherwise reported as unknown
    android = android_profile_doc(session)
    checks = host.security_checks(
        granted_permissions=android["relay_granted_permissions"] if android else None)
    # guide §3: names are unique across every installed extension
    others = [session.extension_host(d) for d in session.extensions]
    host.findings.extend(f for f in await function_name_findings(others, focus=decl.id)
                         if not f.ok and f not in host.findings)
    doc = {
        "extension": extension_doc(decl),
        "raw_manifest": [f.model_dump(mode="json") for f in raw],
        "service_manifest": service.model_dump(mode="json") if service else None,
        "findings": findings_doc(host.findings),
        "security_checks": [c.model_dump(mode="json") for c in checks],
    }
    if ctx.json:
        ctx.emit(doc)
        return ExitCode.OK
    line(f"{safe_text(decl.name, 200, one_line=True)} ({safe_text(decl.id, 200, one_line=True)})",
         ctx.out)
    line("raw resource functions:", ctx.out)
    line(pretty_value(doc["raw_manifest"]), ctx.out)
    if service is not None:
        line(f"service GET_MANIFEST ({service.form}):", ctx.out)
        line(pretty_value(service.names()), ctx.out)
    print_findings(ctx, host.findings)
    for c in checks:
        line(f"  {c.name:<22} {c.result.value:<8} {safe_text(c.message, 300, one_line=True)}",
             ctx.out)
    return ExitCode.OK
