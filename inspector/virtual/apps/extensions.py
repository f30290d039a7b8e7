"""AndyClaw extensions, one per bridge type (andyclaw-extension-guide + reference notes).

- `org.ethereumphone.extensionexample`: the hello-world bound-service extension; its raw
  resource is the array form, its service GET_MANIFEST the object form (as the real app).
- `com.example.unitconverter`: content provider bridge (`<pkg>.andyclaw.extension`).
- `com.example.dice`: broadcast bridge, replies on the request's `response_action`.
- `com.example.flashlight`: activity bridge (launched, no result).
"""

from __future__ import annotations

import json
import random
from typing import Any

from inspector.protocol.bundle import Bundle
from inspector.virtual.app import CallContext, TransactResult, VirtualApp
from inspector.virtual.apps.finance import sample
from inspector.virtual.manifest import (
    EXT_ACTIVITY_ACTION,
    EXT_BROADCAST_ACTION,
    EXT_META,
    EXT_META_ID,
    EXT_META_MANIFEST,
    EXT_META_NAME,
    EXT_SERVICE_ACTION,
    ComponentDecl,
    PackageManifest,
    ProviderDecl,
    ServiceDecl,
)

DESCRIPTOR = "org.ethereumphone.andyclaw.IExtension"
TRANSACTION_GET_MANIFEST = 1
TRANSACTION_EXECUTE = 2
MANIFEST_RESOURCE_ID = 0x7F0F0000  # R.raw.extension_manifest


class ExtensionApp(VirtualApp):
    """An AndyClaw extension: discovery meta-data + raw function manifest resource."""

    EXTENSION_ID = "example"
    EXTENSION_NAME = "Example Extension"

    def functions(self) -> list[dict[str, Any]]:
        return []

    def raw_manifest(self) -> bytes:
        return json.dumps(self.functions(), indent=2).encode("utf-8")

    def raw_resources(self) -> dict[int, tuple[str, bytes]]:
        return {MANIFEST_RESOURCE_ID: ("raw/extension_manifest", self.raw_manifest())}

    def app_meta(self) -> dict[str, Any]:
        return {
            EXT_META: True,
            EXT_META_ID: self.EXTENSION_ID,
            EXT_META_NAME: self.EXTENSION_NAME,
            EXT_META_MANIFEST: MANIFEST_RESOURCE_ID,
        }

    def components(self) -> dict[str, Any]:
        return {}

    def build_manifest(self) -> PackageManifest:
        return PackageManifest(
            package=self.package,
            label=self.label,
            uid=self.uid,
            launch_activity=".MainActivity",
            app_meta_data=self.app_meta(),
            **self.components(),
        )

    def execute(self, function: str, params_json: str) -> str:
        """Run one function: a free-form JSON result string (raise ValueError for `error`)."""
        raise NotImplementedError


class HelloWorldExtension(ExtensionApp):
    PACKAGE = "org.ethereumphone.extensionexample"
    LABEL = "ExtensionExample"
    EXTENSION_ID = "hello_world"
    EXTENSION_NAME = "Hello World Extension"

    def raw_manifest(self) -> bytes:
        return sample("andyclaw-hello-world.extension_manifest.json").encode("utf-8")

    def components(self) -> dict[str, Any]:
        return {"services": (ServiceDecl(name=".ExtensionService", actions=(EXT_SERVICE_ACTION,)),)}

    def execute(self, function: str, params_json: str) -> str:
        if function != "greet":
            return json.dumps({"error": f"Unknown function: {function}"})
        try:
            params = json.loads(params_json)
        except json.JSONDecodeError:
            params = {}
        name = params.get("name", "World") if isinstance(params, dict) else "World"
        return json.dumps({"greeting": f"Hello, {name}! Greetings from the AndyClaw extension."})

    async def transact(
        self, ctx: CallContext, action: str, descriptor: str, code: int, strings: list[str | None]
    ) -> TransactResult:
        if action != EXT_SERVICE_ACTION:
            raise NotImplementedError
        if code not in (TRANSACTION_GET_MANIFEST, TRANSACTION_EXECUTE):
            return TransactResult()  # super.onTransact → false: an empty reply parcel
        if descriptor != DESCRIPTOR:
            return TransactResult(
                exception_class="java.lang.SecurityException",
                exception_message="Binder invocation to an incorrect interface",
            )
        if code == TRANSACTION_GET_MANIFEST:
            return TransactResult(reply=sample("andyclaw-hello-world.service_get_manifest.json"))
        function = (strings[0] if strings else None) or ""
        params = (strings[1] if len(strings) > 1 else None) or "{}"
        return TransactResult(reply=self.execute(function, params))


class UnitConverterExtension(ExtensionApp):
    """Content-provider bridge: `call("execute", extras{function, params})`."""

    PACKAGE = "com.example.unitconverter"
    LABEL = "Unit Converter"
    EXTENSION_ID = "unit_converter"
    EXTENSION_NAME = "Unit Converter"
    FACTORS = {"m": 1.0, "km": 1000.0, "mi": 1609.344, "ft": 0.3048, "in": 0.0254}

    def functions(self) -> list[dict[str, Any]]:
        return [
            {
                "name": "convert_length",
                "description": "Convert a length between m, km, mi, ft and in.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "value": {"type": "number"},
                        "from": {"type": "string", "enum": list(self.FACTORS)},
                        "to": {"type": "string", "enum": list(self.FACTORS)},
                    },
                    "required": ["value", "from", "to"],
                },
            }
        ]

    def components(self) -> dict[str, Any]:
        return {
            "providers": (
                ProviderDecl(
                    name=".ExtensionProvider", authority=f"{self.package}.andyclaw.extension"
                ),
            )
        }

    def execute(self, function: str, params_json: str) -> str:
        if function != "convert_length":
            raise ValueError(f"Unknown function: {function}")
        p = json.loads(params_json)
        try:
            value = float(p["value"]) * self.FACTORS[p["from"]] / self.FACTORS[p["to"]]
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"bad parameters: {exc}") from None
        return json.dumps({"value": round(value, 6), "unit": p["to"]})

    async def call(
        self, ctx: CallContext, authority: str, method: str, arg: str | None, extras: Bundle | None
    ) -> Bundle | None:
        extras = extras or Bundle()
        function = extras.get("function")
        params = extras.get("params")
        try:
            if method != "execute":
                raise ValueError(f"Unknown method: {method}")
            result = self.execute(
                function if isinstance(function, str) else "",
                params if isinstance(params, str) else "{}",
            )
            return Bundle(result=result)
        except (ValueError, json.JSONDecodeError) as exc:
            return Bundle(error=str(exc))


class DiceExtension(ExtensionApp):
    """Broadcast bridge: replies on the request's `response_action`."""

    PACKAGE = "com.example.dice"
    LABEL = "Dice"
    EXTENSION_ID = "dice"
    EXTENSION_NAME = "Dice Roller"

    def functions(self) -> list[dict[str, Any]]:
        return [
            {
                "name": "roll_dice",
                "description": "Roll dice; returns each roll and the total.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "sides": {"type": "integer", "minimum": 2, "maximum": 100},
                        "count": {"type": "integer", "minimum": 1, "maximum": 20},
                        "seed": {"type": "integer"},
                    },
                    "required": ["sides"],
                },
            }
        ]

    def components(self) -> dict[str, Any]:
        return {
            "receivers": (
                ComponentDecl(name=".ExtensionReceiver", actions=(EXT_BROADCAST_ACTION,)),
            )
        }

    def execute(self, function: str, params_json: str) -> str:
        if function != "roll_dice":
            raise ValueError(f"Unknown function: {function}")
        p = json.loads(params_json)
        rng = random.Random(p.get("seed"))
        rolls = [rng.randint(1, int(p["sides"])) for _ in range(int(p.get("count", 1)))]
        return json.dumps({"rolls": rolls, "total": sum(rolls)})

    async def on_broadcast(
        self, ctx: CallContext, action: str, extras: Bundle
    ) -> tuple[str, Bundle] | None:
        if action != EXT_BROADCAST_ACTION:
            return None
        function = extras.get("function")
        response_action = extras.get("response_action")
        if not isinstance(function, str) or not isinstance(response_action, str):
            return None  # the guide's receiver returns silently
        params = extras.get("params")
        try:
            result = self.execute(function, params if isinstance(params, str) else "{}")
            return response_action, Bundle(result=result)
        except (ValueError, KeyError, json.JSONDecodeError) as exc:
            return response_action, Bundle(error=str(exc))


class FlashlightExtension(ExtensionApp):
    """Activity bridge: fire-and-forget; the app records what it was asked to do."""

    PACKAGE = "com.example.flashlight"
    LABEL = "Flashlight"
    EXTENSION_ID = "flashlight"
    EXTENSION_NAME = "Flashlight"

    def __init__(self, package: str | None = None, label: str | None = None) -> None:
        super().__init__(package, label)
        self.launches: list[tuple[str, str]] = []

    def functions(self) -> list[dict[str, Any]]:
        return [
            {
                "name": "toggle_flashlight",
                "description": "Open the flashlight screen and switch the light on or off.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"on": {"type": "boolean"}},
                    "required": ["on"],
                },
                "requiresApproval": True,
                "requiredPermissions": ["android.permission.CAMERA"],
            }
        ]

    def components(self) -> dict[str, Any]:
        return {
            "activities": (
                ComponentDecl(name=".MainActivity", actions=("android.intent.action.MAIN",)),
                ComponentDecl(name=".ExtensionActivity", actions=(EXT_ACTIVITY_ACTION,)),
            )
        }

    async def on_activity_start(self, ctx: CallContext, action: str, extras: Bundle) -> None:
        function = extras.get("function")
        params = extras.get("params")
        self.launches.append(
            (
                function if isinstance(function, str) else "",
                params if isinstance(params, str) else "",
            )
        )
