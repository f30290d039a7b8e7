"""Checks that judge what discovery and the read-only prelude returned (phase 0).

The prelude is: negotiate (all known capabilities), get_provider_info and list_tools on
v2, and the legacy list_tools (no protocol_version) on v1 and dual-stack providers.
Most checks here apply one protocol rule (`inspector.protocol.rules`); the check id is
the rule id.
"""

from __future__ import annotations

from inspector.conformance.context import (
    NotApplicable,
    RunContext,
    Verdict,
    failed,
    from_findings,
    not_applicable,
    passed,
)
from inspector.conformance.model import Category
from inspector.conformance.registry import check
from inspector.protocol import rules as R
from inspector.protocol.cetp import DRAFT_2020_12

D, N, S, V1 = Category.DISCOVERY, Category.NEGOTIATION, Category.DESCRIPTORS, Category.V1


def _rule(rid: str) -> R.Rule:
    return R.RULES[rid]


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _need_negotiation(ctx: RunContext) -> None:
    if ctx.prelude.negotiation is None:
        raise NotApplicable("negotiate failed, so there is nothing to judge (see "
                            "negotiate.success)")


def _need_tools(ctx: RunContext) -> None:
    if ctx.prelude.tools is None:
        raise NotApplicable("list_tools failed (see descriptors.tool_list)")


def _need_info(ctx: RunContext) -> None:
    if ctx.prelude.info is None:
        raise NotApplicable("get_provider_info failed (see descriptors.provider_info)")


# --------------------------------------------------------------------------------------
# discovery
# --------------------------------------------------------------------------------------

for _rid, _title in (("discovery.versions_consistency", "versions and version agree"),
                     ("discovery.same_package", "service and authority in one package"),
                     ("discovery.exported", "service and provider exported")):
    def _make(rid: str) -> None:
        r = _rule(rid)

        @check(rid, r.title, r.section, r.level, D, phase=0, needs_v2=False, rule_ids=(rid,))
        async def _run(ctx: RunContext) -> Verdict:
            fs = []
            fn = {"discovery.versions_consistency": R.check_versions_declaration,
                  "discovery.same_package": R.check_same_package,
                  "discovery.exported": R.check_exported}[rid]
            for d in ctx.decls:
                fs += fn(d)
            return from_findings(fs)

        _run.__doc__ = f"{_cap(r.title)}; judged for every CETP service the package declares."

    _make(_rid)


@check("v1.list_tools", "v1 list_tools returns a valid v1 tool list", "§8", "MUST", V1,
       phase=0, needs_v2=False)
async def v1_list_tools(ctx: RunContext) -> Verdict:
    """The legacy list_tools (extras null) returns `{"tools":[{name, description,
    parameters}]}` on providers that declare v1."""
    if not ctx.decl.supports_v1:
        return not_applicable("the provider does not declare v1")
    p = ctx.prelude
    if p.v1_tools is None:
        return failed(f"v1 list_tools failed: {p.v1_error}")
    return passed(f"{len(p.v1_tools.tools)} v1 tools",
                  tools=[t.name for t in p.v1_tools.tools])


def _v1_rule(rid: str) -> None:
    r = _rule(rid)

    @check(rid, r.title, r.section, r.level, V1, phase=0, needs_v2=False, rule_ids=(rid,))
    async def _run(ctx: RunContext) -> Verdict:
        if ctx.decl.stack != "dual_stack":
            return not_applicable(f"applies to dual-stack providers; this one is "
                                  f"{ctx.decl.stack}")
        if ctx.prelude.v1_tools is None:
            raise NotApplicable("the v1 list_tools failed (see v1.list_tools)")
        v2 = ctx.prelude.tools if rid != "v1.dual_stack_read_only_heuristic" else None
        if rid != "v1.dual_stack_read_only_heuristic" and v2 is None:
            raise NotApplicable("the v2 list_tools failed; the v1 tools cannot be "
                                "cross-checked")
        fs = R.check_v1_read_only(ctx.prelude.v1_tools, v2, ctx.decl)
        return from_findings(fs, rule_ids=[rid])

    _run.__doc__ = (f"{_cap(r.title)}; judged on the legacy list_tools (no protocol_version) "
                    "against the v2 list.")


for _rid in ("v1.dual_stack_read_only", "v1.dual_stack_read_only_heuristic",
             "v1.tools_subset"):
    _v1_rule(_rid)


# --------------------------------------------------------------------------------------
# negotiation (prelude)
# --------------------------------------------------------------------------------------


@check("negotiate.success", "negotiate succeeds with a valid reply", "§2.2", "MUST", N,
       phase=0)
async def negotiate_success(ctx: RunContext) -> Verdict:
    """A provider advertising v2 negotiates successfully (§8: or it must be disabled)."""
    p = ctx.prelude
    if p.negotiation is None:
        return failed(f"negotiate failed: {p.negotiate_error}")
    n = p.negotiation
    return passed(f"selected version {n.selected_version}",
                  selected_version=n.selected_version, capabilities=n.capabilities)


def _negotiation_rule(rid: str) -> None:
    r = _rule(rid)

    @check(rid, r.title, r.section, r.level, N, phase=0, rule_ids=(rid,))
    async def _run(ctx: RunContext) -> Verdict:
        _need_negotiation(ctx)
        n = ctx.prelude.negotiation
        assert n is not None
        if rid == "negotiate.highest_common_version":
            fs = R.check_selected_version(n.selected_version, (2, 1), ctx.decl.versions)
        elif rid == "negotiate.limits_minimums":
            fs = R.check_limits(n.limits)
        else:
            fs = R.check_session_token(n.session_token)
        v = from_findings(fs)
        v.observed = {"selected_version": n.selected_version,
                      "limits": n.limits.model_dump(),
                      "session_token_bytes": len(n.session_token.encode("utf-8"))}
        return v

    _run.__doc__ = f"{_cap(r.title)}; judged on the first negotiate reply."


for _rid in ("negotiate.highest_common_version", "negotiate.limits_minimums",
             "negotiate.session_token"):
    _negotiation_rule(_rid)


# --------------------------------------------------------------------------------------
# descriptors
# --------------------------------------------------------------------------------------


@check("descriptors.provider_info", "get_provider_info returns a valid v2 descriptor",
       "§3.2", "MUST", S, phase=0)
async def provider_info(ctx: RunContext) -> Verdict:
    """Stable identity, description and a scope catalog; missing required fields and
    unknown security enum values (access, sensitivity) are violations."""
    p = ctx.prelude
    if p.info is None:
        return failed(f"get_provider_info: {p.info_error}")
    return passed(f"{len(p.info.scopes)} scopes", provider_id=p.info.provider_id,
                  scopes=[s.name for s in p.info.scopes])


@check("descriptors.tool_list", "list_tools returns valid v2 tool descriptors", "§3.3",
       "MUST", S, phase=0)
async def tool_list(ctx: RunContext) -> Verdict:
    """Every tool has its required fields and known security enum values (effect, risk,
    confirmation, execution); the envelope has a revision."""
    p = ctx.prelude
    if p.tools is None:
        return failed(f"list_tools: {p.tools_error}")
    if p.tool_violations:
        msg = "; ".join(str(v) for v in p.tool_violations[:5])
        return failed(msg, invalid=[v.field for v in p.tool_violations])
    return passed(f"{len(p.tools.tools)} tools, revision {p.tools.revision!r}",
                  revision=p.tools.revision, tools=[t.name for t in p.tools.tools])


def _descriptor_rule(rid: str) -> None:
    r = _rule(rid)

    @check(rid, r.title, r.section, r.level, S, phase=0, rule_ids=(rid,))
    async def _run(ctx: RunContext) -> Verdict:
        p = ctx.prelude
        if rid == "provider.id_namespace":
            _need_info(ctx)
            assert p.info is not None
            fs = R.check_provider_id(p.info.provider_id, ctx.package)
            if p.negotiation is not None and p.negotiation.provider_id:
                fs += R.check_provider_id(p.negotiation.provider_id, ctx.package,
                                          "negotiate.provider_id")
        elif rid == "provider.id_stable":
            _need_info(ctx)
            _need_negotiation(ctx)
            assert p.info is not None and p.negotiation is not None
            fs = R.check_provider_id_stable(p.negotiation.provider_id, p.info.provider_id)
            if not fs:
                return not_applicable("negotiate returned no provider_id")
        elif rid in ("scope.name_pattern", "scope.name_unique"):
            _need_info(ctx)
            assert p.info is not None
            fs = R.check_scopes(p.info)
        elif rid == "scope.declared":
            _need_info(ctx)
            _need_tools(ctx)
            assert p.info is not None and p.tools is not None
            fs = R.check_scope_references(p.info, p.tools)
        else:
            _need_tools(ctx)
            assert p.tools is not None
            sch = R.tool_schemas(p.tools)
            dialect = p.info.schema_dialect if p.info is not None else DRAFT_2020_12
            fs = {
                "tool.name_pattern": lambda: R.check_tool_names(p.tools),
                "tool.name_unique": lambda: R.check_tool_names_unique(p.tools),
                "annotations.confirmation_always": lambda: R.check_annotations(p.tools),
                "annotations.explicit": lambda: R.check_annotations(p.tools),
                "tool.output_schema": lambda: R.check_output_schemas(p.tools),
                "schema.no_remote_ref": lambda: R.check_schema_refs(sch),
                "schema.dialect": lambda: R.check_dialect(dialect, sch),
                "schema.valid": lambda: R.check_schemas_valid(sch, dialect),
            }[rid]()
        return from_findings(fs, rule_ids=[rid])

    _run.__doc__ = f"{_cap(r.title)}; judged on get_provider_info and list_tools."


for _rid in ("provider.id_namespace", "provider.id_stable", "tool.name_pattern",
             "tool.name_unique", "scope.name_pattern", "scope.name_unique", "scope.declared",
             "annotations.confirmation_always", "annotations.explicit", "tool.output_schema",
             "schema.no_remote_ref", "schema.dialect", "schema.valid"):
    _descriptor_rule(_rid)
