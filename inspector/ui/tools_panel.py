"""The tool list: v2 tools with annotation badges, the revision and its diff, and for a
dual-stack provider the v1 list beside the v2 one (a v1 list must hold no side-effecting
tools, §2.1)."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.consumer.negotiation import ToolListDiff
from inspector.protocol.cetp import ToolDescriptor, ToolList, V1ToolList
from inspector.ui import theme
from inspector.ui.badges import BadgeRow, annotation_badges
from inspector.ui.json_view import JsonEditor
from inspector.ui.text import PARAGRAPH_LIMIT, bound, set_plain, shrinkable, tooltip


def _badge_text(t: ToolDescriptor) -> str:
    a = t.annotations
    bits = [a.effect.value, a.risk.value]
    if a.destructive:
        bits.append("destructive")
    return " · ".join(bits)


def diff_lines(diff: ToolListDiff) -> list[str]:
    """The revision change as one line per kind of change (names are provider text)."""

    def names(xs: list[str]) -> str:
        return bound(", ".join(xs), 600)

    out = [
        f"Tool list changed since the last negotiation: revision "
        f"{bound(diff.old_revision or '—', 60)} → {bound(diff.new_revision, 60)}"
    ]
    if diff.added:
        out.append(f"+ added: {names(diff.added)}")
    if diff.removed:
        out.append(f"− removed: {names(diff.removed)}")
    for c in diff.changed[:20]:
        out.append(f"~ changed: {bound(c.name, 64)} ({bound(', '.join(c.fields), 200)})")
    if not diff.tools_changed:
        out.append("no tool changed (only the revision)")
    return out


class ToolsPanel(QWidget):
    composeRequested = Signal(str, int)  # tool name, protocol version (1 or 2)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tools: ToolList | None = None
        self.v1_tools: V1ToolList | None = None
        lay = QVBoxLayout(self)
        head = QHBoxLayout()
        self.revision = QLabel("revision —")
        self.revision.setObjectName("toolsRevision")
        self.revision.setProperty("role", "heading")
        shrinkable(self.revision)  # a provider's long revision must not widen the window
        head.addWidget(self.revision)
        head.addStretch(1)
        lay.addLayout(head)
        self.diff = QLabel("")
        self.diff.setObjectName("toolsDiff")
        self.diff.setTextFormat(Qt.TextFormat.PlainText)
        self.diff.setWordWrap(True)
        self.diff.setProperty("role", "warn")
        self.diff.setVisible(False)
        lay.addWidget(self.diff)

        split = QSplitter(Qt.Orientation.Horizontal)
        v2box = QGroupBox("v2 tools")
        v2l = QVBoxLayout(v2box)
        self.list = QTreeWidget()
        self.list.setObjectName("toolsList")
        self.list.setHeaderLabels(["Tool", "Annotations"])
        self.list.setRootIsDecorated(False)
        self.list.setColumnWidth(0, 200)
        v2l.addWidget(self.list)
        split.addWidget(v2box)
        self.v1box = QGroupBox("v1 view (dual-stack)")
        v1l = QVBoxLayout(self.v1box)
        self.v1_list = QTreeWidget()
        self.v1_list.setObjectName("v1ToolsList")
        self.v1_list.setHeaderLabels(["v1 tool", "Description"])
        self.v1_list.setRootIsDecorated(False)
        v1l.addWidget(self.v1_list)
        self.v1_note = QLabel("")
        self.v1_note.setWordWrap(True)
        self.v1_note.setProperty("role", "muted")
        shrinkable(self.v1_note)  # it names v1 tools, which may have no spaces
        v1l.addWidget(self.v1_note)
        split.addWidget(self.v1box)
        self.v1box.setVisible(False)

        detail = QWidget()
        dl = QVBoxLayout(detail)
        dl.setContentsMargins(0, 0, 0, 0)
        self.name = QLabel("Select a tool")
        self.name.setProperty("role", "heading")
        self.name.setTextFormat(Qt.TextFormat.PlainText)
        shrinkable(self.name)  # provider names: clipped here, whole in the schema below
        dl.addWidget(self.name)
        self.badges = BadgeRow()
        dl.addWidget(self.badges)
        self.scopes = QLabel("")
        self.scopes.setTextFormat(Qt.TextFormat.PlainText)
        self.scopes.setProperty("role", "muted")
        shrinkable(self.scopes)
        dl.addWidget(self.scopes)
        self.schema = JsonEditor(read_only=True)
        self.schema.setObjectName("toolDetail")
        dl.addWidget(self.schema, 1)
        self.compose = QPushButton(theme.icon("composer", "#ffffff"), "Compose a call")
        self.compose.setObjectName("composeButton")
        self.compose.setProperty("primary", True)
        self.compose.setEnabled(False)
        dl.addWidget(self.compose, 0, Qt.AlignmentFlag.AlignRight)
        split.addWidget(detail)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(2, 3)
        split.setSizes([420, 250, 520])
        lay.addWidget(split, 1)

        self._selected: tuple[str, int] | None = None
        self.list.currentItemChanged.connect(lambda cur, _p: self._select(cur, 2))
        self.v1_list.currentItemChanged.connect(lambda cur, _p: self._select(cur, 1))
        self.list.itemDoubleClicked.connect(lambda *_: self._compose())
        self.v1_list.itemDoubleClicked.connect(lambda *_: self._compose())
        self.compose.clicked.connect(self._compose)

    def show_tools(
        self,
        tools: ToolList | None,
        diff: ToolListDiff | None = None,
        v1: V1ToolList | None = None,
        invalid: list[str] | None = None,
    ) -> None:
        self.tools = tools
        self.v1_tools = v1
        self.list.clear()
        set_plain(self.revision,
                  f"revision {bound(tools.revision, 60)} · {len(tools.tools)} tools"
                  if tools else "revision —", single_line=True)
        shown = diff if diff is not None and (diff.revision_changed or diff.tools_changed) else None
        notes = diff_lines(shown) if shown is not None else []
        for msg in invalid or []:
            notes.append("✗ invalid descriptor skipped: " + bound(msg, 300))
        self.diff.setText("\n".join(notes))
        self.diff.setVisible(bool(notes))
        added = set(shown.added) if shown else set()
        changed = {c.name: c.fields for c in shown.changed} if shown else {}
        for t in tools.tools if tools else []:
            mark = ""
            if t.name in added:
                mark = "new · "
            elif t.name in changed:
                mark = "changed · "
            it = QTreeWidgetItem([bound(t.name, 64), mark + _badge_text(t)])
            it.setData(0, Qt.ItemDataRole.UserRole, t.name)
            tip = t.title or t.description
            if t.name in changed:
                tip += "\nchanged: " + ", ".join(changed[t.name])
            it.setToolTip(0, tooltip(tip, 300))
            it.setIcon(0, theme.icon("tool"))
            if mark:
                it.setForeground(0, theme.color("accent"))
            if t.annotations.mutating_or_risky:
                it.setForeground(1, theme.color("warn"))
            self.list.addTopLevelItem(it)
        for name in shown.removed if shown else []:
            it = QTreeWidgetItem([bound(name, 64), "removed in this revision"])
            font = it.font(0)
            font.setStrikeOut(True)
            it.setFont(0, font)
            it.setFlags(Qt.ItemFlag.NoItemFlags)  # nothing to compose: the tool is gone
            it.setForeground(0, theme.color("muted"))
            it.setForeground(1, theme.color("muted"))
            self.list.addTopLevelItem(it)
        self.list.resizeColumnToContents(0)
        self.v1_list.clear()
        self.v1box.setVisible(v1 is not None)
        if v1 is not None:
            v2_names = {t.name: t for t in tools.tools} if tools else {}
            bad = []
            for t in v1.tools:
                it = QTreeWidgetItem([bound(t.name, 64), bound(t.description, 200)])
                it.setData(0, Qt.ItemDataRole.UserRole, t.name)
                v2t = v2_names.get(t.name)
                if v2t is not None and v2t.annotations.side_effecting:
                    it.setForeground(0, theme.color("error"))
                    bad.append(t.name)
                self.v1_list.addTopLevelItem(it)
            self.v1_note.setText(
                ("✗ side-effecting tools exposed over v1 (§2.1 forbids it): " + ", ".join(bad))
                if bad
                else f"{len(v1.tools)} v1 tools; none is side-effecting in the v2 view."
            )

    def _select(self, item: QTreeWidgetItem | None, version: int) -> None:
        if item is None:
            return
        name = item.data(0, Qt.ItemDataRole.UserRole)
        if name is None:  # a removed tool's row
            return
        self._selected = (name, version)
        self.compose.setEnabled(True)
        if version == 2 and self.tools is not None:
            t = self.tools.tool(name)
            if t is None:
                return
            self.name.setText(bound(t.title or t.name, 100) + f"  ({bound(t.name, 64)})")
            self.badges.set_badges(annotation_badges(t.annotations))
            self.scopes.setText("scopes: " + (", ".join(bound(s, 60) for s in t.scopes) or "none"))
            doc = {
                "description": t.description,
                "input_schema": t.input_schema,
                "output_schema": t.output_schema,
            }
        elif self.v1_tools is not None:
            t1 = self.v1_tools.tool(name)
            if t1 is None:
                return
            self.name.setText(bound(t1.name, 64) + "  (v1)")
            self.badges.set_badges(annotation_badges(None))
            self.scopes.setText("")
            doc = {"description": t1.description, "parameters": t1.parameters}
        else:
            return
        self.schema.show_text(
            bound(
                json.dumps(doc, indent=2, ensure_ascii=False),
                PARAGRAPH_LIMIT * 50,
                single_line=False,
            )
        )

    def select(self, name: str, version: int = 2) -> bool:
        lst = self.list if version == 2 else self.v1_list
        for i in range(lst.topLevelItemCount()):
            it = lst.topLevelItem(i)
            if it.data(0, Qt.ItemDataRole.UserRole) == name:
                lst.setCurrentItem(it)
                return True
        return False

    def _compose(self) -> None:
        if self._selected is not None:
            self.composeRequested.emit(*self._selected)
