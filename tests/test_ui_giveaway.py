"""The Why? view of the model panel (pytest-qt, offscreen) with the tiny test model on EMBRACE green:
what it shows is the stored explanation (the one `mcqlens explain` writes), computed off the GUI
thread once and read back at once on the next visit, readable in both palettes at 1366×768."""
from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtGui import QPalette, QTextFormat  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from desktop import formats  # noqa: E402
from desktop.domain.model import letter  # noqa: E402
from desktop.store import Store  # noqa: E402
from desktop.ui.kit import colors  # noqa: E402
from desktop.ui.backend import Backend  # noqa: E402
from desktop.ui.main_window import MainWindow  # noqa: E402
from desktop.ui.model import giveaway_view as why_view  # noqa: E402
from inference import giveaway as G  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
GREEN = ROOT.parent / "shared" / "data" / "embrace" / "embrace_green.jsonl"
TINY = ROOT / "tests" / "data" / "tiny_model"


@pytest.fixture()
def palette():
    app = QApplication.instance() or QApplication([])
    before = app.palette()

    def use(p: QPalette) -> None:
        app.setPalette(p)
        colors._cache.clear()

    yield use
    app.setPalette(before)
    colors._cache.clear()


def _window(qtbot, monkeypatch, db=None, size=(1366, 768)):
    monkeypatch.setenv("MCQLENS_MODEL", str(TINY))
    store = Store.open(str(db), annotator="anna") if db else Store.memory(annotator="anna")
    if not store.items():
        store.import_datasets(formats.read(str(GREEN)), file=str(GREEN))
    window = MainWindow(Backend(store), facts=False)
    qtbot.addWidget(window)
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    mr = window.model_review
    qtbot.waitUntil(lambda: mr.model is not None or mr.model_error is not None, timeout=120000)
    assert mr.model_error is None, mr.model_error
    return window


def _close(window):
    window.close()
    window.backend.close()


def _shown(qtbot, window, item):
    why = window.model_review.why
    qtbot.waitUntil(lambda: why.view.explanation is not None and why.view.explanation.item_id == item,
                    timeout=120000)
    return why.view.explanation


def _fragments(browser):
    """(text, tooltip, foreground, background) of every run of the rendered document."""
    pal = browser.palette()
    base, text = pal.color(QPalette.Base).name().upper(), pal.color(QPalette.Text).name().upper()
    out = []
    block = browser.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            fmt = frag.charFormat()
            fg = fmt.foreground().color().name().upper() if fmt.hasProperty(QTextFormat.ForegroundBrush) else text
            bg = fmt.background().color().name().upper() if fmt.hasProperty(QTextFormat.BackgroundBrush) else base
            out.append((frag.text(), fmt.toolTip(), fg, bg))
            it += 1
        block = block.next()
    return out


def test_why_shows_the_stored_explanation_computed_off_the_gui_thread(qtbot, monkeypatch, tmp_path):
    threads = []
    real = G.explain

    def recording(*a, **kw):
        threads.append(threading.current_thread() is threading.main_thread())
        return real(*a, **kw)

    monkeypatch.setattr(G, "explain", recording)
    window = _window(qtbot, monkeypatch, tmp_path / "a.db")
    mr = window.model_review
    window.go_to("4_4")
    why = mr.why
    assert why.view.explanation is None and why.computed == 0  # hidden: nothing computed
    why.open()
    ex = _shown(qtbot, window, "4_4")
    assert threads == [False]  # the worker thread, never the GUI thread
    stored = window.backend.store.explanation("4_4", mr.model.id, G.variant())
    assert stored is not None and G.Explanation.from_json(stored).to_json() == ex.to_json()

    # what the view shows: every give-away word shaded, with its number on hover, at its offsets
    q = window.state.question
    texts = {"stem": q.stem, **{letter(i): a for i, a in enumerate(q.alternatives)}}
    frags = _fragments(why.view.text)
    base = why.view.text.palette().color(QPalette.Base).name().upper()
    bg_of = {tip: bg for text, tip, _, bg in frags if tip}
    listed = ex.giveaway()
    assert listed
    levels = [fill.upper() for _, fill in colors.theme().giveaway_shades()]
    for a in listed:
        assert texts[a.element][a.start:a.end] == a.word
        where = "the stem" if a.element == "stem" else a.element
        tip = next((t for t in bg_of if t.startswith(f"“{a.word}” in {where}:") and f"effect {a.effect:+.3f}" in t),
                   None)
        assert tip is not None, (a, list(bg_of))
        assert bg_of[tip] == why_view.shade_for(a.effect, colors.theme()).upper()
    # only the listed words are shaded, and the strongest has the strongest shade
    assert sum(bg != base for bg in bg_of.values()) == len(listed)
    strongest = why_view.shade_for(listed[0].effect, colors.theme()).upper()
    assert levels.index(strongest) == max(levels.index(bg) for bg in bg_of.values() if bg != base)
    # screen readers hear the words, strongest first, with their points
    said = why.view.text.accessibleDescription()
    pos = said.index("strongest first")
    for a in listed[:why_view.LISTED]:
        where = "stem" if a.element == "stem" else f"alternative {a.element}"
        pos = said.index(f"{a.word} ({where}): {abs(100 * a.effect):.0f} points", pos)

    # the second visit reads the store: shown at once, nothing computed again
    window.go_to("4_2")
    _shown(qtbot, window, "4_2")
    assert why.computed == 2
    window.go_to("4_4")
    assert why.view.explanation is not None and why.view.explanation.item_id == "4_4"  # no wait: synchronous
    assert why.computed == 2 and threads == [False, False]
    _close(window)
    # a new window on the same database shows it without the model computing anything
    window = _window(qtbot, monkeypatch, tmp_path / "a.db")
    window.go_to("4_4")
    window.model_review.why.open()
    assert window.model_review.why.view.explanation.item_id == "4_4" and threads == [False, False]
    _close(window)


@pytest.mark.parametrize("which", ["light", "dark"])
def test_why_is_readable_in_both_palettes_and_fits_1366x768(qtbot, monkeypatch, palette, which):
    palette(colors.dark_palette() if which == "dark" else colors.light_palette())
    t = colors.theme()
    shades = t.giveaway_shades()
    assert [least for least, _ in shades] == sorted(least for least, _ in shades)
    assert len({fill for _, fill in shades}) == len(shades)
    window = _window(qtbot, monkeypatch, size=(1366, 768))
    window.go_to("0_1")
    why = window.model_review.why
    why.open()
    _shown(qtbot, window, "0_1")
    low = [(text, fg, bg, round(colors.contrast(fg, bg), 2)) for text, _, fg, bg in _fragments(why.view.text)
           if text.strip() and colors.contrast(fg, bg) < colors.MIN_CONTRAST]
    assert not low, low
    # the whole item is in the text (no inner scroll bar), and nothing is cut at the sides
    qtbot.waitUntil(lambda: why.view.text.verticalScrollBar().maximum() == 0, timeout=5000)
    assert why.view.text.horizontalScrollBar().maximum() == 0
    assert window.model_review.scroll.horizontalScrollBar().maximum() == 0
    # opening the tab brings it into the panel's view
    scroll = window.model_review.scroll
    top = why.view.mapTo(scroll.widget(), why.view.rect().topLeft()).y()
    qtbot.waitUntil(lambda: scroll.verticalScrollBar().value() > 0 or top < scroll.viewport().height(),
                    timeout=5000)
    y = why.view.text.mapTo(scroll.viewport(), why.view.text.rect().topLeft()).y()
    assert 0 <= y < scroll.viewport().height(), y
    _close(window)
