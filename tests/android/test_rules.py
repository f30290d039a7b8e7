"""The Android rules layer: the shared vectors, the rule catalogue, the profiles."""

from __future__ import annotations

from typing import Any

import pytest

from inspector.android import rules as r
from inspector.android.profiles import DEFAULT_API, PROFILES, UnknownApiLevel, profile
from tests.android.vectors import case_ids, load_cases, run_on_rules

CASES = load_cases()


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_vector(case: dict[str, Any]) -> None:
    assert run_on_rules(case) == case["expect"]


def test_vectors_cover_every_rule_but_stopped_state_and_install_order_kinds() -> None:
    """stopped_state is a device state (tests/virtual), every other rule has vectors."""
    covered = {c["expect"].get("rule") for c in CASES} | {"install_time_grant"}
    assert {x.id for x in r.RULES} - covered == {"stopped_state"}
    assert len({c["id"] for c in CASES}) == len(CASES), "vector ids must be unique"


def test_every_rule_names_an_aosp_source_and_what_the_device_does() -> None:
    for rule in r.RULES:
        assert rule.source and rule.effect and rule.title, rule.id
        assert any(k in rule.source for k in ("frameworks/base", "developer.android.com",
                                              "android.", "AndyClaw")), rule.id


@pytest.mark.parametrize(("api", "present", "absent"), [
    (26, {"null_binding", "provider_permission"},
     {"package_visibility", "background_activity_start", "force_stop_cancels_pending_intents"}),
    (29, {"background_activity_start"}, {"package_visibility"}),
    (30, {"package_visibility"}, {"force_stop_cancels_pending_intents"}),
    (35, {"force_stop_cancels_pending_intents", "package_visibility"}, set()),
])
def test_rules_in_force_follow_the_api_level(api: int, present: set[str],
                                             absent: set[str]) -> None:
    ids = {x.id for x in r.rules_in_force(api)}
    assert present <= ids
    assert not absent & ids


def test_profiles_include_the_required_levels_and_default_to_34() -> None:
    assert {26, 29, 31, 33, 34, 35} <= set(PROFILES)
    assert profile().api == DEFAULT_API == 34
    assert profile(29).release == "10"
    with pytest.raises(UnknownApiLevel, match="26, 28, 29"):
        profile(27)


def test_a_blocked_verdict_explains_its_rule_and_source() -> None:
    v = r.provider_access(34, r.CallerFacts(package="a", uid=1),
                          r.ProviderFacts(package="b", uid=2, name="b.P", authority="b.t",
                                          permission="p.X"))
    text = v.explained(34)
    assert "provider_permission" in text and "ContentProviderHelper" in text
    assert "requires p.X or p.X" in text and "API 34" in text
    assert r.ALLOWED.explained(34) == ""


def test_install_grants_explain_an_install_order_problem() -> None:
    (g,) = r.install_grants(34, ["com.x.P"], {})
    assert not g.granted and "reinstall the relay" in g.reason
    (n,) = r.install_grants(34, ["android.permission.CAMERA"], {})
    assert not n.granted and "dangerous" in n.reason


def test_rule_api_range_reads_naturally() -> None:
    assert r.rule("package_visibility").api_range == "30+"
    assert r.rule("provider_permission").api_range == "all"


def test_docs_table_lists_every_rule_with_its_source() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "virtual-device.md").read_text()
    for rule in r.RULES:
        assert f"| `{rule.id}` | {rule.api_range} | {rule.effect} | {rule.source} |" in doc
