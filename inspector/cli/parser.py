"""The `cetp-inspector` argument parser.

Global options are accepted before or after the subcommand (`cetp-inspector --json
providers` and `cetp-inspector providers --json` both work): they are declared on the main
parser with real defaults and on every subparser with `SUPPRESS` defaults, so a value given
after the subcommand overrides and an absent one leaves the main parser's default alone.
"""

from __future__ import annotations

import argparse

BRIDGES = ("service", "provider", "broadcast", "activity")


class UsageError(Exception):
    """A command line argparse rejected (printed as a structured error by `main`)."""

    def __init__(self, usage: str, message: str) -> None:
        super().__init__(message)
        self.usage = usage
        self.message = message


class CliParser(argparse.ArgumentParser):
    """Raises UsageError instead of exiting, so `--json` can report usage errors too."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(self.format_usage(), message)


def _add_common(p: argparse.ArgumentParser, *, suppress: bool) -> None:
    def d(value: object) -> object:
        return argparse.SUPPRESS if suppress else value

    g = p.add_argument_group("common options")
    g.add_argument("-d", "--device", default=d(None), metavar="SERIAL",
                   help="device serial (default: the only adb device, else 'virtual')")
    g.add_argument("--json", action="store_true", default=d(False),
                   help="print one JSON document with stable keys (docs/cli.md)")
    g.add_argument("--relay-socket", default=d(None), metavar="unix:PATH|tcp:HOST:PORT",
                   help="attach to a standalone relay / virtual device on this socket")
    g.add_argument("--token", default=d(None), help="session token for --relay-socket")
    g.add_argument("--virtual-state", default=d(None), metavar="DIR",
                   help="state directory of the in-process virtual device (default: temporary)")
    g.add_argument("--virtual-plugin", action="append", default=d([]), metavar="FILE",
                   help="load an extra virtual-device app from a Python file (repeatable)")
    g.add_argument("--virtual-bundle", action="append", default=d([]), metavar="FILE",
                   help="serve the recorded providers of this bug-report bundle (or session "
                   "journal) on the in-process virtual device instead of its reference apps "
                   "(repeatable; docs/sessions.md)")
    g.add_argument("--android-api", type=int, default=d(None), metavar="N",
                   help="Android API level the in-process virtual device plays: its rules "
                   "(permissions, visibility, background starts…) follow that release "
                   "(26, 28, 29, 30, 31, 33, 34, 35; default 34; docs/virtual-device.md)")
    g.add_argument("--virtual-relay-background", action="store_true", default=d(False),
                   help="the in-process virtual device plays a relay whose screen is not in "
                   "front: from API 29 Android blocks its activity starts")
    g.add_argument("--allow-uninstall", action="store_true", default=d(False),
                   help="adb: when the installed relay cannot be upgraded in place, allow "
                   "uninstalling it (it holds no user data of yours)")
    g.add_argument("--record", default=d(None), metavar="NAME",
                   help="journal this command's exchanges into session NAME (created, or "
                   "continued when it exists); see `bundle`")
    g.add_argument("--wake", action="store_true", default=d(False),
                   help="when a provider answers 'Unknown authority' (its process is not "
                   "running), wake it as the ClawSeed consumer does (acquire, then launch) "
                   "and retry the same request; --json lists the steps as wake_steps")
    g.add_argument("--timeout", type=float, default=d(300.0), metavar="SECONDS",
                   help="give up on the whole command after this long (default 300)")


def _add_call_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--request-id", default=None,
                   help="reuse this request_id (retry the same logical execution)")
    p.add_argument("--deadline-ms", type=int, default=None, metavar="MS",
                   help="deadline relative to now, in milliseconds")
    conf = p.add_mutually_exclusive_group()
    conf.add_argument("--approve", action="store_true",
                      help="approve a confirmation on the virtual device")
    conf.add_argument("--deny", action="store_true",
                      help="deny a confirmation on the virtual device")
    p.add_argument("--no-wait", action="store_true",
                   help="do not wait for an async operation; print its id")
    p.add_argument("--max-read-bytes", type=int, default=None, metavar="N",
                   help="local read limit for file results")
    p.add_argument("--save", default=None, metavar="FILE",
                   help="write the result (the verified file bytes, or the JSON value) here")


def _args_options(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group()
    src.add_argument("--args", default=None, metavar="JSON", help="arguments as a JSON object")
    src.add_argument("--args-file", default=None, metavar="FILE",
                     help="read the JSON arguments from this file ('-' for stdin)")


def build_parser() -> argparse.ArgumentParser:
    parser = CliParser(
        prog="cetp-inspector",
        description="Inspect CETP tool providers and AndyClaw extensions on a phone or on "
        "the built-in virtual device. Without a command, opens the window.",
        epilog="exit codes: 0 success, 1 provider error, 2 usage/bad input, "
        "3 device/relay error, 4 verification failure",
    )
    _add_common(parser, suppress=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def cmd(name: str, help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=help_)
        _add_common(p, suppress=True)
        return p

    cmd("devices", "list devices (the virtual device is always there)")
    cmd("providers", "list the CETP providers discovered on the device")

    p = cmd("negotiate", "negotiate CETP v2 with a provider")
    p.add_argument("provider", metavar="PROVIDER", help="package, provider_id or authority")
    p.add_argument("--versions", default=None, metavar="LIST",
                   help="consumer versions, e.g. 2,1 (default: 2,1)")
    p.add_argument("--capabilities", default=None, metavar="LIST",
                   help="consumer capabilities, comma separated (default: all known)")

    p = cmd("info", "show a provider's get_provider_info")
    p.add_argument("provider", metavar="PROVIDER")
    p.add_argument("--v1", action="store_true", help="use the v1 protocol")

    p = cmd("tools", "list a provider's tools")
    p.add_argument("provider", metavar="PROVIDER")
    p.add_argument("--v1", action="store_true", help="use the v1 protocol (list_tools, no token)")

    p = cmd("call", "execute a tool")
    p.add_argument("provider", metavar="PROVIDER")
    p.add_argument("tool", metavar="TOOL")
    _args_options(p)
    _add_call_options(p)
    p.add_argument("--v1", action="store_true", help="use the v1 protocol")
    p.add_argument("--capabilities", default=None, metavar="LIST",
                   help="capabilities to negotiate (default: all known)")
    p.add_argument("--resume-token", default=None, metavar="TOKEN",
                   help="resume an execution with this resume_token (needs --request-id; "
                   "write --resume-token=TOKEN, tokens may start with '-')")

    ops = cmd("ops", "async operations (started here or with call --no-wait)")
    ops_sub = ops.add_subparsers(dest="ops_command", metavar="ACTION")
    o = ops_sub.add_parser("list", help="operations this machine started (remembered)")
    _add_common(o, suppress=True)
    for name, help_ in (("get", "query an operation"), ("cancel", "cancel an operation")):
        o = ops_sub.add_parser(name, help=help_, description=help_)
        _add_common(o, suppress=True)
        o.add_argument("operation_id", metavar="OPERATION_ID")
        o.add_argument("--provider", default=None, metavar="PROVIDER",
                       help="provider (default: the one remembered for the operation)")
        o.add_argument("--request-id", default=None,
                       help="the execution's request_id (default: remembered)")
        o.add_argument("--wait", action="store_true",
                       help="poll until the operation reaches a terminal state")
        o.add_argument("--max-read-bytes", type=int, default=None, metavar="N")
        o.add_argument("--save", default=None, metavar="FILE")

    cmd("extensions", "list the AndyClaw extensions discovered on the device")

    p = cmd("ext-call", "call an AndyClaw extension function")
    p.add_argument("extension", metavar="EXTENSION", help="extension id or package")
    p.add_argument("function", metavar="FUNCTION")
    _args_options(p)
    p.add_argument("--bridge", choices=BRIDGES, default=None,
                   help="bridge to use (default: the host's choice by priority)")
    p.add_argument("--approve", action="store_true",
                   help="approve a function marked requiresApproval")

    p = cmd("ext-manifest", "show an extension's manifest (raw resource and service forms)")
    p.add_argument("extension", metavar="EXTENSION")

    virt = cmd("virtual", "the virtual device")
    vsub = virt.add_subparsers(dest="virtual_command", metavar="ACTION")
    v = vsub.add_parser("serve", help="run the standalone virtual device on a socket")
    v.add_argument("--listen", required=True, metavar="unix:PATH|tcp:127.0.0.1:PORT")
    v.add_argument("--token", dest="serve_token", default=None,
                   help="session token clients must present (default: random, printed)")
    v.add_argument("--state-dir", default=None, metavar="DIR")
    v.add_argument("--plugin", action="append", default=[], metavar="FILE")
    f = vsub.add_parser("fault", help="arm a fault on the virtual device (tests, demos)")
    _add_common(f, suppress=True)
    f.add_argument("kind", choices=("delay", "drop_connection", "restart_process",
                                    "corrupt_digest", "cold_start", "crash"))
    f.add_argument("--package", default=None, help="app package (restart_process, "
                   "corrupt_digest, crash: its process dies with a Java trace on its next "
                   "call, cold_start: its provider answers 'Unknown authority' "
                   "until wake_provider starts it; docs/virtual-device.md)")
    f.add_argument("--ms", type=int, default=None, help="delay in milliseconds (delay)")
    f.add_argument("--count", type=int, default=None,
                   help="delay: how many of the next calls are delayed (default 1)")
    f.add_argument("--when", choices=("now", "after_commit"), default=None,
                   help="restart_process: now, or right after the app's next committed "
                   "mutation")
    f.add_argument("--mode", choices=("acquire", "launch", "off"), default=None,
                   help="cold_start: what wakes the provider (acquire: any wake; launch: only "
                   "its launch intent; off: disarm)")

    p = cmd("conformance", "run the conformance suite against a provider (or an AndyClaw "
            "extension)")
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = ("The virtual device's stock price-alert provider passes every check with:\n"
                "  cetp-inspector conformance com.example.pricealerts --reference-setup "
                "--confirmation-ttl-ms 1500 \\\n"
                "      --allow-mutations create_alert,sync_watchlist,share_watchlist\n"
                "Requirement coverage (spec statements with a check): "
                "cetp-inspector conformance --coverage")
    p.add_argument("provider", metavar="PROVIDER", nargs="?", default=None)
    p.add_argument("--coverage", action="store_true",
                   help="print how many provider MUST/SHOULD statements of the spec have a "
                   "check (the requirement matrix, docs/conformance.md) and stop")
    p.add_argument("--allow-calls", default=None, metavar="FUNCTIONS",
                   help="for an AndyClaw extension: functions the suite may call")
    p.add_argument("--reference-setup", action="store_true",
                   help="use the ready-made scenarios of a virtual-device reference provider "
                   "(they allow nothing: name the tools in --allow-mutations)")
    p.add_argument("--confirmation-ttl-ms", type=int, default=None, metavar="MS",
                   help="the provider's confirmation lifetime, for confirmation.expired_token; "
                   "on the in-process virtual device it also sets that lifetime for the run")
    p.add_argument("--allow-mutations", default=None, metavar="TOOLS",
                   help="comma-separated tools the suite may invoke although they mutate")
    p.add_argument("--setup", default=None, metavar="FILE",
                   help="JSON setup (scenarios, tool args; docs/conformance.md)")
    p.add_argument("--select", default=None, metavar="PATTERNS",
                   help="only these checks (comma-separated ids or globs)")
    p.add_argument("--skip", default=None, metavar="PATTERNS", help="skip these checks")
    p.add_argument("--plan", action="store_true", help="print the plan and stop")
    p.add_argument("--junit", default=None, metavar="FILE", help="also write JUnit XML here")
    p.add_argument("--report", default=None, metavar="FILE", help="write the JSON report here")

    # --- issue 15: MCP bridge (inspector/cli/cmd_mcp.py, docs/mcp.md) ---
    p = cmd("mcp", "serve the device's providers and extensions as MCP tools (stdio or --http)")
    p.add_argument("--provider", action="append", default=[], metavar="PROVIDER",
                   help="bridge only this provider (repeatable; default: every usable one)")
    p.add_argument("--extension", action="append", default=[], metavar="EXTENSION",
                   help="bridge only this extension (repeatable; default: every one)")
    p.add_argument("--no-extensions", action="store_true", help="bridge no extension")
    p.add_argument("--allow-mutations", action="append", default=[], metavar="TOOLS",
                   help="comma-separated tools MCP clients may call although they mutate "
                   "(MCP name, tool name, PACKAGE:TOOL, or *); repeatable")
    p.add_argument("--http", default=None, metavar="HOST:PORT",
                   help="serve streamable HTTP on this loopback address instead of stdio "
                   "(bearer token: $CETP_INSPECTOR_MCP_TOKEN, else generated and printed)")
    p.add_argument("--confirm-timeout", type=float, default=120.0, metavar="SECONDS",
                   help="virtual device: how long its confirmation screen waits for an "
                   "answer before it counts as denied (default 120)")
    p.add_argument("--no-elicit", action="store_true",
                   help="never ask the MCP client (elicitation) before opening a provider's "
                   "confirmation")
    p.add_argument("--max-read-bytes", type=int, default=None, metavar="N",
                   help="local read limit for file results")
    p.add_argument("--capabilities", default=None, metavar="LIST",
                   help="capabilities to negotiate (default: all known)")
    # --- end issue 15 ---

    b = cmd("bundle", "recorded sessions and bug-report bundles")
    bsub = b.add_subparsers(dest="bundle_command", metavar="ACTION")
    o = bsub.add_parser("list", help="recorded sessions (see --record)")
    _add_common(o, suppress=True)
    o = bsub.add_parser("create", help="write a bug-report bundle from a recorded session")
    _add_common(o, suppress=True)
    o.add_argument("session", metavar="SESSION", help="session id or name")
    o.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="bundle file (default: SESSION.cetpbundle)")
    o.add_argument("--note", default="", help="a short description for the summary")
    o.add_argument("--screenshots", action="store_true",
                   help="include the screenshots of confirmation screens taken while the "
                   "session was recorded (they show the screen as it was: not redacted)")
    o.add_argument("--no-logs", action="store_true",
                   help="leave the provider's log lines and crashes out of the bundle")
    o.add_argument("--file", action="append", default=[], metavar="PATH",
                   help="include these bytes for the recorded file result with the same "
                   "sha256 (e.g. what `call --save` wrote), so replay can serve them")
    o.add_argument("--file-cap", type=int, default=32 * 1024 * 1024, metavar="BYTES",
                   help="largest file result included (default 32 MiB)")
    o.add_argument("--no-redact", action="store_true",
                   help="keep session/resume tokens in the bundle (default: redacted)")
    o = bsub.add_parser("open", help="show a bug-report bundle (read-only)")
    _add_common(o, suppress=True)
    o.add_argument("file", metavar="FILE")
    o = bsub.add_parser("serve", help="run a standalone virtual device serving the recorded "
                        "providers of a bundle (replay as a virtual provider)")
    o.add_argument("file", metavar="FILE", help="a .cetpbundle file or a session journal")
    o.add_argument("--listen", required=True, metavar="unix:PATH|tcp:127.0.0.1:PORT")
    o.add_argument("--token", dest="serve_token", default=None,
                   help="session token clients must present (default: random, printed)")
    o.add_argument("--state-dir", default=None, metavar="DIR")
    o.add_argument("--plugin", action="append", default=[], metavar="FILE",
                   help="also load a virtual-device app from a Python file (repeatable)")
    o = bsub.add_parser("replay", help="re-issue a recorded session's provider calls on a "
                        "device and diff the answers")
    _add_common(o, suppress=True)
    o.add_argument("source", metavar="BUNDLE|SESSION", help="a bundle file, or a recorded "
                   "session id or name")
    o.add_argument("--allow-mutations", action="store_true",
                   help="also re-issue mutations (default: reads only)")
    o.add_argument("--new-request-ids", action="store_true",
                   help="send mutations with NEW request ids (default: the recorded ones, "
                   "so the provider's dedup answers instead of acting again)")
    return parser
