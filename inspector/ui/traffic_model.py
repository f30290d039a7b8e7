"""The traffic log's table model: every recorded `Exchange`, smooth at 100 000 rows.

Rows arrive through `add()` and are inserted in batches (one beginInsertRows per flush, not
per exchange). Filtering keeps an own index array of visible rows instead of a
QSortFilterProxyModel: a lowercase "haystack" string per exchange is kept beside it, and
for big logs the match runs in a worker thread over a snapshot, so typing in the filter
never blocks the window.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)

from inspector.protocol.exchange import Exchange, ExchangeStatus
from inspector.ui import theme
from inspector.ui.text import bound, human_bytes, tooltip
from inspector.ui.workers import run_in_thread

COLUMNS = (
    "#",
    "Time",
    "Kind",
    "Method",
    "Target",
    "Tool",
    "Status",
    "Duration",
    "Sent",
    "Received",
)
FILTER_KEYS = ("kind", "status", "method", "target", "tool", "device", "code", "id", "logs")
THREAD_THRESHOLD = 20_000  # filter in a worker thread above this many rows
_ERROR_STATUSES = {
    ExchangeStatus.PROVIDER_ERROR,
    ExchangeStatus.MALFORMED,
    ExchangeStatus.TRANSPORT_ERROR,
    ExchangeStatus.REFUSED,
}
_Index = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True)
class TrafficFilter:
    """A parsed filter: `status:error method:execute free words` (all terms must match)."""

    words: tuple[str, ...] = ()
    fields: tuple[tuple[str, str], ...] = ()
    errors_only: bool = False

    @classmethod
    def parse(cls, text: str) -> TrafficFilter:
        words: list[str] = []
        fields: list[tuple[str, str]] = []
        errors_only = False
        for term in text.lower().split():
            key, sep, value = term.partition(":")
            if sep and key in FILTER_KEYS and value:
                if key == "status" and value in ("error", "errors", "failed"):
                    errors_only = True
                else:
                    fields.append((key, value))
            else:
                words.append(term)
        return cls(tuple(words), tuple(fields), errors_only)

    @property
    def empty(self) -> bool:
        return not (self.words or self.fields or self.errors_only)


#: one row's searchable text: (all fields joined, per-key field values, is-an-error)
Row = tuple[str, tuple[str, ...], bool]
_KEY_INDEX = {k: i for i, k in enumerate(FILTER_KEYS)}


def haystack(ex: Exchange) -> Row:
    """What the filter searches for one exchange, lowercased once at insert time."""
    fields = (
        ex.kind.value,
        ex.status.value,
        ex.method,
        ex.target,
        ex.tool or "",
        ex.device,
        ex.error_code or "",
        f"{ex.request_id or ''} {ex.id}",
        logs_facets(ex),
    )
    low = tuple(f.lower() for f in fields)
    return " ".join(low), low, ex.status in _ERROR_STATUSES


def logs_facets(ex: Exchange) -> str:
    """`logs:` filter words (issue 16): `logs:error` = the provider logged errors or crashed,
    `logs:crash` = it crashed, `logs:any` = it logged something."""
    facets = ["any"] if ex.logs else []
    if ex.logged_errors:
        facets.append("error")
    if ex.crash is not None:
        facets.append("crash")
    return " ".join(facets)


def match_indices(rows: Sequence[Row], flt: TrafficFilter) -> list[int]:
    """Indices of `rows` matching `flt` (pure; runs in a worker thread for big logs).

    Each term narrows the candidate list, so the cheapest tests run over everything once
    and the rest only over what is left."""
    cand: Sequence[int] = range(len(rows))
    if flt.errors_only:
        cand = [i for i in cand if rows[i][2]]
    for key, value in flt.fields:
        k = _KEY_INDEX[key]
        cand = [i for i in cand if value in rows[i][1][k]]
    for w in flt.words:
        cand = [i for i in cand if w in rows[i][0]]
    return list(cand)


@dataclass
class _Pending:
    items: list[Exchange] = field(default_factory=list)


class TrafficModel(QAbstractTableModel):
    """Exchanges as rows; `add` batches, `set_filter` narrows, `refresh` repaints one row."""

    filterApplied = Signal(int, float)  # visible rows, milliseconds spent

    def __init__(self, parent=None, *, batch_ms: int = 50) -> None:
        super().__init__(parent)
        self._all: list[Exchange] = []
        self._hay: list[Row] = []
        self._pos: dict[str, int] = {}  # exchange id -> index in _all
        self._visible: list[int] | None = None  # None = everything visible
        self._filter = TrafficFilter()
        self._generation = 0
        self._pending = _Pending()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(batch_ms)
        self._timer.timeout.connect(self.flush)
        self.filtering = False

    # -- Qt model interface ------------------------------------------------------------
    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid():
            return 0
        return len(self._all) if self._visible is None else len(self._visible)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ):
        horizontal = orientation == Qt.Orientation.Horizontal
        if role == Qt.ItemDataRole.DisplayRole and horizontal and 0 <= section < len(COLUMNS):
            return COLUMNS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        ex = self.exchange_at(index.row())
        if ex is None:
            return None
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(ex, col)
        if role == Qt.ItemDataRole.ForegroundRole and col == 6:
            if ex.status in _ERROR_STATUSES:
                return theme.color("error")
            if ex.status == ExchangeStatus.PENDING:
                return theme.color("muted")
            return theme.color("ok")
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (0, 7, 8, 9):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and col == 6 and ex.error_message:
            return tooltip(f"{ex.error_code}: {ex.error_message}", 300)
        if role == Qt.ItemDataRole.UserRole:
            return ex.id
        return None

    @staticmethod
    def _display(ex: Exchange, col: int) -> str:
        if col == 0:
            return str(ex.seq)
        if col == 1:
            return time.strftime("%H:%M:%S", time.localtime(ex.started_ms / 1000)) + (
                f".{int(ex.started_ms % 1000):03d}"
            )
        if col == 2:
            return ex.kind.value
        if col == 3:
            return bound(ex.method, 60)
        if col == 4:
            return bound(ex.target, 80)
        if col == 5:
            return bound(ex.tool or "", 64)
        if col == 6:
            return (
                ex.status.value
                if not ex.error_code
                else f"{ex.status.value} · {bound(ex.error_code, 40)}"
            )
        if col == 7:
            d = ex.duration_ms
            return "…" if d is None else f"{d:,.0f} ms"
        if col == 8:
            return human_bytes(ex.request_bytes)
        return human_bytes(ex.response_bytes)

    # -- data in ------------------------------------------------------------------------
    def add(self, exchange: Exchange) -> None:
        """Queue one exchange; rows are inserted together on the next flush."""
        self._pending.items.append(exchange)
        if not self._timer.isActive():
            self._timer.start()

    def add_many(self, exchanges: Iterable[Exchange]) -> None:
        self._pending.items.extend(exchanges)
        self.flush()

    def flush(self) -> None:
        """Insert every queued exchange with one beginInsertRows."""
        items, self._pending.items = self._pending.items, []
        seen: set[str] = set()
        items = [e for e in items if e.id not in self._pos and not (e.id in seen or seen.add(e.id))]
        if not items:
            return
        base = len(self._all)
        hays = [haystack(e) for e in items]
        if self._visible is None:
            self.beginInsertRows(QModelIndex(), base, base + len(items) - 1)
            self._commit(items, hays)
            self.endInsertRows()
            return
        new_rows = [base + i for i in match_indices(hays, self._filter)]
        self._commit(items, hays)
        if new_rows:
            first = len(self._visible)
            self.beginInsertRows(QModelIndex(), first, first + len(new_rows) - 1)
            self._visible.extend(new_rows)
            self.endInsertRows()

    def _commit(self, items: list[Exchange], hays: list[str]) -> None:
        base = len(self._all)
        self._all.extend(items)
        self._hay.extend(hays)
        for i, e in enumerate(items):
            self._pos[e.id] = base + i

    def refresh(self, exchange: Exchange) -> None:
        """An exchange changed (finished, got findings): update its haystack and repaint."""
        i = self._pos.get(exchange.id)
        if i is None:
            self.add(exchange)  # still queued (or new): the flush shows its latest state
            return
        self._all[i] = exchange
        self._hay[i] = haystack(exchange)
        row = self._row_of(i)
        if row is not None:
            self.dataChanged.emit(self.index(row, 0), self.index(row, len(COLUMNS) - 1))

    def clear(self) -> None:
        self.beginResetModel()
        self._all.clear()
        self._hay.clear()
        self._pos.clear()
        self._pending.items.clear()
        self._visible = None if self._filter.empty else []
        self.endResetModel()

    # -- lookup -------------------------------------------------------------------------
    def exchange_at(self, row: int) -> Exchange | None:
        if self._visible is not None:
            if not 0 <= row < len(self._visible):
                return None
            row = self._visible[row]
        return self._all[row] if 0 <= row < len(self._all) else None

    def row_of(self, exchange_id: str) -> int | None:
        i = self._pos.get(exchange_id)
        return None if i is None else self._row_of(i)

    def _row_of(self, i: int) -> int | None:
        if self._visible is None:
            return i
        r = bisect.bisect_left(self._visible, i)
        return r if r < len(self._visible) and self._visible[r] == i else None

    @property
    def total(self) -> int:
        return len(self._all)

    # -- filtering ----------------------------------------------------------------------
    def set_filter(self, text: str) -> None:
        """Filter synchronously (small logs, tests, benchmarks)."""
        flt = TrafficFilter.parse(text)
        self._generation += 1
        t0 = time.perf_counter()
        rows = None if flt.empty else match_indices(self._hay, flt)
        self._apply(flt, rows, len(self._all), (time.perf_counter() - t0) * 1000)

    async def set_filter_async(self, text: str) -> None:
        """Filter in a worker thread when the log is big; the newest request wins."""
        flt = TrafficFilter.parse(text)
        if flt.empty or len(self._hay) < THREAD_THRESHOLD:
            self.set_filter(text)
            return
        self._generation += 1
        gen = self._generation
        snapshot = list(self._hay)  # appends during the match are picked up below
        t0 = time.perf_counter()
        self.filtering = True
        try:
            rows = await run_in_thread(match_indices, snapshot, flt)
        finally:
            self.filtering = False
        if gen != self._generation:
            return
        self._apply(flt, rows, len(snapshot), (time.perf_counter() - t0) * 1000)

    def _apply(self, flt: TrafficFilter, rows: list[int] | None, upto: int, ms: float) -> None:
        if rows is not None and upto < len(self._hay):  # rows added while matching
            rows = rows + [upto + i for i in match_indices(self._hay[upto:], flt)]
        self.beginResetModel()
        self._filter = flt
        self._visible = rows
        self.endResetModel()
        self.filterApplied.emit(self.rowCount(), ms)
