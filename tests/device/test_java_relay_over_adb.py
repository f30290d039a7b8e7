"""End to end through the Java relay core: real adb server + adbutils + device layer + fake
phone, with the phone's `localabstract:` socket served by HostMain (the relay APK's own
protocol core on the host JVM, with its test platform).

The fake phone starts a HostMain JVM when it sees the relay's `am start-foreground-service`
and hands it the token from the command's extras, as Android hands the Intent extras to
the relay service. The consumer engine then drives the test platform's CETP provider
through the whole chain: negotiate, list_tools, an inline execute_tool and a streamed file
result verified byte for byte, then a cable pull and a reconnect to the same JVM.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector.consumer import ExecState, ProviderSession, Recorder
from inspector.device.adb_server import AdbEndpoint
from inspector.device.layer import AdbDeviceLayer
from inspector.device.relay_link import ConnectMode
from inspector.device.shipped_relay import RELAY_PACKAGE, ShippedRelay
from inspector.protocol.exchange import ExchangeStatus
from inspector.relay.api import AUTH_FAILED, DISCONNECTED, RelayApi, RelayError
from inspector.tasks import Spawner
from tests.device.conftest import poll_until
from tests.device.fakephone import FakePhone
from tests.device.tiny_relay import teach_phone
from tests.relay_apk.host_jvm import HostRelayProcess, JavaToolError

pytestmark = [pytest.mark.adb, pytest.mark.java]

# What relay_apk/src/host/…/FakePlatform.java reports and serves.
PROVIDER_PACKAGE = "com.example.fakeprovider"
AUTHORITY = "com.example.fakeprovider.clawseed.tools"
JAVA_CALLER_UID = 10234
JAVA_CALLER_CERT = hashlib.sha256(b"host-relay-cert").hexdigest()
EXPORT_FILE = (
    '{"symbol":"FAKE","rows":['
    + ",".join(f'{{"day":{d},"close":{100 + d % 97}.25}}' for d in range(6000))
    + "]}"
).encode()


class JavaPhoneRelay:
    """The fake phone's relay process: a HostMain JVM per `am start`, killed by force-stop.

    `started` holds (socket name, token) as the phone read them from the `am` extras; each
    JVM in `processes` was given that token (unless `token_override` replaces it). With
    `late`, `am` returns before the JVM exists, and the JVM opens the socket only after the
    desktop has already tried it once (as a real relay service may).
    """

    def __init__(self, phone: FakePhone, classes: Path, token_override: str | None = None,
                 late: bool = False) -> None:
        self.phone = phone
        self.classes = classes
        self.token_override = token_override
        self.late = late
        self.started: list[tuple[str, str]] = []
        self.processes: list[HostRelayProcess] = []
        self.errors: list[str] = []
        self._spawner = Spawner()
        phone.relay_starter = self.start
        phone.force_stop_hook = self.force_stop

    async def start(self, name: str, token: str) -> tuple[str, int] | None:
        """Runs on the phone's loop inside `am`."""
        self.started.append((name, token))
        relay = HostRelayProcess(self.classes, token=self.token_override or token)
        self.processes.append(relay)  # before it runs, so `close` can always stop it
        if self.late:
            self._spawner.spawn(self._listen_later(name, relay), f"java relay {name}")
            return None
        return await self._launch(relay)

    async def _launch(self, relay: HostRelayProcess) -> tuple[str, int]:
        try:
            await asyncio.to_thread(relay.__enter__)
        except JavaToolError as e:  # the phone's `am` must still answer; the test reports it
            self.errors.append(str(e))
            return ("127.0.0.1", 1)
        return relay.host, relay.port

    async def _listen_later(self, name: str, relay: HostRelayProcess) -> None:
        deadline = asyncio.get_running_loop().time() + 10
        while name not in self.phone.state.abstract_opens:  # the desktop tried: now listen
            if asyncio.get_running_loop().time() > deadline:
                self.errors.append(f"nobody tried localabstract:{name} within 10 s")
                return
            await asyncio.sleep(0.02)
        self.phone.state.abstract_sockets[name] = await self._launch(relay)

    async def force_stop(self, package: str) -> None:
        """`am force-stop` of the relay kills its process and with it the abstract socket."""
        if package == RELAY_PACKAGE:
            for relay in self.processes:
                await asyncio.to_thread(relay.stop)
            self.phone.state.abstract_sockets.clear()

    def close(self) -> None:
        self.phone.call(self._spawner.cancel_all())
        for relay in self.processes:
            relay.stop()


@pytest.fixture
def java_relay(phone: FakePhone, relay_core_classes: Path) -> Iterator[JavaPhoneRelay]:
    relay = JavaPhoneRelay(phone, relay_core_classes)
    try:
        yield relay
    finally:
        relay.close()
        for p in relay.processes:
            assert p.token not in p.stderr_text, "the Java relay logged its session token"


def make_layer(
    endpoint: AdbEndpoint, shipped: ShippedRelay, mode: ConnectMode = ConnectMode.FORWARD
) -> AdbDeviceLayer:
    return AdbDeviceLayer(endpoint, shipped=shipped, mode=mode)


async def connect(layer: AdbDeviceLayer, phone: FakePhone, relay: JavaPhoneRelay) -> RelayApi:
    try:
        return await layer.connect_relay(phone.serial)
    except Exception as e:
        raise AssertionError(f"connect_relay failed: {e}; JVM errors: {relay.errors}") from e


async def drive_provider(client: RelayApi) -> ProviderSession:
    """negotiate → list_tools → inline execute_tool → file result streamed and verified."""
    recorder = Recorder()
    session = ProviderSession(client, AUTHORITY, package=PROVIDER_PACKAGE, recorder=recorder)
    negotiated = await session.negotiate()
    assert negotiated.result.selected_version == 2
    assert negotiated.result.provider_id == PROVIDER_PACKAGE
    assert "large_results" in negotiated.capabilities
    tools = await session.list_tools()
    assert tools.revision == "tools-1"
    assert [t.name for t in tools.tools] == ["get_quote", "export_history"]
    assert session.tool_violations == []

    quote = await session.execute_tool("get_quote", {"symbol": "ACME"})
    assert quote.state is ExecState.SUCCEEDED, quote.message
    assert quote.value == {"price": 101.25, "currency": "EUR", "args": {"symbol": "ACME"}}

    export = await session.execute_tool("export_history", {})
    assert export.state is ExecState.SUCCEEDED, export.message
    assert export.file is not None and export.file.size_bytes == len(EXPORT_FILE)
    verdict = await session.fetch_file(export)
    try:
        assert verdict.ok, [c.message for c in verdict.failed()]
        assert verdict.complete and verdict.bytes_read == len(EXPORT_FILE)
        assert verdict.sha256 == hashlib.sha256(EXPORT_FILE).hexdigest()
        assert verdict.content_path is not None
        assert Path(verdict.content_path).read_bytes() == EXPORT_FILE
        assert verdict.parsed and verdict.value == json.loads(EXPORT_FILE)
        checks = {c.name: c.status for c in verdict.checks}
        assert checks["relay_digest"] == "pass" and checks["handle_closed"] == "pass"
    finally:
        verdict.discard()
    statuses = [(x.method, x.status) for x in recorder.exchanges]
    assert statuses == [
        ("negotiate", ExchangeStatus.SUCCESS),
        ("list_tools", ExchangeStatus.SUCCESS),
        ("execute_tool", ExchangeStatus.SUCCESS),
        ("execute_tool", ExchangeStatus.SUCCESS),
        ("read_file", ExchangeStatus.SUCCESS),
    ]
    return session


async def test_java_relay_install_start_hello_cetp_cable_pull_and_reconnect(
    adb_endpoint: AdbEndpoint, phone: FakePhone, java_relay: JavaPhoneRelay,
    shipped: ShippedRelay,
) -> None:
    teach_phone(phone, shipped, cert=JAVA_CALLER_CERT)
    layer = make_layer(adb_endpoint, shipped)
    try:
        client = await connect(layer, phone, java_relay)
        link = layer.links[phone.serial]
        # install: the bytes that arrived are the shipped APK's
        assert [i.apk for i in phone.state.installs] == [shipped.apk_path.read_bytes()]
        # start: the phone read the desktop's socket name and token from `am`, and the
        # one JVM it started got that token
        assert java_relay.started == [(link.launch.socket_name, link.launch.token)]
        [jvm] = java_relay.processes
        assert jvm.token == link.launch.token
        # forward to the Java core's abstract socket
        port = link.local_port
        forwards = layer.devices.device(phone.serial).forward_list()
        assert [(f.local, f.remote) for f in forwards] == [(f"tcp:{port}", link.remote)]
        # hello: the caller identity the Java platform reports
        hello = client.hello_info
        assert hello.caller_package == RELAY_PACKAGE == shipped.package
        assert hello.caller_uid == JAVA_CALLER_UID
        assert hello.caller_cert_sha256 == (JAVA_CALLER_CERT,)
        assert hello.relay_version_name == "host"
        assert {"call", "read_file", "close_handle"} <= set(hello.capabilities)

        await drive_provider(client)

        phone.pull_cable()
        with pytest.raises(RelayError) as err:
            await client.call(AUTHORITY, "list_tools", None)
        assert err.value.code == DISCONNECTED
        await poll_until(  # adb drops the forward with the transport
            lambda: layer.devices.client.forward_list(phone.serial) == [], 5, "forward removal"
        )
        assert jvm.running  # the relay process survives a cable pull

        phone.plug_cable()
        again = await layer.reconnect_relay(phone.serial, timeout=20)
        assert again is not client
        assert again.hello_info.caller_cert_sha256 == (JAVA_CALLER_CERT,)
        forwards = layer.devices.device(phone.serial).forward_list()
        assert [(f.local, f.remote) for f in forwards] == [(f"tcp:{port}", link.remote)]
        await drive_provider(again)  # a fresh consumer session on the same Java relay
        assert java_relay.processes == [jvm] and len(java_relay.started) == 1
    finally:
        await layer.stop()
    assert layer.devices.client.forward_list(phone.serial) == []
    assert java_relay.errors == []


async def test_direct_stream_to_the_java_relay_without_a_forward(
    adb_endpoint: AdbEndpoint, phone: FakePhone, java_relay: JavaPhoneRelay,
    shipped: ShippedRelay,
) -> None:
    teach_phone(phone, shipped, cert=JAVA_CALLER_CERT)
    layer = make_layer(adb_endpoint, shipped, ConnectMode.DIRECT)
    try:
        client = await connect(layer, phone, java_relay)
        assert layer.devices.client.forward_list(phone.serial) == []
        session = await drive_provider(client)
        assert session.session is not None and session.session.token == "fake-session"
    finally:
        await layer.stop()


async def test_java_relay_refuses_a_token_other_than_its_own(
    adb_endpoint: AdbEndpoint, phone: FakePhone, relay_core_classes: Path,
    shipped: ShippedRelay,
) -> None:
    relay = JavaPhoneRelay(phone, relay_core_classes, token_override="f00d" * 12)
    teach_phone(phone, shipped, cert=JAVA_CALLER_CERT)
    layer = make_layer(adb_endpoint, shipped)
    try:
        with pytest.raises(RelayError) as err:
            await layer.connect_relay(phone.serial)
        assert err.value.code == AUTH_FAILED
        assert relay.errors == [] and len(relay.processes) == 1
    finally:
        await layer.stop()
        relay.close()
    assert relay.processes[0].token not in relay.processes[0].stderr_text


async def test_force_stopped_java_relay_is_started_again_with_a_new_token(
    adb_endpoint: AdbEndpoint, phone: FakePhone, java_relay: JavaPhoneRelay,
    shipped: ShippedRelay,
) -> None:
    teach_phone(phone, shipped, cert=JAVA_CALLER_CERT)
    layer = make_layer(adb_endpoint, shipped)
    try:
        client = await connect(layer, phone, java_relay)
        await layer.force_stop(phone.serial, shipped.package)
        [first] = java_relay.processes
        assert not first.running
        with pytest.raises(RelayError):
            await client.call(AUTHORITY, "list_tools", None)
        again = await layer.reconnect_relay(phone.serial, timeout=10, reopen_timeout=0.5)
        assert len(java_relay.started) == 2 and len(java_relay.processes) == 2
        second = java_relay.processes[1]
        assert second.running and second.token != first.token
        assert second.token == layer.links[phone.serial].launch.token
        await drive_provider(again)
    finally:
        await layer.stop()


async def test_link_waits_for_a_java_relay_that_listens_after_am_returns(
    adb_endpoint: AdbEndpoint, phone: FakePhone, relay_core_classes: Path,
    shipped: ShippedRelay,
) -> None:
    """On a phone `am` returns before the service listens: the link retries until it does."""
    relay = JavaPhoneRelay(phone, relay_core_classes, late=True)
    teach_phone(phone, shipped, cert=JAVA_CALLER_CERT)
    layer = make_layer(adb_endpoint, shipped)
    try:
        client = await connect(layer, phone, relay)
        name = layer.links[phone.serial].launch.socket_name
        assert phone.state.abstract_opens.count(name) >= 2  # refused first, then served
        assert client.hello_info.caller_uid == JAVA_CALLER_UID
        await drive_provider(client)
    finally:
        await layer.stop()
        relay.close()
    assert relay.errors == []
    assert relay.processes[0].token not in relay.processes[0].stderr_text
