"""The navigator: every item grouped by passage, with status, filters, search and progress.

`ItemTreeModel` adapts the store's `ItemRow` list to Qt (passages as parents,
questions as children) without copying it into widgets; `ItemFilter` is the
proxy that applies the filters; `Navigator` is the panel around them and walks
the visible items for next / previous / next unfinished.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from PySide6.QtCore import (
    QAbstractItemModel, QItemSelectionModel, QModelIndex, QSortFilterProxyModel, Qt, Signal,
)
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QComboBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QTreeView, QVBoxLayout, QWidget,
)

ROW_ROLE = Qt.UserRole + 1  # the ItemRow of a question index (None for a passage)

_STATUS_MARK = {"untouched": ("○", "#9E9E9E"), "in progress": ("◐", "#E08E00"), "done": ("●", "#2E9E44")}
_ANY = "any"
_ROLES = {int(Qt.DisplayRole), int(Qt.ToolTipRole), int(Qt.ForegroundRole), int(ROW_ROLE)}
_FLAGS = Qt.ItemIsEnabled | Qt.ItemIsSelectable


@dataclass
class _Group:
    passage_id: str
    source: str
    rows: list[int] = field(default_factory=list)  # indices into ItemTreeModel.rows


class ItemTreeModel(QAbstractItemModel):
    """Passages (top level) and their questions (children) over a list of ItemRow."""

    COLUMNS = ("Item", "Done")

    def __init__(self, rows: list[Any] | None = None, parent=None):
        super().__init__(parent)
        self.rows: list[Any] = []
        self._groups: list[_Group] = []
        self._where: dict[str, tuple[int, int]] = {}  # item id -> (group, child)
        self.facts: dict[str, dict[str, Any]] = {}  # item id -> acceptability, eligible, total, model flags
        if rows:
            self.set_rows(rows)

    def set_rows(self, rows: list[Any]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self._groups, self._where = [], {}
        by_passage: dict[str, int] = {}
        for i, r in enumerate(self.rows):
            g = by_passage.get(r.passage_id)
            if g is None:
                g = by_passage[r.passage_id] = len(self._groups)
                self._groups.append(_Group(r.passage_id, r.source))
            self._where[r.item_id] = (g, len(self._groups[g].rows))
            self._groups[g].rows.append(i)
        self.endResetModel()

    def set_facts(self, facts: dict[str, dict[str, Any]]) -> None:
        self.facts = facts  # read by the filter and the tooltips; the navigator refilters

    # ---- lookups -------------------------------------------------------------------
    def index_of(self, item_id: str) -> QModelIndex:
        where = self._where.get(item_id)
        if where is None:
            return QModelIndex()
        g, c = where
        return self.createIndex(c, 0, g + 1)

    def row_of(self, item_id: str):
        where = self._where.get(item_id)
        if where is None:
            return None
        g, c = where
        return self.rows[self._groups[g].rows[c]]

    def update_row(self, item_id: str, **values) -> None:
        """Change fields of one row (status after an edit) and repaint it and its passage."""
        row = self.row_of(item_id)
        if row is None:
            return
        for k, v in values.items():
            setattr(row, k, v)
        idx = self.index_of(item_id)
        self.dataChanged.emit(idx, idx.siblingAtColumn(len(self.COLUMNS) - 1))
        parent = idx.parent()
        self.dataChanged.emit(parent, parent.siblingAtColumn(len(self.COLUMNS) - 1))

    def counts(self) -> dict[str, int]:
        out = {"untouched": 0, "in progress": 0, "done": 0}
        for r in self.rows:
            out[r.status] = out.get(r.status, 0) + 1
        return out

    # ---- Qt model ----------------------------------------------------------------------
    def index(self, row, column, parent=QModelIndex()):
        if not parent.isValid():
            if 0 <= row < len(self._groups):
                return self.createIndex(row, column, 0)
            return QModelIndex()
        if parent.internalId() != 0:
            return QModelIndex()
        g = parent.row()
        if 0 <= row < len(self._groups[g].rows):
            return self.createIndex(row, column, g + 1)
        return QModelIndex()

    def parent(self, index=QModelIndex()):
        if not index.isValid() or index.internalId() == 0:
            return QModelIndex()
        return self.createIndex(index.internalId() - 1, 0, 0)

    def rowCount(self, parent=QModelIndex()):
        if not parent.isValid():
            return len(self._groups)
        if parent.internalId() == 0 and parent.column() == 0:
            return len(self._groups[parent.row()].rows)
        return 0

    def columnCount(self, parent=QModelIndex()):
        return len(self.COLUMNS)

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if orientation == Qt.Horizontal and role == Qt.DisplayRole:
            return self.COLUMNS[section]
        return None

    def flags(self, index):
        return _FLAGS

    def _row(self, index):
        if index.internalId() == 0:
            return None
        return self.rows[self._groups[index.internalId() - 1].rows[index.row()]]

    def data(self, index, role=Qt.DisplayRole):
        # Views ask for a dozen roles per cell; answer the few we draw before any work.
        if role not in _ROLES or not index.isValid():
            return None
        row = self._row(index)
        if row is None:
            return self._passage_data(self._groups[index.row()], index.column(), role)
        if role == ROW_ROLE:
            return row
        col = index.column()
        if role == Qt.DisplayRole:
            if col == 0:
                return f"{row.index + 1}. {row.stem}"
            return _STATUS_MARK.get(row.status, ("?", ""))[0]
        if role == Qt.ToolTipRole:
            if col == 1:
                return row.status
            facts = self.facts.get(row.item_id, {})
            bits = [f"id {row.item_id}", f"{row.n_evidence} evidence, {row.n_bases} bases, {row.n_problems} problems"]
            if facts.get("acceptability"):
                bits.append(f"acceptability: {facts['acceptability']}")
            if facts.get("total") is not None:
                bits.append(f"difficulty total: {facts['total']:g}")
            return "\n".join(bits)
        if role == Qt.ForegroundRole and col == 1:
            from desktop.ui.colors import theme
            return QBrush(QColor(theme().status_text(row.status)))
        return None

    def _passage_data(self, group: _Group, col: int, role):
        if role == Qt.DisplayRole:
            rows = [self.rows[i] for i in group.rows]
            if col == 0:
                return f"{group.source} · {group.passage_id}"
            done = sum(r.status == "done" for r in rows)
            return f"{done}/{len(rows)}"
        if role == Qt.ForegroundRole:
            from desktop.ui.colors import theme
            return QBrush(QColor(theme().base_text))
        return None


class ItemFilter(QSortFilterProxyModel):
    """Keeps the questions that pass every active filter (and their passages)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setRecursiveFilteringEnabled(True)
        self._predicates: dict[str, Callable[[Any, dict], bool]] = {}
        self._search = ""
        self.passage_hits: set[str] | None = None  # passages whose text matches the search

    def set_predicate(self, name: str, predicate: Callable[[Any, dict], bool] | None) -> None:
        self._begin()
        if predicate is None:
            self._predicates.pop(name, None)
        else:
            self._predicates[name] = predicate
        self._end()

    def set_search(self, text: str, passage_hits: set[str] | None) -> None:
        self._begin()
        self._search = text.strip().lower()
        self.passage_hits = passage_hits
        self._end()

    def active(self) -> bool:
        """Whether any filter or search hides items."""
        return bool(self._predicates or self._search)

    def refilter(self) -> None:
        self._begin()
        self._end()

    # Qt 6.9 replaced invalidateFilter() by a begin/end pair around the change.
    def _begin(self) -> None:
        if hasattr(self, "beginFilterChange"):
            self.beginFilterChange()

    def _end(self) -> None:
        if hasattr(self, "endFilterChange"):
            self.endFilterChange()
        else:
            self.invalidateFilter()

    def filterAcceptsRow(self, source_row, source_parent):
        if not source_parent.isValid():
            return False  # a passage shows when one of its questions does (recursive filtering)
        model: ItemTreeModel = self.sourceModel()
        row = model.data(model.index(source_row, 0, source_parent), ROW_ROLE)
        if row is None:
            return False
        facts = model.facts.get(row.item_id, {})
        if self._search:
            in_stem = self._search in row.stem.lower() or self._search == row.item_id.lower()
            in_passage = self.passage_hits is not None and row.passage_id in self.passage_hits
            if not (in_stem or in_passage):
                return False
        return all(p(row, facts) for p in self._predicates.values())


class Navigator(QWidget):
    """Search box, filters, progress and the item tree; emits the chosen item id."""

    itemChosen = Signal(str)

    def __init__(self, search_passages: Callable[[str], set[str]] | None = None, parent=None):
        super().__init__(parent)
        self._search_passages = search_passages
        self.model = ItemTreeModel()
        self.proxy = ItemFilter()
        self.proxy.setSourceModel(self.model)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search stems and passages…")
        self.search.setClearButtonEnabled(True)
        self.search.returnPressed.connect(self._apply_search)
        self.search.textChanged.connect(lambda t: t or self._apply_search())
        layout.addWidget(self.search)
        self.filters: dict[str, QComboBox] = {}
        row1, row2, row3 = QHBoxLayout(), QHBoxLayout(), QHBoxLayout()
        for name, items, box in (
            ("source", [_ANY], row1), ("status", [_ANY, "untouched", "in progress", "done", "not done"], row1),
            ("spans", [_ANY, "has evidence", "has bases", "no evidence", "no bases"], row1),
            ("acceptability", [_ANY, "acceptable", "mainly acceptable", "partially acceptable", "unacceptable"], row2),
            ("eligibility", [_ANY, "eligible", "not eligible"], row2),
            ("difficulty", [_ANY, "≤ 10", "10.5–15", "15.5–20", "> 20", "not scored"], row3),
            ("model", [_ANY], row3),
        ):
            combo = QComboBox()
            combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(6)
            combo.setToolTip(f"Filter by {name}")
            combo.addItems([f"{name}: {x}" if x == _ANY else x for x in items])
            combo.currentIndexChanged.connect(lambda _i, n=name: self._apply_filter(n))
            box.addWidget(combo)
            self.filters[name] = combo
        layout.addLayout(row1)
        layout.addLayout(row2)
        layout.addLayout(row3)
        self.progress = QLabel()
        layout.addWidget(self.progress)
        self.tree = QTreeView()
        self.tree.setModel(self.proxy)
        self.tree.setAccessibleName("Items")
        self.tree.setAccessibleDescription("The items grouped by passage, with their status; Alt+Down and Alt+Up "
                                           "move through them")
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setExpandsOnDoubleClick(True)
        self.tree.header().setStretchLastSection(False)
        self.tree.header().setSectionResizeMode(0, QHeaderView.Stretch)
        # A fixed width: sizing to contents would read every row of the model at start-up.
        self.tree.header().setSectionResizeMode(1, QHeaderView.Fixed)
        self.tree.header().resizeSection(1, 48)
        self.tree.selectionModel().currentChanged.connect(self._current_changed)
        layout.addWidget(self.tree, 1)
        self._current: str | None = None
        self._quiet = False

    # ---- data -------------------------------------------------------------------------------
    def set_rows(self, rows: list[Any]) -> None:
        self.model.set_rows(rows)
        sources = sorted({r.source for r in rows})
        combo = self.filters["source"]
        combo.blockSignals(True)
        combo.clear()
        combo.addItems([f"source: {_ANY}", *sources])
        combo.blockSignals(False)
        self.tree.expandAll()
        self.update_progress()

    def set_facts(self, facts: dict[str, dict[str, Any]]) -> None:
        self.model.set_facts(facts)
        flags = sorted({f for v in facts.values() for f in v.get("model_flags", ())})
        combo = self.filters["model"]
        combo.blockSignals(True)
        combo.clear()
        combo.addItems([f"model: {_ANY}", *flags])
        combo.blockSignals(False)
        self._filtering(self.proxy.refilter)

    def update_status(self, item_id: str, status: str) -> None:
        row = self.model.row_of(item_id)
        if row is not None and row.status != status:
            self.model.update_row(item_id, status=status)
            self.update_progress()

    def update_row(self, item_id: str, **values) -> None:
        self.model.update_row(item_id, **values)
        self.update_progress()

    def update_progress(self) -> None:
        c = self.model.counts()
        total = sum(c.values())
        visible = len(self.visible_items()) if self.proxy.active() else total
        pct = 100.0 * c["done"] / total if total else 0.0
        shown = "" if visible == total else f" · {visible} shown"
        self.progress.setText(f"<b>{c['done']} of {total} done</b> ({pct:.0f}%) · "
                              f"{c['in progress']} in progress{shown}")

    # ---- filters ------------------------------------------------------------------------------
    def _apply_search(self) -> None:
        text = self.search.text().strip()
        hits = self._search_passages(text) if (text and self._search_passages) else None
        self._filtering(lambda: self.proxy.set_search(text, hits))

    def _apply_filter(self, name: str) -> None:
        combo = self.filters[name]
        value = combo.currentText() if combo.currentIndex() > 0 else None
        self._filtering(lambda: self.proxy.set_predicate(name, _predicate(name, value)))

    def _filtering(self, change) -> None:
        """Apply a filter without opening another item: the open item stays open (and selected if shown)."""
        current = self._current
        self._quiet = True
        try:
            change()
            self.tree.expandAll()
            if current is not None:
                idx = self.proxy.mapFromSource(self.model.index_of(current))
                if idx.isValid():
                    self.tree.selectionModel().setCurrentIndex(
                        idx, QItemSelectionModel.ClearAndSelect | QItemSelectionModel.Rows)
                    self.tree.scrollTo(idx)
                else:
                    self.tree.selectionModel().clearSelection()
        finally:
            self._quiet = False
            self._current = current
        self.update_progress()

    # ---- walking ---------------------------------------------------------------------------------
    def visible_items(self) -> list[str]:
        out = []
        for g in range(self.proxy.rowCount()):
            parent = self.proxy.index(g, 0)
            for c in range(self.proxy.rowCount(parent)):
                row = self.proxy.index(c, 0, parent).data(ROW_ROLE)
                if row is not None:
                    out.append(row.item_id)
        return out

    @property
    def current(self) -> str | None:
        return self._current

    def select(self, item_id: str, emit: bool = True) -> bool:
        src = self.model.index_of(item_id)
        idx = self.proxy.mapFromSource(src) if src.isValid() else src
        if not idx.isValid():
            if not src.isValid():
                return False
            # Hidden by a filter: open it anyway, the filter stays as it is.
            self._current = item_id
            if emit:
                self.itemChosen.emit(item_id)
            return True
        self._quiet = not emit
        try:
            self.tree.selectionModel().setCurrentIndex(
                idx, QItemSelectionModel.ClearAndSelect | QItemSelectionModel.Rows)
            self.tree.scrollTo(idx)
        finally:
            self._quiet = False
        self._current = item_id
        return True

    def _step(self, delta: int, want=None) -> str | None:
        items = self.visible_items()
        if not items:
            return None
        try:
            i = items.index(self._current)
        except ValueError:
            i = -1 if delta > 0 else len(items)
        n = len(items)
        for k in range(1, n + 1):
            j = i + delta * k
            if not 0 <= j < n:
                if want is None:
                    return None
                j %= n  # the search for an unfinished item wraps around
            cand = items[j]
            if want is None or want(self.model.row_of(cand)):
                return cand
        return None

    def _neighbour(self, delta: int) -> str | None:
        """The visible item before or after the current one, found in the proxy without walking it all."""
        src = self.model.index_of(self._current) if self._current else QModelIndex()
        idx = self.proxy.mapFromSource(src) if src.isValid() else QModelIndex()
        if not idx.isValid():
            return self._step(delta)
        parent = idx.parent()
        r = idx.row() + delta
        if 0 <= r < self.proxy.rowCount(parent):
            return self.proxy.index(r, 0, parent).data(ROW_ROLE).item_id
        g = parent.row() + delta
        while 0 <= g < self.proxy.rowCount():
            p = self.proxy.index(g, 0)
            n = self.proxy.rowCount(p)
            if n:
                return self.proxy.index(0 if delta > 0 else n - 1, 0, p).data(ROW_ROLE).item_id
            g += delta
        return None

    def next_item(self) -> str | None:
        return self._go(self._neighbour(+1))

    def previous_item(self) -> str | None:
        return self._go(self._neighbour(-1))

    def next_unfinished(self) -> str | None:
        return self._go(self._step(+1, want=lambda r: r.status != "done" and r.item_id != self._current))

    def _go(self, item_id: str | None) -> str | None:
        if item_id is not None:
            self.select(item_id)
        return item_id

    def _current_changed(self, current, _previous) -> None:
        row = current.data(ROW_ROLE) if current.isValid() else None
        if row is None or self._quiet:
            return
        self._current = row.item_id
        if not self._quiet:
            self.itemChosen.emit(row.item_id)


def _predicate(name: str, value: str | None):
    """The filter function for one combo box value; None clears the filter."""
    if value is None:
        return None
    if name == "source":
        return lambda r, f: r.source == value
    if name == "status":
        if value == "not done":
            return lambda r, f: r.status != "done"
        return lambda r, f: r.status == value
    if name == "spans":
        return {
            "has evidence": lambda r, f: r.n_evidence > 0,
            "has bases": lambda r, f: r.n_bases > 0,
            "no evidence": lambda r, f: r.n_evidence == 0,
            "no bases": lambda r, f: r.n_bases == 0,
        }[value]
    if name == "acceptability":
        return lambda r, f: f.get("acceptability") == value
    if name == "eligibility":
        want = value == "eligible"
        return lambda r, f: f.get("eligible") is not None and f.get("eligible") == want
    if name == "difficulty":
        ranges = {"≤ 10": (0, 10), "10.5–15": (10.5, 15), "15.5–20": (15.5, 20), "> 20": (20.5, 99)}
        if value == "not scored":
            return lambda r, f: f.get("total") is None
        lo, hi = ranges[value]
        return lambda r, f: f.get("total") is not None and lo <= f["total"] <= hi
    if name == "model":
        return lambda r, f: value in f.get("model_flags", ())
    return None
