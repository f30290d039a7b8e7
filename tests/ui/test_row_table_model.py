"""The shared list-backed table model: Qt's model contract and its row helpers."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, Qt

from inspector.ui.row_table_model import Index, RowTableModel


class Pairs(RowTableModel[tuple[str, int]]):
    COLUMNS = ("Name", "Count")

    def row_data(self, row: tuple[str, int], index: Index, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            return (row[0], str(row[1]))[index.column()]
        return None


def test_rows_reset_append_and_lookup(qtmodeltester) -> None:
    model = Pairs()
    qtmodeltester.check(model)
    model.set_rows([("a", 1), ("b", 2)])
    model.append_row(("c", 3))
    qtmodeltester.check(model)
    assert model.rowCount() == 3 and model.columnCount() == 2
    assert model.headerData(1, Qt.Orientation.Horizontal) == "Count"
    assert model.headerData(2, Qt.Orientation.Horizontal) is None
    assert model.data(model.index(2, 1)) == "3"
    assert model.data(QModelIndex()) is None
    assert model.row_at(1) == ("b", 2) and model.row_at(3) is None
    assert model.rowCount(model.index(0, 0)) == 0  # a table: rows have no children
