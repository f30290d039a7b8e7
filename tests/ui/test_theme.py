"""Theme details a screenshot review caught: controls must stay visible in both themes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication, QCheckBox, QStyle, QStyleOptionButton

from inspector.ui import theme

pytestmark = pytest.mark.gui


def _indicator_contrast(qtbot, checked: bool) -> float:
    """Largest lightness difference between the check box indicator and the window."""
    box = QCheckBox("async_operations")
    box.setChecked(checked)
    qtbot.addWidget(box)
    box.resize(200, 30)
    box.show()
    img = box.grab().toImage()
    opt = QStyleOptionButton()
    box.initStyleOption(opt)
    rect = box.style().subElementRect(QStyle.SubElement.SE_CheckBoxIndicator, opt, box)
    assert rect.width() >= 10, rect
    window = QColor(theme.colors(theme.current())["window"]).lightnessF()
    ratio = img.width() / box.width()  # device pixel ratio of the grab
    return max(
        abs(QColor(img.pixel(int(x * ratio), int(y * ratio))).lightnessF() - window)
        for x in range(rect.left(), rect.right() + 1)
        for y in range(rect.top(), rect.bottom() + 1)
    )


@pytest.mark.parametrize("name", ["light", "dark"])
def test_unticked_checkbox_is_visible_in_both_themes(qtbot, qloop, name):
    app = QApplication.instance()
    try:
        theme.apply_theme(app, name)
        assert _indicator_contrast(qtbot, checked=False) > 0.25  # its frame stands out
        assert _indicator_contrast(qtbot, checked=True) > 0.25
    finally:
        theme.apply_theme(app, "light")


def test_stylesheet_images_exist():
    for name in theme.THEMES:
        qss = re.sub(r"/\*.*?\*/", "", theme.stylesheet(name), flags=re.S)  # no comments
        assert "@" not in qss, "an unreplaced @token"
        urls = re.findall(r'url\("([^"]+)"\)', qss)
        assert urls
        for path in urls:
            assert Path(path).is_file(), path
