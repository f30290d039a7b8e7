"""`conformance`: the suite lives in `inspector.conformance` (another part of the project).

The CLI finds its entry point by name — `run_conformance(session, decl, *,
allow_mutations=...)` in `inspector.conformance.runner` or `inspector.conformance`,
sync or async, returning a report (pydantic model or dict) — and says plainly when a build
does not have it yet.
"""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path
from typing import Any

from inspector.cli.context import Ctx
from inspector.cli.output import line, print_json
from inspector.session.errors import ExitCode, InspectorError


def _find(module: str, names: tuple[str, ...]) -> Any:
    try:
        mod = importlib.import_module(module)
    except ImportError:
        return None
    for name in names:
        fn = getattr(mod, name, None)
        if callable(fn):
            return fn
    return None


def _missing(what: str) -> InspectorError:
    return InspectorError("NOT_AVAILABLE", f"{what} is not available in this build",
                          hint="update cetp-inspector", exit_code=ExitCode.USAGE)


async def cmd_conformance(ctx: Ctx) -> int:
    run = None
    for module in ("inspector.conformance.runner", "inspector.conformance"):
        run = _find(module, ("run_conformance",))
        if run is not None:
            break
    if run is None:
        raise _missing("the conformance suite")
    session = await ctx.open_session()
    decl = session.find_provider(ctx.args.provider)
    params = inspect.signature(run).parameters
    kwargs: dict[str, Any] = {}
    if "allow_mutations" in params:
        kwargs["allow_mutations"] = bool(ctx.args.allow_mutations)
    result = run(session, decl, **kwargs)
    report = await result if inspect.isawaitable(result) else result
    doc = report.model_dump(mode="json") if hasattr(report, "model_dump") else report
    if ctx.args.report:
        Path(ctx.args.report).write_text(json.dumps(doc, indent=2), encoding="utf-8")
    if ctx.args.junit:
        writer = _find("inspector.conformance.junit", ("write_junit", "to_junit_xml"))
        if writer is None:
            raise _missing("the JUnit writer")
        out = writer(report)
        if isinstance(out, str):
            Path(ctx.args.junit).write_text(out, encoding="utf-8")
    passed = bool(getattr(report, "passed", doc.get("passed", True) if isinstance(doc, dict)
                          else True))
    if ctx.json:
        print_json({"ok": passed, "command": "conformance", "device": ctx.serial,
                    "report": doc}, ctx.out)
    else:
        summary = getattr(report, "summary", None)
        line(str(summary() if callable(summary) else summary or doc), ctx.out)
    return ExitCode.OK if passed else ExitCode.VERIFICATION
