"""The model panel beside the alternatives: what the model says about the current item.

For the current item: a bar per alternative for the shortcut (Q+{O}) and the standard
(C+Q+{O}) model, the predicted option and N of each, MI, the model card's name; the
flags with a one-click suggestion; the tabs of the evidence spot-check (`evidence_check.py`)
and what-if (`whatif.py`).  The panel only shows: `ModelReview` (`model/review.py`) joins it
to the window and to the model's thread.
"""
from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QTabWidget, QVBoxLayout, QWidget

from desktop.domain.model import letter
from desktop.ui.kit import colors
from desktop.app import model_scoring as ms
from desktop.ui.model.evidence_check import EvidenceCheck
from desktop.ui.model.probability_bars import ProbabilityBars, Series
from desktop.ui.kit.steady import WrapLabel
from desktop.ui.model.whatif import WhatIfBox


def format_hex(fmt: str) -> str:
    """The bars' colour of an input format, in the theme (3:1 against their track)."""
    t = colors.theme()
    return t.bar_shortcut if fmt == ms.SHORTCUT else t.bar_standard


class ModelPanel(QWidget):
    """What the model says about the current item; emits nothing itself but its child widgets' requests."""

    def __init__(self, parent=None):
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.setSpacing(4)
        self.title = WrapLabel("<b>Model</b>")
        self.title.setTextFormat(Qt.RichText)
        self.title.setWordWrap(True)
        lay.addWidget(self.title)
        self.status = WrapLabel()
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.RichText)
        self.status.setStyleSheet(f"color: {colors.theme().muted};")
        lay.addWidget(self.status)
        self.bars = ProbabilityBars()
        lay.addWidget(self.bars)
        self.metrics = WrapLabel()
        self.metrics.setWordWrap(True)
        self.metrics.setTextFormat(Qt.RichText)
        self.metrics.setToolTip("N: effective number of options (1 = sure … number of alternatives = lost); "
                                "MI: how much the passage helps, in bits (negative: the passage made the model "
                                "less sure). Guide: Shift+F1, or Help → Annotation guide (guide#model)")
        lay.addWidget(self.metrics)
        flag_row = QHBoxLayout()
        self.flags = WrapLabel()
        self.flags.setWordWrap(True)
        self.flags.setTextFormat(Qt.RichText)
        flag_row.addWidget(self.flags, 1)
        self.suggest = QPushButton("Tag “Answerable without reading”")
        self.suggest.setToolTip("The shortcut model, without the passage, is sure of the key. "
                                "Add the typology tag (severe, question) if you agree.")
        self.suggest.setFocusPolicy(Qt.NoFocus)
        self.suggest.setAccessibleName("Tag answerable without reading")
        self.suggest.hide()
        flag_row.addWidget(self.suggest)
        lay.addLayout(flag_row)
        self.tabs = QTabWidget()
        self.tabs.setAccessibleName("Model review")
        self.tabs.setAccessibleDescription("The model's evidence to accept, edit or reject, and what-if edits")
        self.evidence = EvidenceCheck()
        self.whatif = WhatIfBox()
        self.tabs.addTab(self.evidence, "Evidence spot-check")
        self.tabs.addTab(self.whatif, "What if…")
        lay.addWidget(self.tabs)
        lay.addStretch(1)
        self.view: ms.ModelView | None = None

    def set_title(self, name: str | None, detail: str = "") -> None:
        text = f"<b>Model</b> · {html.escape(name)}" if name else "<b>Model</b>"
        if detail:
            text += f" <span style='color:{colors.theme().muted}'>({html.escape(detail)})</span>"
        self.title.setText(text)

    def set_status(self, text: str) -> None:
        self.status.setText(text)
        self.status.setVisible(bool(text))

    def show_view(self, view: ms.ModelView | None, n_alternatives: int, key: int | None,
                  suggest: bool = False) -> None:
        self.view = view
        if view is None:
            self.bars.set_data(n_alternatives, key, [])
            self.bars.hide()
            self.metrics.setText("")
            self.flags.setText("")
            self.suggest.hide()
            return
        self.bars.show()
        series = [Series(ms.NOTATION[f], format_hex(f), view.formats[f].probabilities, view.formats[f].predicted)
                  for f in ms.FORMATS if f in view.formats]
        self.bars.set_data(n_alternatives, key, series)
        parts = []
        for f in ms.FORMATS:
            fv = view.formats.get(f)
            if fv is not None:
                parts.append(f"{ms.NOTATION[f]}: predicts <b>{letter(fv.predicted)}</b>, N = <b>{fv.n_eff:.2f}</b>")
        if view.mi_bits is not None:
            parts.append(f"MI = <b>{view.mi_bits:.2f}</b> bits")
        self.metrics.setText(" · ".join(parts))
        flags = []
        if view.answerable_without_reading:
            flags.append(f"<span style='color:{colors.theme().error}'>⚑ <b>answerable without reading?</b></span> "
                         f"shortcut N ≤ {ms.SHORTCUT_N_MAX:g} and it picks the key")
        if view.context_barely_helps:
            flags.append(f"<span style='color:{colors.theme().warn}'>⚑ <b>context barely helps</b></span> "
                         f"MI ≤ {ms.LOW_MI_BITS:g} bits")
        self.flags.setText("<br>".join(flags))
        self.suggest.setVisible(suggest)
