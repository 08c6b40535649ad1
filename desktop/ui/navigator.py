"""The navigator: items grouped by passage, with each annotator's status, filters, search, progress.

It never holds every item.  `NavModel` is a flat list model (a passage's header row, then
its questions) that Qt fills page by page as the view scrolls (`canFetchMore` /
`fetchMore`); a page is a list of rowids from the store's keyset query
(`desktop.store.navigation`), and the text of a row is read only when the view draws it
(a window of rows around it, cached).  Filters, search (SQLite FTS5), counts and progress
are SQL in the store; the filter boxes come from `desktop.store.item_filters`, so another
module can register a filter of its own.
"""
from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QItemSelectionModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QComboBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QTreeView, QVBoxLayout, QWidget,
)

from desktop.domain.words import count
from desktop.store import item_filters
from desktop.store.navigation import ItemQuery
from desktop.ui.fit_text import ElidingCombo
from desktop.ui.steady import WrapLabel, reserve_lines

ROW_ROLE = Qt.UserRole + 1  # the ItemRow of a question row (None for a passage header)

_STATUS_MARK = {"untouched": ("○", "#9E9E9E"), "in progress": ("◐", "#E08E00"), "done": ("●", "#2E9E44")}
_ANY = item_filters.ANY
_ROLES = {int(Qt.DisplayRole), int(Qt.ToolTipRole), int(Qt.ForegroundRole), int(Qt.FontRole), int(ROW_ROLE),
          int(Qt.AccessibleTextRole)}
PAGE = 400  # rows fetched at a time (a screen shows ~40)
WINDOW = 120  # rows whose text is read around a row the view asks for
CACHE_MAX = 4000  # cached row texts before the cache is emptied (scrolling all of RACE stays small)
# computed once: views ask for the flags of every loaded cell when the selection moves
_ITEM_FLAGS = Qt.ItemIsEnabled | Qt.ItemIsSelectable
_HEADER_FLAGS = Qt.ItemFlags(Qt.ItemIsEnabled)  # a passage header: not an item to open
_SELECT = QItemSelectionModel.ClearAndSelect | QItemSelectionModel.Rows


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

    # ---- filling -------------------------------------------------------------------------------
    def reset(self, nav, query: ItemQuery) -> None:
        self.beginResetModel()
        self.nav, self.query = nav, query
        self._keys, self._index, self._rows, self._passages = [], {}, {}, {}
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
                return f"   {item_label(r.item_id, r.passage_id)}  {r.stem}"
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
            if col == 0 and self.nav is not None:
                f = self.nav.facts(r.item_id)
                if f.get("acceptability"):
                    bits.append(f"acceptability: {f['acceptability']}")
                if f.get("total") is not None:
                    bits.append(f"difficulty total: {f['total']:g}")
            return "\n".join(bits)
        if role == Qt.ForegroundRole and col == 1:
            from desktop.ui.colors import theme
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
            from desktop.ui.colors import theme
            return QBrush(QColor(theme().base_text))
        return None


class Navigator(QWidget):
    """Search box, filters, progress and the item list; emits the chosen item id."""

    itemChosen = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.nav = None
        self.annotator = ""
        self.store = None  # for filters computed in Python (item_filters.IdsFilter)
        self._id_filters: set[str] = set()  # set_filter_ids' names in force
        self.order = "import"
        self.model = NavModel(self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search stems, alternatives and passages…")
        self.search.setClearButtonEnabled(True)
        self.search.setAccessibleName("Search items")
        self.search.setAccessibleDescription("Words of a stem, an alternative or a passage, or an item id; "
                                             "Enter shows the items that contain them")
        self.search.returnPressed.connect(self._apply_search)
        self.search.textChanged.connect(lambda t: t or self._apply_search())
        layout.addWidget(self.search)
        self.filters: dict[str, QComboBox] = {}
        self._filter_rows: list[QHBoxLayout] = []
        self._filter_box = QVBoxLayout()
        self._filter_box.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self._filter_box)
        for name in item_filters.FILTERS:
            self.add_filter(name)
        # wrapped, two lines kept: a longer count ("… · 1 finished by someone") neither widens the
        # navigator (a one-line label is as wide as its text) nor pushes the list down
        self.progress = WrapLabel()
        reserve_lines(self.progress, 2)
        self.progress.setAccessibleName("Progress")
        self.progress.setAccessibleDescription("How many items you have done, are working on, and others finished")
        layout.addWidget(self.progress)
        self.tree = QTreeView()
        self.tree.setModel(self.model)
        self.tree.setRootIsDecorated(False)
        self.tree.setAccessibleName("Items")
        self.tree.setAccessibleDescription("The items grouped by passage, with their status; Alt+Down and Alt+Up "
                                           "move through them")
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setAccessibleName("Items")
        self.tree.setAccessibleDescription("Passages and their questions in the order shown; choose one to open it")
        self.tree.header().setStretchLastSection(False)
        self.tree.header().setSectionResizeMode(0, QHeaderView.Stretch)
        # fixed widths: sizing to contents would read every row
        for col, width in ((1, 44), (2, 40)):
            self.tree.header().setSectionResizeMode(col, QHeaderView.Fixed)
            self.tree.header().resizeSection(col, width)
        # Qt would scroll to each new current row by the least it can, one row per move at the
        # bottom (repainting the list and its scroll bar); `_scroll_to` turns a page instead
        self.tree.setAutoScroll(False)
        self.tree.selectionModel().currentChanged.connect(self._current_changed)
        layout.addWidget(self.tree, 1)
        self._current: str | None = None
        self._quiet = False

    # ---- filters: one box per registered filter -----------------------------------------------------
    def add_filter(self, name: str) -> QComboBox:
        """A box for the registered filter `name` (added after the window opened, by another module)."""
        if name in self.filters:
            return self.filters[name]
        spec = item_filters.FILTERS[name]
        combo = ElidingCombo()  # a long value ends with “…”, whole in the tooltip
        combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        combo.setMinimumContentsLength(6)
        combo.setToolTip(spec.tooltip or f"Filter by {name}")
        combo.setAccessibleName(f"Filter: {spec.label or name}")
        combo.setAccessibleDescription(spec.tooltip or f"Show only the items of one {name}")
        combo.currentIndexChanged.connect(lambda _i, n=name: self._apply_filter(n))
        self._fill_combo(name, combo)
        if not self._filter_rows or self._filter_rows[-1].count() >= 2:  # two a row: their names fit
            row = QHBoxLayout()
            self._filter_rows.append(row)
            self._filter_box.addLayout(row)
        self._filter_rows[-1].addWidget(combo)
        self.filters[name] = combo
        return combo

    def _fill_combo(self, name: str, combo: QComboBox) -> None:
        spec = item_filters.FILTERS[name]
        keep = combo.currentText() if combo.currentIndex() > 0 else None
        values = spec.values(self.nav) if (self.nav is not None or not callable(spec.choices)) else []
        combo.blockSignals(True)
        combo.clear()
        combo.addItems([f"{spec.label or name}: {_ANY}", *values])
        if keep is not None and keep in values:
            combo.setCurrentIndex(values.index(keep) + 1)
        combo.blockSignals(False)

    def refresh_choices(self, names: tuple[str, ...] | None = None) -> None:
        """Refill the boxes whose values come from the data (sources, splits, model flags)."""
        for name, combo in self.filters.items():
            if names is None or name in names:
                self._fill_combo(name, combo)

    def query(self) -> ItemQuery:
        chosen = {name: c.currentText() for name, c in self.filters.items() if c.currentIndex() > 0}
        chosen.update({key: "on" for key in sorted(self._id_filters)})
        return ItemQuery(self.annotator, chosen, self.search.text().strip(), self.order)

    # ---- data -------------------------------------------------------------------------------
    def bind(self, nav, annotator: str, store=None) -> None:
        """Show the items of `nav` (a store Navigation) as `annotator` sees them."""
        self.nav, self.annotator, self.store = nav, annotator, store
        if nav is not None:
            nav.invalidate()
        self.refresh_choices()
        self.reload()

    def reload(self) -> None:
        self._filtering(lambda: None)

    def unbind(self) -> None:
        """Show nothing and read nothing more (the window is closing)."""
        self.nav = None
        self.model.reset(None, ItemQuery(self.annotator))

    def facts_changed(self) -> None:
        """The facts were (re)computed: the model flags box, and any fact-based filter, again."""
        self.refresh_choices(("model",))
        if any(self.filters[n].currentIndex() > 0 for n in ("acceptability", "eligibility", "difficulty", "model")
               if n in self.filters) or self.order != "import":
            self.reload()

    def n_facts(self) -> int:
        return 0 if self.nav is None else self.nav.n_facts()

    def set_order(self, order: str) -> None:
        """"import", "shortcut_n" or "mi_bits" (lowest first; a passage goes where its lowest item goes)."""
        self.order = order
        self.reload()

    def refresh_items(self, item_ids: list[str]) -> None:
        """Rows (status, counts) of items edited here or elsewhere; selection and scroll stay."""
        if self.nav is None or not item_ids:
            return
        rowids = [r.rowid for r in (self.nav.row(self.annotator, i) for i in item_ids) if r is not None]
        passages: set[int] = set()
        # the passage header of each edited item sits at the nearest header above it
        for rid in rowids:
            i = self.model.row_index(rid)
            while i is not None and i >= 0 and self.model.key_at(i) > 0:
                i -= 1
            if i is not None and i >= 0:
                passages.add(-self.model.key_at(i))
        self.model.forget(rowids, sorted(passages))
        self.update_progress(recount_shown=False)

    def update_progress(self, recount_shown: bool = True) -> None:
        """Progress from SQL counts.  After an edit (`recount_shown=False`) the number shown
        stays that of the list on screen, which is not re-queried either (an item marked done
        under "not done" stays listed until the filter changes)."""
        if self.nav is None:
            self.progress.setText("")
            return
        q = self.query()
        c = self.nav.counts(ItemQuery(self.annotator))
        total = c["total"]
        pct = 100.0 * c["done"] / total if total else 0.0
        shown = ""
        if q.filters or q.search:
            key = q.key()
            if recount_shown or getattr(self, "_shown", (None,))[0] != key:
                self._shown = (key, self.nav.counts(q)["total"])
            shown = f" · {self._shown[1]} shown"
        others = f" · {c['done by anyone']} finished by someone" if c["done by anyone"] else ""
        self.progress.setText(f"<b>{c['done']} of {total} done</b> ({pct:.0f}%) · "
                              f"{c['in progress']} in progress{others}{shown}")

    # ---- filters ------------------------------------------------------------------------------
    def _apply_search(self) -> None:
        self._filtering(lambda: None)

    def _apply_filter(self, name: str) -> None:
        spec = item_filters.FILTERS.get(name)
        combo = self.filters[name]
        if isinstance(spec, item_filters.IdsFilter) and combo.currentIndex() > 0 and self.nav is not None:
            value = combo.currentText()
            self.nav.put_filter_ids(f"{name}={value}", spec.ids(self.store, value))
        self._filtering(lambda: None)

    def _filtering(self, change) -> None:
        """Re-query without opening another item: the open item stays open (and selected if shown)."""
        current = self._current
        self._quiet = True
        try:
            change()
            self.update_progress()  # counts first: how many pass decides how the page is read
            self.model.reset(self.nav, self.query())
            if current is not None:
                self._show(current)
        finally:
            self._quiet = False
            self._current = current

    def _show(self, item_id: str) -> bool:
        """Select `item_id`'s row if the query shows it (loading the rows up to it); False if hidden."""
        if self.nav is None:
            return False
        rowid = self.nav.rowid(item_id)
        i = self.model.row_index(rowid)
        if i is None and self.nav.passes(self.model.query, item_id):
            cursor = self.nav.cursor_of(self.model.query, item_id)
            if cursor is not None:
                self.model.load_until(cursor)
                i = self.model.row_index(rowid)
        if i is None:
            self.tree.selectionModel().clearSelection()
            return False
        idx = self.model.index(i, 0)
        self.tree.selectionModel().setCurrentIndex(idx, _SELECT)
        self._scroll_to(idx)
        return True

    def _scroll_to(self, idx) -> None:
        """Bring the row in sight a page at a time: stepping down past the last row shows it near
        the top (with the row before it), so the next screenful of moves scrolls nothing."""
        view = self.tree
        rect, area = view.visualRect(idx), view.viewport().rect()
        if area.contains(rect):
            return
        below = rect.top() >= area.bottom()
        above = idx.row() > 0 and below and rect.top() - area.bottom() < 2 * rect.height()
        if above:  # the next row down: its neighbour above stays in sight as the top row
            view.scrollTo(self.model.index(idx.row() - 1, 0), QTreeView.PositionAtTop)
        elif rect.bottom() <= area.top() and area.top() - rect.bottom() < 2 * rect.height():
            view.scrollTo(idx, QTreeView.PositionAtBottom)  # the next row up
        else:
            view.scrollTo(idx, QTreeView.PositionAtCenter)  # a jump (search, Go to)

    # ---- a filter another module registers (desktop/ui/menu_reports.py: annotators disagree) ------
    def set_filter_ids(self, name: str, item_ids: list[str] | None) -> None:
        """Show only `item_ids`, with the other filters (None removes it); no combo box shows it."""
        from desktop.store.navigation import IDS_PREFIX

        key = IDS_PREFIX + name

        def change():
            if item_ids is None:
                self._id_filters.discard(key)
            else:
                self._id_filters.add(key)
                if self.nav is not None:
                    self.nav.put_filter_ids(key, item_ids)
        self._filtering(change)

    # ---- walking ---------------------------------------------------------------------------------
    def visible_items(self) -> list[str]:
        """Every item the filters let through, in order (one query; not what the view has loaded)."""
        return [] if self.nav is None else self.nav.item_ids(self.query())

    @property
    def current(self) -> str | None:
        return self._current

    def select(self, item_id: str, emit: bool = True) -> bool:
        if self.nav is None or self.nav.rowid(item_id) is None:
            return False
        self._quiet = not emit
        try:
            shown = self._show(item_id)
        finally:
            self._quiet = False
        self._current = item_id
        if emit and not shown:  # hidden by a filter: opened anyway, the filter stays as it is
            self.itemChosen.emit(item_id)
        return True

    def first_item(self) -> str | None:
        """The first item shown (None when the filters hide every item)."""
        for i in range(min(self.model.n_loaded(), 2)):
            row = self.model.item_at(i)
            if row is not None:
                return row.item_id
        return None

    def _neighbour(self, delta: int) -> str | None:
        """The shown item before or after the current one."""
        m = self.model
        i = m.row_index(self.nav.rowid(self._current)) if (self.nav and self._current) else None
        if i is None:
            if self.nav is None:
                return None
            if self._current is None:
                i = -1 if delta > 0 else m.n_loaded()
            else:  # the current item is hidden by a filter: its place in the order decides
                cursor = self.nav.cursor_of(m.query, self._current)
                if delta > 0:
                    page = self.nav.page(m.query, cursor, 1)
                else:
                    page = self.nav.page(m.query, None, until=cursor)[-1:]
                return self._rowid_item(page[0][0]) if page else None
        j = i + delta
        while True:
            if j >= m.n_loaded() and m.canFetchMore():
                m.fetchMore()
            if not 0 <= j < m.n_loaded():
                return None
            row = m.item_at(j)
            if row is not None:
                return row.item_id
            j += delta

    def _rowid_item(self, rowid: int) -> str | None:
        rows = self.nav.rows(self.annotator, [rowid])
        return rows[rowid].item_id if rowid in rows else None

    def next_item(self) -> str | None:
        return self._go(self._neighbour(+1))

    def previous_item(self) -> str | None:
        return self._go(self._neighbour(-1))

    def next_unfinished(self) -> str | None:
        """The next shown item that is not done (by me), wrapping around once."""
        if self.nav is None:
            return None
        q = self.model.query
        extra, params = "coalesce(me.status, 'untouched') != 'done' AND q.id != ?", [self._current or ""]
        cursor = self.nav.cursor_of(q, self._current) if self._current else None
        page = self.nav.page(q, cursor, 1, extra=extra, extra_params=params)
        if not page and cursor is not None:
            page = self.nav.page(q, None, 1, extra=extra, extra_params=params)
        return self._go(self._rowid_item(page[0][0]) if page else None)

    def _go(self, item_id: str | None) -> str | None:
        if item_id is not None:
            self.select(item_id)
        return item_id

    def _current_changed(self, current, _previous) -> None:
        if current.isValid():
            self._scroll_to(current)
        row = current.data(ROW_ROLE) if current.isValid() else None
        if row is None or self._quiet:
            return
        self._current = row.item_id
        self.itemChosen.emit(row.item_id)
