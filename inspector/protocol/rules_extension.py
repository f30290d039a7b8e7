"""AndyClaw extension rules (the extension guide and the real host's checks): meta-data,
bridges, manifest drift, function names and schemas, the host's security checks. Pure
functions over `inspector.protocol.discovery` / `.andyclaw` models, like `rules`."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence

from inspector.protocol import schema as schemas
from inspector.protocol.andyclaw import ExtensionFunction, ServiceManifest
from inspector.protocol.discovery import ExtensionDeclaration
from inspector.protocol.exchange import Finding
from inspector.protocol.rules_base import ANDYCLAW, _rule, _show

R_EXT_META = _rule("extension.meta_data", "guide §2", "MUST",
                   "EXTENSION (boolean true), EXTENSION_ID, EXTENSION_NAME and "
                   "EXTENSION_MANIFEST are declared", ANDYCLAW)
R_EXT_BRIDGE = _rule("extension.bridge", "guide §4", "MUST",
                     "at least one exported, enabled bridge component", ANDYCLAW)
R_EXT_AUTHORITY = _rule("extension.provider_authority", "guide §4B", "MUST",
                        "the provider bridge's authority is <package>.andyclaw.extension "
                        "(the authority the host calls)", ANDYCLAW)
R_EXT_FORM = _rule("extension.manifest_form", "guide §4A", "SHOULD",
                   "GET_MANIFEST returns the same array form as the raw manifest", ANDYCLAW)
R_EXT_DRIFT = _rule("extension.manifest_drift", "guide §4A", "SHOULD",
                    "the raw manifest and the service's GET_MANIFEST list the same functions "
                    "with the same descriptions and schemas", ANDYCLAW)
R_EXT_INPUT_SCHEMA = _rule("extension.input_schema", "guide §3", "MUST",
                           "every function has a name, a description and an inputSchema that "
                           "is a valid JSON Schema", ANDYCLAW)
R_EXT_UNIQUE = _rule("extension.function_unique", "guide §3", "MUST",
                     "function names are unique across all installed extensions", ANDYCLAW)
R_EXT_SIGNED = _rule("extension.signed", "security model", "MUST",
                     "the extension APK has signing certificates (and matches a pinned hash)",
                     ANDYCLAW)
R_EXT_UID = _rule("extension.uid_isolation", "security model", "MUST",
                  "the extension runs under its own UID (no shared user id with the host)",
                  ANDYCLAW)
R_EXT_PERMS = _rule("extension.required_permissions", "security model", "MUST",
                    "the host holds every permission in requiredPermissions", ANDYCLAW)


def check_extension_declaration(ext: ExtensionDeclaration) -> list[Finding]:
    out = []
    missing = []
    if ext.flag_raw is not True:
        missing.append("EXTENSION (boolean true)")
    if not ext.id_declared:
        missing.append("EXTENSION_ID")
    if not ext.name_declared:
        missing.append("EXTENSION_NAME")
    if ext.manifest_resource_id is None:
        missing.append("EXTENSION_MANIFEST")
    out.append(R_EXT_META.finding(not missing, "meta-data complete" if not missing else
                                  "missing or wrong: " + ", ".join(missing), ext.package))
    usable = [b for b in ext.bridges if b.exported and b.enabled]
    if not ext.bridges:
        out.append(R_EXT_BRIDGE.fail("no bridge component", ext.package))
    elif ext.bridge is not None and not any(b.bridge == ext.bridge for b in usable):
        out.append(R_EXT_BRIDGE.fail(f"the chosen {ext.bridge.value} bridge is not exported "
                                     "and enabled", ext.package))
    else:
        out.append(R_EXT_BRIDGE.ok(f"{ext.bridge.value if ext.bridge else '?'} bridge",
                                   ext.package))
    prov = next((b for b in ext.bridges if b.bridge.value == "provider"), None)
    if prov is not None:
        ok = prov.authority == ext.host_authority
        out.append(R_EXT_AUTHORITY.finding(ok, f"authority {prov.authority}" + (
            "" if ok else f"; the host calls {ext.host_authority}"), ext.package))
    return out


def _fn_key(f: ExtensionFunction) -> str:
    return json.dumps({"d": f.description, "s": f.inputSchema, "a": f.requiresApproval,
                       "p": f.requiredPermissions}, sort_keys=True, ensure_ascii=False)


def check_manifest_drift(raw: Sequence[ExtensionFunction], service: ServiceManifest
                         ) -> list[Finding]:
    out = [R_EXT_FORM.finding(service.form == "array",
                              f"GET_MANIFEST returns the {service.form} form"
                              + ("" if service.form == "array" else
                                 " ({description, tools}) while the raw resource is an array"),
                              "manifest")]
    r = {f.name: f for f in raw}
    s = {f.name: f for f in service.functions}
    problems = []
    for n in sorted(set(r) - set(s)):
        problems.append(f"{n!r} only in the raw manifest")
    for n in sorted(set(s) - set(r)):
        problems.append(f"{n!r} only in GET_MANIFEST")
    for n in sorted(set(r) & set(s)):
        if _fn_key(r[n]) != _fn_key(s[n]):
            a, b = r[n], s[n]
            what = [k for k, x, y in (("description", a.description, b.description),
                                      ("inputSchema", a.inputSchema, b.inputSchema),
                                      ("requiresApproval", a.requiresApproval,
                                       b.requiresApproval),
                                      ("requiredPermissions", a.requiredPermissions,
                                       b.requiredPermissions)) if x != y]
            problems.append(f"{n!r} differs in {', '.join(what)}")
    if not problems:
        out.append(R_EXT_DRIFT.ok(f"{len(r)} functions agree", "manifest"))
    for p in problems:
        out.append(R_EXT_DRIFT.fail(p, "manifest"))
    return out


def check_function_names(functions_by_extension: Mapping[str, Sequence[ExtensionFunction]]
                         ) -> list[Finding]:
    """Function names unique within and across extensions (guide §3)."""
    owners: dict[str, list[str]] = {}
    for ext_id, fns in functions_by_extension.items():
        for f in fns:
            owners.setdefault(f.name, []).append(ext_id)
    out = []
    for name, exts in sorted(owners.items()):
        if len(exts) == 1:
            out.append(R_EXT_UNIQUE.ok(f"{name!r} ({exts[0]})", f"{exts[0]}:{name}"))
        else:
            where = ", ".join(sorted(set(exts)))
            out.append(R_EXT_UNIQUE.fail(f"function {_show(name)} is declared {len(exts)} times "
                                         f"({where})", f"{exts[0]}:{name}"))
    return out


def check_extension_security(
    ext: ExtensionDeclaration,
    *,
    host_uid: int | None = None,
    host_package: str | None = None,
    pinned_cert_sha256: str | None = None,
    functions: Sequence[ExtensionFunction] = (),
    host_granted: Iterable[str] | None = None,
) -> list[Finding]:
    """The host's three security checks, as far as the inputs allow."""
    out = []
    if not ext.cert_sha256:
        out.append(R_EXT_SIGNED.fail("no signing certificate reported", ext.package))
    elif pinned_cert_sha256 is not None:
        ok = pinned_cert_sha256.lower() in [c.lower() for c in ext.cert_sha256]
        out.append(R_EXT_SIGNED.finding(ok, "certificate matches the pinned hash" if ok else
                                        "no certificate matches the pinned signingCertHash",
                                        ext.package))
    else:
        out.append(R_EXT_SIGNED.ok(f"{len(ext.cert_sha256)} signing certificate(s)",
                                   ext.package))
    if host_uid is not None and ext.uid is not None:
        ok = ext.uid != host_uid
        out.append(R_EXT_UID.finding(ok, f"uid {ext.uid}" + ("" if ok else
                                                             f" is the host's uid {host_uid}"),
                                     ext.package))
    elif ext.shared_user_id:
        out.append(R_EXT_UID.fail(f"declares sharedUserId {ext.shared_user_id!r}",
                                  ext.package))
    if host_granted is not None:
        granted = set(host_granted)
        for f in functions:
            missing = [p for p in f.requiredPermissions if p not in granted]
            out.append(R_EXT_PERMS.finding(
                not missing, f"{f.name}: " + ("permissions granted" if not missing else
                                              "host lacks " + ", ".join(missing)),
                f"{ext.id}:{f.name}"))
    _ = host_package
    return out


# --------------------------------------------------------------------------------------
# aggregate
# --------------------------------------------------------------------------------------


def check_input_schemas(functions: Sequence[ExtensionFunction]) -> list[Finding]:
    """guide §3: each function's inputSchema is a valid JSON Schema (the agent builds its
    arguments from it; an invalid one makes the function unusable)."""
    out: list[Finding] = []
    for f in functions:
        problems = schemas.check_schema(f.inputSchema)
        if f.inputSchema.get("type", "object") != "object":
            problems.append(("/type", f"is {_show(f.inputSchema.get('type'))}; a function's "
                             "parameters are an object"))
        if problems:
            where, msg = problems[0]
            out.append(R_EXT_INPUT_SCHEMA.fail(
                f"function {_show(f.name)}: inputSchema is not a valid JSON Schema "
                f"({where or '/'}: {msg})", f"{f.name}.inputSchema"))
        else:
            out.append(R_EXT_INPUT_SCHEMA.ok(f"{_show(f.name)}: inputSchema is valid",
                                             f"{f.name}.inputSchema"))
    return out
