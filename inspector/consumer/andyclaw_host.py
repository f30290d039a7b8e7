"""AndyClaw host behaviour: the four bridges, GET_MANIFEST and the host's security checks.

Mirrors what the real AndyClaw host does (reference/real-implementations.md) so a developer
sees exactly what the host would see: the raw manifest resource (array form), the bound
service's GET_MANIFEST (often the object form — drift is flagged), execution through the
chosen bridge (service > provider > broadcast > activity) with the host's extras, and the
signature / UID isolation / requiredPermissions checks. Functions marked
`requiresApproval` are only run with the user's explicit local approval.
"""

from __future__ import annotations

from collections.abc import Collection
from enum import StrEnum
from typing import Any

from pydantic import BaseModel

from inspector.consumer import errors as cerr
from inspector.consumer.findings import finding, violation_finding
from inspector.consumer.recorder import Recorder
from inspector.protocol import andyclaw as ac
from inspector.protocol import rules
from inspector.protocol.cetp import ProtocolViolation
from inspector.protocol.discovery import ExtensionDeclaration
from inspector.protocol.exchange import Exchange, ExchangeKind, ExchangeStatus, Finding
from inspector.relay.api import RelayApi, RelayError

MAX_MANIFEST_BYTES = 1024 * 1024


class CheckResult(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    UNKNOWN = "unknown"


class SecurityCheck(BaseModel):
    name: str  # signature | uid_isolation | required_permissions
    result: CheckResult
    message: str


def _norm_cert(s: str) -> str:
    return s.replace(":", "").strip().lower()


def security_checks(
    decl: ExtensionDeclaration,
    *,
    host_uid: int | None,
    functions: Collection[ac.ExtensionFunction] = (),
    pinned_cert_sha256: str | None = None,
    granted_permissions: Collection[str] | None = None,
) -> list[SecurityCheck]:
    """The three checks the AndyClaw host performs by default, per extension."""
    out: list[SecurityCheck] = []
    certs = [_norm_cert(c) for c in decl.cert_sha256]
    if not certs:
        out.append(SecurityCheck(name="signature", result=CheckResult.FAIL,
                                 message="the APK reports no signing certificate"))
    elif pinned_cert_sha256 is not None:
        ok = _norm_cert(pinned_cert_sha256) in certs
        out.append(SecurityCheck(
            name="signature", result=CheckResult.PASS if ok else CheckResult.FAIL,
            message="signing certificate matches the pinned SHA-256" if ok else
            f"pinned SHA-256 {pinned_cert_sha256} matches none of {certs}"))
    else:
        out.append(SecurityCheck(name="signature", result=CheckResult.PASS,
                                 message=f"signed ({len(certs)} certificate(s)); no pinned hash"))
    if decl.uid is None or host_uid is None:
        out.append(SecurityCheck(name="uid_isolation", result=CheckResult.UNKNOWN,
                                 message="UID of the extension or the host is unknown"))
    elif decl.uid == host_uid:
        out.append(SecurityCheck(name="uid_isolation", result=CheckResult.FAIL,
                                 message=f"the extension runs as the host's UID {host_uid} "
                                 "(shared user id)"))
    else:
        note = (f"; it declares sharedUserId {decl.shared_user_id}"
                if decl.shared_user_id else "")
        out.append(SecurityCheck(name="uid_isolation", result=CheckResult.PASS,
                                 message=f"UID {decl.uid} differs from the host's {host_uid}"
                                 + note))
    needed = sorted({p for f in functions for p in f.requiredPermissions})
    if not needed:
        out.append(SecurityCheck(name="required_permissions", result=CheckResult.PASS,
                                 message="no function requires permissions"))
    elif granted_permissions is None:
        out.append(SecurityCheck(name="required_permissions", result=CheckResult.UNKNOWN,
                                 message=f"requires {needed}; the host's grants are unknown"))
    else:
        missing = [p for p in needed if p not in set(granted_permissions)]
        out.append(SecurityCheck(
            name="required_permissions",
            result=CheckResult.FAIL if missing else CheckResult.PASS,
            message=f"not granted to the host: {missing}" if missing else
            f"all granted: {needed}"))
    return out


def manifest_drift(raw: list[ac.ExtensionFunction],
                   service: ac.ServiceManifest) -> list[Finding]:
    """Raw resource vs GET_MANIFEST (form, function set, descriptions, schemas)."""
    return rules.check_manifest_drift(raw, service)


class ExtensionHost:
    """Calls one AndyClaw extension the way the host app does, recording every step."""

    def __init__(self, relay: RelayApi, decl: ExtensionDeclaration, *,
                 recorder: Recorder | None = None,
                 timeout_ms: int = ac.DEFAULT_TIMEOUT_MS) -> None:
        self.relay = relay
        self.decl = decl
        self.recorder = recorder or Recorder()
        self.timeout_ms = timeout_ms
        self.functions: list[ac.ExtensionFunction] = []
        self.service_manifest: ac.ServiceManifest | None = None
        self.findings: list[Finding] = []

    @property
    def package(self) -> str:
        return self.decl.package

    def _start(self, method: str, request: Any, tool: str | None = None) -> Exchange:
        return self.recorder.start(ExchangeKind.EXTENSION, self.decl.id, method,
                                   package=self.package, tool=tool, request=request)

    def _fail(self, x: Exchange, exc: RelayError) -> None:
        self.recorder.finish(x, ExchangeStatus.TRANSPORT_ERROR, error_code=exc.code,
                             error_message=exc.message, notes=[exc.hint] if exc.hint else [])

    async def read_manifest(self) -> list[ac.ExtensionFunction]:
        """The raw `EXTENSION_MANIFEST` resource (array form). The real host silently
        yields no functions on a parse failure; here the violation is recorded."""
        rid = self.decl.manifest_resource_id
        if rid is None:
            raise cerr.RequestRefused(cerr.WRONG_STATE,
                                      f"{self.package} declares no EXTENSION_MANIFEST resource")
        x = self._start("read_resource", {"package": self.package, "resource_id": rid,
                                          "max_bytes": MAX_MANIFEST_BYTES})
        try:
            res = await self.relay.read_resource(self.package, rid, MAX_MANIFEST_BYTES)
        except RelayError as exc:
            self._fail(x, exc)
            raise cerr.TransportFailure(exc.code, exc.message, exc.hint, x.id) from None
        try:
            self.functions = ac.parse_manifest_array(res.data)
        except ProtocolViolation as v:
            # the real host yields no functions at all, silently: say so as a MUST failure
            finding = rules.R_EXT_INPUT_SCHEMA.fail(
                f"{v} — the AndyClaw host parses the whole manifest or nothing, so it would "
                "register no function of this extension", "manifest")
            self.findings.append(finding)
            self.recorder.finish(x, ExchangeStatus.MALFORMED, response_bytes=len(res.data),
                                 error_code="MALFORMED_MANIFEST", error_message=str(v),
                                 findings=[violation_finding(v, "andyclaw"), finding],
                                 notes=["the AndyClaw host would register no functions"])
            self.functions = []
            return []
        schema_findings = rules.check_input_schemas(self.functions)
        self.findings.extend(f for f in schema_findings if not f.ok)
        self.recorder.finish(x, ExchangeStatus.SUCCESS, response_bytes=len(res.data),
                             decoded=[f.model_dump() for f in self.functions],
                             findings=schema_findings)
        return self.functions

    async def get_manifest(self) -> ac.ServiceManifest:
        """Bound service GET_MANIFEST (transaction 1); flags drift from the raw resource."""
        if self.decl.component(ac.Bridge.SERVICE) is None:
            raise cerr.RequestRefused(cerr.WRONG_STATE,
                                      f"{self.package} has no bound-service bridge, so no "
                                      "GET_MANIFEST; its manifest is the raw resource only")
        x = self._start("service:GET_MANIFEST", {"action": ac.ACTION_EXTENSION_SERVICE,
                                                 "code": ac.TRANSACTION_GET_MANIFEST})
        try:
            tr = await self.relay.bind_transact(self.package, ac.ACTION_EXTENSION_SERVICE,
                                                ac.DESCRIPTOR, ac.TRANSACTION_GET_MANIFEST, [],
                                                self.timeout_ms)
        except RelayError as exc:
            self._fail(x, exc)
            raise cerr.TransportFailure(exc.code, exc.message, exc.hint, x.id) from None
        if tr.exception is not None:
            msg = f"{tr.exception.get('class')}: {tr.exception.get('message')}"
            self.recorder.finish(x, ExchangeStatus.PROVIDER_ERROR, error_code="EXCEPTION",
                                 error_message=msg)
            raise cerr.MalformedReply("EXCEPTION", msg, exchange_id=x.id)
        try:
            manifest = ac.parse_service_manifest(tr.reply or "")
        except ProtocolViolation as v:
            self.recorder.finish(x, ExchangeStatus.MALFORMED, response=tr.reply,
                                 error_code="MALFORMED_MANIFEST", error_message=str(v),
                                 findings=[violation_finding(v, "andyclaw")])
            raise cerr.MalformedReply("MALFORMED_MANIFEST", str(v), exchange_id=x.id) from None
        self.service_manifest = manifest
        drift = manifest_drift(self.functions, manifest) if self.functions else []
        self.findings.extend(f for f in drift if not f.ok)
        self.recorder.finish(x, ExchangeStatus.SUCCESS, response=tr.reply,
                             decoded={"form": manifest.form,
                                      "functions": manifest.names()}, findings=drift)
        return manifest

    def function(self, name: str) -> ac.ExtensionFunction | None:
        return next((f for f in self.functions if f.name == name), None)

    async def execute(self, function: str, params: Any, *, bridge: ac.Bridge | None = None,
                      approved: bool = False) -> ac.ExtensionReply:
        """Execute through `bridge` (default: the one the host picks by priority)."""
        chosen = bridge or self.decl.bridge
        if chosen is None:
            raise cerr.RequestRefused(cerr.WRONG_STATE, f"{self.package} has no bridge")
        if self.decl.component(chosen) is None:
            declared = ", ".join(b.bridge.value for b in self.decl.bridges) or "none"
            raise cerr.RequestRefused(cerr.WRONG_STATE,
                                      f"{self.package} declares no {chosen.value} bridge "
                                      f"(declared: {declared})")
        fn = self.function(function)
        if fn is not None and fn.requiresApproval and not approved:
            msg = (f"{function} has requiresApproval=true: approve this call explicitly "
                   "(the host asks the user every time)")
            self.recorder.refused(ExchangeKind.EXTENSION, self.decl.id, chosen.value,
                                  "APPROVAL_REQUIRED", msg, package=self.package,
                                  tool=function)
            raise cerr.RequestRefused("APPROVAL_REQUIRED", msg)
        params_text = ac.params_json(params)
        if chosen == ac.Bridge.SERVICE:
            return await self._service(function, params_text)
        if chosen == ac.Bridge.PROVIDER:
            return await self._provider(function, params_text)
        if chosen == ac.Bridge.BROADCAST:
            return await self._broadcast(function, params_text)
        return await self._activity(function, params_text)

    def _finish_reply(self, x: Exchange, reply: ac.ExtensionReply, response: Any) -> None:
        status = (ExchangeStatus.SUCCESS if reply.outcome in ("result", "launched")
                  else ExchangeStatus.TRANSPORT_ERROR if reply.outcome == "timeout"
                  else ExchangeStatus.MALFORMED if reply.outcome == "empty"
                  else ExchangeStatus.PROVIDER_ERROR)
        findings = [finding("andyclaw.reply", "guide §4", p, level="SHOULD")
                    for p in reply.problems]
        if reply.in_band_error:
            findings.append(finding("andyclaw.reply.in_band_error", "guide §4",
                                    f"error inside a successful reply: {reply.in_band_error}",
                                    level="INFO"))
        self.recorder.finish(
            x, status, response=response, decoded=reply.model_dump(mode="json"),
            error_code=None if reply.ok else reply.outcome.upper(),
            error_message=reply.error or reply.in_band_error or reply.exception_message,
            findings=findings)

    async def _service(self, function: str, params: str) -> ac.ExtensionReply:
        strings = ac.execute_strings(function, params)
        x = self._start("service", {"action": ac.ACTION_EXTENSION_SERVICE,
                                    "descriptor": ac.DESCRIPTOR,
                                    "code": ac.TRANSACTION_EXECUTE, "strings": strings},
                        function)
        try:
            tr = await self.relay.bind_transact(self.package, ac.ACTION_EXTENSION_SERVICE,
                                                ac.DESCRIPTOR, ac.TRANSACTION_EXECUTE, strings,
                                                self.timeout_ms)
        except RelayError as exc:
            self._fail(x, exc)
            raise cerr.TransportFailure(exc.code, exc.message, exc.hint, x.id) from None
        reply = ac.reply_from_transact(tr.exception, tr.reply)
        self._finish_reply(x, reply, tr.reply)
        return reply

    async def _provider(self, function: str, params: str) -> ac.ExtensionReply:
        authority = ac.host_authority(self.package)
        extras = ac.provider_extras(function, params)
        x = self.recorder.start(ExchangeKind.EXTENSION, self.decl.id, "provider",
                                package=self.package, tool=function, request=extras,
                                notes=[f"content://{authority} execute"])
        declared = self.decl.component(ac.Bridge.PROVIDER)
        if declared is not None and declared.authority and declared.authority != authority:
            x.findings.append(finding(
                "andyclaw.provider.authority", "guide §4B",
                f"declared authority {declared.authority} differs from {authority}, which is "
                "what the host calls", level="SHOULD"))
        try:
            bundle = await self.relay.call(authority, ac.PROVIDER_METHOD_EXECUTE, extras,
                                           timeout_ms=self.timeout_ms)
        except RelayError as exc:
            self._fail(x, exc)
            raise cerr.TransportFailure(exc.code, exc.message, exc.hint, x.id) from None
        reply = ac.reply_from_provider(bundle)
        self._finish_reply(x, reply, bundle)
        return reply

    async def _broadcast(self, function: str, params: str) -> ac.ExtensionReply:
        reply_action = ac.response_action(self.package)
        extras = ac.broadcast_extras(function, params)
        x = self.recorder.start(ExchangeKind.EXTENSION, self.decl.id, "broadcast",
                                package=self.package, tool=function, request=extras,
                                notes=[f"reply on {reply_action}"])
        try:
            br = await self.relay.broadcast(self.package, ac.ACTION_EXTENSION_BROADCAST, extras,
                                            reply_action, self.timeout_ms)
        except RelayError as exc:
            self._fail(x, exc)
            raise cerr.TransportFailure(exc.code, exc.message, exc.hint, x.id) from None
        reply = ac.reply_from_broadcast(br.reply, br.timed_out, reply_action, self.timeout_ms,
                                        target_stopped=br.target_stopped)
        if br.timed_out and br.detail:  # the Java relay says why (e.g. the target is stopped)
            reply = reply.model_copy(update={"problems": [*reply.problems, br.detail[:500]]})
        self._finish_reply(x, reply, br.reply)
        return reply

    async def _activity(self, function: str, params: str) -> ac.ExtensionReply:
        extras = ac.activity_extras(function, params)
        x = self.recorder.start(ExchangeKind.EXTENSION, self.decl.id, "activity",
                                package=self.package, tool=function, request=extras)
        try:
            st = await self.relay.start_activity(self.package, ac.ACTION_EXTENSION_ACTION, extras)
        except RelayError as exc:
            self._fail(x, exc)
            raise cerr.TransportFailure(exc.code, exc.message, exc.hint, x.id) from None
        reply = ac.reply_from_activity(st.launched, st.component)
        self._finish_reply(x, reply, None)
        return reply

    def security_findings(self, *, pinned_cert_sha256: str | None = None,
                          granted_permissions: Collection[str] | None = None) -> list[Finding]:
        """The same checks as rule findings (`extension.signed`, `.uid_isolation`, …)."""
        return rules.check_extension_security(
            self.decl, host_uid=self._host_uid(), pinned_cert_sha256=pinned_cert_sha256,
            functions=self.functions, host_granted=granted_permissions)

    def _host_uid(self) -> int | None:
        try:
            return self.relay.hello_info.caller_uid
        except (AttributeError, RelayError):
            return None

    def security_checks(self, *, pinned_cert_sha256: str | None = None,
                        granted_permissions: Collection[str] | None = None
                        ) -> list[SecurityCheck]:
        return security_checks(self.decl, host_uid=self._host_uid(), functions=self.functions,
                               pinned_cert_sha256=pinned_cert_sha256,
                               granted_permissions=granted_permissions)


async def function_name_findings(hosts: list[ExtensionHost], *, focus: str | None = None
                                 ) -> list[Finding]:
    """guide §3: function names are unique across all installed extensions. Reads each
    extension's raw manifest (once) and judges the names together; with `focus` (an
    extension id) only the findings about that extension are returned."""
    by_ext: dict[str, list[ac.ExtensionFunction]] = {}
    for h in hosts:
        if h.decl.manifest_resource_id is None:
            continue
        if not h.functions:
            try:
                await h.read_manifest()
            except (cerr.ConsumerError, RelayError):
                continue  # its own exchange says why; it contributes no names
        by_ext[h.decl.id] = list(h.functions)
    found = rules.check_function_names(by_ext)
    if focus is not None:
        found = [f for f in found if focus in f.message or f.path.startswith(focus + ":")]
    return found
