"""Help: the keyboard-shortcut sheet (F1) and the annotation guide (Shift+F1), searchable.

The shortcut sheet is read from the window's own menus when it opens, so it lists
every action with the keys that really trigger it, plus the keys of the passage view
(`mark_keys`).  The guide is `desktop.ui.help.guide`'s HTML; the search field highlights
every match, keeps only the sections that contain it in the contents list and jumps
to the first.  Shift+F1 opens the guide at the section of the focused field (a widget
with a "guide_anchor" property, e.g. the TOI combo box).
"""
from __future__ import annotations

import html
import re

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QColor, QKeySequence, QTextCharFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QApplication, QDialog, QHBoxLayout, QLabel, QLineEdit, QListWidget, QListWidgetItem, QMenu, QSplitter,
    QTabWidget, QTextBrowser, QTextEdit, QVBoxLayout, QWidget,
)

from desktop.ui.help import guide
from desktop.ui.kit import colors
from desktop.ui.menus.mark_keys import basis_key, letter_key

from desktop.domain.words import count

_PASSAGE_KEYS = [
    ("select words, then E", "mark the selection as evidence (snaps to whole words)"),
    ("select words, then 1–9", "mark it as the basis of alternative A, B, C, … (the letters A–D work too; "
                               "E is evidence, so the basis of E is 5)"),
    ("select words, then P", "mark the paragraphs of the selection as required"),
    ("click a highlight", "select that span"),
    ("Delete / Backspace", "remove the selected span"),
    ("Shift+← / Shift+→", "move the selected span's end by a word"),
    ("Ctrl+Shift+← / →", "move the selected span's start by a word"),
    ("Esc", "deselect the span"),
]


def _plain(text: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html.unescape(text)).split())


def menu_shortcuts(window) -> list[tuple[str, str, str]]:
    """(menu, action, keys) of every action in the window's menu bar that has keys."""
    out = []

    def walk(menu: QMenu, path: str) -> None:
        for a in menu.actions():
            if a.menu() is not None:
                walk(a.menu(), f"{path} → {a.menu().title().replace('&', '')}")
                continue
            if a.isSeparator():
                continue
            text, _, shown = a.text().partition("\t")
            keys = ", ".join(k.toString(QKeySequence.NativeText) for k in a.shortcuts()) or shown
            if keys:
                out.append((path, text.replace("&", ""), keys))

    for a in window.menuBar().actions():
        if a.menu() is not None:
            walk(a.menu(), a.menu().title().replace("&", ""))
    return out


def shortcut_sheet(window) -> str:
    rows = "".join(f"<tr><td><b>{html.escape(k)}</b></td><td>{html.escape(w)}</td></tr>" for k, w in _PASSAGE_KEYS)
    n = len(window.state.question.alternatives) if getattr(window, "state", None) is not None else 4
    keys = ", ".join(f"{chr(65 + i)} = {basis_key(i)}" + (f" or {letter_key(i)}" if letter_key(i) else "")
                     for i in range(n))
    menus = "".join(f"<tr><td><b>{html.escape(k)}</b></td><td>{html.escape(t)}</td>"
                    f"<td>{html.escape(m)}</td></tr>" for m, t, k in menu_shortcuts(window))
    return ("<h2>Keyboard shortcuts</h2><h3>In the passage</h3>"
            "<p>The marking keys act in the passage only, so typing a comment never marks text.</p>"
            f"<table cellpadding='4'>{rows}</table><p>Bases of this item: {html.escape(keys)}.</p>"
            "<h3>Everywhere in the window</h3>"
            f"<table cellpadding='4'><tr><th align='left'>Keys</th><th align='left'>Action</th>"
            f"<th align='left'>Menu</th></tr>{menus}</table>")


class HelpWindow(QDialog):
    """Two tabs: the shortcut sheet and the searchable guide."""

    def __init__(self, window):
        super().__init__(window)
        self.main = window
        self.setWindowTitle("MCQ Lens — Help")
        self.setModal(False)
        self.resize(900, 680)
        self.tabs = QTabWidget()
        self.tabs.setAccessibleName("Help pages")
        self.tabs.tabBar().setAccessibleName("Help pages")
        self.tabs.tabBar().setAccessibleDescription("Keyboard shortcuts, or the annotation guide")
        self.sheet = QTextBrowser()
        self.sheet.setAccessibleName("Keyboard shortcuts")
        self.sheet.setAccessibleDescription("Every key of the window and of the passage view")
        self.tabs.addTab(self.sheet, "Keyboard shortcuts")

        page = QWidget()
        lay = QVBoxLayout(page)
        row = QHBoxLayout()
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search the guide (e.g. POD, negative MI, hyphen)…")
        self.search.setClearButtonEnabled(True)
        self.search.setAccessibleName("Search the guide")
        self.search.setAccessibleDescription("Highlights every match and lists only the sections that contain it; "
                                             "Enter goes to the next match")
        self.search.textChanged.connect(self.find)
        self.search.returnPressed.connect(self.next_match)
        self.count = QLabel()
        row.addWidget(self.search, 1)
        row.addWidget(self.count)
        lay.addLayout(row)
        split = QSplitter(Qt.Horizontal)
        self.contents = QListWidget()
        self.contents.setAccessibleName("Guide contents")
        self.contents.setAccessibleDescription("Sections of the guide; while searching, those with a match")
        self.contents.itemActivated.connect(self._chosen)
        self.contents.itemClicked.connect(self._chosen)
        self.browser = QTextBrowser()
        self.browser.setAccessibleName("Annotation guide")
        self.browser.setAccessibleDescription("The adapted Kirsch–Mosenthal scale, the error typology, "
                                              "evidence and bases, N and MI")
        self.browser.setOpenLinks(False)
        self.browser.anchorClicked.connect(lambda url: self.show_guide(url.fragment() or url.toString()))
        self.sections = guide.sections()
        self.browser.setHtml(guide.document())
        self._plain = {s.anchor: _plain(s.title + " " + s.html).lower() for s in self.sections}
        for s in self.sections:
            it = QListWidgetItem(("    " if s.level > 2 else "") + s.title)
            it.setData(Qt.UserRole, s.anchor)
            self.contents.addItem(it)
        split.addWidget(self.contents)
        split.addWidget(self.browser)
        split.setSizes([240, 640])
        lay.addWidget(split, 1)
        self.tabs.addTab(page, "Annotation guide")
        outer = QVBoxLayout(self)
        outer.addWidget(self.tabs)
        self.matches: list[QTextCursor] = []
        self._at = -1

    # ---- pages ---------------------------------------------------------------------------
    def show_shortcuts(self) -> None:
        self.sheet.setHtml(shortcut_sheet(self.main))
        self.tabs.setCurrentIndex(0)
        self._raise()

    def show_guide(self, anchor: str | None = None) -> None:
        self.tabs.setCurrentIndex(1)
        if anchor:
            anchor = anchor.split("#")[-1].lower()
            self.browser.scrollToAnchor(anchor)
            for i in range(self.contents.count()):
                if self.contents.item(i).data(Qt.UserRole) == anchor:
                    self.contents.setCurrentRow(i)
        self._raise()

    def _raise(self) -> None:
        self.show()
        self.raise_()
        self.activateWindow()

    def _chosen(self, item: QListWidgetItem) -> None:
        self.browser.scrollToAnchor(item.data(Qt.UserRole))

    # ---- search ----------------------------------------------------------------------------
    def find(self, text: str) -> int:
        """Highlight every match of `text`, keep the sections that contain it; returns the match count."""
        text = text.strip()
        doc = self.browser.document()
        self.matches = []
        if text:
            cursor = QTextCursor(doc)
            while True:
                cursor = doc.find(text, cursor, QTextDocument.FindFlags())
                if cursor.isNull():
                    break
                self.matches.append(QTextCursor(cursor))
        t = colors.theme(self.palette())
        fmt = QTextCharFormat()
        fmt.setBackground(QColor(t.found_bg))
        fmt.setForeground(QColor(t.found_text))
        selections = []
        for c in self.matches:
            sel = QTextEdit.ExtraSelection()
            sel.cursor = c
            sel.format = fmt
            selections.append(sel)
        self.browser.setExtraSelections(selections)
        low = text.lower()
        shown = 0
        for i in range(self.contents.count()):
            it = self.contents.item(i)
            hit = not low or low in self._plain[it.data(Qt.UserRole)]
            it.setHidden(not hit)
            shown += hit
        if text:
            n = len(self.matches)
            self.count.setText(f"{count(n, 'match')} in {count(shown, 'section')}"
                               if n else "no match")
        else:
            self.count.setText("")
        self._at = -1
        if self.matches:
            self.next_match()
        return len(self.matches)

    def next_match(self) -> None:
        if not self.matches:
            return
        self._at = (self._at + 1) % len(self.matches)
        c = QTextCursor(self.matches[self._at])
        self.browser.setTextCursor(c)
        self.browser.ensureCursorVisible()

    def visible_sections(self) -> list[str]:
        return [self.contents.item(i).data(Qt.UserRole) for i in range(self.contents.count())
                if not self.contents.item(i).isHidden()]


class Help(QObject):
    """The Help menu and its window (built on first use)."""

    def __init__(self, window):
        super().__init__(window)
        self.main = window
        self.dialog: HelpWindow | None = None
        # the Help menu MainWindow placed (desktop/ui/menus/help.py), or a new one
        part = getattr(window, "help_menu", None)
        menu = part.menu if part is not None else window.menuBar().addMenu("&Help")
        self.shortcuts_action = QAction("&Keyboard shortcuts", window)
        self.shortcuts_action.setShortcut(QKeySequence("F1"))
        self.shortcuts_action.setShortcutContext(Qt.WindowShortcut)
        self.shortcuts_action.triggered.connect(self.open_shortcuts)
        self.guide_action = QAction("Annotation &guide", window)
        self.guide_action.setShortcut(QKeySequence("Shift+F1"))
        self.guide_action.setShortcutContext(Qt.WindowShortcut)
        self.guide_action.triggered.connect(lambda: self.open_guide(self.focused_anchor()))
        menu.addAction(self.shortcuts_action)
        menu.addAction(self.guide_action)
        for name, anchor in (("Kirsch–Mosenthal scale", "km"), ("Error typology", "typology"),
                             ("Evidence and bases", "evidence"), ("N and MI (the model)", "model")):
            a = QAction(f"Guide: {name}", window)
            a.triggered.connect(lambda _=False, x=anchor: self.open_guide(x))
            menu.addAction(a)
        for w in (window.findChildren(QWidget)):
            if hasattr(w, "guideRequested"):
                w.guideRequested.connect(self.open_guide)

    def _dialog(self) -> HelpWindow:
        if self.dialog is None:
            self.dialog = HelpWindow(self.main)
        return self.dialog

    def open_shortcuts(self) -> HelpWindow:
        d = self._dialog()
        d.show_shortcuts()
        return d

    def open_guide(self, anchor: str | None = None) -> HelpWindow:
        d = self._dialog()
        d.show_guide(anchor)
        return d

    @staticmethod
    def focused_anchor(w: QWidget | None = None) -> str | None:
        """The guide section of the field with the focus (or of `w`): its own or a parent's "guide_anchor"."""
        w = w if w is not None else QApplication.focusWidget()
        while w is not None:
            anchor = w.property("guide_anchor")
            if anchor:
                return str(anchor)
            w = w.parentWidget()
        return None


def install_help_menu(window) -> Help:
    return Help(window)
