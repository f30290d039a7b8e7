"""Conformance for AndyClaw extensions: the extension guide's MUSTs and what the real host
does (`seeds/andyclaw-extension-guide.txt`, `reference/real-implementations.md`), with the
same report, requirement matrix and planted faults as the CETP suite.

The static checks apply the `extension.*` rules (`inspector.protocol.rules_extension`) to the
declaration, the raw manifest, GET_MANIFEST and every installed extension's function
names; the dynamic check calls functions through the bridge the host would use — only the
functions named in `allow_calls` (an extension function may act), never one with
requiresApproval=true.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from inspector.conformance import argsgen
from inspector.conformance.model import (
    Category,
    CheckResult,
    ConformanceReport,
    ConformanceSetup,
    Evidence,
    Outcome,
    RequirementRef,
    TargetInfo,
)
from inspector.consumer import errors as cerr
from inspector.consumer.andyclaw_host import ExtensionHost, function_name_findings
from inspector.consumer.recorder import Recorder
from inspector.protocol import andyclaw as ac
from inspector.protocol import rules as R
from inspector.protocol.discovery import discover
from inspector.protocol.exchange import Finding
from inspector.relay.api import RelayApi, RelayError

GUIDE = "guide"


@dataclass(frozen=True)
class ExtRequirement:
    id: str
    section: str
    keyword: str
    quote: str
    checks: tuple[str, ...] = ()
    unobservable: str = ""


E = ExtRequirement
EXT_REQUIREMENTS: tuple[ExtRequirement, ...] = (
    E("E-001", "guide §2", "MUST", "EXTENSION (boolean true), EXTENSION_ID, EXTENSION_NAME and "
      "EXTENSION_MANIFEST are declared as application meta-data", ("ext.meta_data",)),
    E("E-002", "guide §3", "MUST", "each function has name, description and inputSchema (a "
      "JSON Schema describing the parameters)", ("ext.input_schema",)),
    E("E-003", "guide §3", "MUST", "Function names must be globally unique across all "
      "installed extensions", ("ext.function_unique",)),
    E("E-004", "guide §4", "MUST", "at least one bridge component, exported and enabled "
      "(android:exported=\"true\")", ("ext.bridge",)),
    E("E-005", "guide §4B", "MUST", "the provider bridge's authority is "
      "${applicationId}.andyclaw.extension (the authority the host builds)",
      ("ext.provider_authority",)),
    E("E-006", "guide §4", "MUST", "a call through the bridge answers with a result or an "
      "error (the service's descriptor is org.ethereumphone.andyclaw.IExtension; a "
      "receiver replies with an Intent on the request's response_action)",
      ("ext.calls_answer",)),
    E("E-007", "guide §4A", "SHOULD", "GET_MANIFEST returns the same functions as the raw "
      "manifest", ("ext.manifest_drift",)),
    E("E-008", "security model", "MUST", "the APK has signing certificates (matching a pinned "
      "signingCertHash)", ("ext.signed",)),
    E("E-009", "security model", "MUST", "the extension runs under its own UID",
      ("ext.uid_isolation",)),
    E("E-010", "guide §3", "MUST", "requiresApproval: the user must explicitly approve each "
      "invocation", unobservable="approval is the host's duty; the inspector refuses such "
      "calls unless approved, and an extension cannot be seen to enforce it"),
)

EXT_CHECKS: dict[str, tuple[str, str, str]] = {
    # id → title, section, level
    "ext.meta_data": ("discovery meta-data is complete and typed", "guide §2", "MUST"),
    "ext.input_schema": ("every function has a valid inputSchema", "guide §3", "MUST"),
    "ext.function_unique": ("function names are unique across extensions", "guide §3",
                            "MUST"),
    "ext.bridge": ("a reachable bridge: exported, enabled", "guide §4", "MUST"),
    "ext.provider_authority": ("the provider bridge uses <package>.andyclaw.extension",
                               "guide §4B", "MUST"),
    "ext.calls_answer": ("calls through the bridge answer (result or error)", "guide §4",
                         "MUST"),
    "ext.manifest_drift": ("GET_MANIFEST agrees with the raw manifest", "guide §4A",
                           "SHOULD"),
    "ext.signed": ("the APK is signed", "security model", "MUST"),
    "ext.uid_isolation": ("the extension has its own UID", "security model", "MUST"),
}
_RULE_OF = {"ext.meta_data": "extension.meta_data", "ext.input_schema": "extension.input_schema",
            "ext.function_unique": "extension.function_unique", "ext.bridge": "extension.bridge",
            "ext.provider_authority": "extension.provider_authority",
            "ext.manifest_drift": "extension.manifest_drift", "ext.signed": "extension.signed",
            "ext.uid_isolation": "extension.uid_isolation"}


def ext_coverage() -> tuple[int, int]:
    """(MUST statements with a check, MUST statements) of the extension matrix."""
    musts = [r for r in EXT_REQUIREMENTS if r.keyword == "MUST"]
    return len([r for r in musts if r.checks]), len(musts)


def _result(cid: str, outcome: Outcome, message: str, *, findings: Iterable[Finding] = (),
            xs: Iterable[str] = (), observed: dict[str, Any] | None = None,
            sent: Any = None, received: Any = None) -> CheckResult:
    title, section, level = EXT_CHECKS[cid]
    if outcome == Outcome.FAIL and level != "MUST":
        outcome = Outcome.WARNING
    reqs = [RequirementRef(id=r.id, section=r.section, keyword=r.keyword, quote=r.quote)
            for r in EXT_REQUIREMENTS if cid in r.checks]
    return CheckResult(check_id=cid, title=title, section=section, level=level,  # type: ignore[arg-type]
                       category=Category.EXTENSION, outcome=outcome, message=message,
                       evidence=Evidence(exchange_ids=list(dict.fromkeys(xs)),
                                         observed=observed or {}, findings=list(findings)),
                       requirements=reqs, sent=sent, received=received)


def _from_findings(cid: str, fs: list[Finding], none: str) -> CheckResult:
    rule = _RULE_OF[cid]
    mine = [f for f in fs if f.rule_id == rule]
    bad = [f for f in mine if not f.ok]
    if bad:
        return _result(cid, Outcome.FAIL, "; ".join(f.message for f in bad[:4]), findings=mine)
    if mine:
        return _result(cid, Outcome.PASS, f"{len(mine)} item(s) conform", findings=mine)
    return _result(cid, Outcome.NOT_APPLICABLE, none)


async def run_extension_conformance(relay: RelayApi, extension: str, *,
                                    allow_calls: Iterable[str] = (),
                                    call_args: dict[str, Any] | None = None,
                                    recorder: Recorder | None = None,
                                    timeout_ms: int = ac.DEFAULT_TIMEOUT_MS
                                    ) -> ConformanceReport:
    """Judge one extension (id or package) against the extension matrix."""
    rec = recorder or Recorder()
    found = discover(await relay.discover())
    decl = next((e for e in found.extensions if extension in (e.id, e.package)), None)
    if decl is None:
        raise cerr.RequestRefused("NOT_FOUND", f"no AndyClaw extension {extension!r}")
    report = ConformanceReport(started_ms=time.time() * 1000, target=TargetInfo(
        package=decl.package, provider_id=decl.id, provider_name=decl.name,
        stack="andyclaw_extension"), setup=ConformanceSetup(allow_mutations=list(allow_calls)))
    hosts = {e.id: ExtensionHost(relay, e, recorder=rec, timeout_ms=timeout_ms)
             for e in found.extensions}
    host = hosts[decl.id]
    static = R.check_extension_declaration(decl)
    res = report.results
    res.append(_from_findings("ext.meta_data", static, "no meta-data"))
    raw: list[ac.ExtensionFunction] = []
    if decl.manifest_resource_id is not None:
        try:
            raw = await host.read_manifest()
        except (cerr.ConsumerError, RelayError) as exc:
            res.append(_result("ext.input_schema", Outcome.ERROR, f"cannot read the manifest: "
                               f"{exc}"))
    if not any(r.check_id == "ext.input_schema" for r in res):
        res.append(_from_findings("ext.input_schema", host.findings + R.check_input_schemas(raw),
                                  "no manifest resource (see ext.meta_data)"))
    names = await function_name_findings(list(hosts.values()), focus=decl.id)
    res.append(_from_findings("ext.function_unique", names, "no functions"))
    res.append(_from_findings("ext.bridge", static, "no bridge"))
    res.append(_from_findings("ext.provider_authority", static, "no provider bridge"))
    res.append(await _calls(host, raw, set(allow_calls), call_args or {}))
    drift: list[Finding] = []
    if decl.component(ac.Bridge.SERVICE) is not None and raw:
        try:
            await host.get_manifest()
            drift = [f for x in rec.exchanges[-1:] for f in x.findings]
        except (cerr.ConsumerError, RelayError) as exc:
            drift = [R.R_EXT_DRIFT.fail(f"GET_MANIFEST failed: {exc}", "manifest")]
    res.append(_from_findings("ext.manifest_drift", drift, "no bound-service bridge"))
    sec = host.security_findings()
    res.append(_from_findings("ext.signed", sec, "no signature information"))
    res.append(_from_findings("ext.uid_isolation", sec, "the UIDs are unknown"))
    report.finished_ms = time.time() * 1000
    report.finalize()
    return report


async def _calls(host: ExtensionHost, raw: list[ac.ExtensionFunction], allowed: set[str],
                 call_args: dict[str, Any]) -> CheckResult:
    """Call each allowed function once through the host's bridge: a result or an error must
    come back (a timeout on the broadcast bridge means the receiver ignores
    response_action)."""
    fns = [f for f in raw if f.name in allowed and not f.requiresApproval]
    if host.decl.bridge is None:
        return _result("ext.calls_answer", Outcome.NOT_APPLICABLE, "no bridge")
    if not fns:
        return _result("ext.calls_answer", Outcome.NEEDS_SETUP,
                       "name the functions the suite may call (--allow-calls); an extension "
                       "function may act, and requiresApproval functions are never called")
    bad: list[str] = []
    calls: list[dict[str, Any]] = []
    xs: list[str] = []
    for f in fns:
        args = call_args.get(f.name, argsgen.valid_args(f.inputSchema) or {})
        before = len(host.recorder.exchanges)
        try:
            reply = await host.execute(f.name, args)
        except (cerr.ConsumerError, RelayError) as exc:
            bad.append(f"{f.name}: {exc}")
            continue
        finally:
            xs += [x.id for x in host.recorder.exchanges[before:]]
        got = {"outcome": reply.outcome, "result": reply.result, "error": reply.error,
               "problems": reply.problems}
        calls.append({"function": f.name, "bridge": reply.bridge.value, "args": args,
                      "reply": got})
        if reply.outcome in ("timeout", "exception", "empty", "not_launched"):
            bad.append(f"{f.name} via {reply.bridge.value}: {reply.outcome}"
                       + (f" — {reply.problems[0]}" if reply.problems else ""))
    if bad:
        last = calls[-1] if calls else None
        return _result("ext.calls_answer", Outcome.FAIL, "; ".join(bad[:3]), xs=xs,
                       observed={"calls": calls},
                       sent={"function": last["function"], "args": last["args"]} if last
                       else None, received=last["reply"] if last else None)
    return _result("ext.calls_answer", Outcome.PASS, f"{len(calls)} call(s) answered", xs=xs,
                   observed={"calls": calls})
