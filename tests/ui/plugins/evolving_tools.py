"""A price-alerts provider whose tool list evolves between negotiations (spec §3.3).

From the second negotiation on: `get_quote` gains an optional `exchange` argument (a schema
change), `list_alerts` is gone and `archive_alerts` is new — so the revision changes and the
window must show what was added, removed and changed."""

from typing import Any

from inspector.virtual.apps.pricealerts import PriceAlertsProvider
from inspector.virtual.cetp_provider import ToolSpec


class EvolvingTools(PriceAlertsProvider):
    PACKAGE = "com.example.evolving"
    LABEL = "Evolving Tools"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.negotiations = 0

    def new_session(self, uid, version, capabilities):
        self.negotiations += 1
        return super().new_session(uid, version, capabilities)

    def tool_specs(self) -> list[ToolSpec]:
        specs = super().tool_specs()
        if self.negotiations < 2:
            return specs
        out = []
        for s in specs:
            if s.name == "list_alerts":
                out.append(s.model_copy(update={"name": "archive_alerts",
                                                "title": "Archive alerts",
                                                "in_v1": False}))
                continue
            if s.name == "get_quote":
                schema = dict(s.input_schema)
                schema["properties"] = {**schema["properties"],
                                        "exchange": {"type": "string", "enum": ["NYSE", "LSE"]}}
                s = s.model_copy(update={"input_schema": schema})
            out.append(s)
        return out


def register(device):
    device.install(EvolvingTools())
