"""Annotators' layers in the workbench: which annotator's spans the passage shows, whose
each span is (tooltips and a legend), and the Annotators menu (Show layer…, Adjudicate…).

By default the passage shows what the window loads (the imported annotations and the
current annotator's).  "All annotators" overlays everyone's, merged colleagues'
included; naming one annotator shows that layer alone.  Marking still writes the
current annotator's spans, whatever is shown.
"""
from __future__ import annotations

from collections import Counter

from PySide6.QtCore import QEvent, QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDialog, QDialogButtonBox, QLabel, QListWidget, QListWidgetItem, QToolTip, QVBoxLayout,
)

from desktop.domain.model import BASIS, MODEL, REQUIRED, Question, Span, letter
from desktop.ui.item.text_spans import OffsetMap

ALL = "*"  # every annotator overlaid


def role_name(s: Span) -> str:
    if s.role == BASIS and s.alternative is not None:
        return f"basis of {letter(s.alternative)}"
    if s.role == REQUIRED:
        return "required paragraphs"
    return "model evidence" if s.origin == MODEL else s.role


def who_did_what(spans: list[Span]) -> dict[str, str]:
    """{annotator: "2 evidence, 1 basis of B"} in order of the annotators' names."""
    counts: dict[str, Counter] = {}
    for s in spans:
        counts.setdefault(s.annotator, Counter())[role_name(s)] += 1
    return {a: ", ".join(f"{n} {r}" for r, n in sorted(c.items())) for a, c in sorted(counts.items())}


def span_tooltip(spans: list[Span], text: str) -> str:
    """Whose are the spans under the pointer: role, annotator, origin and the marked words."""
    lines = []
    for s in sorted(spans, key=lambda s: (s.annotator, s.role, s.start)):
        words = text[s.start:s.end]
        if len(words) > 60:
            words = words[:57] + "…"
        lines.append(f"<b>{role_name(s)}</b> — {s.annotator} <i>({s.origin})</i><br>“{_html(words)}”")
    return "<br>".join(lines)


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class LayerFilter(QObject):
    """Chooses the spans the window's passage view shows, and explains them on hover."""

    changed = Signal(object)  # the layer: None (as loaded), ALL or an annotator's name

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.layer: str | None = None
        self.shown: list[Span] = []
        self.legend = QLabel("")
        from desktop.ui.kit import colors
        self.legend.setStyleSheet(f"color: {colors.theme().muted};")
        window.statusBar().addWidget(self.legend)
        window.passage.viewport().installEventFilter(self)
        self._hook(window.passage)
        self.dialog = None  # the open adjudication dialog, if any

    # ---- which spans ---------------------------------------------------------------
    def _hook(self, passage) -> None:
        # Every caller of passage.set_spans (the window, the model panel's suggestion
        # overlay) goes through the filter, so the chosen layer holds whoever repaints.
        paint = passage.set_spans

        def set_spans(spans):
            paint(self.filter(spans))

        passage.set_spans = set_spans

    def filter(self, spans: list[Span]) -> list[Span]:
        """The spans to paint for the chosen layer, given those the window would paint."""
        state = self.window.state
        if self.layer is None or state is None:
            shown = list(spans)
        else:
            # the window loads the imported spans and its annotator's; a layer may be anyone's
            everyone = self.window.backend.store.question(state.question.id).spans
            suggested = [s for s in spans if s.origin == MODEL and s.id is None]
            pool = everyone + suggested
            shown = pool if self.layer == ALL else [s for s in pool if s.annotator == self.layer]
        self.shown = shown
        self._update_legend()
        return shown

    def set_layer(self, layer: str | None) -> None:
        self.layer = layer
        if self.window.state is not None:
            self.window.passage.set_spans(self.window.state.question.spans)
        self.changed.emit(layer)

    def annotators(self, item: str) -> dict[str, str]:
        """Who did what on `item`: every annotator with spans there."""
        return who_did_what(self.window.backend.store.question(item).spans)

    def _update_legend(self) -> None:
        if self.layer is None:
            self.legend.setText("")
            return
        name = "all annotators" if self.layer == ALL else self.layer
        parts = [f"{a}: {what}" for a, what in who_did_what(self.shown).items()]
        self.legend.setText(f"layer: <b>{_html(name)}</b>" + (" — " + " · ".join(map(_html, parts)) if parts
                                                               else " — no spans on this item"))

    # ---- tooltips --------------------------------------------------------------------
    def eventFilter(self, obj, event):
        if event.type() == QEvent.ToolTip and self.window.state is not None:
            view = self.window.passage
            text = self.window.state.passage_text
            pos = OffsetMap(text).to_py(view.cursorForPosition(event.pos()).position())
            under = [s for s in view.spans if s.start <= pos < s.end]
            if under:
                QToolTip.showText(event.globalPos(), span_tooltip(under, text), view)
            else:
                QToolTip.hideText()
            return True
        return False


class LayerDialog(QDialog):
    """Pick the layer to show: as loaded, all annotators, or one annotator (with what they did here)."""

    def __init__(self, layers: LayerFilter, item: str | None, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Show layer")
        self.list = QListWidget()
        entries = [(None, "The imported annotations and mine (default)"), (ALL, "All annotators, overlaid")]
        store = layers.window.backend.store
        did = layers.annotators(item) if item else {}
        for name in store.annotators():
            entries.append((name, f"{name} — {did.get(name, 'no spans on this item')}"))
        for value, label in entries:
            it = QListWidgetItem(label)
            it.setData(256, value)  # Qt.UserRole
            self.list.addItem(it)
            if value == layers.layer:
                self.list.setCurrentItem(it)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.list.itemDoubleClicked.connect(lambda _: self.accept())
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel("Show the spans of:"))
        lay.addWidget(self.list)
        lay.addWidget(buttons)

    def chosen(self) -> str | None:
        it = self.list.currentItem()
        return it.data(256) if it is not None else None


def install_annotators_menu(window) -> LayerFilter:
    """Add the Annotators menu to the window; returns the layer filter its passage uses."""
    layers = LayerFilter(window)
    menu = window.menuBar().addMenu("&Annotators")

    def show_layer():
        dialog = LayerDialog(layers, window.current, window)
        if dialog.exec() == QDialog.Accepted:
            layers.set_layer(dialog.chosen())

    def adjudicate():
        from desktop.ui.dialogs.adjudication import AdjudicationDialog

        if window.current is None:
            return
        window.flush()
        dialog = AdjudicationDialog(window.backend.store, window.current, window.state.passage_text, window)
        dialog.adjudicated.connect(lambda item: window.refresh(item))
        layers.dialog = dialog
        dialog.show()

    for text, slot, name in (("Show &layer…", show_layer, "show_layer_action"),
                             ("&Adjudicate…", adjudicate, "adjudicate_action")):
        action = QAction(text, window)
        action.triggered.connect(slot)
        menu.addAction(action)
        setattr(layers, name, action)
    return layers
