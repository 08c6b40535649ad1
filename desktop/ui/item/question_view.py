"""The stem and its alternatives A–D, the key marked, each alternative in its basis colour.

The alternatives double as the legend of the passage view: the swatch in front of
"B" is the colour of B's basis, and clicking it marks the selection as B's basis.
"""
from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget

from desktop.domain.model import BASIS, Question, letter
from desktop.ui.kit import colors
from desktop.ui.kit.steady import WrapLabel


class QuestionView(QWidget):
    """Stem, alternatives with basis colours and counts, the key ticked, and a legend."""

    basisRequested = Signal(int)  # mark the passage selection as the basis of this alternative

    def __init__(self, parent=None):
        super().__init__(parent)
        # The content scrolls inside this widget, so a short pane never clips an alternative
        # (and the widget itself can sit in any splitter).
        shell = QVBoxLayout(self)
        shell.setContentsMargins(0, 0, 0, 0)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        content = QWidget()
        scroll.setWidget(content)
        shell.addWidget(scroll)
        outer = QVBoxLayout(content)
        outer.setContentsMargins(6, 6, 6, 6)
        self.header = WrapLabel()
        self.header.setStyleSheet(f"color: {colors.theme().muted};")
        self.header.setWordWrap(True)
        self.stem = WrapLabel()
        self.stem.setWordWrap(True)
        self.stem.setTextInteractionFlags(Qt.TextSelectableByMouse)
        font = self.stem.font()
        font.setPointSizeF(font.pointSizeF() + 1.5)
        font.setBold(True)
        self.stem.setFont(font)
        outer.addWidget(self.header)
        outer.addWidget(self.stem)
        # One rich-text label for all alternatives: a single height-for-width label lays out
        # reliably (a grid of wrapped labels kept stale row heights), and restyling is free.
        self.alternatives = WrapLabel(extra_width=56)  # the table's letter column and cell spacing
        self.alternatives.setWordWrap(True)
        self.alternatives.setTextFormat(Qt.RichText)
        self.alternatives.setTextInteractionFlags(Qt.TextSelectableByMouse | Qt.LinksAccessibleByMouse)
        self.alternatives.linkActivated.connect(self._link)
        self.alternatives.setAccessibleName("Alternatives")
        self.stem.setAccessibleName("Question stem")
        outer.addWidget(self.alternatives)
        t = colors.theme()
        legend = WrapLabel(
            f"<span style='color:{t.muted}'>Legend:</span> "
            f"<span style='background:{t.evidence_bg}; color:{t.evidence_text}'>&nbsp;evidence&nbsp;</span> &nbsp; "
            "basis of an alternative: <b>its colour</b>, an underline in its own lane and its letter "
            "in the margin &nbsp; "
            f"<span style='color:{colors.readable(colors.REQUIRED_HEX, t.window)}'>▌required paragraphs</span> &nbsp; "
            f"<span style='color:{colors.readable(colors.MODEL_HEX, t.window)}'>┆model evidence┆</span>")
        legend.setAccessibleName("Legend of the passage's marks")
        legend.setAccessibleDescription("Evidence is a marker background; each alternative's basis has its colour, "
                                        "its own underline lane and its letter in the margin.")
        legend.setWordWrap(True)
        legend.setTextFormat(Qt.RichText)
        outer.addWidget(legend)
        outer.addStretch(1)
        self._text = ""
        self.question: Question | None = None

    def set_question(self, q: Question | None, passage_text: str = "") -> None:
        self.question = q
        self._text = passage_text
        if q is None:
            self.header.setText("")
            self.stem.setText("No item selected.")
            self.alternatives.setText("")
            return
        self.header.setText(f"{q.source} · passage {q.passage_id} · question {q.index + 1} · id {q.id}")
        self.stem.setText(q.stem)
        self.update_counts(q)

    def update_counts(self, q: Question) -> None:
        """Each alternative with its key mark and the start of its basis, in the basis colour."""
        t = colors.theme()
        rows = []
        for i, alternative in enumerate(q.alternatives):
            hex_ = colors.alternative_hex(i)
            text = html.escape(alternative)
            if q.key == i:
                text = (f"<span style='background:{t.key_bg}; color:{t.text}'><b>{text}</b></span> "
                        f"&nbsp;<span style='color:{t.ok}'><b>✔ key</b></span>")
            elif q.key is not None:
                text = f"{text} <span style='color:{t.muted}'>(distractor)</span>"
            if i in q.unanswerable_alternatives:
                text += f" <span style='color:{t.muted}'>(not enough information)</span>"
            bases = sorted(q.spans_with(BASIS, i), key=lambda s: s.start)
            if bases:
                quotes = " · ".join(f"“{html.escape(_excerpt(self._text[s.start:s.end]))}”" for s in bases[:2])
                more = f" (+{len(bases) - 2})" if len(bases) > 2 else ""
                text += f"<br><span style='color:{t.alternative_text(i)}'>basis: <i>{quotes}</i>{more}</span>"
            else:
                text += f"<br><span style='color:{t.muted}'>no basis marked</span>"
            badge = (f"<a href='basis:{i}' style='color:{t.on_alternative(i)}; text-decoration:none'>"
                     f"<b>&nbsp;{letter(i)}&nbsp;</b></a>")
            rows.append(f"<tr><td bgcolor='{hex_}' align='center' valign='top' width='26'>{badge}</td>"
                        f"<td valign='top'>{text}</td></tr>")
        self.alternatives.setText("<table cellspacing='4' cellpadding='2'>" + "".join(rows) + "</table>")
        self.alternatives.setToolTip("Click a letter to mark the selected passage text as that alternative's basis")
        self.alternatives.setAccessibleDescription(
            "; ".join(f"{letter(i)}: {a}" + (" (key)" if q.key == i else "") for i, a in enumerate(q.alternatives)))

    def _link(self, href: str) -> None:
        if href.startswith("basis:"):
            self.basisRequested.emit(int(href.split(":", 1)[1]))


def _excerpt(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + " …"
