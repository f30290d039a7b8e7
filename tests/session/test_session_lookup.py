"""Provider/extension lookup by the names people use."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from inspector.session.errors import AmbiguousError, ExitCode, NotFoundError
from inspector.session.lookup import find_one


@dataclass
class P:
    package: str
    authority: str
    provider_id: str = ""


ITEMS = [
    P("com.example.pricealerts", "com.example.pricealerts.clawseed.tools",
      "com.example.pricealerts"),
    P("com.example.finance", "com.example.finance.clawseed.tools"),
    P("org.other.finance", "org.other.finance.tools"),
]


def keys(p: P) -> list[str]:
    return [k for k in (p.package, p.authority, p.provider_id) if k]


def find(name: str) -> P:
    return find_one(ITEMS, name, keys, lambda p: p.package, "provider")


def test_exact_package_authority_and_provider_id() -> None:
    assert find("com.example.finance") is ITEMS[1]
    assert find("com.example.finance.clawseed.tools") is ITEMS[1]
    assert find("com.example.pricealerts") is ITEMS[0]


def test_case_insensitive_and_suffix() -> None:
    assert find("COM.EXAMPLE.FINANCE") is ITEMS[1]
    assert find("pricealerts") is ITEMS[0]


def test_ambiguous_lists_candidates() -> None:
    with pytest.raises(AmbiguousError) as err:
        find("finance")
    assert err.value.details == {"candidates": ["com.example.finance", "org.other.finance"]}
    assert err.value.exit_code == ExitCode.USAGE
    assert "com.example.finance" in err.value.hint


def test_not_found_lists_candidates() -> None:
    with pytest.raises(NotFoundError) as err:
        find("com.nope")
    assert "com.example.pricealerts" in err.value.hint
    assert err.value.code == "NOT_FOUND"


def test_not_found_with_nothing_discovered_says_rescan() -> None:
    with pytest.raises(NotFoundError) as err:
        find_one([], "x", keys, lambda p: p.package, "extension")
    assert "rescan" in err.value.hint
