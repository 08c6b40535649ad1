"""The Kirsch–Mosenthal difficulty form, built from `desktop.domain.difficulty`.

One control per variable lists the category names with their points; TOI is a
searchable concept list; TOM is two selectors (T-Q, T-A) whose combined category
and points are shown; IC follows NPar; the total updates as values change; a
banner says why an item is not eligible.  Every choice is emitted at once as
(variable, value) for the window to store.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox, QCompleter, QFormLayout, QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget,
)

from desktop.domain import difficulty as km
from desktop.domain.words import points
from desktop.ui.kit import colors
from desktop.ui.help import guide
from desktop.ui.kit.fit_text import ElidingCombo
from desktop.ui.kit.steady import WrapLabel, opaque, reserve_lines, set_style, set_text, set_tooltip, set_visible

NOT_ASSESSED = "— not assessed —"


_pts = points  # "1 pt", "2.5 pts"


def _combo(chars: int = 10) -> QComboBox:
    # Category names are long: keep the form narrow and show them whole in the list and tooltip.
    combo = ElidingCombo()  # a long category ends with “…”, whole in the tooltip
    combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(chars)
    combo.view().setTextElideMode(Qt.ElideNone)
    return combo


def widen_popup(combo: QComboBox) -> None:
    """The open list as wide as its longest entry (up to the screen), each entry's full text as its tooltip."""
    fm = combo.view().fontMetrics()
    widest = 0
    for i in range(combo.count()):
        text = combo.itemText(i)
        widest = max(widest, fm.horizontalAdvance(text))
        if not combo.itemData(i, Qt.ToolTipRole):
            combo.setItemData(i, text, Qt.ToolTipRole)
    screen = combo.screen()
    limit = screen.availableGeometry().width() - 40 if screen is not None else 1200
    combo.view().setMinimumWidth(min(widest + 48, limit))


class DifficultyForm(QWidget):
    """Emits `valueChosen(variable, value)`; `set_values` shows an assessment without emitting."""

    valueChosen = Signal(str, object)
    guideRequested = Signal(str)  # a section of the annotation guide ("toi", "principles")

    def __init__(self, parent=None):
        super().__init__(parent)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        self.banner = WrapLabel()
        self.banner.setWordWrap(True)
        self.banner.hide()
        outer.addWidget(self.banner)
        self.owner = WrapLabel()
        self.owner.setWordWrap(True)
        t = colors.theme()
        self.owner.setStyleSheet(f"color: {t.muted};")
        reserve_lines(self.owner, 2)  # the same place for the form below, with or without this note
        outer.addWidget(self.owner)
        self.total = WrapLabel()
        self.total.setWordWrap(True)
        font = self.total.font()
        font.setPointSizeF(font.pointSizeF() + 2)
        font.setBold(True)
        self.total.setFont(font)
        self.total.setTextInteractionFlags(Qt.TextSelectableByMouse)
        outer.addWidget(self.total)
        principles = WrapLabel("<a href='principles'>How to score: the assessment principles</a> · "
                            "<a href='km'>the scale</a>")
        principles.setWordWrap(True)
        principles.setToolTip(guide.reference("principles"))
        principles.linkActivated.connect(self.guideRequested.emit)
        outer.addWidget(principles)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        host = opaque(QWidget())
        self.form = QFormLayout(host)
        self.form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        scroll.setWidget(host)
        outer.addWidget(scroll, 1)
        self.messages = WrapLabel()
        self.messages.setWordWrap(True)
        outer.addWidget(self.messages)

        self.controls: dict[str, QComboBox] = {}
        self.points: dict[str, QLabel] = {}
        self._values: dict[str, Any] = {}
        self._loading = False
        for var in km.VARIABLES:
            if var == "tom":
                self._add_tom()
            else:
                self._add_scale(var)
        self.ic_note = WrapLabel()
        self.ic_note.setWordWrap(True)
        self.ic_note.setStyleSheet(f"color: {t.muted}; font-size: small;")
        reserve_lines(self.ic_note, 4)  # its longest note: the form's height stays the same from item to item
        self.form.addRow("", self.ic_note)
        self._refresh()

    # ---- building ------------------------------------------------------------------------
    def _row(self, var: str, control: QWidget) -> None:
        pts = QLabel()
        pts.setMinimumWidth(48)
        pts.setAlignment(Qt.AlignRight | Qt.AlignVCenter)
        self.points[var] = pts
        line = QHBoxLayout()
        line.addWidget(control, 1)
        line.addWidget(pts)
        label = WrapLabel(f"<a href='{guide.anchor_for(var)}' style='text-decoration:none'><b>{var.upper()}</b></a>"
                       f" {km.NAMES[var].lower()}")
        label.setWordWrap(True)
        label.setMaximumWidth(118)  # the names wrap: the boxes keep the room for their categories
        label.setToolTip(f"{km.NAMES[var]}: click for its categories and points. {guide.reference(var)}")
        label.linkActivated.connect(self.guideRequested.emit)
        self.form.addRow(label, line)
        for w in (control, *control.findChildren(QComboBox)):
            if isinstance(w, QComboBox):
                w.setProperty("guide_anchor", guide.anchor_for(var))
                widen_popup(w)
        if isinstance(control, QComboBox):
            control.setAccessibleName(f"{var.upper()}: {km.NAMES[var]}")
            control.setAccessibleDescription(f"Category of {km.NAMES[var]} with its points. "
                                             f"{guide.reference(var)}")

    def _add_scale(self, var: str) -> None:
        combo = _combo()
        combo.setObjectName(f"difficulty_{var}")
        combo.addItem(NOT_ASSESSED, None)
        if var == "toi":
            for key in km.categories("toi"):
                combo.addItem(f"{key} ({_pts(km.points('toi', key))})", key)
            for key, mapped in km.TOI_ADDED.items():
                if len(mapped) == 1:
                    combo.addItem(f"{key} → {mapped[0]} ({_pts(km.points('toi', key))})", key)
            # Searchable: type part of a concept name ("reas" finds reason).
            combo.setEditable(True)
            combo.setInsertPolicy(QComboBox.NoInsert)
            completer = QCompleter(combo.model(), combo)
            completer.setFilterMode(Qt.MatchContains)
            completer.setCaseSensitivity(Qt.CaseInsensitive)
            completer.setCompletionMode(QCompleter.PopupCompletion)
            combo.setCompleter(completer)
            combo.lineEdit().setPlaceholderText("type a concept…")
        else:
            for key in km.categories(var):
                name, p = km.SCALES[var][key]
                combo.addItem(f"{name} ({_pts(p)})", key)
                combo.setItemData(combo.count() - 1, name, Qt.ToolTipRole)
        combo.activated.connect(lambda _i, v=var: self._chosen(v))
        if combo.lineEdit() is not None:
            combo.lineEdit().setAccessibleName(f"{var.upper()}: type a concept")
            combo.lineEdit().setAccessibleDescription("Type part of a concept's name to find it")
        self.controls[var] = combo
        self._row(var, combo)

    def _add_tom(self) -> None:
        t = colors.theme()
        # T-Q above T-A: side by side they do not fit a laptop's side panel.
        host = QWidget()
        lines = QVBoxLayout(host)
        lines.setContentsMargins(0, 0, 0, 0)
        lines.setSpacing(2)
        self.tom_q, self.tom_a = _combo(6), _combo(6)
        for name, combo, what in (("T-Q", self.tom_q, "text and question"), ("T-A", self.tom_a, "text and key")):
            combo.setObjectName(f"difficulty_tom_{name[-1].lower()}")
            combo.addItem(f"{name}: —", None)
            for rel in km.RELATIONS:
                combo.addItem(f"{name}: {km.RELATION_NAMES[rel]}", rel)
            combo.activated.connect(lambda _i: self._tom_chosen())
            combo.setAccessibleName(f"TOM {name}: match between the {what}")
            combo.setAccessibleDescription(f"Type of match between the {what}; with the other relation it gives "
                                           f"the TOM category. {guide.reference('tom')}")
            line = QHBoxLayout()
            line.addWidget(QLabel(name))
            line.addWidget(combo, 1)
            lines.addLayout(line)
        self.tom_label = WrapLabel()
        self.tom_label.setWordWrap(True)
        self.tom_label.setStyleSheet(f"color: {t.muted};")
        reserve_lines(self.tom_label, 3)  # the rows below stay put whichever category it names
        self._row("tom", host)
        self.form.addRow("", self.tom_label)

    # ---- showing -------------------------------------------------------------------------------
    def set_values(self, values: dict[str, Any], owner_note: str = "") -> None:
        """Show an assessment (no signals)."""
        self._loading = True
        try:
            self._values = dict(values)
            for var, combo in self.controls.items():
                value = values.get(var)
                i = combo.findData(value) if value is not None else 0
                if i < 0:  # a category this scale version does not list: show it as is
                    combo.addItem(f"{value} (unknown)", value)
                    i = combo.count() - 1
                combo.setCurrentIndex(i)
            self._show_tom(values.get("tom"))
            set_text(self.owner, owner_note)
        finally:
            self._loading = False
        self._refresh()

    def _show_tom(self, value: Any) -> None:
        pair: tuple[Any, Any] = (None, None)
        self.tom_imported = None
        if isinstance(value, (list, tuple)) and len(value) == 2:
            pair = (value[0], value[1])
        elif isinstance(value, str) and value in km.TOM_COMBINED:
            # A combined category (as EMBRACE records it): show the first matching pair.
            pairs = km.tom_pairs(value)
            pair = pairs[0] if pairs else (None, None)
            self.tom_imported = value
        self.tom_q.setCurrentIndex(max(0, self.tom_q.findData(pair[0])) if pair[0] else 0)
        self.tom_a.setCurrentIndex(max(0, self.tom_a.findData(pair[1])) if pair[1] else 0)

    def set_eligibility(self, eligible: bool | None, why: str) -> None:
        if eligible is None or (eligible and not why):
            set_visible(self.banner, False)
            return
        t = colors.theme()
        bg = t.error_bg if not eligible else t.banner_bg
        fg = t.error_text if not eligible else t.banner_text
        head = "Not eligible for difficulty evaluation" if not eligible else "Eligible, with a note"
        set_text(self.banner, f"<b>{head}:</b> {why}")
        set_style(self.banner, f"QLabel {{ background: {bg}; color: {fg}; border: 1px solid {fg};"
                               " border-radius: 4px; padding: 6px; }")
        set_visible(self.banner, True)

    @property
    def values(self) -> dict[str, Any]:
        return dict(self._values)

    # ---- choosing --------------------------------------------------------------------------------
    def _chosen(self, var: str) -> None:
        if self._loading:
            return
        combo = self.controls[var]
        value = combo.currentData()
        if var == "toi" and combo.currentIndex() >= 0 and combo.currentText() != combo.itemText(combo.currentIndex()):
            return  # half-typed search text
        if value == self._values.get(var):
            return
        self._set(var, value)

    def _tom_chosen(self) -> None:
        if self._loading:
            return
        t_q, t_a = self.tom_q.currentData(), self.tom_a.currentData()
        if t_q is None or t_a is None:
            self._refresh()
            return  # wait for both relations
        value = [t_q, t_a]
        if value == self._values.get("tom"):
            return
        self._set("tom", value)

    def _set(self, var: str, value: Any) -> None:
        if value is None:
            self._values.pop(var, None)
        else:
            self._values[var] = value
        self._refresh()
        self.valueChosen.emit(var, value)

    def choose(self, var: str, value: Any) -> None:
        """Pick a category as the annotator would (keyboard-free path used by tools and tests)."""
        if var == "tom":
            self.tom_q.setCurrentIndex(self.tom_q.findData(value[0]))
            self.tom_a.setCurrentIndex(self.tom_a.findData(value[1]))
            self._tom_chosen()
            return
        combo = self.controls[var]
        combo.setCurrentIndex(combo.findData(value))
        self._chosen(var)

    # ---- live total, IC rule, messages --------------------------------------------------------------
    def _refresh(self) -> None:
        values = self._values
        for var, combo in (*self.controls.items(), ("tom", self.tom_q), ("tom", self.tom_a)):
            set_tooltip(combo, f"{combo.currentText()}\n{guide.reference(var)}")
        for var, label in self.points.items():
            value = values.get(var)
            try:
                set_text(label, _pts(km.points(var, value)) if value is not None else "")
            except ValueError:
                set_text(label, "?")
        tom = values.get("tom")
        if tom is not None:
            try:
                name, _p = km.TOM_COMBINED[km.tom_key(tom)]
                src = " (imported as the combined category)" if isinstance(tom, str) else ""
                set_text(self.tom_label, f"= {name}{src}")
            except ValueError:
                set_text(self.tom_label, f"unknown TOM value {tom!r}")
        else:
            set_text(self.tom_label, "choose both relations")
        self._apply_ic_rule(values.get("npar"))
        try:
            total = km.total(values)
        except ValueError:
            total = None
        if total is not None:
            set_text(self.total, f"Total difficulty: {total:g}  (of {km.THEORETICAL_MAX:g})")
        else:
            partial = 0.0
            for var, value in values.items():
                try:
                    partial += km.points(var, value) if value is not None else 0
                except (ValueError, KeyError):
                    pass
            todo = ", ".join(v.upper() for v in km.missing(values))
            set_text(self.total, f"Total so far: {partial:g}  ·  to score: {todo}")
        errors = [m.text for m in km.validate(values) if m.level == "error"]
        set_text(self.messages, "".join(f"<div style='color:{colors.theme().error}'>⚠ {e}</div>" for e in errors))

    def _apply_ic_rule(self, npar: Any) -> None:
        # NPar 2+ already means synthesis between paragraphs: IC cannot be "compare" then.
        combo = self.controls.get("ic")
        if combo is None:
            return
        model = combo.model()
        between = npar == "2+"
        for i in range(combo.count()):
            if combo.itemData(i) == "compare":
                model.item(i).setEnabled(not between)
        if between:
            set_text(self.ic_note, "IC: NPar is 2+ (between paragraphs), so the infer condition is "
                                   "contrast/synthesis throughout paragraphs (1 pt).")
        elif npar == "1":
            set_text(self.ic_note, "IC: NPar is 1 (within a paragraph): compare (0) unless the "
                                   "inference contrasts features (1).")
        else:
            set_text(self.ic_note, "IC depends on NPar: score NPar first.")
