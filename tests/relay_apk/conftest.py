"""Fixtures for the relay APK tests: toolchain, a compiled Java core, HostMain, a fresh build.

Everything here runs the real tools (JDK, aapt, dx, apksigner); `./dev test` installs them
and `relay_apk/toolchain.sh` fetches the two bullseye pieces (dx, android-23.jar).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.relay_apk.host_jvm import RELAY_DIR, HostRelayProcess, JavaToolError, compile_core
from tests.relay_apk.relay_tools import require, run


@pytest.fixture(scope="session")
def toolchain() -> Path:
    """relay_apk/.toolchain (dx + android-23.jar from bullseye), fetched when missing."""
    for tool in ("javac", "java", "aapt", "zipalign", "apksigner"):
        require(tool)
    out = run([str(RELAY_DIR / "toolchain.sh")], timeout=300).stdout.strip().splitlines()[-1]
    return Path(out)


@pytest.fixture(scope="session")
def java_classes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plain-Java core, the host platform and the JUnit tests compiled for the host JVM."""
    require("javac")
    try:
        return compile_core(tmp_path_factory.mktemp("relay-classes"))
    except JavaToolError as e:
        pytest.fail(str(e))


@pytest.fixture
def host_relay_args() -> list[str]:
    """Extra HostMain arguments; override in a test module to change them."""
    return []


@pytest.fixture
def host_relay(java_classes: Path, host_relay_args: list[str]) -> Iterator[HostRelayProcess]:
    """The Java relay core serving the fake platform on a loopback port (HostMain)."""
    relay = HostRelayProcess(java_classes, host_relay_args)
    try:
        relay.__enter__()
    except JavaToolError as e:
        pytest.fail(str(e))
    try:
        yield relay
    finally:
        relay.stop()
        assert relay.token not in relay.stderr_text, "HostMain logged the session token"


@pytest.fixture(scope="session")
def built_apk(toolchain: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh build of the relay from the sources, in a temporary folder."""
    out = tmp_path_factory.mktemp("relay-build")
    proc = run([str(RELAY_DIR / "build.sh"), "--out", str(out)], timeout=300)
    apk = Path(proc.stdout.strip().splitlines()[-1])
    assert apk.is_file(), proc.stdout
    return apk
