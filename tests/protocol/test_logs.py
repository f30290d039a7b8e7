"""Log lines and crash recognition (inspector.protocol.logs): pure, bounded, robust."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.protocol.bundle import Bundle, Long
from inspector.protocol.exchange import Exchange, ExchangeKind
from inspector.protocol.logs import (
    MAX_MESSAGE_CHARS,
    MAX_TRACE_LINES,
    CrashReport,
    LogLine,
    detect_crash,
    line_from_bundle,
    line_to_bundle,
)

PKG = "com.example.pricealerts"


def runtime(pid: int, msg: str, tag: str = "AndroidRuntime") -> LogLine:
    return LogLine.make(time_ms=1.0, pid=pid, level="E", tag=tag, message=msg)


def fatal_block(pid: int = 4100, pkg: str = PKG) -> list[LogLine]:
    return [
        runtime(pid, "FATAL EXCEPTION: main"),
        runtime(pid, f"Process: {pkg}, PID: {pid}"),
        runtime(pid, "java.lang.NullPointerException: boom"),
        runtime(pid, "\tat com.example.Foo.bar(Foo.java:1)"),
        runtime(pid, "\tat android.os.Handler.dispatchMessage(Handler.java:99)"),
    ]


def test_fatal_exception_block_is_a_crash_with_its_trace() -> None:
    crash = detect_crash(fatal_block(), PKG)
    assert crash is not None and crash.kind == "crash" and crash.pid == 4100
    assert crash.exception == "java.lang.NullPointerException: boom"
    assert crash.trace[1] == "\tat com.example.Foo.bar(Foo.java:1)"
    summary = crash.summary()
    assert summary.startswith(f"the provider crashed ({PKG}, pid 4100): ")
    assert "NullPointerException: boom | at com.example.Foo.bar" in summary


def test_another_apps_crash_is_not_this_providers() -> None:
    assert detect_crash(fatal_block(pkg="com.other.app"), PKG) is None


def test_a_subprocess_of_the_package_counts() -> None:
    crash = detect_crash(fatal_block(pkg=PKG + ":worker"), PKG)
    assert crash is not None and crash.kind == "crash"


def test_interleaved_lines_of_other_processes_do_not_cut_the_trace() -> None:
    block = fatal_block()
    noise = LogLine.make(time_ms=1.0, pid=777, level="D", tag="chatty", message="noise")
    mixed = [*block[:3], noise, *block[3:]]
    crash = detect_crash(mixed, PKG)
    assert crash is not None and len(crash.trace) == 3


def test_process_death_alone_and_anr() -> None:
    died = LogLine.make(time_ms=1.0, pid=1000, uid=1000, level="I", tag="ActivityManager",
                        message=f"Process {PKG} (pid 4100) has died: fg  SVC")
    crash = detect_crash([died], PKG)
    assert crash is not None and crash.kind == "died" and crash.pid == 4100
    assert crash.summary().startswith("the provider's process died")
    anr = LogLine.make(time_ms=1.0, pid=1000, level="E", tag="ActivityManager",
                       message=f"ANR in {PKG} (com.example.pricealerts/.Main)")
    got = detect_crash([anr], PKG)
    assert got is not None and got.kind == "anr"
    # the FATAL EXCEPTION block wins over the death line that follows it
    both = detect_crash([*fatal_block(), died], PKG)
    assert both is not None and both.kind == "crash"


def test_line_bounds_and_level_normalisation() -> None:
    ln = LogLine.make(time_ms=0, level="assert", tag="t" * 500, message="m" * 10_000)
    assert ln.level == "F" and len(ln.tag) == 128 and len(ln.message) == MAX_MESSAGE_CHARS
    assert LogLine.make(time_ms=0, level="?").level == "I"
    assert ln.is_error


def test_bundle_round_trip_and_malformed_bundles() -> None:
    ln = LogLine.make(time_ms=12.0, pid=5, tid=6, uid=10100, level="W", tag="T", message="hi",
                      package=PKG)
    assert line_from_bundle(line_to_bundle(3, ln)) == ln
    assert line_from_bundle(Bundle(pid=Long(1))) is None  # no time


def test_exchange_logs_are_optional_and_serialise() -> None:
    old = {"kind": "cetp", "target": "a", "method": "list_tools"}  # an older journal record
    x = Exchange.model_validate(old)
    assert x.logs == [] and x.crash is None and not x.logged_errors
    x = Exchange(kind=ExchangeKind.CETP, target="a", method="m", package=PKG)
    x.logs.append(LogLine.make(time_ms=1.0, level="E", tag="T", message="bad"))
    x.crash = CrashReport(package=PKG, pid=1, trace=["java.lang.Error: x"])
    again = Exchange.model_validate_json(x.model_dump_json())
    assert again.logs == x.logs and again.crash == x.crash and again.logged_errors


line_st = st.builds(
    LogLine.make,
    time_ms=st.floats(0, 1e13),
    pid=st.sampled_from([4100, 4107, 1000]),
    level=st.sampled_from(["V", "D", "I", "W", "E", "F"]),
    tag=st.sampled_from(["AndroidRuntime", "ActivityManager", "CetpProvider", "x"]),
    message=st.one_of(
        st.text(max_size=80),
        st.sampled_from(["FATAL EXCEPTION: main", f"Process: {PKG}, PID: 4100",
                         f"Process {PKG} (pid 4100) has died", f"ANR in {PKG}"]),
    ),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(line_st, max_size=200))
def test_detect_crash_never_fails_and_stays_bounded(lines: list[LogLine]) -> None:
    crash = detect_crash(lines, PKG)
    if crash is not None:
        assert crash.package == PKG and len(crash.trace) <= MAX_TRACE_LINES
        assert crash.summary()
