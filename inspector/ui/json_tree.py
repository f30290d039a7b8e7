"""A collapsible tree over a JSON value, built lazily so huge results open instantly.

Nodes are created when a parent is first expanded, and containers with many children hand
them out in chunks through canFetchMore/fetchMore, so a 200 000-element array costs
nothing until someone scrolls through it.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt

from inspector.ui.text import bound, tooltip

CHUNK = 500
COLUMNS = ("Key", "Value", "Type")
_Index = QModelIndex | QPersistentModelIndex


class _Node:
    __slots__ = ("children", "key", "loaded", "parent", "row", "value")

    def __init__(self, key: str, value: Any, parent: _Node | None, row: int) -> None:
        self.key = key
        self.value = value
        self.parent = parent
        self.row = row
        self.children: list[_Node] = []
        self.loaded = 0  # how many children exist so far

    @property
    def size(self) -> int:
        v = self.value
        return len(v) if isinstance(v, dict | list) else 0

    def load(self, upto: int) -> None:
        v = self.value
        if isinstance(v, dict):
            items = list(v.items())[self.loaded : upto]
            for off, (k, val) in enumerate(items):
                self.children.append(_Node(str(k), val, self, self.loaded + off))
        elif isinstance(v, list):
            for i in range(self.loaded, upto):
                self.children.append(_Node(f"[{i}]", v[i], self, i))
        self.loaded = len(self.children)


def _type_name(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return f"array[{len(v)}]"
    if isinstance(v, dict):
        return f"object{{{len(v)}}}"
    return type(v).__name__


def _preview(v: Any) -> str:
    if isinstance(v, dict):
        return "{…}" if v else "{}"
    if isinstance(v, list):
        return "[…]" if v else "[]"
    if isinstance(v, str):
        return bound(json.dumps(v, ensure_ascii=False), 300)
    return bound(json.dumps(v), 100)


class JsonTreeModel(QAbstractItemModel):
    """Key / Value / Type columns over one JSON value."""

    def __init__(self, value: Any = None, parent=None) -> None:
        super().__init__(parent)
        self._root = _Node("", None, None, 0)
        self.set_value(value)

    def set_value(self, value: Any) -> None:
        self.beginResetModel()
        self._root = _Node("", {"$": value} if value is not None else {}, None, 0)
        self._root.load(self._root.size)
        self.endResetModel()

    def _node(self, index: _Index) -> _Node:
        return index.internalPointer() if index.isValid() else self._root

    def index(self, row: int, column: int, parent: _Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        if column < 0 or column >= len(COLUMNS) or row < 0:
            return QModelIndex()
        p = self._node(parent)
        if row >= len(p.children):
            return QModelIndex()
        return self.createIndex(row, column, p.children[row])

    def parent(self, index: _Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        if not index.isValid():
            return QModelIndex()
        node: _Node = index.internalPointer()
        p = node.parent
        if p is None or p is self._root:
            return QModelIndex()
        return self.createIndex(p.row, 0, p)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self._node(parent).children)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return len(COLUMNS)

    def hasChildren(self, parent: _Index = QModelIndex()) -> bool:  # noqa: B008
        if parent.isValid() and parent.column() != 0:
            return False
        return self._node(parent).size > 0

    def canFetchMore(self, parent: _Index) -> bool:
        if parent.isValid() and parent.column() != 0:
            return False
        n = self._node(parent)
        return n.loaded < n.size

    def fetchMore(self, parent: _Index) -> None:
        if parent.isValid() and parent.column() != 0:
            return
        n = self._node(parent)
        upto = min(n.size, n.loaded + CHUNK)
        if upto <= n.loaded:
            return
        self.beginInsertRows(parent, n.loaded, upto - 1)
        n.load(upto)
        self.endInsertRows()

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        if role == Qt.ItemDataRole.ToolTipRole:  # provider data: an escaped tooltip
            shown = self.data(index, Qt.ItemDataRole.DisplayRole)
            return tooltip(shown) if isinstance(shown, str) else shown
        node: _Node = index.internalPointer()
        if role == Qt.ItemDataRole.DisplayRole:
            col = index.column()
            if col == 0:
                return bound(node.key, 120)
            if col == 1:
                return _preview(node.value)
            return _type_name(node.value)
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ):
        if (
            role == Qt.ItemDataRole.DisplayRole
            and orientation == Qt.Orientation.Horizontal
            and 0 <= section < len(COLUMNS)
        ):
            return COLUMNS[section]
        return None

    def json_pointer(self, index: _Index) -> str:
        """The RFC 6901 pointer of a node (for copying a path)."""
        parts: list[str] = []
        node = self._node(index)
        while node.parent is not None and node.parent is not self._root:
            key = node.key
            if isinstance(node.parent.value, list):
                key = str(node.row)
            parts.append(key.replace("~", "~0").replace("/", "~1"))
            node = node.parent
        return "/" + "/".join(reversed(parts)) if parts else ""
