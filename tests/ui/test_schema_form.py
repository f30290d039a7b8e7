"""The schema form generator and its sync with the raw editor."""

from __future__ import annotations

import json

import pytest

from inspector.protocol.cetp import Annotations
from inspector.ui.composer import CallComposer, ToolTarget
from inspector.ui.schema_form import (
    UNSET,
    ArrayField,
    BoolField,
    EnumField,
    NullableField,
    NumberField,
    ObjectField,
    RawField,
    SchemaForm,
    StringField,
)

pytestmark = pytest.mark.gui

SCHEMA = {
    "type": "object",
    "properties": {
        "symbol": {"type": "string", "description": "Ticker", "maxLength": 8},
        "price": {"type": "number", "exclusiveMinimum": 0, "maximum": 1e6},
        "count": {"type": "integer", "minimum": 1, "default": 3},
        "notify": {"type": "boolean"},
        "urgent": {"type": "boolean"},
        "side": {"enum": ["buy", "sell"]},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
        "note": {"type": ["string", "null"]},
        "address": {"$ref": "#/$defs/address"},
        "remote": {"$ref": "https://example.com/schema.json"},
    },
    "required": ["symbol", "price", "count", "urgent", "address"],
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "zip": {"type": "integer"}},
            "required": ["city"],
        }
    },
}


def test_every_schema_kind_gets_its_editor(qtbot, qloop):
    form = SchemaForm()
    qtbot.addWidget(form)
    form.set_schema(SCHEMA)
    assert isinstance(form.field("symbol"), StringField)
    assert isinstance(form.field("price"), NumberField)
    assert isinstance(form.field("count"), NumberField)
    assert isinstance(form.field("notify"), BoolField) and form.field("notify").combo
    assert isinstance(form.field("urgent"), BoolField) and form.field("urgent").box
    assert isinstance(form.field("side"), EnumField)
    assert isinstance(form.field("tags"), ArrayField)
    assert isinstance(form.field("note"), NullableField)
    assert isinstance(form.field("address"), ObjectField)
    assert isinstance(form.field("address.city"), StringField)
    remote = form.field("remote")
    assert isinstance(remote, RawField) and "outside the document" in remote.note
    # required default prefilled, optional defaults only shown
    assert form.value() == {"count": 3, "urgent": False, "address": {}}
    assert form.field("price").edit.placeholderText().startswith("number > 0")


def test_form_values_and_round_trip(qtbot, qloop):
    form = SchemaForm()
    qtbot.addWidget(form)
    form.set_schema(SCHEMA)
    form.field("symbol").edit.setText("ACME")
    form.field("price").edit.setText("12.5")
    form.field("side").combo.setCurrentIndex(2)
    tags = form.field("tags")
    tags.add_item("a").edit.setText("a")
    form.field("note").null.setChecked(True)
    form.field("address.city").edit.setText("Oslo")
    v = form.value()
    assert v["symbol"] == "ACME" and v["price"] == 12.5 and v["side"] == "sell"
    assert v["tags"] == ["a"] and v["note"] is None and v["address"] == {"city": "Oslo"}
    doc = {
        "symbol": "X",
        "price": 1,
        "count": 9,
        "urgent": True,
        "address": {"city": "Rome", "zip": 100},
        "tags": ["p", "q"],
        "extra": {"kept": True},
    }
    form.set_value(doc)
    assert form.value() == doc
    form.set_value({})
    assert form.field("symbol").value() is UNSET


def test_recursive_ref_stops_at_depth(qtbot, qloop):
    schema = {
        "type": "object",
        "properties": {"node": {"$ref": "#/$defs/n"}},
        "$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}}}},
    }
    form = SchemaForm()
    qtbot.addWidget(form)
    form.set_schema(schema)  # must terminate
    assert form.field("node.next.next") is not None


def _composer(qtbot, schema=SCHEMA, annotations=None, max_bytes=65536) -> CallComposer:
    c = CallComposer()
    qtbot.addWidget(c)
    c.set_target(
        ToolTarget(
            name="create_alert",
            input_schema=schema,
            annotations=annotations,
            max_request_bytes=max_bytes,
        )
    )
    return c


def test_form_and_raw_editor_stay_in_sync(qtbot, qloop):
    c = _composer(qtbot)
    c.form.field("symbol").edit.setText("ACME")
    assert json.loads(c.raw.toPlainText())["symbol"] == "ACME"
    c.raw.setPlainText(
        json.dumps(
            {"symbol": "ZZ", "price": 3, "count": 2, "urgent": True, "address": {"city": "Paris"}}
        )
    )
    qtbot.waitUntil(lambda: c.form.field("symbol").edit.text() == "ZZ")
    assert c.form.field("address.city").edit.text() == "Paris"
    assert c.form.field("urgent").box.isChecked()


def test_validation_lists_errors_with_pointers(qtbot, qloop):
    c = _composer(qtbot)
    c.raw.setPlainText(
        json.dumps(
            {
                "symbol": "TOO-LONG-SYMBOL",
                "price": -1,
                "count": 0,
                "urgent": True,
                "address": {"zip": "x"},
            }
        )
    )
    qtbot.waitUntil(lambda: c.verdict is not None and len(c.verdict.issues) >= 4)
    pointers = {i.pointer for i in c.verdict.issues}
    assert {"/symbol", "/price", "/count", "/address"} <= pointers
    assert "/address/zip" in pointers
    assert any("/price" in c.issues.item(r).text() for r in range(c.issues.count()))
    c.raw.setPlainText("{ not json")
    qtbot.waitUntil(lambda: c.verdict is not None and not c.verdict.parsed)
    assert not c.send.isEnabled()


def test_size_limit_blocks_sending(qtbot, qloop):
    c = _composer(qtbot, schema={"type": "object"}, max_bytes=100)
    c.raw.setPlainText(json.dumps({"blob": "x" * 200}))
    qtbot.waitUntil(lambda: c.verdict is not None and c.verdict.size_bytes > 100)
    assert any(i.kind == "size" for i in c.verdict.issues)
    assert not c.send.isEnabled()
    assert "max_request_bytes" in c.size.text()


def test_request_id_new_and_reuse_and_danger_prompt(qtbot, qloop):
    ann = Annotations(
        effect="delete", risk="high", idempotent=False, confirmation="always", destructive=True
    )
    c = _composer(qtbot, schema={"type": "object"}, annotations=ann)
    qtbot.waitUntil(lambda: c.send.isEnabled())
    asked: list[str] = []
    c.confirm = lambda title, text: asked.append(text) or False
    sent: list = []
    c.sendRequested.connect(sent.append)
    assert c.submit() is None and asked and not sent  # declined: nothing sent
    c.confirm = lambda title, text: True
    first = c.submit()
    second = c.submit()
    assert first.request_id != second.request_id  # new id per call
    c.set_reuse(True)
    third = c.submit()
    assert third.request_id == second.request_id  # retry keeps the id
    c.raw.setPlainText('{"changed": 1}')
    qtbot.waitUntil(lambda: "INVALID_REQUEST" in c.retry_note.text())
    assert len(sent) == 3


def test_big_arguments_validate_in_a_worker_thread(qtbot, qloop, monkeypatch):
    from inspector.ui import composer as composer_mod
    from inspector.ui.validation import OFF_THREAD_BYTES

    threaded: list[int] = []
    real = composer_mod.run_in_thread

    async def spy(fn, *args):
        threaded.append(len(args[0]))
        return await real(fn, *args)

    monkeypatch.setattr(composer_mod, "run_in_thread", spy)
    c = _composer(qtbot, schema={"type": "object", "properties": {
        "items": {"type": "array", "items": {"type": "integer"}}}}, max_bytes=10**7)
    c.raw.setPlainText(json.dumps({"items": [*range(20_000), "x"]}))
    qtbot.waitUntil(lambda: c.verdict is not None and c.verdict.size_bytes > OFF_THREAD_BYTES,
                    timeout=10_000)
    assert threaded and threaded[-1] > OFF_THREAD_BYTES
    assert [i.pointer for i in c.verdict.issues] == ["/items/20000"]
    qtbot.waitUntil(lambda: c.form.field("items").overflow is not None)
    assert "too many for the form" in c.form.field("items").count_label.text()
    assert c.form.value()["items"][-1] == "x"  # the form never truncates what it shows
