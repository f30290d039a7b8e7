"""Light and dark themes: a Fusion palette plus one stylesheet with per-theme colour tokens.

Colours live in `resources/themes/<name>.json` so widgets that paint by hand (badges, status
cells, the highlighter) read the same values as the stylesheet.
"""

from __future__ import annotations

import json
import re
from functools import cache

from PySide6.QtCore import QByteArray, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication

from inspector.ui.assets import resource_text

THEMES = ("light", "dark")
_current = "light"


@cache
def colors(name: str) -> dict[str, str]:
    """The colour tokens of a theme."""
    return json.loads(resource_text("themes", f"{name}.json"))


def current() -> str:
    return _current


def color(token: str) -> QColor:
    return QColor(colors(_current)[token])


def stylesheet(name: str) -> str:
    """base.qss with `@token`s replaced; `@resources` is the resources folder (for images)."""
    from inspector.ui.assets import resources_dir

    tokens = {**colors(name), "resources": resources_dir().as_posix()}
    return re.sub(
        r"@([a-z]+)",
        lambda m: tokens.get(m.group(1), m.group(0)),
        resource_text("themes", "base.qss"),
    )


def apply_theme(app: QApplication, name: str) -> None:
    """Switch the whole application to `name` ("light" or "dark")."""
    global _current
    if name not in THEMES:
        name = "light"
    _current = name
    c = colors(name)
    app.setStyle("Fusion")
    pal = QPalette()
    pal.setColor(QPalette.ColorRole.Window, QColor(c["window"]))
    pal.setColor(QPalette.ColorRole.WindowText, QColor(c["text"]))
    pal.setColor(QPalette.ColorRole.Base, QColor(c["base"]))
    pal.setColor(QPalette.ColorRole.AlternateBase, QColor(c["alt"]))
    pal.setColor(QPalette.ColorRole.Text, QColor(c["text"]))
    pal.setColor(QPalette.ColorRole.Button, QColor(c["panel"]))
    pal.setColor(QPalette.ColorRole.ButtonText, QColor(c["text"]))
    pal.setColor(QPalette.ColorRole.Highlight, QColor(c["accent"]))
    pal.setColor(QPalette.ColorRole.HighlightedText, QColor("#ffffff"))
    pal.setColor(QPalette.ColorRole.ToolTipBase, QColor(c["panel"]))
    pal.setColor(QPalette.ColorRole.ToolTipText, QColor(c["text"]))
    pal.setColor(QPalette.ColorRole.PlaceholderText, QColor(c["muted"]))
    pal.setColor(QPalette.ColorRole.Link, QColor(c["accent"]))
    for role in (
        QPalette.ColorRole.Text,
        QPalette.ColorRole.ButtonText,
        QPalette.ColorRole.WindowText,
    ):
        pal.setColor(QPalette.ColorGroup.Disabled, role, QColor(c["muted"]))
    app.setPalette(pal)
    app.setStyleSheet(stylesheet(name))
    icon.cache_clear()


@cache
def icon(name: str, tint: str | None = None) -> QIcon:
    """An SVG icon from resources/icons, drawn in the theme's icon colour (or `tint`)."""
    svg = resource_text("icons", f"{name}.svg")
    svg = svg.replace("currentColor", tint or colors(_current)["icon"])
    renderer = QSvgRenderer(QByteArray(svg.encode()))
    result = QIcon()
    for size in (16, 24, 32, 64):
        pm = QPixmap(size, size)
        pm.fill(Qt.GlobalColor.transparent)
        p = QPainter(pm)
        renderer.render(p)
        p.end()
        result.addPixmap(pm)
    return result
