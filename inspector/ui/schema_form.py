"""A form generated from a tool's JSON Schema input.

Handles strings, numbers with bounds, integers, booleans, enums, arrays, nested objects,
required marks, defaults, nullable types and `$ref` to `$defs` inside the same document
(any other `$ref` is never followed: schemas are untrusted and must not reach the network).
Whatever the form cannot represent falls back to a small raw-JSON field, so every schema
still gets an editor. Optional fields left empty are omitted from the value.
"""

from __future__ import annotations

import json
import math
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from inspector.ui.text import bound, tooltip

MAX_DEPTH = 8
MAX_FORM_ITEMS = 200  # longer arrays stay in the raw editor only


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False


UNSET: Any = _Unset()


def resolve_ref(schema: Any, root: Any) -> tuple[dict, str | None]:
    """Follow local `$ref`s (`#/$defs/x`, any `#/…` pointer); return (schema, problem)."""
    seen: set[str] = set()
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        ref = schema["$ref"]
        if not ref.startswith("#"):
            return {}, f"$ref {bound(ref, 80)!r} points outside the document; not followed"
        if ref in seen:
            return {}, f"$ref loop at {bound(ref, 80)!r}"
        seen.add(ref)
        target: Any = root
        for part in [p for p in ref[1:].split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(target, dict) and part in target:
                target = target[part]
            elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
                target = target[int(part)]
            else:
                return {}, f"$ref {bound(ref, 80)!r} does not resolve in this schema"
        merged = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**target, **merged} if isinstance(target, dict) else target
    return (schema if isinstance(schema, dict) else {}), None


def split_nullable(schema: dict, root: Any) -> tuple[dict, bool]:
    """Normalise `type: [T, "null"]`, `nullable: true` and `anyOf: [T, {type: null}]`."""
    nullable = bool(schema.get("nullable"))
    t = schema.get("type")
    if isinstance(t, list):
        rest = [x for x in t if x != "null"]
        if len(rest) < len(t):
            nullable = True
        schema = {**schema, "type": rest[0] if len(rest) == 1 else rest}
    for key in ("anyOf", "oneOf"):
        alts = schema.get(key)
        if isinstance(alts, list) and len(alts) == 2:
            non_null = [a for a in alts if not (isinstance(a, dict) and a.get("type") == "null")]
            if len(non_null) == 1 and isinstance(non_null[0], dict):
                inner, _ = resolve_ref(non_null[0], root)
                base = {k: v for k, v in schema.items() if k != key}
                schema = {**inner, **base}
                nullable = True
    return schema, nullable


class SchemaField(QWidget):
    """One editor for one schema node; `value()` returns UNSET when left empty."""

    changed = Signal()

    def __init__(self, schema: dict, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.schema = schema

    def value(self) -> Any:
        raise NotImplementedError

    def set_value(self, value: Any) -> None:
        raise NotImplementedError

    def hint(self) -> str:
        return ""


class StringField(SchemaField):
    def __init__(self, schema: dict, parent: QWidget | None = None) -> None:
        super().__init__(schema, parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.edit = QLineEdit()
        if isinstance(schema.get("maxLength"), int) and schema["maxLength"] > 0:
            self.edit.setMaxLength(min(schema["maxLength"], 1_000_000))
        lay.addWidget(self.edit)
        self.edit.textChanged.connect(self.changed)

    def value(self) -> Any:
        t = self.edit.text()
        return t if t else UNSET

    def set_value(self, value: Any) -> None:
        self.edit.setText("" if value is UNSET or value is None else str(value))

    def hint(self) -> str:
        bits = ["string"]
        if "format" in self.schema:
            bits.append(f"format {bound(self.schema['format'], 30)}")
        if "minLength" in self.schema or "maxLength" in self.schema:
            bits.append(
                f"length {self.schema.get('minLength', 0)}–{self.schema.get('maxLength', '∞')}"
            )
        if "pattern" in self.schema:
            bits.append(f"pattern {bound(self.schema['pattern'], 40)}")
        return ", ".join(bits)


class NumberField(SchemaField):
    """Integers and numbers as text so 'unset' exists and 64-bit integers fit."""

    def __init__(self, schema: dict, parent: QWidget | None = None) -> None:
        super().__init__(schema, parent)
        self.integer = schema.get("type") == "integer"
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.edit = QLineEdit()
        self.edit.setPlaceholderText(self.hint())
        lay.addWidget(self.edit)
        self.edit.textChanged.connect(self._on_text)

    def _on_text(self) -> None:
        ok = self.edit.text().strip() == "" or self._parse() is not UNSET
        self.edit.setProperty("invalid", not ok)
        self.edit.style().unpolish(self.edit)
        self.edit.style().polish(self.edit)
        self.changed.emit()

    def _parse(self) -> Any:
        t = self.edit.text().strip()
        if not t:
            return UNSET
        try:
            if self.integer:
                return int(t)
            v = float(t)
            if not math.isfinite(v):
                return UNSET
            return int(v) if v.is_integer() and "." not in t and "e" not in t.lower() else v
        except ValueError:
            return UNSET

    def value(self) -> Any:
        v = self._parse()
        if v is UNSET and self.edit.text().strip():
            return self.edit.text().strip()  # keep what was typed; validation flags it
        return v

    def set_value(self, value: Any) -> None:
        if value is UNSET or value is None:
            self.edit.setText("")
        else:
            self.edit.setText(json.dumps(value) if not isinstance(value, str) else value)

    def hint(self) -> str:
        s = self.schema
        bits = ["integer" if self.integer else "number"]
        if "minimum" in s:
            bits.append(f"≥ {s['minimum']}")
        if "exclusiveMinimum" in s:
            bits.append(f"> {s['exclusiveMinimum']}")
        if "maximum" in s:
            bits.append(f"≤ {s['maximum']}")
        if "exclusiveMaximum" in s:
            bits.append(f"< {s['exclusiveMaximum']}")
        if "multipleOf" in s:
            bits.append(f"multiple of {s['multipleOf']}")
        return bound(" ".join(bits), 120)


class BoolField(SchemaField):
    """A checkbox when required; a three-way choice (unset/true/false) when optional."""

    def __init__(self, schema: dict, required: bool, parent: QWidget | None = None) -> None:
        super().__init__(schema, parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.required = required
        if required:
            self.box: QCheckBox | None = QCheckBox("false")  # says the value it sends
            self.combo: QComboBox | None = None
            lay.addWidget(self.box)
            self.box.toggled.connect(lambda on: self.box.setText("true" if on else "false"))
            self.box.toggled.connect(self.changed)
        else:
            self.box = None
            self.combo = QComboBox()
            self.combo.addItems(["— not set —", "true", "false"])
            lay.addWidget(self.combo)
            self.combo.currentIndexChanged.connect(self.changed)
        lay.addStretch(1)

    def value(self) -> Any:
        if self.box is not None:
            return self.box.isChecked()
        assert self.combo is not None
        return {0: UNSET, 1: True, 2: False}[self.combo.currentIndex()]

    def set_value(self, value: Any) -> None:
        if self.box is not None:
            self.box.setChecked(value is True)
        elif self.combo is not None:
            self.combo.setCurrentIndex(1 if value is True else 2 if value is False else 0)

    def hint(self) -> str:
        return "boolean"


class EnumField(SchemaField):
    def __init__(self, schema: dict, required: bool, parent: QWidget | None = None) -> None:
        super().__init__(schema, parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.options: list[Any] = list(schema.get("enum") or [])[:500]
        self.offset = 0 if required and self.options else 1
        self.combo = QComboBox()
        if self.offset:
            self.combo.addItem("— not set —")
        for opt in self.options:
            self.combo.addItem(
                bound(json.dumps(opt, ensure_ascii=False) if not isinstance(opt, str) else opt, 80)
            )
        lay.addWidget(self.combo, 1)
        self.combo.currentIndexChanged.connect(self.changed)

    def value(self) -> Any:
        i = self.combo.currentIndex() - self.offset
        return self.options[i] if 0 <= i < len(self.options) else UNSET

    def set_value(self, value: Any) -> None:
        for i, opt in enumerate(self.options):
            if opt == value and type(opt) is type(value):
                self.combo.setCurrentIndex(i + self.offset)
                return
        self.combo.setCurrentIndex(0)

    def hint(self) -> str:
        return f"one of {len(self.options)}"


class RawField(SchemaField):
    """Any JSON value typed by hand, for schema parts the form cannot represent."""

    def __init__(self, schema: dict, note: str = "", parent: QWidget | None = None) -> None:
        super().__init__(schema, parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.edit = QLineEdit()
        self.edit.setPlaceholderText("JSON value")
        self.note = note
        if note:
            self.edit.setToolTip(tooltip(note))
        lay.addWidget(self.edit)
        self.edit.textChanged.connect(self.changed)

    def value(self) -> Any:
        t = self.edit.text().strip()
        if not t:
            return UNSET
        try:
            return json.loads(t)
        except ValueError:
            return t

    def set_value(self, value: Any) -> None:
        self.edit.setText("" if value is UNSET else json.dumps(value, ensure_ascii=False))

    def hint(self) -> str:
        return self.note or "JSON"


class NullableField(SchemaField):
    """Wraps a field with a 'null' checkbox."""

    def __init__(self, inner: SchemaField, parent: QWidget | None = None) -> None:
        super().__init__(inner.schema, parent)
        self.inner = inner
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(inner, 1)
        self.null = QCheckBox("null")
        lay.addWidget(self.null, 0, Qt.AlignmentFlag.AlignTop)
        self.null.toggled.connect(self._toggled)
        inner.changed.connect(self.changed)

    def _toggled(self, on: bool) -> None:
        self.inner.setEnabled(not on)
        self.changed.emit()

    def value(self) -> Any:
        return None if self.null.isChecked() else self.inner.value()

    def set_value(self, value: Any) -> None:
        self.null.setChecked(value is None)
        if value is not None:
            self.inner.set_value(value)

    def hint(self) -> str:
        return self.inner.hint() + " or null"


class ArrayField(SchemaField):
    def __init__(self, schema: dict, root: Any, depth: int, parent: QWidget | None = None) -> None:
        super().__init__(schema, parent)
        self.root = root
        self.depth = depth
        items = schema.get("items")
        self.item_schema: Any = items if isinstance(items, dict) else {}
        self.items: list[SchemaField] = []
        self.present = False
        self.overflow: list[Any] | None = None
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.rows = QVBoxLayout()
        lay.addLayout(self.rows)
        bar = QHBoxLayout()
        self.add_button = QPushButton("+ Add item")
        self.add_button.clicked.connect(lambda: self.add_item())
        bar.addWidget(self.add_button)
        self.count_label = QLabel("")
        self.count_label.setProperty("role", "muted")
        bar.addWidget(self.count_label)
        bar.addStretch(1)
        lay.addLayout(bar)
        self._update_count()

    def add_item(self, value: Any = UNSET) -> SchemaField:
        field = build_field(self.item_schema, self.root, required=True, depth=self.depth + 1)
        if value is not UNSET:
            field.set_value(value)
        row = QWidget()
        rl = QHBoxLayout(row)
        rl.setContentsMargins(0, 0, 0, 0)
        idx = QLabel(f"[{len(self.items)}]")
        idx.setProperty("role", "muted")
        rl.addWidget(idx, 0, Qt.AlignmentFlag.AlignTop)
        rl.addWidget(field, 1)
        remove = QPushButton("✕")
        remove.setToolTip("Remove this item")
        remove.setFixedWidth(28)
        rl.addWidget(remove, 0, Qt.AlignmentFlag.AlignTop)
        remove.clicked.connect(lambda: self._remove(row, field))
        self.rows.addWidget(row)
        self.items.append(field)
        self.present = True
        field.changed.connect(self.changed)
        self._update_count()
        self.changed.emit()
        return field

    def _remove(self, row: QWidget, field: SchemaField) -> None:
        if field in self.items:
            self.items.remove(field)
        row.setParent(None)
        row.deleteLater()
        self._renumber()
        self._update_count()
        self.changed.emit()

    def _renumber(self) -> None:
        for i in range(self.rows.count()):
            w = self.rows.itemAt(i).widget()
            if w is not None:
                lbl = w.findChild(QLabel)
                if lbl is not None:
                    lbl.setText(f"[{i}]")

    def _update_count(self) -> None:
        lo, hi = self.schema.get("minItems"), self.schema.get("maxItems")
        bounds = ""
        if lo is not None or hi is not None:
            bounds = f"  (items {lo if lo is not None else 0}–{hi if hi is not None else '∞'})"
        self.count_label.setText(f"{len(self.items)} item(s){bounds}")

    def clear(self) -> None:
        while self.rows.count():
            w = self.rows.takeAt(0).widget()
            if w is not None:
                w.setParent(None)
                w.deleteLater()
        self.items.clear()
        self._update_count()

    def value(self) -> Any:
        if self.overflow is not None:
            return self.overflow  # too long for the form: kept exactly as given
        if not self.items and not self.present:
            return UNSET
        out = []
        for f in self.items:
            v = f.value()
            out.append(None if v is UNSET else v)
        return out

    def set_value(self, value: Any) -> None:
        self.blockSignals(True)
        try:
            self.clear()
            self.present = isinstance(value, list)
            self.overflow = None
            if isinstance(value, list) and len(value) > MAX_FORM_ITEMS:
                self.overflow = value
                self.count_label.setText(f"{len(value):,} items — too many for the form; "
                                         "edit them in the raw JSON")
                self.add_button.setEnabled(False)
            elif isinstance(value, list):
                self.add_button.setEnabled(True)
                for v in value:
                    self.add_item(v)
        finally:
            self.blockSignals(False)
        self.changed.emit()

    def hint(self) -> str:
        return "array"


class ObjectField(SchemaField):
    """A group of property fields; unknown keys set from raw JSON are kept as they are."""

    def __init__(
        self,
        schema: dict,
        root: Any,
        depth: int,
        required: bool,
        top: bool = False,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(schema, parent)
        self.fields: dict[str, SchemaField] = {}
        self.extra: dict[str, Any] = {}
        self.required_keys = {r for r in schema.get("required") or [] if isinstance(r, str)}
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.group: QGroupBox | None = None
        holder: QWidget = self
        if not top:
            self.group = QGroupBox(bound(schema.get("title") or "object", 60))
            self.group.setCheckable(not required)
            if not required:
                self.group.setChecked(False)
                self.group.toggled.connect(self.changed)
            lay.addWidget(self.group)
            holder = self.group
        self.form = QFormLayout() if top else QFormLayout(holder)
        if top:
            lay.addLayout(self.form)
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        for name, sub in list(props.items())[:200]:
            req = name in self.required_keys
            field = build_field(sub, root, required=req, depth=depth + 1)
            label = QLabel(bound(name, 60) + (" *" if req else ""))
            label.setObjectName(f"label:{name}")
            if req:
                label.setToolTip("required")
                label.setProperty("role", "heading-required")
            desc = sub.get("description") if isinstance(sub, dict) else None
            title = sub.get("title") if isinstance(sub, dict) else None
            holder_w = QWidget()
            hv = QVBoxLayout(holder_w)
            hv.setContentsMargins(0, 0, 0, 0)
            hv.setSpacing(1)
            hv.addWidget(field)
            meta = field.hint()
            if isinstance(sub, dict) and "default" in sub:
                meta += f" · default {bound(json.dumps(sub['default'], ensure_ascii=False), 60)}"
            text = " — ".join(
                x
                for x in (bound(title, 80) if title else "", bound(desc, 300) if desc else "", meta)
                if x
            )
            info = QLabel(text)
            info.setTextFormat(Qt.TextFormat.PlainText)
            info.setWordWrap(True)
            info.setProperty("role", "hint")
            hv.addWidget(info)
            label.setTextFormat(Qt.TextFormat.PlainText)
            self.form.addRow(label, holder_w)
            field.setObjectName(f"field:{name}")
            self.fields[name] = field
            field.changed.connect(self.changed)

    def included(self) -> bool:
        return self.group is None or not self.group.isCheckable() or self.group.isChecked()

    def value(self) -> Any:
        if not self.included():
            return UNSET
        out: dict[str, Any] = {}
        for name, f in self.fields.items():
            v = f.value()
            if v is not UNSET:
                out[name] = v
        for k, v in self.extra.items():
            out.setdefault(k, v)
        return out

    def set_value(self, value: Any) -> None:
        if self.group is not None and self.group.isCheckable():
            self.group.setChecked(isinstance(value, dict))
        src = value if isinstance(value, dict) else {}
        for name, f in self.fields.items():
            f.blockSignals(True)
            try:
                f.set_value(src.get(name, UNSET))
            finally:
                f.blockSignals(False)
        self.extra = {k: v for k, v in src.items() if k not in self.fields}
        self.changed.emit()

    def hint(self) -> str:
        return "object"


def build_field(
    schema: Any, root: Any, *, required: bool, depth: int = 0, top: bool = False
) -> SchemaField:
    """The editor for one schema node (recursing into objects and arrays)."""
    if schema is True or schema is None:
        schema = {}
    if not isinstance(schema, dict):
        return RawField({}, "schema is not an object")
    schema, problem = resolve_ref(schema, root)
    if problem:
        return RawField(schema, problem)
    schema, nullable = split_nullable(schema, root)
    if depth > MAX_DEPTH:
        return RawField(schema, "nested too deep for the form; type JSON")
    t = schema.get("type")
    if t is None and isinstance(schema.get("properties"), dict):
        t = "object"
    field: SchemaField
    if "enum" in schema and isinstance(schema["enum"], list):
        field = EnumField(schema, required and not nullable)
    elif "const" in schema:
        field = EnumField({**schema, "enum": [schema["const"]]}, required)
    elif t == "string":
        field = StringField(schema)
    elif t in ("number", "integer"):
        field = NumberField(schema)
    elif t == "boolean":
        field = BoolField(schema, required and not nullable)
    elif t == "array":
        field = ArrayField(schema, root, depth)
    elif t == "object":
        field = ObjectField(schema, root, depth, required=required or top, top=top)
    else:
        return RawField(schema, "any JSON value" if t is None else f"type {bound(t, 40)}")
    if "default" in schema and required:
        field.set_value(schema["default"])
    elif "default" in schema and hasattr(field, "edit"):
        field.edit.setPlaceholderText(
            f"default {bound(json.dumps(schema['default'], ensure_ascii=False), 60)}"
        )
    return NullableField(field) if nullable else field


class SchemaForm(QScrollArea):
    """The whole generated form for one tool's input schema."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.root: SchemaField | None = None
        self.set_schema({"type": "object", "properties": {}})

    def set_schema(self, schema: Any) -> None:
        if not isinstance(schema, dict):
            schema = {}
        if schema.get("type") in (None, "object") and not isinstance(schema.get("$ref"), str):
            schema = {**schema, "type": "object"}
        self.root = build_field(schema, schema, required=True, top=True)
        body = QWidget()
        lay = QVBoxLayout(body)
        lay.addWidget(self.root)
        if isinstance(self.root, ObjectField) and not self.root.fields:
            empty = QLabel("This tool takes no arguments.")
            empty.setProperty("role", "muted")
            lay.addWidget(empty)
        lay.addStretch(1)
        self.setWidget(body)
        self.root.changed.connect(self.changed)

    def value(self) -> Any:
        assert self.root is not None
        v = self.root.value()
        return {} if v is UNSET else v

    def set_value(self, value: Any) -> None:
        assert self.root is not None
        self.root.blockSignals(True)
        try:
            self.root.set_value(value)
        finally:
            self.root.blockSignals(False)

    def editors(self) -> list[tuple[str, QWidget]]:
        """(dotted path, line edit) of every text-like leaf field, for error marks."""
        out: list[tuple[str, QWidget]] = []

        def walk(node: Any, prefix: str) -> None:
            if isinstance(node, NullableField):
                node = node.inner
            if isinstance(node, ObjectField):
                for name, f in node.fields.items():
                    walk(f, f"{prefix}.{name}" if prefix else name)
            elif isinstance(node, ArrayField):
                for i, f in enumerate(node.items):
                    walk(f, f"{prefix}.{i}" if prefix else str(i))
            else:
                for attr in ("edit", "combo", "box"):
                    w = getattr(node, attr, None)
                    if w is not None:
                        out.append((prefix, w))
                        break

        walk(self.root, "")
        return out

    def field(self, path: str) -> SchemaField | None:
        """The field at a dotted path (`"address.city"`), for tests and focus jumps."""
        node: Any = self.root
        for part in [p for p in path.split(".") if p]:
            if isinstance(node, NullableField):
                node = node.inner
            if not isinstance(node, ObjectField) or part not in node.fields:
                return None
            node = node.fields[part]
        return node
