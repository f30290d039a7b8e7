"""A flat table model over a Python list: the plumbing every list view here shares.

Subclasses name their `COLUMNS` and implement `row_data(row, column, role)`; rows are plain
objects, replaced wholesale with `set_rows` or appended with `append_row`. Out-of-range
indexes answer None, as `qtmodeltester` expects.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QWidget

from inspector.ui.text import plain_tooltip

Index = QModelIndex | QPersistentModelIndex
T = TypeVar("T")


class RowTableModel(QAbstractTableModel, Generic[T]):
    """Rows of `T`, one column per entry of `COLUMNS` (plain-text headers)."""

    COLUMNS: tuple[str, ...] = ()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows: list[T] = []

    # -- rows ---------------------------------------------------------------------------
    def set_rows(self, rows: Iterable[T]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def append_row(self, row: T) -> None:
        n = len(self._rows)
        self.beginInsertRows(QModelIndex(), n, n)
        self._rows.append(row)
        self.endInsertRows()

    def row_at(self, row: int) -> T | None:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def rows(self) -> list[T]:
        return list(self._rows)

    # -- Qt -----------------------------------------------------------------------------
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if (orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole
                and 0 <= section < len(self.COLUMNS)):
            return self.COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        value = self.row_data(self._rows[index.row()], index, role)
        if role == Qt.ItemDataRole.ToolTipRole and isinstance(value, str):
            return plain_tooltip(value)  # rows hold provider text: never rich (issue 12)
        return value

    def row_data(self, row: T, index: Index, role: int) -> Any:
        """The value for one cell of `row` (override)."""
        return None
