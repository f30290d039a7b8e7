"""`conformance PROVIDER`: the conformance suite (`inspector.conformance`) from the shell.

The plan is printed first (to stderr, or as `plan` in `--json`); `--plan` stops there.
Mutating tools are invoked only when named in `--allow-mutations` (or the setup file).
Exit code 0 when every MUST check passed or did not apply, 1 otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspector.cli.context import Ctx, split_list
from inspector.cli.output import line, print_json
from inspector.cli.terminal_text import safe_text
from inspector.session.devices import VIRTUAL_SERIAL
from inspector.session.errors import AmbiguousError, ExitCode, InspectorError


def _setup(path: str | None) -> Any:
    if not path:
        return None
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InspectorError("BAD_SETUP", f"cannot read the setup file {path}: {exc}",
                             hint="a JSON object (docs/conformance.md, ConformanceSetup)") \
            from None


def _provider(ctx: Ctx, session: Any, name: str) -> Any:
    """The provider to run against. A package declaring several CETP services is one
    target (the discovery checks judge every service of the package): its own authority's
    service is chosen rather than an ambiguity error."""
    try:
        return session.find_provider(name)
    except AmbiguousError:
        same = [d for d in session.providers if d.package == name]
        if not same:
            raise
        own = [d for d in same if (d.authority or "").startswith(name + ".")]
        decl = (own or same)[0]
        ctx.err.write(f"conformance: {name} declares {len(same)} CETP services; running "
                      f"against {safe_text(decl.key, 200, one_line=True)} (discovery checks "
                      "judge all of them)\n")
        return decl


async def _extension(ctx: Ctx, session: Any, name: str) -> int:
    """`conformance EXTENSION`: the AndyClaw extension suite (inspector.conformance.extensions);
    functions are called only when named in --allow-calls."""
    from inspector.conformance.extensions import run_extension_conformance

    report = await run_extension_conformance(session.relay, name,
                                             allow_calls=split_list(ctx.args.allow_calls) or [],
                                             recorder=session.recorder)
    if ctx.args.report:
        Path(ctx.args.report).write_text(json.dumps(report.model_dump(mode="json"), indent=2),
                                         encoding="utf-8")
    if ctx.json:
        full = ctx.base_doc(report.passed)
        full["report"] = report.model_dump(mode="json")
        if not report.passed:
            full["error"] = {"code": "NOT_CONFORMANT", "message": report.verdict(),
                             "retryable": False, "hint": "", "details": None}
        print_json(full, ctx.out)
    else:
        line(safe_text(report.text(), 100_000), ctx.out)
    return ExitCode.OK if report.passed else ExitCode.PROVIDER_ERROR


def _coverage(ctx: Ctx) -> int:
    """`--coverage`: the requirement matrix's figure (no device needed)."""
    from inspector.conformance.extensions import ext_coverage
    from inspector.conformance.requirements import REQUIREMENTS, coverage

    cov = coverage()
    ext_checked, ext_musts = ext_coverage()
    if ctx.json:
        doc = ctx.base_doc(True)
        doc["coverage"] = {"musts": cov.musts, "musts_checked": cov.musts_checked,
                           "must_percent": round(cov.must_percent, 1),
                           "shoulds": cov.shoulds, "shoulds_checked": cov.shoulds_checked,
                           "unobservable": list(cov.unobservable),
                           "requirements": len(REQUIREMENTS),
                           "extension_musts": ext_musts,
                           "extension_musts_checked": ext_checked}
        print_json(doc, ctx.out)
    else:
        line(cov.text(), ctx.out)
        line(f"AndyClaw extension MUST statements: {ext_checked}/{ext_musts} have a check "
             "(inspector.conformance.extensions)", ctx.out)
    return ExitCode.OK


def _reference(package: str, setup: Any, ttl_ms: int | None) -> Any:
    """The preset scenarios for a reference provider, with the file's fields on top."""
    from inspector.conformance.presets import reference_setup

    ref = reference_setup(package, confirmation_ttl_ms=ttl_ms)
    if ref is None:
        raise InspectorError("BAD_SETUP", f"there is no reference setup for {package}",
                             hint="--reference-setup knows com.example.pricealerts; write a "
                             "--setup FILE for other providers (docs/conformance.md)",
                             exit_code=ExitCode.USAGE)
    doc = ref.model_dump(mode="json", exclude_none=True)
    doc.update(setup or {})
    return doc


def _short_confirmations(session: Any, package: str, ttl_ms: int) -> None:
    """On the in-process virtual device, give the provider this confirmation lifetime, so
    confirmation.expired_token waits `ttl_ms` rather than the stock 300 s."""
    from inspector.virtual.callers import virtual_device_of

    if not 0 < ttl_ms <= 120_000:
        raise InspectorError("USAGE", f"--confirmation-ttl-ms must be 1…120000, got {ttl_ms}",
                             exit_code=ExitCode.USAGE)
    device = virtual_device_of(session)
    if device is None:
        return  # a phone: the value only tells the suite the provider's lifetime
    app = device.apps.get(package)
    if app is not None and hasattr(app, "confirmation_ttl_ms"):
        app.confirmation_ttl_ms = ttl_ms


async def cmd_conformance(ctx: Ctx) -> int:
    from inspector.conformance.junit import write_junit
    from inspector.conformance.runner import (
        ConformanceError,
        ProgressEvent,
        plan_conformance,
        run_conformance,
    )
    from inspector.virtual.callers import second_caller_connector

    a = ctx.args
    if a.coverage:
        return _coverage(ctx)
    if not a.provider:
        raise InspectorError("USAGE", "conformance needs a PROVIDER (package, provider_id or "
                             "authority)", hint="cetp-inspector providers lists them",
                             exit_code=ExitCode.USAGE)
    session = await ctx.open_session()
    if not any(d.package == a.provider for d in session.providers) and any(
            a.provider in (e.id, e.package) for e in session.extensions):
        return await _extension(ctx, session, a.provider)
    decl = _provider(ctx, session, a.provider)
    setup = _setup(a.setup)
    if a.reference_setup:
        setup = _reference(decl.package, setup, a.confirmation_ttl_ms)
    elif a.confirmation_ttl_ms is not None:
        setup = {**(setup or {}), "resume_token_ttl_ms": a.confirmation_ttl_ms}
    # the in-process virtual device takes the lifetime for the run (the option, or the
    # setup file's resume_token_ttl_ms), so confirmation.expired_token can wait it out
    ttl = a.confirmation_ttl_ms
    if ttl is None and isinstance(setup, dict) and isinstance(setup.get("resume_token_ttl_ms"),
                                                              int):
        ttl = setup["resume_token_ttl_ms"]
    if ttl is not None:
        _short_confirmations(session, decl.package, ttl)
    kwargs: dict[str, Any] = {
        # the in-process virtual device can act as another app (caller.* checks); else None
        "second_caller": second_caller_connector(session),
        "setup": setup,
        "allow_mutations": split_list(a.allow_mutations) or None,
        "select": split_list(a.select),
        "skip": split_list(a.skip),
    }
    try:
        if a.plan:
            plan = await plan_conformance(session, decl, **kwargs)
            if ctx.json:
                ctx.emit({"plan": plan.model_dump(mode="json")})
            else:
                line(safe_text(plan.text(), 50_000), ctx.out)
            return ExitCode.OK

        async def restart(package: str) -> None:
            if session.serial == VIRTUAL_SERIAL:
                await session.relay.force_stop(package)
                return
            src = ctx.device_manager()._adb_source()
            layer = getattr(src, "layer", None)
            if layer is None:
                raise InspectorError("NO_ADB", "cannot restart the provider without adb",
                                     exit_code=ExitCode.DEVICE)
            await layer.force_stop(session.serial, package)

        async def prompt(message: str) -> None:
            ctx.err.write(f"conformance: {safe_text(message, 1000)}\n")
            ctx.err.flush()

        def progress(ev: ProgressEvent) -> None:
            if ev.kind == "plan" and ev.plan is not None and not ctx.json:
                ctx.err.write(safe_text(ev.plan.text(), 50_000) + "\n")
            elif ev.kind == "result" and ev.result is not None:
                ctx.err.write(f"[{ev.index + 1}/{ev.total}] {ev.result.outcome.value:<14} "
                              f"{safe_text(ev.check_id, 100, one_line=True)}\n")
            ctx.err.flush()

        report = await run_conformance(session, decl, progress=progress, restart=restart,
                                       human_prompt=prompt, **kwargs)
    except ConformanceError as exc:
        raise InspectorError("CONFORMANCE", str(exc), hint="see `cetp-inspector conformance "
                             "--help` and docs/conformance.md") from None
    doc = report.model_dump(mode="json")
    if a.report:
        Path(a.report).write_text(json.dumps(doc, indent=2), encoding="utf-8")
    if a.junit:
        write_junit(report, a.junit)
    code = ExitCode.OK if report.passed else ExitCode.PROVIDER_ERROR
    if ctx.json:
        full = ctx.base_doc(report.passed)
        full["report"] = doc
        if not report.passed:
            full["error"] = {"code": "NOT_CONFORMANT",
                             "message": report.verdict(), "retryable": False,
                             "hint": ", ".join(report.summary.must_not_passed[:20]),
                             "details": None}
        print_json(full, ctx.out)
    else:
        line(safe_text(report.text(), 100_000), ctx.out)
    return code
