"""Reading relay-op arguments: a wrong type is BAD_ARGS with the key's name, as the phone
relay answers (docs/relay-protocol.md §4)."""

from __future__ import annotations

from typing import Any

from inspector.protocol.bundle import Bundle, Int, Long
from inspector.relay.api import BAD_ARGS, RelayError


def arg_str(args: Bundle, key: str, *, optional: bool = False) -> Any:
    v = args.get(key)
    if v is None and optional:
        return None
    if not isinstance(v, str):
        raise RelayError(BAD_ARGS, f"{key} must be a String")
    return v


def arg_int(args: Bundle, key: str, default: int | None = None) -> int:
    v = args.get(key)
    if v is None and default is not None:
        return default
    if not isinstance(v, Int | Long) or isinstance(v, bool):
        raise RelayError(BAD_ARGS, f"{key} must be an int")
    return int(v)


def arg_bundle(args: Bundle, key: str, *, optional: bool = True) -> Bundle:
    v = args.get(key)
    if v is None and optional:
        return Bundle()
    if not isinstance(v, Bundle):
        raise RelayError(BAD_ARGS, f"{key} must be a Bundle")
    return v
