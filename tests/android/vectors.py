"""The shared Android rule vectors (tests/vectors/android_rules/cases.json) and a runner
of one case against the pure rules layer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspector.android import rules as r

CASES_PATH = Path(__file__).resolve().parents[1] / "vectors" / "android_rules" / "cases.json"


def load_cases(*kinds: str) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads(CASES_PATH.read_text("utf-8"))["cases"]
    return [c for c in cases if not kinds or c["kind"] in kinds]


def case_ids(cases: list[dict[str, Any]]) -> list[str]:
    return [c["id"] for c in cases]


def provider_facts(case: dict[str, Any], package: str = "com.example.p",
                   authority: str = "com.example.p.clawseed.tools") -> r.ProviderFacts:
    p = case["provider"]
    return r.ProviderFacts(package=package, uid=p["uid"], name=f"{package}.cetp.Provider",
                           authority=authority, exported=p["exported"],
                           permission=p["permission"], read_permission=p["read_permission"],
                           write_permission=p["write_permission"])


def run_on_rules(case: dict[str, Any]) -> dict[str, Any]:
    """The outcome the rules layer gives, in the vocabulary of `expect`."""
    api, kind = case["api"], case["kind"]
    if kind == "provider_access":
        c = case["caller"]
        v = r.provider_access(api, r.CallerFacts(package="org.cetp.inspector.relay",
                                                 uid=c["uid"], granted=frozenset(c["granted"])),
                              provider_facts(case))
    elif kind == "broadcast":
        v = r.broadcast_delivery(api, target_stopped=case["target_stopped"],
                                 include_stopped=case["include_stopped"])
    elif kind == "null_binding":
        v = r.null_binding(api, case["timeout_ms"])
    elif kind == "visibility":
        c, t = case["caller"], case["target"]
        v = r.package_visible(api, r.VisibilityFacts(
            package=c["package"], granted=frozenset(c["granted"]),
            query_actions=frozenset(c["query_actions"]),
            query_packages=frozenset(c["query_packages"]),
            query_authorities=frozenset(c["query_authorities"])),
            r.TargetFacts(package=t["package"], actions=frozenset(t["actions"]),
                          authorities=frozenset(t["authorities"])))
    elif kind == "background_start":
        v = r.background_activity_start(api, r.RelayUiState(**case["ui"]))
    elif kind == "pending_intent":
        o = r.pending_intent_launch(api, r.PendingIntentFacts(**case["pi"]))
        out: dict[str, Any] = {"outcome": o.outcome}
        if o.verdict.rule:
            out["rule"] = o.verdict.rule
        return out
    elif kind == "install_grant":
        defined = {d["name"]: r.PermissionDef(**d) for d in case["defined"]}
        grants = r.install_grants(api, case["requested"], defined)
        return {"granted": [g.permission for g in grants if g.granted],
                "not_granted": [g.permission for g in grants if not g.granted]}
    elif kind == "andyclaw":
        v = r.andyclaw_required_permissions(case["required"], case["host_granted"])
    else:
        raise AssertionError(f"unknown vector kind {kind!r}")
    return verdict_outcome(v.allowed, v.error, v.rule, v.message, case["expect"])


def verdict_outcome(allowed: bool, error: str | None, rule: str | None, message: str,
                    expect: dict[str, Any]) -> dict[str, Any]:
    """Project an outcome onto the keys `expect` uses (message_contains → present ones)."""
    out: dict[str, Any] = {"allowed": allowed}
    if "error" in expect:
        out["error"] = error
    if "rule" in expect:
        out["rule"] = rule
    if "message_contains" in expect:
        out["message_contains"] = [s for s in expect["message_contains"] if s in message]
    return out
