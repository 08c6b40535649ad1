"""The model's evidence in the window: shown as a dashed outline until the annotator accepts,
edits or rejects it (F6 / F7 / F8), and the tally of how often they agree.

The spot-check tab itself is `evidence_check.py`; a part of `ModelReview` (`model/review.py`).
"""
from __future__ import annotations

from desktop.domain.errors import McqLensError
from desktop.domain.model import EVIDENCE, MODEL, MODEL_ACCEPTED, Span
from desktop.app import model_scoring as ms


class EvidenceDecisions:
    """Showing and deciding the model's evidence: a part of `ModelReview` (`review.decisions`).
    What it uses of the review: its `view` of the item, `panel`, `tally`, `backend`, `window`
    and `show` (after a rejection is stored)."""

    def __init__(self, review):
        self.review = review  # its `view` of the open item changes with the item: read through it
        self.window, self.backend, self.panel, self.tally = review.window, review.backend, review.panel, review.tally

    def _evidence_state(self, state) -> str:
        v = self.review.view
        if v is None or v.evidence is None:
            return ""
        start, end, _ = v.evidence
        evidence = [s for s in state.question.spans if s.role == EVIDENCE and s.origin != MODEL]
        if any((s.start, s.end) == (start, end) for s in evidence):
            return "accepted"
        if self.backend.annotator in v.evidence_rejected_by:
            return "rejected"
        # the annotator's own evidence over the model's sentence: edited (or found alike)
        if any(s.annotator == self.backend.annotator and s.start < end and start < s.end for s in evidence):
            return "edited"
        return ""

    def show_evidence(self, state, waiting: bool = False) -> None:
        """The model's evidence as a dashed outline in the passage and in the spot-check tab
        (`waiting`: the probabilities are shown, the evidence is still being worked out)."""
        q = state.question
        v = self.review.view
        decision = self._evidence_state(state)
        spans = list(q.spans)
        if v is not None and v.evidence is not None and not decision:
            start, end, _ = v.evidence
            spans.append(Span(start, end, EVIDENCE, annotator=v.model_id, origin=MODEL))
        self.window.passage.set_spans(spans)
        self.panel.evidence.set_evidence(v.evidence[2] if v is not None and v.evidence else None, decision,
                                         waiting=waiting)
        me = self.backend.annotator
        mine = [s.text(state.passage_text) for s in q.spans
                if s.role == EVIDENCE and s.annotator == me and s.origin != MODEL]
        if v is not None and v.evidence is not None:
            self.tally.record(q.id, ms.evidence_agreement(v.evidence[2], mine))
        self.panel.evidence.set_tally(self.tally.summary())

    def _pending_evidence(self):
        st = self.window.state
        if st is None or self.review.view is None or self.review.view.evidence is None or self._evidence_state(st):
            return None
        return self.review.view.evidence

    def accept_evidence(self) -> int | None:
        ev = self._pending_evidence()
        if ev is None:
            return None
        item = self.window.current
        hid = self.window.edit("span.add", {"role": EVIDENCE, "start": ev[0], "end": ev[1],
                                            "origin": MODEL_ACCEPTED})
        if hid is not None:
            self.tally.decide(item, "accepted")
            self.panel.evidence.set_tally(self.tally.summary())
        return hid

    def edit_evidence(self) -> None:
        ev = self._pending_evidence()
        if ev is None:
            return
        self.tally.decide(self.window.current, "edited")
        self.window.passage.set_selection(ev[0], ev[1])
        self.window.passage.setFocus()
        self.window.statusBar().showMessage("The model's sentence is selected: adjust it, then press E.", 8000)

    def reject_evidence(self) -> None:
        ev = self._pending_evidence()
        if ev is None:
            return
        item = self.window.current
        std = next((p for p in self.backend.store.predictions(item, self.review.view.model_id)
                    if p.input_format == ms.STANDARD), None)
        if std is None:
            return
        try:
            self.backend.store.add_predictions([(item, ms.rejection(std, self.backend.annotator))])
        except McqLensError as exc:
            self.window.statusBar().showMessage(f"Not saved: {exc}", 8000)
            return
        self.tally.decide(item, "rejected")
        st = self.window.state
        st.question.predictions = self.backend.store.predictions(item)
        self.review.show(st, new_item=False, request=False)
