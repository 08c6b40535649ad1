"""The passage with its highlights; marking, selecting and adjusting spans.

Painting, not character formats, draws the highlights so that overlapping spans
stay readable: evidence is a marker-pen background, the basis of each
alternative a tint plus its own underline lane (so B inside A shows both
lanes), required paragraphs a grey band in the gutter, and model-suggested
evidence a dashed outline.  The gutter also repeats each basis as a lettered
bracket, so "which span supports which alternative" is read down the margin.

The view never edits anything itself: it emits requests that the window turns
into `Change`s for the store.
"""
from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QBrush, QFont, QPainter, QPen, QTextBlockFormat, QTextCursor, QTextOption,
)
from PySide6.QtWidgets import QTextEdit

from desktop.domain.model import BASIS, EVIDENCE, MODEL, REQUIRED, Span, letter
from desktop.ui.kit import colors
from desktop.ui.item.text_spans import (
    OffsetMap, next_word_end, next_word_start, paragraph_bounds, previous_word_end,
    previous_word_start, snap_to_words,
)

_LANE = 3.0  # thickness of one alternative's underline lane, px
_LANE_GAP = 1.0
_LINE_GAP = 3.0  # room between lines with no lane in use, px
_BAND = 6  # width of the required-paragraph band
_COLUMN = 15  # width of one alternative's gutter column


class PassageView(QTextEdit):
    """Read-only passage text that paints spans and turns keys into marking requests."""

    # role, alternative (or -1), start, end: Python string offsets, already snapped
    markRequested = Signal(str, int, int, int)
    removeRequested = Signal(int)  # span id
    updateRequested = Signal(int, int, int)  # span id, start, end
    spanSelected = Signal(object)  # Span or None

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setReadOnly(True)
        self.setTextInteractionFlags(Qt.TextSelectableByMouse | Qt.TextSelectableByKeyboard)
        self.setWordWrapMode(QTextOption.WrapAtWordBoundaryOrAnywhere)
        self.setFocusPolicy(Qt.StrongFocus)
        self.setAccessibleName("Passage")
        self.setAccessibleDescription("The passage, read-only. Select words, then E marks evidence, 1–9 the basis "
                                      "of alternative A, B, C…, P required paragraphs; click a highlight to "
                                      "select it, Delete removes it")
        font = QFont(self.font())
        font.setPointSizeF(max(font.pointSizeF(), 11.0))
        self.setFont(font)
        self._text = ""
        self._map = OffsetMap("")
        self._spans: list[Span] = []
        self._alternatives = 4
        self._selected_id: int | None = None
        self._gutter = _BAND + 4
        self._applied_lanes: list[int] = []  # the spacing the document has now, per paragraph
        self._applied_gutter: int | None = None
        self._lanes: list[int] = []  # per paragraph, the lanes in use: its highest alternative with a basis + 1

    # ---- content -------------------------------------------------------------
    def set_passage(self, text: str, spans: list[Span], n_alternatives: int = 4) -> None:
        """Show a new passage; keeps nothing of the previous one."""
        self._alternatives = max(n_alternatives, 1)
        if text != self._text:
            self._text = text
            self._map = OffsetMap(text)
            # Qt makes one paragraph break of "\r\n"; a space for the "\r" keeps offsets one to one.
            self.setPlainText(text.replace("\r\n", " \n"))
            self._applied_lanes, self._applied_gutter = [], None  # a new document: nothing set yet
            # spacing and gutter for these spans at once: one layout pass, not two
            self._spans = list(spans)
            self._lanes = self._lanes_per_paragraph()
            self._gutter = _BAND + 6 + _COLUMN * self._alternatives
            self._space_lines()
        self._selected_id = None
        self.set_spans(spans)
        self.verticalScrollBar().setValue(0)
        self.reveal_first_span()

    def reveal_first_span(self) -> None:
        """Scroll a long passage so that its first marked span is in sight."""
        marked = [s for s in self._spans if s.role != REQUIRED]
        if not marked:
            return
        first = min(marked, key=lambda s: s.start)
        rects = self._line_rects(first.start, first.end)
        if rects and rects[0].top() > self.viewport().height() - 40:
            self.verticalScrollBar().setValue(int(rects[0].top() - 40))

    def set_spans(self, spans: list[Span]) -> None:
        self._spans = list(spans)
        if self._selected_id is not None and not any(s.id == self._selected_id for s in self._spans):
            self._selected_id = None
        gutter = _BAND + 6 + _COLUMN * self._alternatives
        lanes = self._lanes_per_paragraph()
        if gutter != self._gutter or lanes != self._lanes:
            self._gutter, self._lanes = gutter, lanes
            self._space_lines()
        self.viewport().update()

    def _lanes_per_paragraph(self) -> list[int]:
        """For each paragraph (text block): the lanes its bases use, i.e. its highest alternative + 1."""
        block = self.document().begin()
        out = []
        bases = [(self._map.to_qt(s.start), self._map.to_qt(s.end), s.alternative + 1) for s in self._spans
                 if s.role == BASIS and s.alternative is not None]
        while block.isValid():
            a, b = block.position(), block.position() + block.length()
            out.append(max((n for s, e, n in bases if s < b and e > a), default=0))
            block = block.next()
        return out

    def paragraph_lanes(self) -> list[int]:
        return list(self._lanes)

    def line_gap(self, lanes: int | None = None) -> float:
        """Pixels between one line's bottom and the next line's top with `lanes` lanes in use
        (default: the paragraph that uses the most)."""
        if lanes is None:
            lanes = max(self._lanes, default=0)
        return _LINE_GAP + 1 + lanes * (_LANE + _LANE_GAP)

    def _space_lines(self) -> None:
        # Room under each line for the lanes its paragraph uses (so the underline of D never runs
        # through the next line's letters, and a paragraph without bases stays compact), and a left
        # gutter.  The distance is added below the line's own height, whatever the font.
        # Only what changed is set again: each format change re-lays out text, and moving between
        # the questions of one passage changes the lanes of a paragraph or two, not the gutter.
        doc = self.document()
        if self._applied_gutter != self._gutter:
            frame = doc.rootFrame().frameFormat()
            frame.setLeftMargin(self._gutter)
            doc.rootFrame().setFrameFormat(frame)
            self._applied_gutter = self._gutter
        applied = self._applied_lanes

        def want(k: int) -> int:
            return self._lanes[k] if k < len(self._lanes) else 0

        def stale(k: int) -> bool:
            return k >= len(applied) or applied[k] != want(k)

        # One format change per run of changed paragraphs with the same lanes.
        block, i = doc.begin(), 0
        while block.isValid():
            if not stale(i):
                block, i = block.next(), i + 1
                continue
            lanes = want(i)
            cursor = QTextCursor(block)
            nxt, j = block.next(), i + 1
            while nxt.isValid() and stale(j) and want(j) == lanes:
                block, nxt, j = nxt, nxt.next(), j + 1
            cursor.setPosition(block.position(), QTextCursor.KeepAnchor)
            fmt = QTextBlockFormat()
            fmt.setLineHeight(self.line_gap(lanes), QTextBlockFormat.LineHeightTypes.LineDistanceHeight.value)
            fmt.setBottomMargin(6)
            cursor.mergeBlockFormat(fmt)
            block, i = nxt, j
        self._applied_lanes = [want(k) for k in range(doc.blockCount())]

    @property
    def spans(self) -> list[Span]:
        return list(self._spans)

    def selected_span(self) -> Span | None:
        if self._selected_id is None:  # a span without id (model evidence) is never "selected"
            return None
        return next((s for s in self._spans if s.id == self._selected_id), None)

    def select_span(self, span_id: int | None) -> None:
        self._selected_id = span_id
        self.viewport().update()
        self.spanSelected.emit(self.selected_span())

    # ---- selection in Python offsets ---------------------------------------
    def selection(self) -> tuple[int, int] | None:
        cursor = self.textCursor()
        if not cursor.hasSelection():
            return None
        return self._map.to_py(cursor.selectionStart()), self._map.to_py(cursor.selectionEnd())

    def set_selection(self, start: int, end: int) -> None:
        cursor = QTextCursor(self.document())
        cursor.setPosition(self._map.to_qt(start))
        cursor.setPosition(self._map.to_qt(end), QTextCursor.KeepAnchor)
        self.setTextCursor(cursor)

    def mark(self, role: str, alternative: int | None = None) -> bool:
        """Ask to mark the current selection; returns False when nothing is selected."""
        sel = self.selection()
        if not sel:
            return False
        start, end = sel
        if role == REQUIRED:
            start, end = paragraph_bounds(self._text, start, end)
        else:
            start, end = snap_to_words(self._text, start, end)
        if end <= start:
            return False
        self.markRequested.emit(role, -1 if alternative is None else alternative, start, end)
        cursor = self.textCursor()
        cursor.clearSelection()
        self.setTextCursor(cursor)
        return True

    # ---- events ----------------------------------------------------------------
    def mouseReleaseEvent(self, event):
        super().mouseReleaseEvent(event)
        if event.button() != Qt.LeftButton:
            return
        sel = self.selection()
        if sel and sel[1] > sel[0]:
            start, end = snap_to_words(self._text, *sel)
            if (start, end) != sel and end > start:
                self.set_selection(start, end)
            return
        pos = self._map.to_py(self.cursorForPosition(event.position().toPoint()).position())
        self.select_span(self._span_at(pos))

    def _span_at(self, pos: int) -> int | None:
        hits = [s for s in self._spans if s.start <= pos < s.end and s.id is not None]
        if not hits:
            return None
        # The smallest span under the pointer; required paragraphs only when nothing else is there.
        hits.sort(key=lambda s: (s.role == REQUIRED, s.end - s.start))
        return hits[0].id

    def keyPressEvent(self, event):
        key, mods = event.key(), event.modifiers()
        text = event.text().lower()
        plain = not (mods & (Qt.ControlModifier | Qt.AltModifier | Qt.MetaModifier))
        if plain and self.textCursor().hasSelection():
            if text == "e":
                self.mark(EVIDENCE)
                return
            if text == "p":
                self.mark(REQUIRED)
                return
            if text and text in "123456789" and int(text) <= self._alternatives:
                self.mark(BASIS, int(text) - 1)
                return
            if text and text in "abcdefghij"[: self._alternatives]:
                self.mark(BASIS, "abcdefghij".index(text))
                return
        span = self.selected_span()
        if span is not None and span.id is not None:
            if key in (Qt.Key_Delete, Qt.Key_Backspace):
                self.removeRequested.emit(span.id)
                return
            if mods & Qt.ShiftModifier and key in (Qt.Key_Left, Qt.Key_Right):
                self._adjust(span, key == Qt.Key_Right, move_start=bool(mods & Qt.ControlModifier))
                return
            if key == Qt.Key_Escape:
                self.select_span(None)
                return
        super().keyPressEvent(event)

    def _adjust(self, span: Span, grow_right: bool, move_start: bool) -> None:
        """Shift+Right/Left moves the end by a word; with Ctrl the start."""
        start, end = span.start, span.end
        if move_start:
            start = next_word_start(self._text, start, end) if grow_right else previous_word_start(self._text, start)
        else:
            end = next_word_end(self._text, end) if grow_right else previous_word_end(self._text, end, start)
        if end > start and (start, end) != (span.start, span.end):
            self.updateRequested.emit(span.id, start, end)

    # ---- painting ---------------------------------------------------------------
    def _line_rects(self, start: int, end: int) -> list[QRectF]:
        """Rectangles (viewport coordinates) of the text lines covering [start, end)."""
        qs, qe = self._map.to_qt(start), self._map.to_qt(end)
        doc = self.document()
        dx, dy = -self.horizontalScrollBar().value(), -self.verticalScrollBar().value()
        rects: list[QRectF] = []
        block = doc.findBlock(qs)
        while block.isValid() and block.position() < qe:
            layout = block.layout()
            bpos = block.position()
            origin = layout.position()
            s = max(qs, bpos) - bpos
            e = min(qe, bpos + block.length() - 1) - bpos
            for i in range(layout.lineCount()):
                line = layout.lineAt(i)
                ls, le = line.textStart(), line.textStart() + line.textLength()
                a, b = max(s, ls), min(e, le)
                if a >= b:
                    continue
                x1 = line.cursorToX(a)
                x2 = line.cursorToX(b)
                x1 = x1[0] if isinstance(x1, tuple) else x1
                x2 = x2[0] if isinstance(x2, tuple) else x2
                rects.append(QRectF(origin.x() + x1 + dx, origin.y() + line.y() + dy, x2 - x1, line.height()))
            block = block.next()
        return rects

    def paintEvent(self, event):
        painter = QPainter(self.viewport())
        painter.setRenderHint(QPainter.Antialiasing, True)
        self._paint_under(painter)
        painter.end()
        super().paintEvent(event)
        painter = QPainter(self.viewport())
        painter.setRenderHint(QPainter.Antialiasing, True)
        self._paint_over(painter)
        painter.end()

    def _paint_under(self, p: QPainter) -> None:
        t = colors.theme(self.palette())
        p.setPen(Qt.NoPen)
        for s in self._spans:
            if s.role == REQUIRED:
                for r in self._line_rects(s.start, s.end):
                    p.fillRect(QRectF(3, r.top() - 2, _BAND, r.height() + 12), colors.color(colors.REQUIRED_HEX, 200))
        for s in self._spans:
            if s.role == EVIDENCE and s.origin != MODEL:
                for r in self._line_rects(s.start, s.end):
                    p.fillRect(r.adjusted(-1, 0, 1, 1), colors.color(t.evidence_bg))
        for s in self._spans:
            if s.role == BASIS and s.alternative is not None:
                for r in self._line_rects(s.start, s.end):
                    p.fillRect(r, colors.alternative_color(s.alternative, colors.TINT_ALPHA))

    def lane_rects(self) -> list[tuple[int, QRectF]]:
        """(alternative, rectangle) of every underline lane painted, in viewport coordinates."""
        out = []
        for s in self._spans:
            if s.role != BASIS or s.alternative is None:
                continue
            for r in self._line_rects(s.start, s.end):
                y = r.bottom() + 1 + s.alternative * (_LANE + _LANE_GAP)
                out.append((s.alternative, QRectF(r.left(), y, r.width(), _LANE)))
        return out

    def line_boxes(self) -> list[QRectF]:
        """Every laid-out line of the passage (viewport coordinates, top to bottom)."""
        dx, dy = -self.horizontalScrollBar().value(), -self.verticalScrollBar().value()
        out = []
        block = self.document().begin()
        while block.isValid():
            layout = block.layout()
            origin = layout.position()
            for i in range(layout.lineCount()):
                line = layout.lineAt(i)
                out.append(QRectF(origin.x() + line.x() + dx, origin.y() + line.y() + dy,
                                  line.naturalTextWidth(), line.height()))
            block = block.next()
        return out

    def _paint_over(self, p: QPainter) -> None:
        t = colors.theme(self.palette())
        gutter_font = QFont(self.font())
        gutter_font.setBold(True)
        gutter_font.setPointSizeF(max(7.5, self.font().pointSizeF() - 2))
        for alternative, lane in self.lane_rects():
            p.fillRect(lane, colors.alternative_color(alternative))
        for s in self._spans:
            if s.role != BASIS or s.alternative is None:
                continue
            rects = self._line_rects(s.start, s.end)
            if not rects:
                continue
            col = colors.alternative_color(s.alternative)
            # Gutter bracket: a bar over the lines the basis covers, lettered at its top.
            x = _BAND + 6 + s.alternative * _COLUMN
            top, bottom = rects[0].top(), rects[-1].bottom()
            p.fillRect(QRectF(x + 4, top, 3, bottom - top + 4), col)
            badge = QRectF(x, top, _COLUMN - 2, min(16.0, rects[0].height()))
            p.setPen(Qt.NoPen)
            p.setBrush(QBrush(col))
            p.drawRoundedRect(badge, 3, 3)
            p.setPen(QPen(colors.color(t.on_alternative(s.alternative))))
            p.setFont(gutter_font)
            p.drawText(badge, Qt.AlignCenter, letter(s.alternative))
        model = colors.readable(colors.MODEL_HEX, t.base, 3.0)  # a line, not text: 3:1 (WCAG 1.4.11)
        for s in self._spans:
            if s.role == EVIDENCE and s.origin == MODEL:
                pen = QPen(colors.color(model), 1.6, Qt.DashLine)
                p.setPen(pen)
                p.setBrush(Qt.NoBrush)
                for r in self._line_rects(s.start, s.end):
                    p.drawRoundedRect(r.adjusted(-2, -1, 2, 1), 3, 3)
        sel = self.selected_span()
        if sel is not None:
            p.setPen(QPen(colors.color(t.base_text), 2.0))
            p.setBrush(Qt.NoBrush)
            for r in self._line_rects(sel.start, sel.end):
                p.drawRect(r.adjusted(-2, -2, 2, 2))

    def point_of(self, index: int) -> QPointF:
        """Viewport point in the middle of the character at a Python offset (for tests and tools)."""
        rects = self._line_rects(index, index + 1)
        return rects[0].center() if rects else QPointF(0, 0)
