"""The Why? view of the model panel: the words that give the key away to the shortcut model.

Beside the shortcut (Q+{O}) probabilities, a tab shows the stem and the alternatives with
every give-away word shaded by its effect — how far the predicted alternative's probability
falls when the word is taken out (`inference.giveaway`, the function `mcqlens explain` calls).
The number is on each word's tooltip and, for screen readers, in the text's accessible
description.  The explanation is read from the database when one is stored for this model
and the item's text (instant); else the model's queue computes it right after the item's
probabilities and stores it, so the next visit is instant too.  For the open item nothing is
computed while the tab is hidden; the items ahead of it get theirs as the queue scores them
(`model/queue_order.py`).

`GiveawayReview(review)` hooks the view into a `ModelReview` (desktop/ui/model/review.py):
the tab, a "Why?" button under the shortcut figures, and the worker's results.
"""
from __future__ import annotations

import html

from PySide6.QtCore import QObject, QPoint, Qt, QTimer
from PySide6.QtWidgets import QLabel, QPushButton, QTextBrowser, QVBoxLayout, QWidget

from desktop.domain.errors import McqLensError
from desktop.domain.model import letter
from desktop.ui.kit import colors

LISTED = 10  # give-away words the accessible description reads out
TAB_TITLE = "Why?"


def _points(x: float) -> str:
    return f"{abs(100 * x):.0f}"


def shade_for(effect: float, theme) -> str | None:
    """The fill of a word with this effect, or None below the weakest shade."""
    fill = None
    for least, hex_ in theme.giveaway_shades():
        if effect >= least:
            fill = hex_
    return fill


def tooltip(a, ex) -> str:
    """"“always” in B: without it, C falls from 93% to 52% (effect 0.41)"."""
    pred = letter(ex.predicted)
    p0 = ex.probabilities[ex.predicted]
    p1 = p0 - a.effect
    where = "the stem" if a.element == "stem" else a.element
    verb = "falls" if a.effect >= 0 else "rises"
    return (f"“{a.word}” in {where}: without it, {pred} {verb} from {100 * p0:.0f}% to {100 * p1:.0f}% "
            f"(effect {a.effect:+.3f})")


def together_shown(ex):
    """The explanation's together set when it is worth saying: it takes at least MIN_EFFECT
    more away than its strongest word alone (else that word says it by itself); or None."""
    from inference.giveaway_result import MIN_EFFECT

    t = getattr(ex, "together", None)
    if t is None or not t.words:
        return None
    alone = {(a.element, a.start, a.end): a.effect for a in ex.words}
    best = max((alone.get((u.element, u.start, u.end), 0.0) for u in t.words), default=0.0)
    return t if t.effect >= best + MIN_EFFECT else None


def _names(words) -> str:
    quoted = [f"“{u.text}”" for u in words]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def together_sentence(ex) -> str:
    """"Taken out together, “a”, “b” and “c” take 62 points from C." (or "")."""
    t = together_shown(ex)
    if t is None:
        return ""
    return (f"Taken out together, {_names(t.words)} take {_points(t.effect)} points from {letter(ex.predicted)} "
            f"(more than any of them alone).")


def describe(ex, question) -> str:
    """What a screen reader says: the give-away words, strongest first, with their effect."""
    pred = letter(ex.predicted)
    listed = ex.giveaway(LISTED)
    head = (f"Without the passage the model picks {pred} at {100 * ex.probabilities[ex.predicted]:.0f}%, "
            f"N = {ex.n_eff:.2f}. ")
    together = together_sentence(ex)
    if not listed:
        return head + "No single word moves it by a point or more." + (f" {together}" if together else "")
    words = "; ".join(
        f"{a.word} ({'stem' if a.element == 'stem' else 'alternative ' + a.element}): {_points(a.effect)} points"
        for a in listed)
    return (head + f"Give-away words, strongest first, and how far {pred} falls without each: {words}."
            + (f" {together}" if together else ""))


def _marks(ex) -> dict[str, list]:
    """Per element, (start, end, word, effect or None, tooltip) of every word to mark: the
    give-away words and phrases, every single word not inside a listed phrase (its own
    effect), the screened words (their group's effect on the tooltip, no shade); the words of
    the together set say so on their tooltip."""
    by_element: dict[str, list] = {}
    for a in ex.giveaway():
        by_element.setdefault(a.element, []).append(a)
    for a in ex.words:  # single words not inside a listed phrase: tooltip (and shade by their own effect)
        listed = by_element.setdefault(a.element, [])
        if not any(b.start < a.end and a.start < b.end for b in listed):
            listed.append(a)
    together = together_shown(ex)
    joint = {(u.element, u.start, u.end) for u in together.words} if together is not None else set()
    p0, pred = ex.probabilities[ex.predicted], letter(ex.predicted)
    out: dict[str, list] = {}
    for element, listed in by_element.items():
        for a in listed:
            tip = tooltip(a, ex)
            if (a.element, a.start, a.end) in joint:
                others = [u for u in together.words if (u.element, u.start, u.end) != (a.element, a.start, a.end)]
                tip += (f"; with {_names(others)} also taken out, {pred} falls to {100 * (p0 - together.effect):.0f}% "
                        f"(together {together.effect:+.3f})")
            out.setdefault(element, []).append((a.start, a.end, a.word, a.effect, tip))
    for g in getattr(ex, "screened", []):
        for u in g.words:
            out.setdefault(u.element, []).append(
                (u.start, u.end, u.text, None, f"“{u.text}”: taken out only with the other function words "
                 f"{'of the item' if len({w.element for w in g.words}) > 1 else 'of its element'}; together they "
                 f"{'take' if g.effect >= 0 else 'give'} {_points(g.effect)} points "
                 f"{'from' if g.effect >= 0 else 'to'} {pred}, less than the strongest words take alone"))
    return out


def render(ex, question, theme) -> str:
    """The stem and alternatives as rich text, give-away words shaded, every word with its tooltip;
    the words of the together set (`together_shown`) underlined."""
    by_element = _marks(ex)
    together = together_shown(ex)
    joint = {(u.element, u.start, u.end) for u in together.words} if together is not None else set()
    pred = ex.predicted

    def marked(element: str, text: str) -> str:
        out, pos = [], 0
        for start, end, word, effect, tip in sorted(by_element.get(element, []), key=lambda m: m[0]):
            if start < pos or end > len(text) or text[start:end] != word:
                continue  # not this text (never for an explanation of the item shown)
            out.append(html.escape(text[pos:start]))
            fill = shade_for(effect, theme) if effect is not None else None
            styles = ([f"background-color:{fill}", f"color:{theme.base_text}"] if fill else []) + (
                ["text-decoration:underline"] if (element, start, end) in joint else [])
            style = f" style='{'; '.join(styles)}'" if styles else ""
            out.append(f"<span{style} title='{html.escape(tip, quote=True)}'>{html.escape(text[start:end])}</span>")
            pos = end
        out.append(html.escape(text[pos:]))
        return "".join(out)

    rows = [f"<p style='margin:0 0 6px 0'><b>Stem</b>&nbsp; {marked('stem', question.stem)}</p>"]
    for i, alt in enumerate(question.alternatives):
        notes = []
        if i == pred:
            notes.append(f"picked, {100 * ex.probabilities[i]:.0f}%")
        else:
            notes.append(f"{100 * ex.probabilities[i]:.0f}%")
        if question.key == i:
            notes.append("key")
        label = f"<b>{letter(i)}</b>" + ("&nbsp;▶" if i == pred else "")
        rows.append(f"<p style='margin:0 0 4px 0'>{label}&nbsp; {marked(letter(i), alt)} "
                    f"<span style='color:{theme.muted}'>({', '.join(notes)})</span></p>")
    return "".join(rows)


class GiveawayView(QWidget):
    """The tab: a heading, the item with its give-away words shaded, the legend, a status line."""

    def __init__(self, parent=None):
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        self.heading = QLabel()
        self.heading.setWordWrap(True)
        self.heading.setTextFormat(Qt.RichText)
        lay.addWidget(self.heading)
        self.text = QTextBrowser()
        self.text.setOpenLinks(False)
        self.text.setMinimumHeight(80)
        self.text.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.text.setAccessibleName("Why: the item with its give-away words")
        self.text.setAccessibleDescription("The words that give the key away to the shortcut model are computed "
                                           "when this tab is shown")
        lay.addWidget(self.text)
        self.legend = QLabel()
        self.legend.setWordWrap(True)
        self.legend.setTextFormat(Qt.RichText)
        lay.addWidget(self.legend)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.RichText)
        lay.addWidget(self.status)
        lay.addStretch(1)
        self.explanation = None
        self._legend()

    def _fit(self) -> None:
        """The text as tall as the item needs at this width (no inner scroll bar, no empty box):
        the panel's own scroll area scrolls the rest on a small screen."""
        doc = self.text.document()
        doc.setTextWidth(self.text.viewport().width())
        height = int(doc.size().height()) + 2 * self.text.frameWidth() + 4
        self.text.setFixedHeight(max(80, min(height, 600)))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._wrap()
        if self.explanation is not None:
            self._fit()

    def _wrap(self) -> None:
        """Each wrapped label as tall as its lines at its width: a tab page does not pass a
        label's height-for-width up to the scroll area, so without this the lines are cut."""
        for label in (self.heading, self.legend, self.status):
            want = label.heightForWidth(max(label.width(), 1)) if label.text() else 0
            if label.minimumHeight() != want:
                label.setMinimumHeight(want)

    def _legend(self) -> None:
        t = colors.theme()
        swatches = " ".join(
            f"<span style='background-color:{fill}; color:{t.base_text}'>&nbsp;≥&nbsp;{_points(least)}&nbsp;</span>"
            for least, fill in t.giveaway_shades())
        self.legend.setText(f"<span style='color:{t.muted}'>Shaded: the points the picked alternative loses when "
                            f"the word is taken out</span> {swatches}")
        self.legend.setAccessibleName("Legend of the shades")
        self._wrap()

    def show_message(self, text: str, keep: bool = False) -> None:
        """A line under the text (working, stored, why not); `keep=False` also empties the view."""
        t = colors.theme()
        self.status.setText(f"<span style='color:{t.muted}'>{text}</span>")
        if not keep:
            self.explanation = None
            self.heading.setText("")
            self.text.clear()
            self.text.setAccessibleDescription(text)
        self._wrap()

    def show_explanation(self, ex, question, note: str = "") -> None:
        t = colors.theme()
        self.explanation = ex
        pred = letter(ex.predicted)
        head = (f"<b>Why can it be answered without the passage?</b> The shortcut model (Q+{{O}}) picks "
                f"<b>{pred}</b> at {100 * ex.probabilities[ex.predicted]:.0f}% (N = {ex.n_eff:.2f}). "
                f"Shaded: the words without which {pred} loses the most.")
        together = together_shown(ex)
        if together is not None:
            head += (f" Underlined: {_names(together.words)}, which take {_points(together.effect)} points from "
                     f"{pred} when taken out together.")
        self.heading.setText(head)
        self.text.setHtml(render(ex, question, t))
        self._fit()
        self.text.setAccessibleDescription(describe(ex, question))
        how = "deleting" if ex.method == "delete" else "masking"
        scope = {"all": "", "content": " (content words only)"}.get(
            ex.scope, f" ({sum(len(g.words) for g in ex.screened)} function words only in groups)"
            if ex.screened else "")
        self.status.setText(f"<span style='color:{t.muted}'>{len(ex.words)} words tried alone by {how} them{scope}"
                            f"{' · ' + note if note else ''}. Hover over a word for its number.</span>")
        self._wrap()


class GiveawayReview(QObject):
    """The Why? tab of a `ModelReview`: what to show, when to compute, where to store."""

    def __init__(self, review):
        super().__init__(review)
        self.review = review
        self.view = GiveawayView()
        panel = review.panel
        panel.tabs.addTab(self.view, TAB_TITLE)
        panel.tabs.currentChanged.connect(self._tab_changed)
        self.button = QPushButton("Why?")
        self.button.setToolTip("Which words of the stem and alternatives give the key away to the shortcut model "
                               "(the Why? tab)")
        self.button.setAccessibleName("Why: give-away words")
        self.button.setAccessibleDescription("Show the words the shortcut model leans on, shaded by their effect")
        self.button.setFocusPolicy(Qt.TabFocus)
        self.button.clicked.connect(self.open)
        lay = panel.layout()
        lay.insertWidget(lay.indexOf(panel.metrics) + 1, self.button, 0, Qt.AlignLeft)
        self.state = None
        self._wanted: str | None = None  # item whose explanation the worker is asked for
        self.computed = 0  # explanations computed (and stored) by this window: tests, status

    # ---- when --------------------------------------------------------------------------------
    def visible(self) -> bool:
        return self.review.panel.tabs.currentWidget() is self.view

    def open(self) -> None:
        self.review.panel.tabs.setCurrentWidget(self.view)
        self._scroll_into_view()

    def _scroll_into_view(self) -> None:
        # on a 1366×768 screen the tabs sit below the bars: scroll the panel so that they start
        # at its top, which leaves the Why? view the most room (its heading repeats the figures)
        scroll = getattr(self.review, "scroll", None)
        tabs = self.review.panel.tabs
        if scroll is None or scroll.widget() is None or not scroll.widget().isAncestorOf(tabs):
            return

        def scroll_down():  # once the scroll area has taken the panel's new size
            if self.visible():
                scroll.verticalScrollBar().setValue(tabs.mapTo(scroll.widget(), QPoint(0, 0)).y())

        QTimer.singleShot(0, scroll_down)

    def _tab_changed(self, _index: int) -> None:
        if self.visible():
            self._scroll_into_view()
            self.refresh()
        else:
            self._hidden()

    def show_item(self, state) -> None:
        """Called whenever the panel shows an item (new or refreshed)."""
        new = self.state is None or state is None or self.state.question.id != state.question.id
        self.state = state
        if self.visible():
            self.refresh()
        elif new:
            self._hidden()
            self.view.show_message("")

    # ---- what --------------------------------------------------------------------------------
    def refresh(self) -> None:
        from inference import giveaway as G

        st, review = self.state, self.review
        if st is None:
            self.view.show_message("No item is open.")
            return
        q, model = st.question, review.model
        if model is None:
            self.view.show_message(f"No model: {html.escape(review.model_error)}" if review.model_error
                                   else "loading the model…")
            return
        if G.FORMAT not in model.card.formats:
            self.view.show_message(f"The model {html.escape(model.id)} has no shortcut (Q+{{O}}) format to explain.")
            return
        shown = self.view.explanation
        if shown is not None and shown.item_id == q.id and G.current(shown, q, model.id, G.variant()):
            return
        stored = None
        try:
            data = review.backend.store.explanation(q.id, model.id, G.variant())
            stored = G.Explanation.from_json(data) if data else None
        except (McqLensError, KeyError, TypeError, ValueError):
            stored = None  # unreadable: computed again
        if G.current(stored, q, model.id, G.variant()):
            self.view.show_explanation(stored, q, "stored")
            self._scroll_into_view()
            return
        self._request(model, q)

    def _request(self, model, question) -> None:
        """Ask the model's queue for the open item's give-away words: they come right after its
        probabilities (`review_queue` brings them back to `explained`)."""
        if self._wanted == question.id:
            return  # already asked
        self._wanted = question.id
        self.view.show_message("working out which words give the key away…")
        self.review.worker.want_giveaway(question.id)

    def _hidden(self) -> None:
        if self._wanted is not None:
            self._wanted = None
            self.review.worker.want_giveaway(None)

    def explained(self, item: str, ex) -> None:
        """The model's thread has worked out (and, unless the window only reads, stored) an
        item's give-away words: shown if it is the item on screen."""
        if self.review.stopped or self.review.closed:
            return
        if self._wanted == item:
            self._wanted = None
        self.computed += 1
        note = "computed now" if getattr(self.review.backend, "read_only", False) else "computed now and stored"
        st = self.state
        if st is not None and st.question.id == item and self.visible():
            self.view.show_explanation(ex, st.question, note)
            self._scroll_into_view()
