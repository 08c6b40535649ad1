"""The navigator: items grouped by passage, with each annotator's status, filters, search, progress.

The widget (`Navigator`): the filter bar (`filter_bar.py`: search box and filter boxes), the
progress line and the item list, whose paged model is `navigator/item_list.py`; moving through
the items (next, previous, next unfinished) and keeping the open item selected.  Filters,
search (SQLite FTS5), counts and progress are SQL in the store.
"""
from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, Signal
from PySide6.QtWidgets import QHeaderView, QTreeView, QVBoxLayout, QWidget

from desktop.store.navigation import ItemQuery
from desktop.ui.navigator.filter_bar import FilterBar
from desktop.ui.navigator.item_list import ROW_ROLE, NavModel
from desktop.ui.kit.steady import WrapLabel, reserve_lines

_SELECT = QItemSelectionModel.ClearAndSelect | QItemSelectionModel.Rows


class Navigator(QWidget):
    """Search box, filters, progress and the item list; emits the chosen item id."""

    itemChosen = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.nav = None
        self.annotator = ""
        self.store = None  # for filters computed in Python (item_filters.IdsFilter)
        self.order = "import"
        self.model = NavModel(self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.filter_bar = FilterBar(self, layout)  # the search box and the filter boxes, at the top
        self.search, self.filters = self.filter_bar.search, self.filter_bar.filters
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

    # ---- data -------------------------------------------------------------------------------
    def bind(self, nav, annotator: str, store=None) -> None:
        """Show the items of `nav` (a store Navigation) as `annotator` sees them."""
        self.nav, self.annotator, self.store = nav, annotator, store
        if nav is not None:
            nav.invalidate()
        self.filter_bar.refresh_choices()
        self.reload()

    def reload(self) -> None:
        self.refilter(lambda: None)

    def unbind(self) -> None:
        """Show nothing and read nothing more (the window is closing)."""
        self.nav = None
        self.model.reset(None, ItemQuery(self.annotator))

    def facts_changed(self) -> None:
        """The facts were (re)computed: the model flags box, and any fact-based filter, again."""
        self.filter_bar.refresh_choices(("model",))
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
        q = self.filter_bar.query()
        c = self.nav.counts(ItemQuery(self.annotator))
        total = c["total"]
        pct = 100.0 * c["done"] / total if total else 0.0
        shown = ""
        if q.filters or q.search:
            key = q.key()
            if recount_shown or getattr(self, "_shown", (None,))[0] != key:
                self._shown = (key, self.nav.total(q))
            shown = f" · {self._shown[1]} shown"
        others = f" · {c['done by anyone']} finished by someone" if c["done by anyone"] else ""
        self.progress.setText(f"<b>{c['done']} of {total} done</b> ({pct:.0f}%) · "
                              f"{c['in progress']} in progress{others}{shown}")

    def refilter(self, change) -> None:
        """Re-query without opening another item: the open item stays open (and selected if shown)."""
        current = self._current
        self._quiet = True
        try:
            change()
            self.update_progress()  # counts first: how many pass decides how the page is read
            self.model.reset(self.nav, self.filter_bar.query())
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

    # ---- walking ---------------------------------------------------------------------------------
    def visible_items(self) -> list[str]:
        """Every item the filters let through, in order (one query; not what the view has loaded)."""
        return [] if self.nav is None else self.nav.item_ids(self.filter_bar.query())

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
