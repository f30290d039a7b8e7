"""The hello exchange and the operation whitelist (docs/relay-protocol.md §3–4).

Shared by the client and the server core so both sides agree on field names and types.
"""

from __future__ import annotations

from inspector.protocol.bundle import Bundle, Int, IntArray, StringArray
from inspector.relay.api import BAD_FRAME, HelloInfo, RelayError

PROTOCOL_VERSION = 1
SUPPORTED_VERSIONS = (PROTOCOL_VERSION,)

OPS: frozenset[str] = frozenset(
    {
        "ping",
        "discover",
        "call",
        "read_file",
        "close_handle",
        "launch_pending_intent",
        "bind_transact",
        "broadcast",
        "start_activity",
        "read_resource",
        "wake_provider",
        "force_stop",
        "answer_confirmation",
        "fault",
        "logcat",  # virtual device only (phones: adb logcat), issue 16
        "screencap",  # virtual device only (phones: adb exec-out screencap -p), issue 16
        "input",  # virtual device only (phones: adb shell input), issue 16
    }
)
"""Every operation of §4; anything else is UNKNOWN_OP (there is no generic dispatch)."""

DEVICE_INT_FIELDS = frozenset({"sdk_int"})

ACCESS_TOOLS = "com.clawseed.permission.ACCESS_TOOLS"
"""What real CETP providers demand of callers (docs/relay-apk.md, "Permissions")."""
RELAY_PACKAGE = "org.cetp.inspector.relay"
MAX_REPORTED_PERMISSIONS = 200
"""The hello's permission lists are bounded; a relay reporting more is broken."""


def hello_args(token: str, client: str, events: bool) -> Bundle:
    return Bundle(protocol_version=Int(PROTOCOL_VERSION), token=token, client=client, events=events)


def hello_result(info: HelloInfo) -> Bundle:
    """HelloInfo → the hello RESPONSE Bundle (device values typed as §3 says)."""
    device = Bundle()
    for k, v in info.device.items():
        if isinstance(v, bool) or v is None:
            device[k] = v
        elif isinstance(v, int):
            device[k] = Int(v)
        else:
            device[k] = str(v)
    out = Bundle(
        protocol_version=Int(info.protocol_version),
        relay_version_code=Int(info.relay_version_code),
        relay_version_name=info.relay_version_name,
        capabilities=StringArray(info.capabilities),
        caller_package=info.caller_package,
        caller_uid=Int(info.caller_uid),
        caller_cert_sha256=StringArray(info.caller_cert_sha256),
        device=device,
    )
    if info.requested_permissions is not None and info.held_permissions is not None:
        out["requested_permissions"] = StringArray(info.requested_permissions)
        out["held_permissions"] = StringArray(info.held_permissions)
    return out


def parse_hello_result(b: Bundle) -> HelloInfo:
    """The hello RESPONSE → HelloInfo; a missing or mistyped field is BAD_FRAME."""

    def need(key: str, t: type) -> object:
        v = b.get(key)
        if not isinstance(v, t) or (isinstance(v, bool) and t is not bool):
            raise RelayError(BAD_FRAME, f"hello reply: {key!r} missing or not {t.__name__}")
        return v

    device = b.get("device")
    return HelloInfo(
        protocol_version=int(need("protocol_version", Int)),  # type: ignore[call-overload]
        relay_version_code=int(need("relay_version_code", Int)),  # type: ignore[call-overload]
        relay_version_name=str(need("relay_version_name", str)),
        capabilities=tuple(s for s in need("capabilities", StringArray) if s is not None),  # type: ignore[attr-defined]
        caller_package=str(need("caller_package", str)),
        caller_uid=int(need("caller_uid", Int)),  # type: ignore[call-overload]
        caller_cert_sha256=tuple(
            s
            for s in need("caller_cert_sha256", StringArray)
            if s is not None  # type: ignore[attr-defined]
        ),
        device=dict(device) if isinstance(device, Bundle) else {},
        requested_permissions=_permissions(b, "requested_permissions"),
        held_permissions=_permissions(b, "held_permissions"),
    )


def _permissions(b: Bundle, key: str) -> tuple[str, ...] | None:
    """An optional String[] of the hello (absent from relays before versionCode 3)."""
    v = b.get(key)
    if v is None:
        return None
    if not isinstance(v, StringArray) or len(v) > MAX_REPORTED_PERMISSIONS:
        raise RelayError(BAD_FRAME, f"hello reply: {key!r} is not a String[] of at most "
                                    f"{MAX_REPORTED_PERMISSIONS} names")
    return tuple(s[:200] for s in v if s is not None)


def permission_problems(info: HelloInfo) -> list[str]:
    """Plain-text advice for each permission the relay requests but does not hold.

    ACCESS_TOOLS is the one that breaks CETP calls: Android grants a custom permission when
    the relay is installed or updated, so one defined by a provider installed *after* the
    relay may be missing (reported against PackageManagerService behaviour, version-dependent:
    nextcloud/Android-SingleSignOn#27); reinstalling the relay grants it.
    """
    from inspector.android.rules import PLATFORM_PERMISSIONS

    sdk = info.device.get("sdk_int")
    out = []
    for p in info.missing_permissions:
        d = PLATFORM_PERMISSIONS.get(p)
        if d is not None and isinstance(sdk, int) and sdk < d.min_api:
            continue  # the permission does not exist on this Android version
        if p == ACCESS_TOOLS:
            out.append(f"{ACCESS_TOOLS} not granted to the relay — provider installed after the "
                       f"relay? Reinstall the relay: adb uninstall {RELAY_PACKAGE}, then connect "
                       "again (the inspector installs it); until then calls to CETP providers "
                       "fail with SECURITY")
        else:
            out.append(f"{p} not granted to the relay (grant it with adb shell pm grant "
                       f"{RELAY_PACKAGE} {p}, or reinstall with adb install -r -g)")
    return out


def unsupported_version_details() -> Bundle:
    return Bundle(supported=IntArray(SUPPORTED_VERSIONS))
