"""The navigator's list model: passage header rows and question rows, read a page at a time.

`NavModel` never holds every item: Qt fills it page by page as the view scrolls
(`canFetchMore` / `fetchMore`); a page is a list of rowids from the store's keyset query
(`desktop.store.navigation`), and the text of a row is read only when the view draws it (a
window of rows around it, cached).  `item_label` is how an item's number is shown.
"""
from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont

from desktop.domain.words import count
from desktop.store.navigation import ItemQuery

ROW_ROLE = Qt.UserRole + 1  # the ItemRow of a question row (None for a passage header)
SCORED_MARK = "▪"  # before an item whose model numbers (probabilities, N, MI) are stored

_STATUS_MARK = {"untouched": ("○", "#9E9E9E"), "in progress": ("◐", "#E08E00"), "done": ("●", "#2E9E44")}
_ROLES = {int(Qt.DisplayRole), int(Qt.ToolTipRole), int(Qt.ForegroundRole), int(Qt.FontRole), int(ROW_ROLE),
          int(Qt.AccessibleTextRole)}
PAGE = 400  # rows fetched at a time (a screen shows ~40)
WINDOW = 120  # rows whose text is read around a row the view asks for
CACHE_MAX = 4000  # cached row texts before the cache is emptied (scrolling all of RACE stays small)
# computed once: views ask for the flags of every loaded cell when the selection moves
_ITEM_FLAGS = Qt.ItemIsEnabled | Qt.ItemIsSelectable
_HEADER_FLAGS = Qt.ItemFlags(Qt.ItemIsEnabled)  # a passage header: not an item to open


def item_label(item_id: str, passage_id: str) -> str:
    """The item's number as its source gives it: EMBRACE `4_2` (the id itself, short),
    RACE/ExpMRC `<passage>-<j>` -> `-j` under its passage's header (the long passage id once)."""
    if len(item_id) <= 10 or not item_id.startswith(passage_id):
        return item_id
    rest = item_id[len(passage_id):]
    return rest if re.fullmatch(r"[-_.#/]?\w+", rest) else item_id


class NavModel(QAbstractTableModel):
    """Passage header rows and question rows, in the query's order, read a page at a time."""

    COLUMNS = ("Item", "Me", "Done")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.nav = None  # desktop.store.navigation.Navigation
        self.query: ItemQuery | None = None
        self._keys: list[int] = []  # question rowid (> 0) or -passage rowid (header)
        self._index: dict[int, int] = {}  # key -> row
        self._cursor: tuple | None = None
        self._done = True
        self._last_passage: int | None = None
        self._rows: dict[int, Any] = {}  # question rowid -> ItemRow (what is on screen)
        self._passages: dict[int, Any] = {}  # passage rowid -> PassageRow
        self.marks = None  # rowids -> the set of them whose model numbers are stored (the model panel sets it)
        self._scored: set[int] = set()

    # ---- filling -------------------------------------------------------------------------------
    def reset(self, nav, query: ItemQuery) -> None:
        self.beginResetModel()
        self.nav, self.query = nav, query
        self._keys, self._index, self._rows, self._passages = [], {}, {}, {}
        self._scored = set()
        self._cursor, self._done, self._last_passage = None, nav is None, None
        if nav is not None:
            self._append(nav.page(query, None, PAGE), emit=False)
        self.endResetModel()

    def _append(self, page: list[tuple[int, int, tuple]], emit: bool = True, exhausted: bool | None = None) -> None:
        keys = []
        last = self._last_passage
        for qrow, prow, cursor in page:
            if prow != last:
                keys.append(-prow)
                last = prow
            keys.append(qrow)
            self._cursor = cursor
        self._done = (len(page) < PAGE) if exhausted is None else exhausted
        if not keys:
            return
        first = len(self._keys)
        if emit:
            self.beginInsertRows(QModelIndex(), first, first + len(keys) - 1)
        for k in keys:
            self._index[k] = len(self._keys)
            self._keys.append(k)
        self._last_passage = last
        if emit:
            self.endInsertRows()

    def canFetchMore(self, parent=QModelIndex()):
        return not parent.isValid() and not self._done

    def fetchMore(self, parent=QModelIndex()):
        if self.canFetchMore(parent):
            self._append(self.nav.page(self.query, self._cursor, PAGE))

    def load_until(self, cursor: tuple) -> None:
        """Every row up to the item at order key `cursor` (a far jump: one query)."""
        if self._done or (self._cursor is not None and self._cursor >= cursor):
            return
        page = self.nav.page(self.query, self._cursor, until=cursor)
        self._append(page, exhausted=False)
        self.fetchMore()  # and a page beyond it, so the rows after it can be scrolled to

    # ---- lookups -------------------------------------------------------------------------------
    def row_index(self, rowid: int | None) -> int | None:
        return None if rowid is None else self._index.get(rowid)

    def key_at(self, row: int) -> int:
        return self._keys[row]

    def n_loaded(self) -> int:
        return len(self._keys)

    def row_of(self, item_id: str):
        """The item's navigator row, read fresh from the store (status after another program's edit)."""
        if self.nav is None:
            return None
        return self.nav.row(self.query.annotator, item_id)

    def item_at(self, row: int):
        key = self._keys[row]
        if key < 0:
            return None
        if key not in self._rows:
            self._fill(row)
        return self._rows.get(key)

    def _fill(self, row: int) -> None:
        if len(self._rows) + len(self._passages) > CACHE_MAX:
            self._rows, self._passages = {}, {}
        lo, hi = max(0, row - WINDOW // 4), min(len(self._keys), row + WINDOW)
        want_q = [k for k in self._keys[lo:hi] if k > 0 and k not in self._rows]
        want_p = [-k for k in self._keys[lo:hi] if k < 0 and -k not in self._passages]
        self._rows.update(self.nav.rows(self.query.annotator, want_q))
        self._passages.update(self.nav.passages(self.query.annotator, want_p))
        if self.marks is not None and want_q:
            try:
                got = self.marks(want_q)
            except Exception:  # noqa: BLE001 - a mark is a hint: never fails the list
                got = set()
            self._scored.difference_update(want_q)
            self._scored.update(got)

    def set_marks(self, marks) -> None:
        """`marks(rowids) -> set of those scored` (the model panel, once its model is loaded):
        the rows on screen are read again with their marks."""
        self.marks = marks
        self._rows, self._scored = {}, set()
        if self._keys:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._keys) - 1, 0))

    def forget(self, rowids: list[int], passage_rowids: list[int]) -> None:
        """Drop cached rows (edited elsewhere or here) and repaint those on screen."""
        for r in rowids:
            self._rows.pop(r, None)
        for p in passage_rowids:
            self._passages.pop(p, None)
        last = len(self.COLUMNS) - 1
        for k in [*rowids, *(-p for p in passage_rowids)]:
            i = self._index.get(k)
            if i is not None:
                self.dataChanged.emit(self.index(i, 0), self.index(i, last))

    # ---- Qt model ----------------------------------------------------------------------------------
    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self._keys)

    def columnCount(self, parent=QModelIndex()):
        return len(self.COLUMNS)

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if orientation == Qt.Horizontal and role == Qt.DisplayRole:
            return self.COLUMNS[section]
        if orientation == Qt.Horizontal and role == Qt.ToolTipRole:
            return ("The item: its number as the source gives it, and its stem",
                    "Your status: ○ untouched, ◐ in progress, ● done",
                    "How many annotators finished the item; ★ when the gold (adjudicated) layer is done")[section]
        return None

    def flags(self, index):
        return _HEADER_FLAGS if self._keys[index.row()] < 0 else _ITEM_FLAGS

    def data(self, index, role=Qt.DisplayRole):
        # Views ask for a dozen roles per cell; answer the few we draw before any work.
        if role not in _ROLES or not index.isValid():
            return None
        row, col = index.row(), index.column()
        key = self._keys[row]
        if key < 0:
            if role == ROW_ROLE:
                return None
            p = self._passages.get(-key)
            if p is None:
                self._fill(row)
                p = self._passages.get(-key)
            return None if p is None else self._passage_data(p, col, role)
        r = self._rows.get(key)
        if r is None:
            self._fill(row)
            r = self._rows.get(key)
        if r is None:
            return None
        if role == ROW_ROLE:
            return r
        if role in (Qt.DisplayRole, Qt.AccessibleTextRole):
            if col == 0:
                scored = key in self._scored
                if role == Qt.AccessibleTextRole:
                    return f"{item_label(r.item_id, r.passage_id)} {r.stem}" + (", model scored" if scored else "")
                return f" {SCORED_MARK if scored else ' '} {item_label(r.item_id, r.passage_id)}  {r.stem}"
            if col == 1:
                return _STATUS_MARK.get(r.status, ("?", ""))[0] if role == Qt.DisplayRole else r.status
            gold = "★" if r.gold_status == "done" else ""
            return f"{r.n_done}{gold}" if (r.n_done or gold) else ""
        if role == Qt.ToolTipRole:
            bits = [f"id {r.item_id}", f"you: {r.status}"]
            if r.gold_status != "untouched":
                bits.append(f"gold layer: {r.gold_status}")
            bits.append(f"finished by {count(r.n_done, 'annotator')}")
            bits.append(f"{r.n_evidence} evidence, {count(r.n_bases, 'basis')}, {count(r.n_problems, 'problem')}")
            if key in self._scored:
                bits.append(f"{SCORED_MARK} the model's numbers are stored")
            if col == 0 and self.nav is not None:
                f = self.nav.facts(r.item_id)
                if f.get("acceptability"):
                    bits.append(f"acceptability: {f['acceptability']}")
                if f.get("total") is not None:
                    bits.append(f"difficulty total: {f['total']:g}")
            return "\n".join(bits)
        if role == Qt.ForegroundRole and col == 1:
            from desktop.ui.kit.colors import theme
            return QBrush(QColor(theme().status_text(r.status)))
        return None

    def _passage_data(self, p, col: int, role):
        if role in (Qt.DisplayRole, Qt.AccessibleTextRole):
            if col == 0:
                split = f" · {p.split}" if p.split else ""
                return f"{p.source}{split} · {p.passage_id}"
            if col == 1:
                return f"{p.n_done}/{p.n_questions}"
            return ""
        if role == Qt.ToolTipRole:
            return f"passage {p.passage_id}: {count(p.n_questions, 'question')}, {p.n_done} done by you"
        if role == Qt.FontRole:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ForegroundRole:
            from desktop.ui.kit.colors import theme
            return QBrush(QColor(theme().base_text))
        return None
