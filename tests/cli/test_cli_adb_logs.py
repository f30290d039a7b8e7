"""Provider logs through the real adb server: a fake phone whose relay hosts the virtual
device's apps (with no `logcat` op, like the phone relay) and whose `adb logcat` carries
what those apps log. `call` attaches each line to the exchange it belongs to (issue 16)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from inspector.device.adb_server import AdbEndpoint
from inspector.device.shipped_relay import ShippedRelay
from inspector.protocol.bundle import Bundle
from inspector.protocol.logs import LogLine
from inspector.virtual.device import VirtualDevice
from tests.cli.test_cli_adb import run
from tests.device.conftest import adb_endpoint, phone, shipped  # noqa: F401  (fixtures)
from tests.device.fake_android_shell import android_of, threadtime
from tests.device.fakephone import FakePhone
from tests.device.tiny_relay import PhoneRelay, teach_phone

pytestmark = pytest.mark.adb

FINANCE = "com.example.finance"


async def _virtual() -> VirtualDevice:
    return VirtualDevice()


def phone_like(device: VirtualDevice, fake: FakePhone) -> None:
    """No `logcat` op (as the phone relay); the apps' lines go to the phone's logcat."""
    android = android_of(fake)
    hello = device.hello_info
    device.hello_info = lambda client: dataclasses.replace(  # type: ignore[method-assign]
        hello(client), capabilities=tuple(c for c in hello(client).capabilities
                                          if c != "logcat"))
    append = device.logcat.append

    def to_logcat(line: LogLine) -> LogLine:
        android.raw(threadtime(line.time_ms / 1000.0, line.uid or 1000, line.pid, line.tid,
                               line.level, line.tag, line.message))
        return append(line)

    device.logcat.append = to_logcat  # type: ignore[method-assign]


@pytest.fixture
def logging_phone(phone: FakePhone, shipped: ShippedRelay) -> Iterator[tuple[FakePhone,  # noqa: F811
                                                                           VirtualDevice]]:
    device = phone.call(_virtual())
    phone_like(device, phone)
    relay = PhoneRelay(phone, backend=device)
    teach_phone(phone, shipped)
    yield phone, device
    phone.call(relay.close())
    phone.call(device.aclose())


def test_call_through_adb_attaches_logcat_lines_to_their_exchange(
    adb_endpoint: AdbEndpoint,  # noqa: F811
    logging_phone: tuple[FakePhone, VirtualDevice],
    shipped: ShippedRelay,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake, _device = logging_phone
    code, doc = run(["call", FINANCE, "get_portfolio_holdings"], adb_endpoint, shipped, capsys)
    assert code == 0, doc
    assert doc["device"] == fake.serial
    assert android_of(fake).logcat_opens == 1  # read through adb, not the relay
    by_method = {d["method"]: d for d in doc["provider_logs"]}
    assert set(by_method) == {"execute_tool"}  # a v1 provider: one call, one exchange
    lines = by_method["execute_tool"]["lines"]
    assert [ln["message"].split(" from")[0] for ln in lines] == ["call execute_tool"]
    assert lines[0]["package"] == FINANCE and lines[0]["uid"] >= 10_000
    assert lines[0]["tag"] == "FinanceProvider" and lines[0]["level"] == "D"
    assert doc["execution"]["exchange_ids"][-1] == by_method["execute_tool"]["exchange_id"]


def test_a_crash_on_the_phone_is_linked_to_its_call_through_adb(
    adb_endpoint: AdbEndpoint,  # noqa: F811
    logging_phone: tuple[FakePhone, VirtualDevice],
    shipped: ShippedRelay,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake, device = logging_phone

    async def arm() -> None:
        device.logcat.arm_crash(Bundle(package=FINANCE, message="portfolio is null"))

    fake.call(arm())
    code, doc = run(["call", FINANCE, "get_portfolio_holdings"], adb_endpoint, shipped, capsys)
    assert code == 3, doc  # a v1 call is not retried: the call fails …
    assert doc["error"]["code"] == "OUTCOME_UNKNOWN"
    assert doc["execution"]["attempts"][0]["outcome"] == "transport:IPC_FAILED"
    message = doc["error"]["message"]  # … and says why, with the first lines of the trace
    assert f"the provider crashed ({FINANCE}, pid " in message
    assert "java.lang.IllegalStateException: portfolio is null | at " in message
    crashed = [d for d in doc["provider_logs"] if d["crash"] is not None]
    assert [d["method"] for d in crashed] == ["execute_tool"]
    crash = crashed[0]["crash"]
    assert crash["exception"] == "java.lang.IllegalStateException: portfolio is null"
    assert any("has died" in ln["message"] for ln in crashed[0]["lines"])
