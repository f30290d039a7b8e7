"""Two ways to reach a virtual device with the same API as `RelayClient`:
`BackendPhone` calls `VirtualDevice.handle` directly with a fake server connection;
the socket variant is a real `RelayClient` over a Unix socket served by `RelayServer`."""

from __future__ import annotations

import hashlib
import itertools
import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from inspector.protocol.bundle import Bundle, Int, IntArray, Long, StringArray
from inspector.relay.api import ActivityResult, BroadcastReply, StreamEnd, TransactReply
from inspector.virtual.device import VirtualDevice

ALL_CAPS = ["async_operations", "cancellation", "large_results"]
PRICE_AUTH = "com.example.pricealerts.clawseed.tools"
FINANCE_AUTH = "com.example.finance.clawseed.tools"
BAD_AUTH = "com.example.badprovider.clawseed.tools"
_ids = itertools.count(1)


class FakeConnection:
    """A `ServerConnection` that records events."""

    def __init__(self) -> None:
        self.connection_id = f"fake{next(_ids)}"
        self.events: list[Bundle] = []
        self.closed = False

    def emit(self, event: Bundle) -> None:
        self.events.append(event)

    def is_closed(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True


class BackendPhone:
    """The RelayClient subset the tests use, straight onto the backend."""

    def __init__(self, device: VirtualDevice) -> None:
        self.device = device
        self.conn = FakeConnection()
        self.events = self.conn.events

    async def reconnect(self) -> None:
        self.conn.closed = False

    async def _op(self, op: str, **args: Any) -> Any:
        return await self.device.handle(op, Bundle(args), self.conn)

    async def discover(self, package: str | None = None) -> list[Bundle]:
        args = {} if package is None else {"package": package}
        return list((await self._op("discover", **args))["packages"])

    async def call(self, authority: str, method: str, extras: Bundle | None, **kw: Any) -> Any:
        r = await self._op("call", authority=authority, method=method, arg=None, extras=extras)
        return r["reply"]

    async def read_file(self, handle: str, max_bytes: int) -> AsyncIterator[bytes | StreamEnd]:
        stream = await self._op("read_file", handle=handle, max_bytes=Long(max_bytes))
        h = hashlib.sha256()
        n = 0
        async for chunk in stream:
            h.update(chunk)
            n += len(chunk)
            yield chunk
        yield StreamEnd(n, h.hexdigest())

    async def close_handle(self, handle: str) -> bool:
        return bool((await self._op("close_handle", handle=handle))["closed"])

    async def launch_pending_intent(self, handle: str, timeout_ms: int = 120_000) -> Any:
        r = await self._op("launch_pending_intent", handle=handle)
        return ActivityResult(int(r["result_code"]), r.get("data"))

    async def answer_confirmation(self, confirmation_id: str, approve: bool) -> bool:
        r = await self._op("answer_confirmation", confirmation_id=confirmation_id, approve=approve)
        return bool(r["accepted"])

    async def bind_transact(
        self, package: str, action: str, descriptor: str, code: int, strings: list[str]
    ) -> TransactReply:
        r = await self._op(
            "bind_transact",
            package=package,
            action=action,
            descriptor=descriptor,
            code=Int(code),
            strings=StringArray(strings),
        )
        return TransactReply(r.get("exception"), r.get("reply"))

    async def broadcast(
        self, package: str, action: str, extras: Bundle, reply_action: str, timeout_ms: int = 30_000
    ) -> BroadcastReply:
        r = await self._op(
            "broadcast",
            package=package,
            action=action,
            extras=extras,
            reply_action=reply_action,
            timeout_ms=Int(timeout_ms),
        )
        return BroadcastReply(r.get("reply"), r["timed_out"])

    async def start_activity(self, package: str, action: str, extras: Bundle) -> Any:
        r = await self._op("start_activity", package=package, action=action, extras=extras)
        return r["launched"], r.get("component")

    async def read_resource(self, package: str, resource_id: int, max_bytes: int) -> Any:
        r = await self._op(
            "read_resource", package=package, resource_id=Int(resource_id), max_bytes=Int(max_bytes)
        )
        return r["data"], r.get("name")

    async def wake_provider(self, authority: str, package: str, mode: str) -> Any:
        r = await self._op("wake_provider", authority=authority, package=package, mode=mode)
        return r["ok"], r["detail"]

    async def force_stop(self, package: str) -> bool:
        return bool((await self._op("force_stop", package=package))["stopped"])

    async def fault(self, kind: str, **args: Any) -> bool:
        b = {
            k: Int(v) if isinstance(v, int) and not isinstance(v, bool) else v
            for k, v in args.items()
        }
        return bool((await self._op("fault", kind=kind, **b))["armed"])


def now_ms() -> int:
    return int(time.time() * 1000)


class V2:
    """A tiny hand-written v2 consumer for tests (envelopes built from the spec)."""

    def __init__(self, phone: Any, authority: str = PRICE_AUTH) -> None:
        self.phone = phone
        self.authority = authority
        self.token = ""
        self.negotiated: dict[str, Any] = {}

    async def negotiate(
        self, caps: list[str] | None = None, versions: tuple[int, ...] = (2, 1)
    ) -> Bundle:
        r = await self.phone.call(
            self.authority,
            "negotiate",
            Bundle(
                consumer_versions=IntArray(versions),
                consumer_capabilities=json.dumps(ALL_CAPS if caps is None else caps),
            ),
        )
        if r["status"] == "success":
            self.negotiated = json.loads(r["data"])
            self.token = self.negotiated["session_token"]
        return r

    def env(self, request_id: str | None = None, deadline_ms: int = 30_000, **kw: Any) -> Bundle:
        b = Bundle(
            protocol_version=Int(2),
            session_token=self.token,
            request_id=request_id or str(uuid.uuid4()),
            deadline_at_ms=Long(now_ms() + deadline_ms),
        )
        b.update(kw)
        return b

    async def method(self, method: str, **kw: Any) -> Bundle:
        return await self.phone.call(self.authority, method, self.env(**kw))

    async def execute(
        self, tool: str, args: Any, request_id: str | None = None, **kw: Any
    ) -> Bundle:
        text = args if isinstance(args, str) else json.dumps(args)
        return await self.phone.call(
            self.authority,
            "execute_tool",
            self.env(request_id=request_id, tool_name=tool, args=text, **kw),
        )

    async def tools(self) -> dict[str, Any]:
        return json.loads((await self.method("list_tools"))["data"])


def data(reply: Bundle) -> Any:
    assert reply["status"] in ("success", "accepted"), reply
    return json.loads(reply["data"])


def value(reply: Bundle) -> Any:
    d = data(reply)
    assert d["kind"] == "inline", d
    return d["value"]


def error(reply: Bundle) -> str:
    assert reply["status"] == "error", reply
    return str(reply["error_code"])
