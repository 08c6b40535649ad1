"""Evidence spot-check: the model's evidence with accept / edit / reject, and the agreement tally.

Accept stores the model's sentence as an evidence span of origin model-accepted;
Edit puts it into the passage as a selection, to be adjusted and marked with E
(it then is the annotator's own evidence); Reject records, on the stored
prediction, that this annotator rejected it.  The tally is the ExpMRC evidence F1
of the model's evidence against the annotator's evidence spans (the annotator as
the reference), averaged over the items that have both — accepted sentences count
as full agreement, as they are.
"""
from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QGroupBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout

from desktop.ui.kit import colors
from desktop.ui.kit.steady import WrapLabel

from desktop.domain.words import count

ACCEPT_KEY, EDIT_KEY, REJECT_KEY = "F6", "F7", "F8"


class AgreementTally:
    """Per item: F1 of the model's evidence against the annotator's; the running mean."""

    def __init__(self):
        self.f1: dict[str, float] = {}
        self.decisions: dict[str, str] = {}  # item -> accepted | edited | rejected

    def record(self, item_id: str, f1: float | None) -> None:
        if f1 is None:
            self.f1.pop(item_id, None)
        else:
            self.f1[item_id] = f1

    def decide(self, item_id: str, decision: str) -> None:
        self.decisions[item_id] = decision

    @property
    def mean(self) -> float | None:
        return sum(self.f1.values()) / len(self.f1) if self.f1 else None

    def summary(self) -> str:
        counts = {d: sum(1 for v in self.decisions.values() if v == d) for d in ("accepted", "edited", "rejected")}
        decided = ", ".join(f"{n} {d}" for d, n in counts.items() if n)
        if self.mean is None:
            return "agreement: no item with both your evidence and the model's yet" + (f" · {decided}" if decided else "")
        return (f"agreement with the model (ExpMRC evidence F1): <b>{100 * self.mean:.1f}</b> "
                f"over {count(len(self.f1), 'item')}" + (f" · {decided}" if decided else ""))


class EvidenceCheck(QGroupBox):
    acceptRequested = Signal()
    editRequested = Signal()
    rejectRequested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setFlat(True)
        lay = QVBoxLayout(self)
        hint = WrapLabel("The model's evidence is the dashed red outline in the passage "
                      "(the sentence most like the question and its predicted alternative, weighed with how much "
                      "the model's choice drops without it).")
        hint.setWordWrap(True)
        hint.setStyleSheet(f"color: {colors.theme().muted};")
        lay.addWidget(hint)
        self.text = WrapLabel()
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.RichText)
        self.text.setTextInteractionFlags(Qt.TextSelectableByMouse)
        lay.addWidget(self.text)
        row = QHBoxLayout()
        self.accept = QPushButton(f"Accept ({ACCEPT_KEY})")
        self.accept.setToolTip("Store the model's sentence as your evidence (origin: model-accepted)")
        self.edit = QPushButton(f"Edit ({EDIT_KEY})")
        self.edit.setToolTip("Select the model's sentence in the passage; adjust it and press E to mark it")
        self.reject = QPushButton(f"Reject ({REJECT_KEY})")
        self.reject.setToolTip("Hide the model's evidence for this item and record that you rejected it")
        for b, sig in ((self.accept, self.acceptRequested), (self.edit, self.editRequested),
                       (self.reject, self.rejectRequested)):
            b.setFocusPolicy(Qt.NoFocus)
            b.clicked.connect(sig.emit)
            row.addWidget(b)
        row.addStretch(1)
        lay.addLayout(row)
        self.tally = WrapLabel()
        self.tally.setWordWrap(True)

        lay.addWidget(self.tally)
        self.set_evidence(None, "")

    def set_evidence(self, text: str | None, state: str, waiting: bool = False) -> None:
        """`state`: "" (pending), "accepted", "edited", "rejected"; None text: the model gives none
        (`waiting`: not yet: the model is working it out)."""
        pending = bool(text) and not state
        for b in (self.accept, self.edit, self.reject):
            b.setEnabled(pending)
        if not text and waiting:
            self.text.setText(f"<i style='color:{colors.theme().muted}'>evidence…</i>")
        elif not text:
            self.text.setText("<i>no model evidence for this item</i>")
        else:
            t = colors.theme()
            mark = {"accepted": f" — <b style='color:{t.ok}'>accepted</b>",
                    "edited": f" — <b style='color:{t.info}'>your evidence overlaps it</b>",
                    "rejected": f" — <b style='color:{t.error}'>rejected</b>"}.get(state, "")
            self.text.setText(f"“{_escape(text)}”{mark}")

    def set_tally(self, html_text: str) -> None:
        self.tally.setText(html_text)


def _escape(text: str) -> str:
    return html.escape(text if len(text) < 400 else text[:400] + "…")
