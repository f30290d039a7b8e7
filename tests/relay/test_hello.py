"""The hello's optional permission fields (docs/relay-protocol.md §3): round trip, absence
from older relays, and refusal of mistyped or oversized lists."""

from __future__ import annotations

import pytest

from inspector.protocol.bundle import Int, StringArray
from inspector.relay.api import BAD_FRAME, HelloInfo, RelayError
from inspector.relay.hello import (
    ACCESS_TOOLS,
    hello_result,
    parse_hello_result,
    permission_problems,
)


def _info(**kw: object) -> HelloInfo:
    base: dict[str, object] = dict(
        protocol_version=1, relay_version_code=3, relay_version_name="1.2.0",
        capabilities=("ping",), caller_package="org.cetp.inspector.relay", caller_uid=10234,
        caller_cert_sha256=("ab",), device={"sdk_int": 34})
    base.update(kw)
    return HelloInfo(**base)  # type: ignore[arg-type]


def test_permissions_round_trip_and_missing_is_requested_minus_held() -> None:
    info = _info(requested_permissions=("a.B", ACCESS_TOOLS), held_permissions=("a.B",))
    back = parse_hello_result(hello_result(info))
    assert back.requested_permissions == ("a.B", ACCESS_TOOLS)
    assert back.held_permissions == ("a.B",)
    assert back.missing_permissions == (ACCESS_TOOLS,)
    assert "Reinstall the relay" in permission_problems(back)[0]


def test_a_relay_before_version_3_reports_nothing_and_nothing_is_missing() -> None:
    b = hello_result(_info())
    assert "held_permissions" not in b and "requested_permissions" not in b
    back = parse_hello_result(b)
    assert back.held_permissions is None and back.missing_permissions == ()
    assert permission_problems(back) == []


@pytest.mark.parametrize("bad", [Int(3), "x", StringArray(["p"] * 201)])
def test_mistyped_or_oversized_permission_lists_are_bad_frame(bad: object) -> None:
    b = hello_result(_info(requested_permissions=("p",), held_permissions=("p",)))
    b["held_permissions"] = bad  # type: ignore[assignment]
    with pytest.raises(RelayError) as err:
        parse_hello_result(b)
    assert err.value.code == BAD_FRAME
