"""The error typology as checkable tags, the problems note, acceptability, text format and unit type.

Built from `desktop.domain.typology` (elements, tiers, glossary) and
`desktop.domain.difficulty` (text formats, unit types); emits requests only.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QPalette
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QFormLayout, QHeaderView, QLabel, QListWidget, QListWidgetItem,
    QToolButton, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget,
)

from desktop.domain import difficulty as km
from desktop.domain import typology as ty
from desktop.domain.model import letter
from desktop.ui.kit import colors
from desktop.ui.item.problem_rows import AlternativeToggles, SuggestionRow
from desktop.ui.item.text_field import DebouncedText
from desktop.ui.kit.steady import WrapLabel
from desktop.ui.kit.fit_text import ElidingCombo

_KEY = Qt.UserRole + 1  # (type, element) of a tag item
_ELEMENT_NAMES = {
    ty.TEXT: "Text", ty.QUESTION: "Question", ty.ALTERNATIVES: "Alternatives",
    ty.QUESTION_TEXT: "Question ↔ text", ty.TEXT_ALTERNATIVES: "Text ↔ alternatives",
    ty.QUESTION_ALTERNATIVES: "Question ↔ alternatives", ty.BETWEEN_ALTERNATIVES: "Between alternatives",
}
_UNSET = "— not set —"
# Elements whose problems can sit in one alternative (a spelling error in C); the
# inconsistency between alternatives is about several of them by definition.
_PER_ALTERNATIVE = (ty.ALTERNATIVES, ty.TEXT_ALTERNATIVES, ty.QUESTION_ALTERNATIVES)


def per_alternative(type_key: str, element: str) -> bool:
    return element in _PER_ALTERNATIVE and type_key != "inconsistency_between_alternatives"


def _wrap(text: str, fm, width: int) -> str:
    """`text` with line breaks so that no line is wider than `width` pixels (words kept whole)."""
    lines, line = [], ""
    for word in text.split():
        candidate = f"{line} {word}" if line else word
        if line and fm.horizontalAdvance(candidate) > width:
            lines.append(line)
            line = word
        else:
            line = candidate
    lines.append(line)
    return "\n".join(lines)


class ProblemsPanel(QWidget):
    """Tags grouped by element and tier; emits tagToggled(type, element, checked) and field edits."""

    tagToggled = Signal(str, str, bool)
    alternativeTagToggled = Signal(str, str, int, bool)  # type, element, alternative (0-based), checked
    suggestionAnswered = Signal(object, bool)  # the suggested ProblemTag, accepted (False: dismissed)
    suggestionChosen = Signal(object)  # a suggestion clicked: show where it is
    fieldEdited = Signal(str, object)  # "note" | "text_format" | "multiple_texts" | "unit_type", value

    def __init__(self, parent=None):
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.acceptability = WrapLabel()
        self.acceptability.setWordWrap(True)
        layout.addWidget(self.acceptability)
        form = QFormLayout()
        self.text_format = ElidingCombo()
        self.text_format.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.text_format.setObjectName("text_format")
        self.text_format.setToolTip("Continuous, partly continuous, non-continuous or mixed. "
                                    "Guide: Shift+F1, or Help → Annotation guide (guide#eligibility)")
        self.text_format.setProperty("guide_anchor", "eligibility")
        self.text_format.addItem(_UNSET, None)
        for f in km.TEXT_FORMATS:
            self.text_format.addItem(f, f)
        self.multiple_texts = QCheckBox("multiple-member text")
        self.multiple_texts.setToolTip("The passage is made of independent member texts (reviews, letters, ads)")
        self.unit_type = ElidingCombo()
        self.unit_type.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.unit_type.setObjectName("unit_type")
        self.unit_type.setToolTip("Is the question about the content, the text's structure or its vocabulary? "
                                  "Guide: Shift+F1, or Help → Annotation guide (guide#eligibility)")
        self.unit_type.setProperty("guide_anchor", "eligibility")
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

        self.suggestions_title = QLabel()
        layout.addWidget(self.suggestions_title)
        self.suggestions = QListWidget()
        self.suggestions.setVerticalScrollMode(QListWidget.ScrollPerPixel)
        self.suggestions.setAccessibleName("Surface linter suggestions")
        self.suggestions.setAccessibleDescription("Problems the linter found; accept to tag, dismiss if fine")
        self.suggestions.currentItemChanged.connect(self._suggestion_chosen)
        layout.addWidget(self.suggestions)
        self.suggestion_rows: list[SuggestionRow] = []

        self.tree = QTreeWidget()
        self.tree.setHeaderHidden(True)
        self.tree.setAccessibleName("Error typology")
        self.tree.setAccessibleDescription("Problem types by element and tier; tick those the item has. "
                                           "Guide: Shift+F1, or Help → Annotation guide (guide#typology)")
        self.tree.setProperty("guide_anchor", "typology")
        # Long type names wrap in a narrow panel instead of ending in "…".
        self.tree.setUniformRowHeights(False)
        self.tree.setTextElideMode(Qt.ElideNone)
        self.tree.setIndentation(12)
        if colors.theme().dark and self.tree.style().name().lower() == "fusion":
            # Fusion outlines a check box in Window.darker(140): on a dark list that is the list's own
            # colour and the boxes vanish.  A lighter Window for this view alone gives them an edge
            # (a palette, not a style sheet: a sheet would re-polish every letter button in the tree).
            pal = self.tree.palette()
            pal.setColor(QPalette.Window, QColor("#A8A8A8"))
            self.tree.setPalette(pal)
        self.tree.setColumnCount(2)  # the tag | the alternatives it is in
        # Names are wrapped to the column's width by hand: an item view neither wraps its rows'
        # text reliably nor grows their height, and "…" would cut the type's name.
        self._full: dict[tuple[str, str], str] = {}
        self._wrapped: dict[tuple[str, str], tuple[tuple[str, int], str]] = {}
        self.tree.header().sectionResized.connect(lambda *_: self._rewrap())
        self.tree.viewport().installEventFilter(self)  # a Stretch section resizes without telling
        self.tree.header().setStretchLastSection(False)
        self.tree.header().setSectionResizeMode(0, QHeaderView.Stretch)
        self.tree.header().setSectionResizeMode(1, QHeaderView.ResizeToContents)
        self._items: dict[tuple[str, str], QTreeWidgetItem] = {}
        self.letters: dict[tuple[str, str], AlternativeToggles] = {}
        self._n_alternatives = 4
        self._tops: dict[str, QTreeWidgetItem] = {}
        self._build_tree()
        self.tree.itemChanged.connect(self._item_changed)
        layout.addWidget(self.tree, 1)
        layout.addWidget(QLabel("Problems note"))
        self.note = DebouncedText(placeholder="Free-text note on problems (saved as you type)")
        self.note.setAccessibleName("Problems note")
        self.note.setAccessibleDescription("A free note on the item's problems; saved as you type")
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
                    tier_item.setForeground(0, QBrush(QColor(colors.theme().tier_text(t.tier))))
                    tier_item.setFlags(Qt.ItemIsEnabled)
                    top.addChild(tier_item)
                    by_tier[t.tier] = tier_item
                leaf = QTreeWidgetItem([t.name])
                leaf.setFlags(Qt.ItemIsEnabled | Qt.ItemIsUserCheckable)
                leaf.setCheckState(0, Qt.Unchecked)
                leaf.setToolTip(0, f"{ty.glossary(t.key)}\nGuide: Shift+F1, or Help → Annotation guide "
                                   f"(guide#typology-{t.tier})")
                leaf.setData(0, _KEY, (t.key, element))
                tier_item.addChild(leaf)
                self._items[(t.key, element)] = leaf
                if per_alternative(t.key, element):
                    toggles = AlternativeToggles(t.name)
                    toggles.toggled.connect(lambda i, on, k=t.key, e=element: self._letter_toggled(k, e, i, on))
                    self.tree.setItemWidget(leaf, 1, toggles)
                    self.letters[(t.key, element)] = toggles
        self.tree.expandAll()  # every tag in sight: the typology is scanned, not searched

    # ---- showing -----------------------------------------------------------------------------
    def set_item(self, problems: list, note: str, text_format: str | None, multiple_texts: bool | None,
                 unit_type: str | None, n_alternatives: int = 4) -> None:
        self._loading = True
        self._n_alternatives = n_alternatives
        self.tree.blockSignals(True)
        try:
            # Suggestions (origin "model") are not ticks: the suggestions list shows them.
            counted = [p for p in problems if p.origin != "model"]
            whole = {(p.type, p.element) for p in counted if p.alternative is None}
            in_alts: dict[tuple[str, str], set[int]] = {}
            for p in counted:
                if p.alternative is not None:
                    in_alts.setdefault((p.type, p.element), set()).add(p.alternative)
            for key, leaf in self._items.items():
                leaf.setCheckState(0, Qt.Checked if key in whole else Qt.Unchecked)
                name = ty.TYPES[key[0]].name
                alts = in_alts.get(key, set())
                if alts and key not in self.letters:  # imported on an element without letter buttons
                    name += "  (in " + ", ".join(letter(i) for i in sorted(alts)) + ")"
                self._full[key] = name
                if key in self.letters:
                    self.letters[key].set_state(n_alternatives, alts)
            # Tags this panel has no box for (other annotators' free notes, unknown types).
            self.others = [p for p in problems if (p.type, p.element) not in self._items]
            for element, top in self._tops.items():
                n = sum(1 for (_t, e), leaf in self._items.items()
                        if e == element and leaf.checkState(0) == Qt.Checked)
                n += sum(len(a) for (_t, e), a in in_alts.items() if e == element)
                base = _ELEMENT_NAMES.get(element, element)
                top.setText(0, f"{base}  ({n} ticked)" if n else base)
            self.note.set_text(note or "")
            self.text_format.setCurrentIndex(max(0, self.text_format.findData(text_format)))
            self.unit_type.setCurrentIndex(max(0, self.unit_type.findData(unit_type)))
            self.multiple_texts.setChecked(bool(multiple_texts))
        finally:
            self._rewrap()
            self.tree.blockSignals(False)
            self._loading = False
        self.show_acceptability(problems)

    def eventFilter(self, obj, event):
        if event.type() in (QEvent.Resize, QEvent.Show) and obj is self.tree.viewport():
            QTimer.singleShot(0, self._rewrap)  # after the header has laid out its sections
        return False

    def _rewrap(self) -> None:
        """Each tag's name broken into lines that fit the name column (leaves sit three levels deep)."""
        from PySide6.QtWidgets import QStyle
        box = self.tree.style().pixelMetric(QStyle.PM_IndicatorWidth, None, self.tree)
        width = self.tree.header().sectionSize(0) - 3 * self.tree.indentation() - max(box, 12) - 24
        if width < 40 or not self._full:
            return
        fm = self.tree.fontMetrics()
        loading, self._loading = self._loading, True
        blocked = self.tree.blockSignals(True)
        lines_changed = False
        try:
            for key, leaf in self._items.items():
                full = self._full.get(key, leaf.text(0))
                cached = self._wrapped.get(key)
                if cached is None or cached[0] != (full, width):
                    cached = self._wrapped[key] = ((full, width), _wrap(full, fm, width))
                text = cached[1]
                old = leaf.text(0)
                if old != text:
                    lines_changed |= old.count("\n") != text.count("\n")
                    leaf.setText(0, text)
        finally:
            self.tree.blockSignals(blocked)
            self._loading = loading
        if lines_changed:
            self.tree.doItemsLayout()  # row heights for the new line counts

    def show_acceptability(self, problems: list) -> None:
        name = ty.acceptability(problems)
        worst = ty.item_worst_tier(problems)
        hex_ = colors.acceptability_hex(name)
        parts = [f"<b>{name}</b>" + (f" (worst problem: {worst})" if worst else " (no problems)")]
        for group in (ty.TEXT, ty.QUESTION, ty.ALTERNATIVES):
            parts.append(f"{group}: {ty.acceptability(problems, group)}")
        notes = [p.note for p in problems if p.type == ty.NOTE and p.note]
        where = sorted({(p.alternative, ty.TYPES[p.type].name) for p in ty.counted(problems)
                        if p.alternative is not None and p.type in ty.TYPES})
        th = colors.theme()
        lines = [f"<br>in <b style='color:{th.alternative_text(a, colors.over(hex_, 40, th.window))}'>"
                 f"{letter(a)}</b>: {name}"
                 for a, name in where]
        self.acceptability.setText(" · ".join(parts) + "".join(lines)
                                   + "".join(f"<br>note: {n}" for n in notes))
        c = colors.color(hex_)
        self.acceptability.setStyleSheet(f"QLabel {{ border-left: 8px solid {hex_}; padding: 4px 6px;"
                                         f" background: rgba({c.red()}, {c.green()}, {c.blue()}, 40); }}")

    def flush(self) -> None:
        self.note.flush()

    # ---- the linter's suggestions ------------------------------------------------------------------
    def set_suggestions(self, suggestions: list) -> None:
        self.suggestions.blockSignals(True)
        try:
            self.suggestions.clear()
            self.suggestion_rows = []
            for sug in suggestions:
                row = SuggestionRow(sug)
                row.accept.clicked.connect(lambda _=False, t=sug.tag: self.suggestionAnswered.emit(t, True))
                row.dismiss.clicked.connect(lambda _=False, t=sug.tag: self.suggestionAnswered.emit(t, False))
                item = QListWidgetItem()
                self.suggestions.addItem(item)
                self.suggestions.setItemWidget(item, row)
                item.setSizeHint(row.sizeHint())
                self.suggestion_rows.append(row)
        finally:
            self.suggestions.blockSignals(False)
        n = len(suggestions)
        # As tall as its rows (up to a limit): the typology below keeps the room.
        rows = sum(self.suggestions.sizeHintForRow(i) for i in range(n))
        self.suggestions.setFixedHeight(min(rows + 2 * self.suggestions.frameWidth() + 2, 190))
        self.suggestions.setVisible(bool(n))
        self.suggestions_title.setText(
            f"<b>Surface linter suggestions ({n})</b> — accept to tag, dismiss if fine" if n
            else f"<span style='color:{colors.theme().muted}'>Surface linter: no suggestions</span>")

    def _suggestion_chosen(self, item, _previous) -> None:
        if item is None:
            return
        row = self.suggestions.itemWidget(item)
        if row is not None:
            self.suggestionChosen.emit(row.suggestion.tag)

    # ---- editing -------------------------------------------------------------------------------
    def _item_changed(self, leaf: QTreeWidgetItem, _col: int) -> None:
        key = leaf.data(0, _KEY)
        if self._loading or not key:
            return
        self.tagToggled.emit(key[0], key[1], leaf.checkState(0) == Qt.Checked)

    def _letter_toggled(self, type_key: str, element: str, alternative: int, checked: bool) -> None:
        if not self._loading:
            self.alternativeTagToggled.emit(type_key, element, alternative, checked)

    def _emit(self, name: str, value: Any) -> None:
        if not self._loading:
            self.fieldEdited.emit(name, value)

    def set_checked(self, type_key: str, element: str, checked: bool) -> None:
        """Tick or untick a tag as a click would (tools and tests)."""
        self._items[(type_key, element)].setCheckState(0, Qt.Checked if checked else Qt.Unchecked)

    def letter_button(self, type_key: str, element: str, alternative: int) -> QToolButton:
        """The button that tags `type_key` in one alternative (tools and tests)."""
        return self.letters[(type_key, element)].buttons[alternative]
