"""The navigator's filter bar: the search box and one box per registered filter.

The filter boxes come from `desktop.store.item_filters`, so another module can register a
filter of its own (`add_filter`), or show only a list of items without a box
(`set_filter_ids`, e.g. "annotators disagree").  Every change re-queries the list through
the navigator's `refilter`: the open item stays open.  `FilterBar` is a part of the
`Navigator` widget, whose layout holds the boxes.
"""
from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLineEdit, QVBoxLayout

from desktop.store import item_filters
from desktop.store.navigation import IDS_PREFIX, ItemQuery
from desktop.ui.kit.fit_text import ElidingCombo

_ANY = item_filters.ANY


class FilterBar:
    """The search box, the filter boxes and the query they make: a part of `Navigator`
    (`navigator.filter_bar`), which gives it its layout.  What it uses of the navigator: the
    navigation (`nav`), `store`, `annotator`, `order` and `refilter`."""

    def __init__(self, navigator, layout: QVBoxLayout) -> None:
        self.navigator = navigator
        self.id_filters: set[str] = set()  # set_filter_ids' names in force
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
        values = spec.values(self.navigator.nav) if (self.navigator.nav is not None or not callable(spec.choices)) else []
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
        chosen.update({key: "on" for key in sorted(self.id_filters)})
        return ItemQuery(self.navigator.annotator, chosen, self.search.text().strip(), self.navigator.order)

    # ---- applying ----------------------------------------------------------------------------
    def _apply_search(self) -> None:
        self.navigator.refilter(lambda: None)

    def _apply_filter(self, name: str) -> None:
        spec = item_filters.FILTERS.get(name)
        combo = self.filters[name]
        if isinstance(spec, item_filters.IdsFilter) and combo.currentIndex() > 0 and self.navigator.nav is not None:
            value = combo.currentText()
            self.navigator.nav.put_filter_ids(f"{name}={value}", spec.ids(self.navigator.store, value))
        self.navigator.refilter(lambda: None)

    # ---- a filter another module registers (desktop/ui/menus/reports.py: annotators disagree) ------
    def set_filter_ids(self, name: str, item_ids: list[str] | None) -> None:
        """Show only `item_ids`, with the other filters (None removes it); no combo box shows it."""
        key = IDS_PREFIX + name

        def change():
            if item_ids is None:
                self.id_filters.discard(key)
            else:
                self.id_filters.add(key)
                if self.navigator.nav is not None:
                    self.navigator.nav.put_filter_ids(key, item_ids)
        self.navigator.refilter(change)
