"""Accessible names and descriptions: what a screen reader says for each control.

Widgets that know better set their own (`setAccessibleName`/`Description` where they
are built).  `ensure(window)` then fills in the rest from what a sighted user reads:
a button's text, a field's label in its form, a placeholder; the description from the
tooltip.  `missing(window)` lists the controls still without one (the tests fail on
any).  Qt's own helpers inside a control (a combo box's popup, a spin box's editor) are
named after their control.
"""
from __future__ import annotations

import re

from PySide6.QtWidgets import (
    QAbstractButton, QAbstractItemView, QAbstractSpinBox, QComboBox, QFormLayout, QHeaderView, QLabel, QLineEdit,
    QPlainTextEdit, QSlider, QTabBar, QTabWidget, QTextEdit, QWidget,
)

INTERACTIVE = (QAbstractButton, QComboBox, QAbstractItemView, QLineEdit, QTextEdit, QPlainTextEdit,
               QAbstractSpinBox, QTabBar, QSlider)

# Qt's own helper buttons, by object name: (name, description)
_QT_HELPERS = {
    "ScrollLeftButton": ("Scroll the tabs left", "Show the tabs hidden on the left"),
    "ScrollRightButton": ("Scroll the tabs right", "Show the tabs hidden on the right"),
    "qt_menubar_ext_button": ("More menus", "The menus that do not fit the menu bar"),
    "qt_toolbar_ext_button": ("More tools", "The tools that do not fit the toolbar"),
}


def _plain(text: str) -> str:
    text = re.sub(r"<[^>]+>", "", text or "")
    text = text.replace("&&", "\0").replace("&", "").replace("\0", "&")
    return " ".join(text.split())


def _form_label(w: QWidget) -> str:
    """The text of the label beside `w` in a QFormLayout (the field's caption), if any."""
    parent = w.parentWidget()
    while parent is not None:
        layout = parent.layout()
        if isinstance(layout, QFormLayout):
            for row in range(layout.rowCount()):
                field = layout.itemAt(row, QFormLayout.FieldRole)
                label = layout.itemAt(row, QFormLayout.LabelRole)
                if field is None or label is None:
                    continue
                inner = field.widget() or None
                lay = field.layout()
                hit = inner is w or (inner is not None and inner.isAncestorOf(w))
                if not hit and lay is not None:
                    hit = any(lay.itemAt(i).widget() is w for i in range(lay.count()))
                if hit and isinstance(label.widget(), QLabel):
                    return _plain(label.widget().text())
        parent = parent.parentWidget()
    return ""


def _owner(w: QWidget) -> QWidget | None:
    """The control a Qt helper widget belongs to (a combo's editor, a tab widget's bar)."""
    p = w.parentWidget()
    while p is not None:
        if isinstance(p, (QComboBox, QAbstractSpinBox, QTabWidget)):
            return p
        if isinstance(p, QTabBar) and isinstance(w, QAbstractButton):
            return p
        if isinstance(w, QHeaderView) and isinstance(p, QAbstractItemView):
            return p
        p = p.parentWidget()
    return None


def _tabs(bar: QTabBar) -> str:
    return ", ".join(_plain(bar.tabText(i)) for i in range(bar.count()))


def derived_name(w: QWidget) -> str:
    if w.objectName() in _QT_HELPERS:
        return _QT_HELPERS[w.objectName()][0]
    if isinstance(w, QAbstractButton) and _plain(w.text()):
        return _plain(w.text())
    if isinstance(w, QAbstractButton) and isinstance(w.parentWidget(), QLineEdit):
        return "Clear"  # the clear button of a line edit
    if isinstance(w, QTabBar):
        owner = w.parentWidget()
        if isinstance(owner, QTabWidget) and owner.accessibleName():
            return f"{owner.accessibleName()}: tabs"
        return "Tabs: " + _tabs(w)
    owner = _owner(w)
    if owner is not None:
        base = owner.accessibleName() or derived_name(owner) or "control"
        if isinstance(w, QHeaderView):
            return f"{base}: column headers"
        if isinstance(w, QTabBar):
            return f"{base}: tabs"
        if isinstance(owner, QTabBar):
            return f"{base}: scroll"
        return base
    label = _form_label(w)
    if label:
        return label
    if isinstance(w, QTabBar):
        return "Tabs: " + ", ".join(_plain(w.tabText(i)) for i in range(w.count()))
    if isinstance(w, QLineEdit) and w.placeholderText():
        return w.placeholderText().rstrip("…. ")
    if isinstance(w, QPlainTextEdit) and w.placeholderText():
        return w.placeholderText().split("(")[0].strip()
    if w.toolTip():
        return _plain(w.toolTip()).split(". ")[0]
    return ""


def derived_description(w: QWidget) -> str:
    if w.objectName() in _QT_HELPERS:
        return _QT_HELPERS[w.objectName()][1]
    if w.toolTip():
        return _plain(w.toolTip())
    if isinstance(w, QTabBar):
        return "Choose a tab: " + _tabs(w)
    if isinstance(w, QAbstractButton) and isinstance(w.parentWidget(), QLineEdit):
        return "Clear the text of " + (w.parentWidget().accessibleName() or "the field")
    if isinstance(w, QHeaderView):
        return "Column headers; click one to sort or drag to resize"
    owner = _owner(w)
    if owner is not None:
        return owner.accessibleDescription() or derived_description(owner)
    if isinstance(w, QTabBar):
        return "Choose a tab: " + ", ".join(_plain(w.tabText(i)) for i in range(w.count()))
    if isinstance(w, (QLineEdit, QPlainTextEdit)) and w.placeholderText():
        return w.placeholderText()
    return ""


def _ours(root: QWidget, w: QWidget) -> bool:
    return isinstance(w, INTERACTIVE) and w.window() is root.window()


def ensure(root: QWidget) -> None:
    """Give every control of `root`'s window without a name or description the derived one."""
    for w in [root, *root.findChildren(QWidget)]:
        if not _ours(root, w):
            continue
        if not w.accessibleName():
            name = derived_name(w)
            if name:
                w.setAccessibleName(name)
        if not w.accessibleDescription():
            desc = derived_description(w)
            if desc:
                w.setAccessibleDescription(desc)


def missing(root: QWidget) -> list[str]:
    """Controls of `root`'s window without an accessible name or description: "Class 'name' (object)"."""
    out = []
    for w in [root, *root.findChildren(QWidget)]:
        if not _ours(root, w):
            continue
        if not w.accessibleName().strip() or not w.accessibleDescription().strip():
            text = getattr(w, "text", lambda: "")()
            out.append(f"{type(w).__name__} name={w.accessibleName()!r} desc={w.accessibleDescription()!r} "
                       f"object={w.objectName()!r} text={text!r} parent={type(w.parentWidget()).__name__}")
    return out
