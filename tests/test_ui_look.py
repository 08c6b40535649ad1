"""The window itself, through the real widgets (pytest-qt, offscreen) on EMBRACE green: contrast of
every text/background pair in a light and a dark palette (WCAG ratio computed), accessible names,
underline lanes that never reach the next line, the status bar's words, five alternatives, the
guide against desktop.domain, and a laptop-sized window that wraps rather than cuts."""
from __future__ import annotations

import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QColor, QPalette  # noqa: E402
from PySide6.QtWidgets import (  # noqa: E402
    QAbstractButton, QApplication, QLabel, QScrollArea, QTabWidget, QTreeWidget, QWidget,
)

from desktop.domain import difficulty as km  # noqa: E402
from desktop.domain import typology as ty  # noqa: E402
from desktop.domain.model import BASIS, EVIDENCE  # noqa: E402
from desktop.store import Store  # noqa: E402
from desktop.ui.kit import accessibility  # noqa: E402
from desktop.ui.kit import colors
from desktop.ui.help import guide
from desktop.ui.backend import Backend  # noqa: E402
from desktop.ui.main_window import MainWindow  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
GREEN = ROOT.parent / "shared" / "data" / "embrace" / "embrace_green.jsonl"
TINY = ROOT / "tests" / "data" / "tiny_model"


@pytest.fixture
def palette():
    """Apply a palette to the application for one test, then give the old one back."""
    app = QApplication.instance() or QApplication([])
    old_style, old = app.style().name(), QPalette(app.palette())

    def use(p: QPalette) -> None:
        app.setStyle("Fusion")
        app.setPalette(p)

    yield use
    app.setPalette(old)
    app.setStyle(old_style)


def _window(qtbot, tmp_path, monkeypatch, size=(1366, 768)) -> MainWindow:
    monkeypatch.setenv("MCQLENS_MODEL", str(TINY))
    store = Store.open(str(tmp_path / "look.db"), annotator="anna")
    from desktop import formats
    store.import_datasets(formats.read(str(GREEN)), file=str(GREEN))
    window = MainWindow(Backend(store), facts=False)
    qtbot.addWidget(window)
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    window.go_to("0_0")
    window.model_review.settle(60)
    return window


def _close(window: MainWindow) -> None:
    if window.model_review is not None:
        window.model_review.settle(60)  # no score may arrive after the database is closed
    window.close()
    window.backend.close()


# ---- contrast ------------------------------------------------------------------------------------
_COLOR = r"(#[0-9A-Fa-f]{3,8}\b|rgba?\([^)]*\)|white|black)"


def _parse(value: str, under: str) -> str:
    """A CSS colour as an opaque hex: rgba() composited over `under`."""
    value = value.strip()
    m = re.match(r"rgba\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*,\s*([\d.]+)\s*\)", value)
    if m:
        r, g, b, a = (float(x) for x in m.groups())
        alpha = a if a <= 1 else a / 255
        return colors.over("#%02X%02X%02X" % (int(r), int(g), int(b)), round(alpha * 255), under)
    return QColor(value).name().upper()


def _style_colors(style: str, fg: str, bg: str) -> tuple[str, str]:
    m = re.search(r"background(?:-color)?\s*:\s*" + _COLOR, style)
    if m:
        bg = _parse(m.group(1), bg)
    m = re.search(r"(?<![-\w])color\s*:\s*" + _COLOR, style)
    if m:
        fg = _parse(m.group(1), bg)
    return fg, bg


class _Runs(HTMLParser):
    """(text, foreground, background) of every run of text in a rich-text label."""

    def __init__(self, fg: str, bg: str):
        super().__init__()
        self.stack = [(fg, bg)]
        self.runs: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag, attrs):
        fg, bg = self.stack[-1]
        a = dict(attrs)
        if "bgcolor" in a:
            bg = _parse(a["bgcolor"], bg)
        if "color" in a and tag == "font":
            fg = _parse(a["color"], bg)
        if "style" in a:
            fg, bg = _style_colors(a["style"] or "", fg, bg)
        if tag not in ("br", "img", "hr"):
            self.stack.append((fg, bg))

    def handle_endtag(self, tag):
        if len(self.stack) > 1 and tag not in ("br", "img", "hr"):
            self.stack.pop()

    def handle_data(self, data):
        if data.strip():
            self.runs.append((data.strip()[:40], *self.stack[-1]))


def _pairs_drawn(window: MainWindow) -> list[tuple[str, str, str, str]]:
    """(where, text, fg, bg) for every visible text the window draws in labels, buttons and item views."""
    pal = window.palette()
    win, base = pal.color(QPalette.Window).name().upper(), pal.color(QPalette.Base).name().upper()
    out = []
    for w in window.findChildren(QWidget):
        if not w.isVisibleTo(window) or w.window() is not window:
            continue
        sheet = w.styleSheet()
        if isinstance(w, QLabel):
            fg, bg = _style_colors(sheet, w.palette().color(QPalette.WindowText).name().upper(), win)
            if not w.text().strip():
                continue
            if w.textFormat() == Qt.PlainText or not re.search(r"<[a-zA-Z]", w.text()):
                out.append((f"QLabel {w.objectName()}", w.text()[:40], fg, bg))
                continue
            runs = _Runs(fg, bg)
            runs.feed(w.text())
            out += [(f"QLabel {w.objectName()}", t, f, b) for t, f, b in runs.runs]
        elif isinstance(w, QAbstractButton) and sheet:
            fg0 = w.palette().color(QPalette.ButtonText).name().upper()
            bg0 = w.palette().color(QPalette.Button).name().upper()
            for block in sheet.split("}"):
                if not block.strip():
                    continue
                fg, bg = _style_colors(block, fg0, bg0)
                if ":checked" in block:
                    fg, bg = _style_colors(block, *_style_colors(sheet.split("}")[0], fg0, bg0))
                out.append((f"{type(w).__name__} {w.text()!r} {block.split('{')[0].strip()}", w.text(), fg, bg))
        elif isinstance(w, QTreeWidget):
            stack = [w.topLevelItem(i) for i in range(w.topLevelItemCount())]
            while stack:
                it = stack.pop()
                brush = it.foreground(0)
                if brush.style() != Qt.NoBrush:
                    out.append(("tree item", it.text(0), brush.color().name().upper(), base))
                stack += [it.child(i) for i in range(it.childCount())]
    nav = window.navigator.model
    for g in range(min(nav.rowCount(), 20)):
        parent = nav.index(g, 0)
        b = nav.data(parent, Qt.ForegroundRole)
        if b is not None:
            out.append(("navigator passage", nav.data(parent), b.color().name().upper(), base))
        for c in range(nav.rowCount(parent)):
            idx = nav.index(c, 1, parent)
            b = nav.data(idx, Qt.ForegroundRole)
            if b is not None:
                out.append(("navigator status", nav.data(idx), b.color().name().upper(), base))
    return out


def _all_tabs(window: MainWindow):
    """Show every tab of every tab widget in turn (the side panel's and the model panel's)."""
    for tabs in window.findChildren(QTabWidget):
        for i in range(tabs.count()):
            tabs.setCurrentIndex(i)
            QApplication.processEvents()
            yield f"{tabs.tabText(i)}"


def _desktop_palette(window: str, base: str, text: str, button: str) -> QPalette:
    """A palette as a desktop hands it over, built here (not the product's own dark palette)."""
    p = QPalette()
    for role, hex_ in ((QPalette.Window, window), (QPalette.Base, base), (QPalette.AlternateBase, window),
                       (QPalette.WindowText, text), (QPalette.Text, text), (QPalette.ButtonText, text),
                       (QPalette.Button, button), (QPalette.ToolTipBase, base), (QPalette.ToolTipText, text)):
        p.setColor(role, QColor(hex_))
    return p


PALETTES = {
    "light": colors.light_palette,
    "dark": colors.dark_palette,
    # KDE Breeze Dark's and Breeze's own colours: the theme must hold on palettes it was not tuned to
    "breeze-dark": lambda: _desktop_palette("#31363B", "#1B1E20", "#FCFCFC", "#31363B"),
    "breeze-light": lambda: _desktop_palette("#EFF0F1", "#FCFCFC", "#232627", "#EFF0F1"),
}


@pytest.mark.parametrize("which", list(PALETTES))
def test_every_text_pair_reaches_4_5_to_1(qtbot, tmp_path, monkeypatch, palette, which):
    palette(PALETTES[which]())
    t = colors.theme()
    assert t.dark == ("dark" in which)
    # the role colours of evidence and the bases, the key, the badges: every pair the theme hands out
    low = [(n, f, b, round(colors.contrast(f, b), 2)) for n, f, b in t.pairs() if colors.contrast(f, b) < 4.5]
    assert not low, low
    window = _window(qtbot, tmp_path, monkeypatch)
    window.passage.set_selection(0, 20)
    window.mark_menu.mark_button(EVIDENCE)  # the status bar speaks, the evidence is painted
    seen = 0
    for tab in _all_tabs(window):
        pairs = _pairs_drawn(window)
        seen += len(pairs)
        low = [(where, text, f, b, round(colors.contrast(f, b), 2)) for where, text, f, b in pairs
               if colors.contrast(f, b) < 4.5]
        assert not low, (tab, low)
    assert seen > 100  # the walk saw the window's texts, not nothing
    # what other items show: linter suggestions (the found stretch marked), the eligibility banners
    window.tabs.setCurrentWidget(window.problems)  # the panel is filled while it shows
    for item in [r.item_id for r in window.backend.items()]:
        window.go_to(item)
        if window.problems.suggestion_rows:
            break
    assert window.problems.suggestion_rows
    for text_format, tab in ((None, window.problems), ("partly continuous", window.difficulty),
                             ("non-continuous", window.difficulty)):
        if text_format:
            window.edit("text_format", text_format)
        window.tabs.setCurrentWidget(tab)
        QApplication.processEvents()
        assert not text_format or window.difficulty.banner.isVisibleTo(window)
        low = [(where, text, f, b, round(colors.contrast(f, b), 2)) for where, text, f, b in _pairs_drawn(window)
               if colors.contrast(f, b) < 4.5]
        assert not low, (window.current, text_format, low)
    _close(window)


def test_role_colours_stay_apart_for_colour_blind_readers():
    """The fills are Okabe–Ito hues, all different; lanes and letters come on top (checked below)."""
    fills = [colors.Theme.alternative_fill(i) for i in range(5)]
    assert len(set(fills)) == 5
    # in greyscale (what a reader without colour vision gets) neighbours differ too, or the letter tells
    greys = [colors.luminance(f) for f in fills]
    assert len({round(g, 2) for g in greys}) == 5


# ---- accessibility ---------------------------------------------------------------------------------
def test_every_control_has_an_accessible_name_and_description(qtbot, tmp_path, monkeypatch):
    window = _window(qtbot, tmp_path, monkeypatch)
    window.help.open_shortcuts()
    for tab in _all_tabs(window):
        missing = accessibility.missing(window)
        assert missing == [], (tab, "\n".join(missing))
    # an item with the surface linter's suggestions: their Accept / Dismiss buttons are made per item
    window.tabs.setCurrentWidget(window.problems)  # the panel is filled while it shows
    for item in [r.item_id for r in window.backend.items()]:
        window.go_to(item)
        if window.problems.suggestion_rows:
            break
    assert window.problems.suggestion_rows
    missing = accessibility.missing(window)
    assert missing == [], (window.current, "\n".join(missing))
    dialog = window.help.dialog
    accessibility.ensure(dialog)
    assert accessibility.missing(dialog) == []
    # the form's combo boxes say which variable they score
    assert window.difficulty.controls["toi"].accessibleName() == "TOI: Type of information"
    assert "guide#toi" in window.difficulty.controls["toi"].accessibleDescription()
    _close(window)


# ---- lanes -------------------------------------------------------------------------------------------
def _lanes_clear_of_next_lines(view) -> None:
    boxes = view.line_boxes()
    lanes = view.lane_rects()
    assert lanes
    for alternative, lane in lanes:
        line = max((b for b in boxes if b.top() <= lane.top()), key=lambda b: b.top())
        below = [b for b in boxes if b.top() > line.top()]
        if below:
            nxt = min(b.top() for b in below)
            assert lane.bottom() <= nxt, (alternative, lane, nxt)
        assert lane.top() >= line.bottom()  # under its own line's glyphs, not through them


def test_underline_lanes_never_reach_the_next_line(qtbot, tmp_path, monkeypatch):
    window = _window(qtbot, tmp_path, monkeypatch)
    spans = window.passage.spans
    assert {s.alternative for s in spans if s.role == BASIS} == {0, 1, 2, 3}  # 0_0 has a basis for A–D
    _lanes_clear_of_next_lines(window.passage)
    gap4 = window.passage.line_gap()
    # the lanes are counted per paragraph: one without bases keeps its lines close
    lanes = window.passage.paragraph_lanes()
    assert lanes[0] == 4 and 0 in lanes
    block = window.passage.document().findBlockByNumber(lanes.index(0))
    layout = block.layout()
    assert layout.lineCount() > 1
    step = layout.lineAt(1).y() - layout.lineAt(0).y()
    assert abs(step - (layout.lineAt(0).height() + window.passage.line_gap(0))) < 1.5
    assert window.passage.line_gap(0) < gap4
    # fewer lanes in use: the lines close up again
    window.passage.set_spans([s for s in spans if s.role != BASIS or s.alternative == 0])
    assert window.passage.line_gap() < gap4
    _lanes_clear_of_next_lines(window.passage)
    _close(window)


# ---- the status bar ------------------------------------------------------------------------------------
def test_status_bar_speaks_the_annotators_words(qtbot, tmp_path, monkeypatch):
    window = _window(qtbot, tmp_path, monkeypatch)
    window.passage.set_selection(0, 10)
    window.mark_menu.mark_button(BASIS, 1)
    assert re.sub("<[^>]+>", "", window.save_label.text()) == "✓ Saved: basis of B added"
    window.edit_menu.undo()
    assert re.sub("<[^>]+>", "", window.save_label.text()) == "✓ Undone: basis of B added"
    window.edit_menu.redo()
    assert re.sub("<[^>]+>", "", window.save_label.text()) == "✓ Redone: basis of B added"
    window.difficulty.choose("pod", "none")
    assert "POD set to there is no distracting information in the text (1 pt)" in window.save_label.text()
    span = next(s for s in window.state.question.spans if s.role == BASIS and s.annotator == "anna")
    window.edit("span.remove", {"id": span.id})
    assert re.sub("<[^>]+>", "", window.save_label.text()) == "✓ Saved: basis of B removed"
    shown = re.sub("<[^>]+>", "", window.save_label.text())
    assert "span." not in shown and "#" not in shown  # no field names, no history ids
    _close(window)


# ---- five alternatives ----------------------------------------------------------------------------------
def test_basis_of_e_has_its_own_key(qtbot, tmp_path):
    from PySide6.QtTest import QTest
    passage = ("Mina planted five trees in spring. By autumn only the oak and the pine had survived, "
               "because the summer had been dry.")
    race = tmp_path / "five.json"  # RACE format with five options (no real item in ../shared has five)
    race.write_text(json.dumps({"id": "five.txt", "article": passage,
                                "questions": ["Which trees survived?"],
                                "options": [["the oak", "the pine", "the apple", "none", "the oak and the pine"]],
                                "answers": ["E"]}), encoding="utf-8")
    store = Store.open(str(tmp_path / "five.db"), annotator="anna")
    from desktop import formats
    store.import_datasets(formats.read(str(race), "race"), file=str(race))
    window = MainWindow(Backend(store), facts=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    item = window.current
    assert len(window.state.question.alternatives) == 5
    buttons = [window.mark_menu._basis_buttons.itemAt(i).widget() for i in range(window.mark_menu._basis_buttons.count())]
    assert [b.text() for b in buttons] == ["A (1)", "B (2)", "C (3)", "D (4)", "E (5)"]
    assert "E marks evidence" in buttons[4].toolTip()
    menu = [a.text() for a in window.mark_menu.menu.actions()]
    assert "Basis of E\t5" in menu and "Evidence\tE" in menu
    start = passage.index("the oak and the pine")
    window.passage.set_selection(start, start + len("the oak and the pine"))
    window.passage.setFocus()
    QTest.keyClick(window.passage, "5")
    window.passage.set_selection(0, 4)
    QTest.keyClick(window.passage, "e")
    stored = store.question(item, annotator="anna").spans
    mine = [(s.role, s.alternative, passage[s.start:s.end]) for s in stored if s.annotator == "anna"]
    assert (BASIS, 4, "the oak and the pine") in mine
    assert (EVIDENCE, None, "Mina") in mine
    sheet = window.help.open_shortcuts().sheet.toPlainText()
    assert "E = 5" in sheet
    _close(window)


# ---- help ------------------------------------------------------------------------------------------------
def test_guide_names_every_category_and_type_of_the_domain():
    text = guide.document()
    plain = re.sub(r"<[^>]+>", " ", text).replace("&#x27;", "'").replace("&quot;", '"').replace("&amp;", "&")
    plain = " ".join(plain.split())
    for var in km.VARIABLES:
        assert f"name='{var}'" in text
        assert km.NAMES[var] in plain
        for key in km.categories(var):
            name, pts = km.SCALES[var][key]
            assert f"{name} {pts:g} pt" in plain, (var, name)
    for concept, mapped in km.TOI_ADDED.items():
        assert concept in plain and all(m in plain for m in mapped)
    for rel in km.RELATIONS:
        assert km.RELATION_NAMES[rel] in plain
    for principle in km.PRINCIPLES:
        assert principle in plain
    for t in ty.TYPES.values():
        assert t.name in plain, t.key
        assert guide.GLOSS[t.key]  # each type explained in the guide's own words
        if t.tier:
            assert f"{t.name} ({t.tier};" in plain
    for c in ty.ACCEPTABILITY:
        assert c in plain
    for f in km.TEXT_FORMATS + km.UNIT_TYPES:
        assert f in plain
    assert "negative MI" in plain and "N = 2" in plain
    # written anew, not copied: no glossary definition of Appendix B appears as it stands
    assert not [t.key for t in ty.TYPES.values() if len(t.glossary) > 40 and t.glossary[:60] in plain]


def test_f1_sheet_and_searchable_guide_linked_from_the_form(qtbot, tmp_path, monkeypatch):
    window = _window(qtbot, tmp_path, monkeypatch)
    f1 = window.help.shortcuts_action
    assert f1.shortcut().toString() == "F1"
    dialog = window.help.open_shortcuts()
    sheet = dialog.sheet.toPlainText()
    for keys in ("Ctrl+Z", "Alt+Down", "Ctrl+J", "F6", "F1", "select words, then E"):
        assert keys in sheet, keys
    # search: highlights every match, keeps only the sections that contain it
    n = dialog.find("negative MI")
    assert n >= 1 and dialog.visible_sections() == ["model"]
    assert len(dialog.browser.extraSelections()) == n
    assert dialog.find("POD") >= 3 and "pod" in dialog.visible_sections()
    dialog.find("")
    assert len(dialog.visible_sections()) == len(guide.sections())
    # the form's tooltips point to the guide, and the focused field opens its section
    toi = window.difficulty.controls["toi"]
    assert "guide#toi" in toi.toolTip()
    assert window.help.focused_anchor(toi.lineEdit()) == "toi"  # the TOI search field, inside the combo
    window.help.open_guide("pod")
    assert dialog.tabs.currentIndex() == 1
    assert dialog.contents.currentItem().data(Qt.UserRole) == "pod"
    _close(window)


# ---- a laptop screen -------------------------------------------------------------------------------------
def test_1366x768_wraps_or_scrolls_and_cuts_no_text(qtbot, tmp_path, monkeypatch):
    window = _window(qtbot, tmp_path, monkeypatch, size=(1366, 768))
    assert window.width() <= 1366 and window.height() <= 768
    window.difficulty.set_values({"tom": "llti_llti", "npar": "1"})
    for tab in _all_tabs(window):
        for area in window.findChildren(QScrollArea):
            if area.isVisibleTo(window) and area.widget() is not None:
                if area.horizontalScrollBarPolicy() == Qt.ScrollBarAlwaysOff:
                    # nothing wider than the view, so no text runs out of sight on the right
                    assert area.widget().width() <= area.viewport().width(), (tab, type(area.widget()).__name__)
        for label in window.findChildren(QLabel):
            if label.isVisibleTo(window) and label.wordWrap() and label.text() and label.width() > 0:
                need = label.heightForWidth(label.width())
                assert need <= label.height() + 2, (tab, label.text()[:60], need, label.height())
    # the typology's long names wrap in the narrow panel: every line fits the name column
    window.show_tab("problems")
    QApplication.processEvents()
    QApplication.processEvents()
    tree = window.problems.tree
    room = tree.header().sectionSize(0) - 3 * tree.indentation() - 12
    fm = tree.fontMetrics()
    wrapped = 0
    for leaf in window.problems._items.values():
        lines = leaf.text(0).split("\n")
        wrapped += len(lines) > 1
        assert all(fm.horizontalAdvance(line) <= room for line in lines), (lines, room)
        if not leaf.isHidden() and tree.visualItemRect(leaf).height():
            assert tree.visualItemRect(leaf).height() >= len(lines) * fm.height() - 1
    assert wrapped  # at 1366×768 some names need two lines
    assert window.difficulty.tom_label.text().endswith("(imported as the combined category)")
    assert "contrasts features (1)." in window.difficulty.ic_note.text()
    # the combo popups are as wide as their longest category; the tooltip names it whole
    pod = window.difficulty.controls["pod"]
    widest = max(pod.view().fontMetrics().horizontalAdvance(pod.itemText(i)) for i in range(pod.count()))
    assert pod.view().minimumWidth() >= widest
    i = pod.findData("two_same_paragraph")
    assert pod.itemData(i, Qt.ToolTipRole) == km.SCALES["pod"]["two_same_paragraph"][0]
    _close(window)


# ---- nothing cut unseen, nothing jumping -----------------------------------------------------------
def _cut(window: MainWindow) -> list[tuple[str, str]]:
    """Every label and combo box on screen whose text is cut without "…" and a tooltip holding it."""
    from PySide6.QtWidgets import QComboBox

    from desktop.ui.kit.fit_text import fits
    out = []
    for w in [*window.findChildren(QLabel), *window.findChildren(QComboBox)]:
        if w.isVisibleTo(window) and w.width() > 0:
            ok, text = fits(w)
            if not ok:
                out.append((type(w).__name__, text[:60]))
    return out


@pytest.mark.parametrize("which", ["light", "dark"])
def test_1366x768_every_label_and_box_shows_its_text_or_elides_it_with_a_tooltip(qtbot, tmp_path, monkeypatch,
                                                                                 palette, which):
    palette(colors.light_palette() if which == "light" else colors.dark_palette())
    window = _window(qtbot, tmp_path, monkeypatch, size=(1366, 768))
    # the longest texts the form and the filters show: a combined TOM pair, two distractors, POD's longest
    window.difficulty.set_values({"tom": "llti_llti", "npar": "1", "pod": "two_same_paragraph", "toc": "none"})
    window.navigator.filters["acceptability"].setCurrentIndex(window.navigator.filters["acceptability"].count() - 1)
    cut = []
    for tab in _all_tabs(window):
        QApplication.processEvents()
        cut += [(tab, *c) for c in _cut(window)]
    # a selected span: what it is, before Remove (Del)
    span = next(s for s in window.state.question.spans if s.id is not None)
    window.passage.select_span(span.id)
    QApplication.processEvents()
    assert window.mark_menu.span_info.full_text().startswith("selected: ")
    cut += [("span selected", *c) for c in _cut(window)]
    # a long status message beside the save mark: cut with "…", never over it
    window.tell("Score all: " + "the longest message a status bar shows, " * 6 + "run again to go on")
    window.edit("difficulty.pod", "none")
    QApplication.processEvents()
    message, mark = window.statusBar().message, window.save_label
    assert message.geometry().right() < mark.geometry().left()
    assert message.elided() and message.full_text() in message.toolTip()
    cut += [("status bar", *c) for c in _cut(window)]
    assert not cut, cut
    _close(window)


def test_marking_an_item_done_moves_nothing(qtbot, tmp_path, monkeypatch):
    window = _window(qtbot, tmp_path, monkeypatch, size=(1366, 768))
    QApplication.processEvents()
    before = (window.navigator.width(), window.passage.width(), window.tabs.width())
    window.comments._status_buttons["done"].click()
    QApplication.processEvents()
    QApplication.processEvents()
    assert window.state.status == "done"
    assert (window.navigator.width(), window.passage.width(), window.tabs.width()) == before
    window.edit_menu.undo()
    QApplication.processEvents()
    assert (window.navigator.width(), window.passage.width(), window.tabs.width()) == before
    _close(window)


@pytest.mark.parametrize("which", list(PALETTES))
def test_probability_bars_stand_out_from_their_track(qtbot, tmp_path, monkeypatch, palette, which):
    """Non-text contrast (WCAG 1.4.11): each bar at least 3:1 against the empty track it fills."""
    palette(PALETTES[which]())
    t = colors.theme()
    low = [(what, c, b, round(colors.contrast(c, b), 2)) for what, c, b in t.graphics() if colors.contrast(c, b) < 3]
    assert not low, low
    assert colors.contrast(t.bar_shortcut, t.bar_standard) >= 1.5  # the two models' bars tell apart too
    window = _window(qtbot, tmp_path, monkeypatch)
    bars = window.model_review.panel.bars
    assert len(bars.series) == 2  # the tiny model scored both formats
    for s in bars.series:
        assert colors.contrast(s.color, t.track) >= 3, (s.label, s.color, t.track)
    _close(window)
