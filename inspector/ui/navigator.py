"""The left pane: devices (virtual first, adb devices hot-plugged, relay state each) and the
CETP providers and AndyClaw extensions discovered on them, with version and warning badges.
"""

from __future__ import annotations

from enum import IntEnum

from PySide6.QtCore import QModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QPushButton, QTreeView, QVBoxLayout, QWidget

from inspector.protocol.discovery import CetpDeclaration, Discovery, ExtensionDeclaration
from inspector.session.devices import DeviceInfo
from inspector.ui import theme
from inspector.ui.text import bound, tooltip


class Role(IntEnum):
    KIND = Qt.ItemDataRole.UserRole + 1  # "device" | "provider" | "extension"
    SERIAL = Qt.ItemDataRole.UserRole + 2
    KEY = Qt.ItemDataRole.UserRole + 3  # declaration key / extension id
    BADGE_BASE = Qt.ItemDataRole.UserRole + 4  # the version badge without warnings
    MANIFEST_WARNINGS = Qt.ItemDataRole.UserRole + 5  # manifest rule breaks (count)


def stack_badge(decl: CetpDeclaration) -> str:
    vs = sorted(set(decl.versions))
    return "+".join(f"v{v}" for v in vs) if vs else "?"


def declaration_warnings(decl: CetpDeclaration) -> list[str]:
    """Manifest-level rule breaks shown as a warning badge (details on the Overview tab)."""
    out = list(decl.problems)
    if decl.same_package is False:
        out.append("service and authority belong to different packages (§2.1)")
    if not decl.exported:
        out.append("service is not exported")
    if decl.supports_v2 and decl.supports_v1 and not decl.legacy_visible:
        out.append("dual-stack without legacy version=1 (§2.1)")
    if decl.authority is None:
        out.append("no authority meta-data")
    return out


class NavigatorModel(QStandardItemModel):
    """Two columns: name and badges. Devices at the top level, providers below."""

    def __init__(self, parent=None) -> None:
        super().__init__(0, 2, parent)
        self.setHorizontalHeaderLabels(["Device / provider", "Badges"])
        self._devices: dict[str, QStandardItem] = {}

    def _row(
        self, text: str, badge: str, kind: str, serial: str, key: str, icon: str
    ) -> list[QStandardItem]:
        a = QStandardItem(theme.icon(icon), bound(text, 80))
        b = QStandardItem(bound(badge, 60))
        for it in (a, b):
            it.setEditable(False)
            it.setData(kind, Role.KIND)
            it.setData(serial, Role.SERIAL)
            it.setData(key, Role.KEY)
        return [a, b]

    def set_devices(self, devices: list[DeviceInfo], states: dict[str, str]) -> None:
        wanted = [d.serial for d in devices]
        for serial in list(self._devices):
            if serial not in wanted:
                item = self._devices.pop(serial)
                self.removeRow(item.row())
        for d in devices:
            state = states.get(d.serial, "")
            label = d.model or d.serial
            if d.kind == "adb" and d.model:
                label += f"  ({d.serial})"
            badge = d.state if not d.usable else (state or d.state)
            item = self._devices.get(d.serial)
            if item is None:
                row = self._row(
                    label,
                    badge,
                    "device",
                    d.serial,
                    d.serial,
                    "virtual" if d.kind in ("virtual", "relay") else "phone",
                )
                self.appendRow(row)
                self._devices[d.serial] = row[0]
            else:
                item.setText(bound(label, 80))
                self.item(item.row(), 1).setText(bound(badge, 60))
            self._set_hint(self._devices[d.serial], d)

    def _set_hint(self, item: QStandardItem, d: DeviceInfo) -> None:
        """An unusable device (unauthorized, offline …) gets a child row saying what to do,
        so the fix is visible without hovering; it goes away once the device is usable."""
        hints = [r for r in range(item.rowCount()) if item.child(r, 0).data(Role.KIND) == "hint"]
        for r in reversed(hints):
            item.removeRow(r)
        badge = self.item(item.row(), 1)
        if d.usable:  # phone diagnostics (docs/devices.md), plain text, as the tooltip
            tip = "\n".join(bound(f"{x.get('message', '')} {x.get('hint', '')}", 600)
                            for x in d.diagnostics[:8]).replace("<", "\u2039")
            item.setToolTip(tip)
            badge.setToolTip(tip)
            badge.setData(None, Qt.ItemDataRole.ForegroundRole)
            return
        what = d.message or f"the device is {d.state}: reconnect it or restart adb"
        tip = tooltip(f"{d.state}: {what}", 1500)
        for it in (item, badge):
            it.setToolTip(tip)
        badge.setForeground(theme.color("warn"))
        row = self._row(f"⚠ {what}", "", "hint", d.serial, "", "warning")
        row[0].setToolTip(tip)
        row[0].setForeground(theme.color("warn"))
        item.insertRow(0, row)

    def set_link_state(self, serial: str, state: str) -> None:
        item = self._devices.get(serial)
        if item is not None:
            self.item(item.row(), 1).setText(bound(state, 60))

    def set_discovery(self, serial: str, d: Discovery) -> None:
        parent = self._devices.get(serial)
        if parent is None:
            return
        if parent.rowCount():
            parent.removeRows(0, parent.rowCount())
        names = [decl.label or decl.package for decl in d.cetp]
        for decl, name in zip(d.cetp, names, strict=True):
            warns = declaration_warnings(decl)
            badge = stack_badge(decl) + (f"  ⚠ {len(warns)}" if warns else "")
            if names.count(name) > 1:  # one package, several services: tell them apart
                cls = decl.service.rsplit(".", 1)[-1]
                name = f"{name} · {cls.removesuffix('Service') or cls}"
            row = self._row(
                name,
                badge,
                "provider",
                serial,
                decl.key,
                "provider",
            )
            row[0].setToolTip(
                tooltip(f"{name}\n{decl.package}\nauthority: {decl.authority}\n"  # names elide
                        + "\n".join(warns), 1500)
            )
            row[1].setToolTip(tooltip(badge, 200))  # a narrow column elides it
            row[0].setData(stack_badge(decl), Role.BADGE_BASE)
            row[0].setData(len(warns), Role.MANIFEST_WARNINGS)
            if warns:
                row[1].setForeground(theme.color("warn"))
            parent.appendRow(row)
        for ext in d.extensions:
            warns = list(ext.problems)
            badge = (
                "ext"
                + (f" · {ext.bridge.value}" if ext.bridge else "")
                + (f"  ⚠ {len(warns)}" if warns else "")
            )
            row = self._row(ext.name or ext.id, badge, "extension", serial, ext.id, "extension")
            row[0].setToolTip(tooltip(
                f"{ext.name or ext.id}\n{ext.package}\nid: {ext.id}\n" + "\n".join(warns), 1500))
            row[1].setToolTip(tooltip(badge, 200))
            parent.appendRow(row)


def _find_child(model: QStandardItemModel, serial: str, key: str) -> QStandardItem | None:
    for r in range(model.rowCount()):
        dev = model.item(r, 0)
        if dev.data(Role.SERIAL) != serial:
            continue
        for c in range(dev.rowCount()):
            child = dev.child(c, 0)
            if child.data(Role.KEY) == key:
                return child
    return None


def add_finding_warnings(model: NavigatorModel, serial: str, key: str, messages: list[str]) -> None:
    """Fold rule breaks found while talking to a provider into its tree badge."""
    item = _find_child(model, serial, key)
    if item is None:
        return
    parent = item.parent()
    badge = parent.child(item.row(), 1)
    base = item.data(Role.BADGE_BASE) or badge.text().split("  ⚠")[0]
    item.setData(base, Role.BADGE_BASE)
    manifest = int(item.data(Role.MANIFEST_WARNINGS) or 0)
    total = manifest + len(messages)
    badge.setText(base + (f"  ⚠ {total}" if total else ""))
    if total:
        badge.setForeground(theme.color("warn"))
        badge.setToolTip(tooltip("\n".join(messages), 3000))


class NavigatorFilter(QSortFilterProxyModel):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setRecursiveFilteringEnabled(True)
        self.setAutoAcceptChildRows(True)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setFilterKeyColumn(-1)


class NavigatorPanel(QWidget):
    providerActivated = Signal(str, str)  # serial, declaration key (package/service)
    extensionActivated = Signal(str, str)  # serial, extension id
    deviceActivated = Signal(str)  # serial

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = NavigatorModel(self)
        self.proxy = NavigatorFilter(self)
        self.proxy.setSourceModel(self.model)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        bar = QHBoxLayout()
        self.filter = QLineEdit()
        self.filter.setObjectName("navigatorFilter")
        self.filter.setPlaceholderText("Filter providers (Ctrl+K)")
        self.filter.setClearButtonEnabled(True)
        bar.addWidget(self.filter, 1)
        self.rescan = QPushButton(theme.icon("refresh"), "")
        self.rescan.setToolTip("Rescan devices and packages (F5)")
        bar.addWidget(self.rescan)
        lay.addLayout(bar)
        self.tree = QTreeView()
        self.tree.setObjectName("navigatorTree")
        self.tree.setModel(self.proxy)
        self.tree.setUniformRowHeights(True)
        self.tree.setHeaderHidden(False)
        self.tree.header().setStretchLastSection(True)
        self.tree.setColumnWidth(0, 210)
        lay.addWidget(self.tree, 1)
        self.filter.textChanged.connect(self._filter)
        self.tree.selectionModel().currentChanged.connect(self._current)
        self.tree.activated.connect(self._current)
        self.model.rowsInserted.connect(lambda *_: self.tree.expandAll())
        self.model.rowsInserted.connect(self._span_hints)

    def _span_hints(self, parent: QModelIndex, first: int, last: int) -> None:
        """A device's "what to do" row uses the whole width (it has no badge)."""
        for r in range(first, last + 1):
            src = self.model.index(r, 0, parent)
            if src.data(Role.KIND) == "hint":
                idx = self.proxy.mapFromSource(src)
                if idx.isValid():
                    self.tree.setFirstColumnSpanned(idx.row(), idx.parent(), True)

    def _filter(self, text: str) -> None:
        self.proxy.setFilterFixedString(text)
        self.tree.expandAll()

    def _current(self, index: QModelIndex, _prev: QModelIndex | None = None) -> None:
        if not index.isValid():
            return
        kind = index.data(Role.KIND)
        serial = index.data(Role.SERIAL)
        key = index.data(Role.KEY)
        if kind == "provider":
            self.providerActivated.emit(serial, key)
        elif kind == "extension":
            self.extensionActivated.emit(serial, key)
        elif kind == "device":
            self.deviceActivated.emit(serial)

    def select(self, serial: str, key: str) -> bool:
        """Select a provider/extension row by its key (for tests and deep links)."""
        for r in range(self.model.rowCount()):
            dev = self.model.item(r, 0)
            if dev.data(Role.SERIAL) != serial:
                continue
            for c in range(dev.rowCount()):
                child = dev.child(c, 0)
                if child.data(Role.KEY) == key:
                    idx = self.proxy.mapFromSource(child.index())
                    self.tree.setCurrentIndex(idx)
                    return True
        return False

    def fit_columns(self) -> None:
        """Names get the room they need (within reason); the badges keep the rest."""
        self.tree.resizeColumnToContents(0)
        want = min(self.tree.columnWidth(0) + 8, 250)
        room = self.tree.viewport().width() - 110  # "v1+v2  ⚠ 2", "ext · broadcast"
        if room > 180:
            want = min(want, room)
        self.tree.setColumnWidth(0, max(180, want))

    def select_device(self, serial: str) -> bool:
        """Select a device row (what a click does: connect it, or say why it cannot)."""
        item = self.model._devices.get(serial)
        if item is None:
            return False
        self.tree.setCurrentIndex(self.proxy.mapFromSource(item.index()))
        return True

    def extension(self, d: Discovery | None, ext_id: str) -> ExtensionDeclaration | None:
        if d is None:
            return None
        return next((e for e in d.extensions if e.id == ext_id), None)
