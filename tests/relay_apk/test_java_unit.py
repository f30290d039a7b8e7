"""The JVM unit tests of the relay core (codec, frames, dispatcher, digests, vectors)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.relay_apk.host_jvm import JUNIT_CP
from tests.relay_apk.relay_tools import JUNIT_CLASSES, VECTORS_DIR, run

pytestmark = pytest.mark.java


def test_junit_suite_passes_including_the_shared_vectors(java_classes: Path) -> None:
    proc = run(
        ["java", f"-Dvectors.dir={VECTORS_DIR}", "-cp",
         os.pathsep.join([str(java_classes), *JUNIT_CP]), "org.junit.runner.JUnitCore",
         *JUNIT_CLASSES],
        timeout=120,
    )
    m = re.search(r"OK \((\d+) tests\)", proc.stdout)
    assert m, proc.stdout[-3000:]
    assert int(m.group(1)) >= 60, "the JUnit suite shrank"


def test_vectors_exist_for_java_to_check() -> None:
    """VectorsTest fails on an empty folder too; this names the cause plainly."""
    kinds = {p.name.split("-")[0] for p in VECTORS_DIR.glob("*.bin")}
    assert {"bundle", "frame", "invalid"} <= kinds
