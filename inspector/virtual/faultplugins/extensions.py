"""Planted faults in AndyClaw extensions: a reference extension with one guide rule (or one
host expectation) broken, for `inspector.conformance.extensions` to catch."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from inspector.protocol.bundle import Bundle
from inspector.virtual.app import RELAY_UID, CallContext, TransactResult
from inspector.virtual.apps.extensions import (
    DiceExtension,
    ExtensionApp,
    HelloWorldExtension,
    UnitConverterExtension,
)
from inspector.virtual.manifest import EXT_META, PackageManifest, ProviderDecl


@dataclass(frozen=True)
class PlantedExt:
    id: str
    requirement: str  # E-nnn of inspector.conformance.extensions.EXT_REQUIREMENTS
    check: str
    cls: type[ExtensionApp]
    base: type[ExtensionApp]  # its fault-free variant (a stock reference extension)
    calls: tuple[str, ...] = ()  # functions the suite may call

    @property
    def package(self) -> str:
        return self.cls.PACKAGE


class _OwnNames:
    """Prefixes the function names with the extension id, so a fault plugin installed next
    to the stock extension it copies breaks only its own rule (not name uniqueness)."""

    EXTENSION_ID: str

    def functions(self) -> list[dict[str, Any]]:
        return [{**f, "name": f"{self.EXTENSION_ID}_{f['name']}"}
                for f in super().functions()]  # type: ignore[misc]

    def execute(self, function: str, params_json: str) -> str:
        return super().execute(function.removeprefix(self.EXTENSION_ID + "_"),  # type: ignore[misc]
                               params_json)


class FlagAsString(_OwnNames, UnitConverterExtension):
    """EXTENSION meta-data is the string "true" (the host reads getBoolean: not enabled)."""

    PACKAGE, EXTENSION_ID = "com.example.extfault.flagstring", "flag_string"

    def app_meta(self) -> dict[str, Any]:
        return {**super().app_meta(), EXT_META: "true"}


class NoInputSchema(_OwnNames, UnitConverterExtension):
    """A function without inputSchema: the host registers no function at all."""

    PACKAGE, EXTENSION_ID = "com.example.extfault.noschema", "no_schema"

    def functions(self) -> list[dict[str, Any]]:
        return [{"name": "convert_speed", "description": "Convert a speed"}]


class CopycatNames(UnitConverterExtension):
    """Declares convert_length, which the unit converter already has."""

    PACKAGE, EXTENSION_ID = "com.example.extfault.copycat", "copycat"


class UnexportedBridge(_OwnNames, UnitConverterExtension):
    """Its only bridge (the provider) is not exported."""

    PACKAGE, EXTENSION_ID = "com.example.extfault.unexported", "unexported"

    def components(self) -> dict[str, Any]:
        return {"providers": (ProviderDecl(name=".ExtensionProvider", exported=False,
                                           authority=f"{self.package}.andyclaw.extension"),)}


class ForeignAuthority(_OwnNames, UnitConverterExtension):
    """The provider bridge declares another package's .andyclaw.extension authority."""

    PACKAGE, EXTENSION_ID = "com.example.extfault.authority", "foreign_authority"

    def components(self) -> dict[str, Any]:
        return {"providers": (ProviderDecl(name=".ExtensionProvider",
                                           authority="com.example.converter.andyclaw.extension"),)}


class IgnoresResponseAction(_OwnNames, DiceExtension):
    """Replies on a fixed action instead of the request's response_action."""

    PACKAGE, EXTENSION_ID = "com.example.extfault.fixedreply", "fixed_reply"

    async def on_broadcast(self, ctx: CallContext, action: str, extras: Bundle
                           ) -> tuple[str, Bundle] | None:
        got = await super().on_broadcast(ctx, action, extras)
        return None if got is None else (f"{self.package}.RESULT", got[1])


class DriftingService(HelloWorldExtension):
    """GET_MANIFEST also lists a function the raw manifest does not have."""

    PACKAGE, EXTENSION_ID = "com.example.extfault.drift", "drift"

    def raw_manifest(self) -> bytes:
        fns = json.loads(super().raw_manifest())
        return json.dumps([{**f, "name": "drift_" + f["name"]} for f in fns]).encode()

    async def transact(self, ctx: CallContext, action: str, descriptor: str, code: int,
                       strings: list[str | None]) -> TransactResult:
        r = await super().transact(ctx, action, descriptor, code, strings)
        if code == 1 and r.reply:
            doc = json.loads(r.reply)
            doc["tools"] = [{**t, "name": "drift_" + t["name"]} for t in doc["tools"]]
            doc["tools"].append({"name": "drift_wave", "description": "Waves",
                                 "inputSchema": {}})
            return TransactResult(reply=json.dumps(doc))
        return r


class SharedWithHost(_OwnNames, UnitConverterExtension):
    """Shares its UID with the host (android:sharedUserId): no isolation."""

    PACKAGE, EXTENSION_ID = "com.example.extfault.shareduid", "shared_uid"

    def build_manifest(self) -> PackageManifest:
        return super().build_manifest().model_copy(update={
            "uid": RELAY_UID, "shared_user_id": "org.ethereumphone.andyclaw.shared"})


PLANTED_EXT: dict[str, PlantedExt] = {p.id: p for p in (
    PlantedExt("flag_as_string", "E-001", "ext.meta_data", FlagAsString,
               UnitConverterExtension),
    PlantedExt("no_input_schema", "E-002", "ext.input_schema", NoInputSchema,
               UnitConverterExtension),
    PlantedExt("copycat_names", "E-003", "ext.function_unique", CopycatNames, DiceExtension),
    PlantedExt("unexported_bridge", "E-004", "ext.bridge", UnexportedBridge,
               UnitConverterExtension),
    PlantedExt("foreign_authority", "E-005", "ext.provider_authority", ForeignAuthority,
               UnitConverterExtension),
    PlantedExt("ignores_response_action", "E-006", "ext.calls_answer", IgnoresResponseAction,
               DiceExtension, calls=("fixed_reply_roll_dice", "roll_dice")),
    PlantedExt("shared_with_host", "E-009", "ext.uid_isolation", SharedWithHost,
               UnitConverterExtension),
    PlantedExt("drifting_service", "E-007", "ext.manifest_drift", DriftingService,
               HelloWorldExtension),
)}
