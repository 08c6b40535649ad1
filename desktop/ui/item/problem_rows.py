"""The rows inside the problems panel: a tag's letter buttons (which alternatives the problem
is in) and one suggestion of the surface linter with Accept and Dismiss."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QToolButton, QWidget

from desktop.domain import typology as ty
from desktop.domain.model import letter
from desktop.ui.kit import colors
from desktop.ui.kit.steady import WrapLabel


class AlternativeToggles(QWidget):
    """A row of letter buttons on a tag: which alternatives the problem is in."""

    toggled = Signal(int, bool)  # alternative (0-based), checked

    def __init__(self, type_name: str, parent=None):
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 2, 0)
        row.setSpacing(1)
        self.buttons: list[QToolButton] = []
        for i in range(5):
            b = QToolButton()
            b.setText(letter(i))
            b.setCheckable(True)
            b.setAutoRaise(True)
            b.setFocusPolicy(Qt.NoFocus)
            b.setToolTip(f"{type_name} in alternative {letter(i)} only")
            b.setAccessibleName(f"{type_name} in {letter(i)}")
            b.setAccessibleDescription(f"Tag “{type_name}” in alternative {letter(i)} only")
            t = colors.theme()
            # auto-raised: drawn on the list (base) or, under the pointer, on a button face
            idle = colors.readable(colors.readable(t.muted, b.palette().color(b.backgroundRole()).name()), t.base)
            b.setStyleSheet(f"QToolButton {{ color: {idle}; padding: 0 3px; }}"
                            f"QToolButton:checked {{ background: {t.alternative_fill(i)}; color: {t.on_alternative(i)};"
                            " font-weight: bold; border-radius: 2px; }")
            b.clicked.connect(lambda checked, i=i: self.toggled.emit(i, bool(checked)))
            row.addWidget(b)
            self.buttons.append(b)

    def set_state(self, n_alternatives: int, checked: set[int]) -> None:
        for i, b in enumerate(self.buttons):
            b.setVisible(i < n_alternatives)
            b.setChecked(i in checked)


class SuggestionRow(QWidget):
    """One linter suggestion: what and where, the found stretch in context, Accept and Dismiss."""

    def __init__(self, suggestion, parent=None):
        super().__init__(parent)
        self.suggestion = suggestion
        t = suggestion.tag
        kind = ty.TYPES[t.type] if t.type in ty.TYPES else None
        hex_ = colors.acceptability_hex(kind.tier if kind else None)
        row = QHBoxLayout(self)
        row.setContentsMargins(2, 2, 2, 2)
        name = kind.name if kind else t.type
        extra = " <i>(already tagged)</i>" if suggestion.already_tagged else ""
        self.label = WrapLabel(f"<b>{name}</b> · {suggestion.where}{extra}<br>"
                            f"<span style='font-family: monospace'>{suggestion.excerpt_html}</span>")
        self.label.setTextFormat(Qt.RichText)
        self.label.setWordWrap(True)
        self.label.setToolTip(ty.glossary(t.type) if kind else t.type)
        self.label.setStyleSheet(f"QLabel {{ border-left: 5px solid {hex_}; padding-left: 4px; }}")
        row.addWidget(self.label, 1)
        self.accept = QPushButton("Accept")
        self.accept.setToolTip("Store this problem tag (origin: model-accepted)")
        self.accept.setAccessibleName(f"Accept: {name}, {suggestion.where}")
        self.dismiss = QPushButton("Dismiss")
        self.dismiss.setToolTip("Not a problem: the suggestion does not come back")
        self.dismiss.setAccessibleName(f"Dismiss: {name}, {suggestion.where}")
        self.accept.setAccessibleDescription(self.accept.toolTip())
        self.dismiss.setAccessibleDescription(self.dismiss.toolTip())
        for b in (self.accept, self.dismiss):
            b.setFocusPolicy(Qt.NoFocus)
            row.addWidget(b, 0, Qt.AlignTop)
