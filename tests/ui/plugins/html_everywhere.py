"""A provider and an extension that put HTML into every field they control (issue 12):
names, titles, descriptions, scopes, revision, error messages, extension manifest.

The image is small on purpose: the check is whether Qt *renders* rich text at all (a
40000×40000 image costs gigabytes when it does — on a shared test machine that is the
failure itself, so the walk test looks for rich-text rendering instead)."""

from typing import Any

from inspector.virtual.apps.extensions import DiceExtension
from inspector.virtual.apps.pricealerts import PriceAlertsProvider
from inspector.virtual.cetp_provider import CetpError, Scope, ToolSpec

HTML = "<b>B</b><a href='https://x.example/'>click here</a><img width=40 height=40 src='x.png'>"


class HtmlProvider(PriceAlertsProvider):
    PACKAGE = "com.example.htmlprovider"
    LABEL = "Html " + HTML
    PROVIDER_NAME = "Provider " + HTML
    DESCRIPTION = "Description " + HTML

    def scopes(self) -> list[Scope]:
        return [s.model_copy(update={"title": s.title + HTML, "description": HTML})
                for s in super().scopes()]

    def tool_specs(self) -> list[ToolSpec]:
        out = []
        for s in super().tool_specs():
            schema = dict(s.input_schema)
            props = {k: {**v, "description": HTML, "title": HTML} if isinstance(v, dict) else v
                     for k, v in (schema.get("properties") or {}).items()}
            schema["properties"] = props
            schema["description"] = HTML
            out.append(s.model_copy(update={"title": s.title + " " + HTML,
                                            "description": "Does things " + HTML,
                                            "input_schema": schema}))
        return out

    def revision(self, tools: list[dict[str, Any]]) -> str:
        return "rev-" + HTML

    def tool_get_quote(self, call):
        raise CetpError("INVALID_ARGS", "Error " + HTML)


class HtmlExtension(DiceExtension):
    PACKAGE = "com.example.htmlextension"
    LABEL = "Ext " + HTML
    EXTENSION_ID = "html_ext"
    EXTENSION_NAME = "Extension " + HTML

    def functions(self) -> list[dict[str, Any]]:
        fns = super().functions()
        for f in fns:
            f["description"] = "Rolls " + HTML
        return fns

    def execute(self, function: str, params_json: str) -> str:
        raise ValueError("Failure " + HTML)


def register(device):
    device.install(HtmlProvider())
    # loaded into a running device: a fresh install is stopped and its broadcast bridge would
    # never be reached (rule stopped_package_broadcast); this plugin tests text, not that
    device.install(HtmlExtension(), stopped=False)
