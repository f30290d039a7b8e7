"""A provider whose schemas attack the inspector (issue 12): the input schema pre-fills a
default that hits `^(a+)+$` and doubles 2^24 times through an anyOf/$ref chain; the output
schema is a depth-24 chain the result never matches. The provider itself skips both
validations (a hostile provider does not care), so only the inspector pays — off the UI
thread, within its budget."""

from typing import Any

from inspector.protocol.hostile_schemas import NESTED_QUANTIFIER, doubling_chain, evil_string
from inspector.virtual.apps.pricealerts import PriceAlertsProvider
from inspector.virtual.cetp_provider import ToolSpec

DEPTH = 24


def _input_schema() -> dict[str, Any]:
    chain = doubling_chain(DEPTH)  # leaf: a string — the arguments object never is one
    return {"type": "object",
            "properties": {"symbol": {"type": "string", "pattern": NESTED_QUANTIFIER,
                                      "default": evil_string(40)}},
            "required": ["symbol"],
            "anyOf": [{"$ref": "#/$defs/d0"}, {"$ref": "#/$defs/d0"}],
            "$defs": chain["$defs"]}


class HostileSchemas(PriceAlertsProvider):
    PACKAGE = "com.example.hostileschemas"
    LABEL = "Hostile Schemas"

    def tool_specs(self) -> list[ToolSpec]:
        out = []
        for s in super().tool_specs():
            if s.name == "get_quote":
                s = s.model_copy(update={"input_schema": _input_schema(),
                                         "output_schema": doubling_chain(DEPTH)})
            out.append(s)
        return out

    def parse_args(self, spec: ToolSpec, args_text: str) -> Any:
        import json

        return json.loads(args_text)

    def validate_output(self, spec: ToolSpec, value: Any, value_json: str | None = None) -> None:
        return None

    def quote(self, symbol: str) -> float:
        return 1.0


def register(device):
    device.install(HostileSchemas())
