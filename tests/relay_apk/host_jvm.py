"""Compile the relay's Java core and run it on the host JVM (HostMain + fake platform).

Reusable outside this folder: the fake-phone tests can serve `localabstract:` from a
`HostRelayProcess` exactly as the relay APK would on a phone.

    classes = compile_core(tmp_path / "classes")
    with HostRelayProcess(classes) as relay:
        client = await RelayClient.open_tcp(relay.host, relay.port, relay.token)
"""

from __future__ import annotations

import os
import secrets
import subprocess
from pathlib import Path
from types import TracebackType

REPO = Path(__file__).resolve().parents[2]
RELAY_DIR = REPO / "relay_apk"
JUNIT_CP = ["/usr/share/java/junit4.jar", "/usr/share/java/hamcrest-core.jar"]
HOST_MAIN = "org.cetp.inspector.relay.host.HostMain"


class JavaToolError(RuntimeError):
    """A JDK tool failed; the message carries its output."""


def compile_core(out: Path, with_tests: bool = True) -> Path:
    """javac --release 8 of src/core + src/host (+ test, needs junit4) into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    subdirs = ("src/core", "src/host", "test") if with_tests else ("src/core", "src/host")
    sources = sorted(str(p) for sub in subdirs for p in (RELAY_DIR / sub).rglob("*.java"))
    proc = subprocess.run(
        ["javac", "-nowarn", "--release", "8", "-encoding", "UTF-8",
         "-cp", os.pathsep.join(JUNIT_CP), "-d", str(out), *sources],
        capture_output=True, text=True, timeout=120,
    )
    if proc.returncode != 0:
        raise JavaToolError(f"javac failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return out


class HostRelayProcess:
    """HostMain on 127.0.0.1 with a fresh token; stops the JVM on exit.

    `stderr_text` holds the relay's log after exit (tests check it never has the token).
    """

    def __init__(self, classes: Path, extra_args: list[str] | None = None,
                 token: str | None = None) -> None:
        self.classes = classes
        self.extra_args = extra_args or []
        self.token = token or secrets.token_hex(16)
        self.host = "127.0.0.1"
        self.port = 0
        self.stderr_text = ""
        self._proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> HostRelayProcess:
        env = dict(os.environ, RELAY_TOKEN=self.token)
        self._proc = subprocess.Popen(
            ["java", "-XX:TieredStopAtLevel=1", "-cp", str(self.classes), HOST_MAIN,
             "--port", "0", *self.extra_args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline().strip()
        if not line.startswith("LISTENING "):
            self.stop()
            raise JavaToolError(f"HostMain did not start: {line!r}\n{self.stderr_text[-2000:]}")
        self.port = int(line.split()[1])
        return self

    @property
    def running(self) -> bool:
        """True while the JVM is alive (a cable pull must not end it; a force-stop does)."""
        return self._proc is not None and self._proc.poll() is None

    def stop(self) -> None:
        proc = self._proc
        if proc is None:
            return
        self._proc = None
        proc.terminate()
        try:
            _, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate(timeout=10)
        self.stderr_text = err or ""

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
