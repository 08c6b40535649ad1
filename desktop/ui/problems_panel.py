"""The error typology as checkable tags, the problems note, acceptability, text format and unit type.

Built from `desktop.domain.typology` (elements, tiers, glossary) and
`desktop.domain.difficulty` (text formats, unit types); emits requests only.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QFormLayout, QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget,
)

from desktop.domain import difficulty as km
from desktop.domain import typology as ty
from desktop.ui import colors
from desktop.ui.text_field import DebouncedText

_KEY = Qt.UserRole + 1  # (type, element) of a tag item
_ELEMENT_NAMES = {
    ty.TEXT: "Text", ty.QUESTION: "Question", ty.ALTERNATIVES: "Alternatives",
    ty.QUESTION_TEXT: "Question ↔ text", ty.TEXT_ALTERNATIVES: "Text ↔ alternatives",
    ty.QUESTION_ALTERNATIVES: "Question ↔ alternatives", ty.BETWEEN_ALTERNATIVES: "Between alternatives",
}
_UNSET = "— not set —"


class ProblemsPanel(QWidget):
    """Tags grouped by element and tier; emits tagToggled(type, element, checked) and field edits."""

    tagToggled = Signal(str, str, bool)
    fieldEdited = Signal(str, object)  # "note" | "text_format" | "multiple_texts" | "unit_type", value

    def __init__(self, parent=None):
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.acceptability = QLabel()
        self.acceptability.setWordWrap(True)
        layout.addWidget(self.acceptability)
        form = QFormLayout()
        self.text_format = QComboBox()
        self.text_format.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.text_format.setObjectName("text_format")
        self.text_format.addItem(_UNSET, None)
        for f in km.TEXT_FORMATS:
            self.text_format.addItem(f, f)
        self.multiple_texts = QCheckBox("multiple-member text")
        self.unit_type = QComboBox()
        self.unit_type.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.unit_type.setObjectName("unit_type")
        self.unit_type.addItem(_UNSET, None)
        for u in km.UNIT_TYPES:
            self.unit_type.addItem(u, u)
        form.addRow("Text format", self.text_format)
        form.addRow("", self.multiple_texts)
        form.addRow("MCQ unit type", self.unit_type)
        layout.addLayout(form)
        self.text_format.activated.connect(lambda _i: self._emit("text_format", self.text_format.currentData()))
        self.unit_type.activated.connect(lambda _i: self._emit("unit_type", self.unit_type.currentData()))
        self.multiple_texts.clicked.connect(lambda checked: self._emit("multiple_texts", bool(checked)))

        self.tree = QTreeWidget()
        self.tree.setHeaderHidden(True)
        self.tree.setUniformRowHeights(True)
        self._items: dict[tuple[str, str], QTreeWidgetItem] = {}
        self._tops: dict[str, QTreeWidgetItem] = {}
        self._build_tree()
        self.tree.itemChanged.connect(self._item_changed)
        layout.addWidget(self.tree, 1)
        layout.addWidget(QLabel("Problems note"))
        self.note = DebouncedText(placeholder="Free-text note on problems (saved as you type)")
        self.note.setMaximumHeight(90)
        self.note.committed.connect(lambda text: self._emit("note", text))
        layout.addWidget(self.note)
        self._loading = False

    def _build_tree(self) -> None:
        bold = QFont(self.font())
        bold.setBold(True)
        for element in ty.ELEMENTS:
            top = QTreeWidgetItem([_ELEMENT_NAMES.get(element, element)])
            top.setFont(0, bold)
            top.setFlags(Qt.ItemIsEnabled)
            self.tree.addTopLevelItem(top)
            self._tops[element] = top
            by_tier: dict[Any, QTreeWidgetItem] = {}
            for t in ty.types_for(element):
                if t.key == ty.NOTE:
                    continue
                tier_item = by_tier.get(t.tier)
                if tier_item is None:
                    tier_item = QTreeWidgetItem([f"{t.tier or 'no tier'}"])
                    tier_item.setForeground(0, QBrush(QColor(colors.acceptability_hex(t.tier))))
                    tier_item.setFlags(Qt.ItemIsEnabled)
                    top.addChild(tier_item)
                    by_tier[t.tier] = tier_item
                leaf = QTreeWidgetItem([t.name])
                leaf.setFlags(Qt.ItemIsEnabled | Qt.ItemIsUserCheckable)
                leaf.setCheckState(0, Qt.Unchecked)
                leaf.setToolTip(0, ty.glossary(t.key))
                leaf.setData(0, _KEY, (t.key, element))
                tier_item.addChild(leaf)
                self._items[(t.key, element)] = leaf
        self.tree.expandAll()  # every tag in sight: the typology is scanned, not searched

    # ---- showing -----------------------------------------------------------------------------
    def set_item(self, problems: list, note: str, text_format: str | None, multiple_texts: bool | None,
                 unit_type: str | None) -> None:
        self._loading = True
        self.tree.blockSignals(True)
        try:
            checked = {(p.type, p.element): p for p in problems}
            for key, leaf in self._items.items():
                tag = checked.get(key)
                leaf.setCheckState(0, Qt.Checked if tag is not None and tag.origin != "model" else Qt.Unchecked)
                name = ty.TYPES[key[0]].name
                if tag is not None and tag.origin == "model":
                    name += "  (suggested by the surface linter)"
                leaf.setText(0, name)
            # Tags this panel has no box for (other annotators' free notes, unknown types).
            self.others = [p for p in problems if (p.type, p.element) not in self._items]
            for element, top in self._tops.items():
                n = sum(1 for (_t, e), leaf in self._items.items()
                        if e == element and leaf.checkState(0) == Qt.Checked)
                base = _ELEMENT_NAMES.get(element, element)
                top.setText(0, f"{base}  ({n} ticked)" if n else base)
            self.note.set_text(note or "")
            self.text_format.setCurrentIndex(max(0, self.text_format.findData(text_format)))
            self.unit_type.setCurrentIndex(max(0, self.unit_type.findData(unit_type)))
            self.multiple_texts.setChecked(bool(multiple_texts))
        finally:
            self.tree.blockSignals(False)
            self._loading = False
        self.show_acceptability(problems)

    def show_acceptability(self, problems: list) -> None:
        name = ty.acceptability(problems)
        worst = ty.item_worst_tier(problems)
        hex_ = colors.acceptability_hex(name)
        parts = [f"<b>{name}</b>" + (f" (worst problem: {worst})" if worst else " (no problems)")]
        for group in (ty.TEXT, ty.QUESTION, ty.ALTERNATIVES):
            parts.append(f"{group}: {ty.acceptability(problems, group)}")
        notes = [p.note for p in problems if p.type == ty.NOTE and p.note]
        self.acceptability.setText(" · ".join(parts) + ("".join(f"<br>note: {n}" for n in notes)))
        c = colors.color(hex_)
        self.acceptability.setStyleSheet(f"QLabel {{ border-left: 8px solid {hex_}; padding: 4px 6px;"
                                         f" background: rgba({c.red()}, {c.green()}, {c.blue()}, 40); }}")

    def flush(self) -> None:
        self.note.flush()

    # ---- editing -------------------------------------------------------------------------------
    def _item_changed(self, leaf: QTreeWidgetItem, _col: int) -> None:
        key = leaf.data(0, _KEY)
        if self._loading or not key:
            return
        self.tagToggled.emit(key[0], key[1], leaf.checkState(0) == Qt.Checked)

    def _emit(self, name: str, value: Any) -> None:
        if not self._loading:
            self.fieldEdited.emit(name, value)

    def set_checked(self, type_key: str, element: str, checked: bool) -> None:
        """Tick or untick a tag as a click would (tools and tests)."""
        self._items[(type_key, element)].setCheckState(0, Qt.Checked if checked else Qt.Unchecked)
