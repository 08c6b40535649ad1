"""The navigator's filters: a registry that any module can add to.

A filter has a name, the values a person chooses from, and what the chosen value lets
through, either as SQL or as a set of item ids computed in Python:

    from desktop.store import item_filters

    item_filters.register(item_filters.SqlFilter(
        "has comments", choices=["with comments"], label="comments",
        where=lambda value, nav: ("EXISTS (SELECT 1 FROM comments c WHERE c.question_id = q.id)", [])))

    # a filter whose test is Python (the agreement code's "annotators disagree"):
    item_filters.register(item_filters.IdsFilter(
        "disagreement", choices=["annotators disagree"],
        ids=lambda store, value: items_where_annotators_disagree(store)))

SQL filters see the aliases `q` (questions), `p` (passages), `me` (the annotator's own
`item_status` row, or NULL) and `f` (the facts the window computed, or NULL: then
`nav.defaults` holds an unannotated item's facts).  Every active filter must hold (AND).
The window builds one combo box per registered filter, in registration order; a filter
registered after the window opened is added with `Navigator.add_filter(name)`.
`choices` is a list, or a function of the `Navigation` (values that depend on the data).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

ANY = "any"


@dataclass
class SqlFilter:
    name: str
    choices: list[str] | Callable[[Any], list[str]]
    where: Callable[[str, Any], tuple[str, list]]  # (chosen value, Navigation) -> (SQL over q/p/me/f, params)
    label: str = ""  # the words in the box when nothing is chosen ("<label>: any")
    tooltip: str = ""

    def sql(self, value: str, nav) -> tuple[str, list]:
        return self.where(value, nav)

    def values(self, nav) -> list[str]:
        return list(self.choices(nav) if callable(self.choices) else self.choices)


@dataclass
class IdsFilter:
    """A filter computed in Python: `ids(store, value)` gives the item ids that pass.

    The window calls it when the value is chosen (and again when asked to refresh), puts
    the ids into a TEMP table, and filters by membership in SQL."""

    name: str
    choices: list[str] | Callable[[Any], list[str]]
    ids: Callable[[Any, str], Iterable[str]]
    label: str = ""
    tooltip: str = ""
    _nav: Any = field(default=None, repr=False)

    def sql(self, value: str, nav) -> tuple[str, list]:
        return "q.rowid IN (SELECT qrowid FROM temp.filter_ids WHERE name = ?)", [f"{self.name}={value}"]

    def values(self, nav) -> list[str]:
        return list(self.choices(nav) if callable(self.choices) else self.choices)


FILTERS: dict[str, SqlFilter | IdsFilter] = {}


def register(spec: SqlFilter | IdsFilter) -> None:
    """Add (or replace) a filter; the window shows it as a combo box."""
    FILTERS[spec.name] = spec


# ---------------------------------------------------------------- the built-in filters

def _status(value: str, nav) -> tuple[str, list]:
    # written as IN (indexed subquery) so that a rare status drives the query from item_status
    me = nav_annotator(nav)
    mine = "q.id {} (SELECT question_id FROM item_status WHERE annotator = ?{})"
    if value == "not done":
        return mine.format("NOT IN", " AND status = 'done'"), [me]
    if value == "untouched":
        return mine.format("NOT IN", ""), [me]
    if value == "done by another annotator":
        return ("q.id IN (SELECT question_id FROM item_status WHERE status = 'done' "
                "AND annotator != ? AND annotator != 'gold')", [me])
    if value == "adjudicated (gold done)":
        return "q.id IN (SELECT question_id FROM item_status WHERE annotator = 'gold' AND status = 'done')", []
    return mine.format("IN", " AND status = ?"), [me, value]


def nav_annotator(nav) -> str:
    return getattr(nav, "annotator", "") or ""


_SPANS = {  # IN (indexed list) rather than a correlated EXISTS: rare spans drive the query
    "has evidence": "q.id IN (SELECT question_id FROM spans WHERE role = 'evidence')",
    "has bases": "q.id IN (SELECT question_id FROM spans WHERE role = 'basis')",
    "no evidence": "q.id NOT IN (SELECT question_id FROM spans WHERE role = 'evidence')",
    "no bases": "q.id NOT IN (SELECT question_id FROM spans WHERE role = 'basis')",
}

_DIFFICULTY = {"≤ 10": (0, 10), "10.5–15": (10.5, 15), "15.5–20": (15.5, 20), "> 20": (20.5, 1e9)}


def _fact(nav, name: str) -> tuple[str, list]:
    """f.<name>, or the unannotated item's value where the item has no facts row."""
    return f"(CASE WHEN f.qrowid IS NULL THEN ? ELSE f.{name} END)", [nav.defaults.get(name)]


def _acceptability(value: str, nav) -> tuple[str, list]:
    expr, params = _fact(nav, "acceptability")
    return f"{expr} = ?", params + [value]


def _eligibility(value: str, nav) -> tuple[str, list]:
    default = nav.defaults.get("eligible")
    expr = "(CASE WHEN f.qrowid IS NULL THEN ? ELSE f.eligible END)"
    return f"{expr} = ?", [None if default is None else int(bool(default)), int(value == "eligible")]


def _difficulty(value: str, nav) -> tuple[str, list]:
    expr, params = _fact(nav, "total")
    if value == "not scored":
        return f"{expr} IS NULL", params
    lo, hi = _DIFFICULTY[value]
    return f"({expr} BETWEEN ? AND ?)", params + [lo, hi]


def _model(value: str, nav) -> tuple[str, list]:
    if value == "not scored":
        return "NOT EXISTS (SELECT 1 FROM predictions pr WHERE pr.question_id = q.id)", []
    return "q.rowid IN (SELECT qrowid FROM temp.item_flags WHERE flag = ?)", [value]


def _builtins() -> None:
    register(SqlFilter("source", lambda nav: nav.choices("source"), lambda v, nav: ("q.source = ?", [v]),
                       tooltip="Only the items of one source (dataset)"))
    register(SqlFilter("split", lambda nav: nav.choices("split"), lambda v, nav: ("p.split = ?", [v]),
                       tooltip="Only the items of one split (train, dev, test) where the source has splits"))
    register(SqlFilter("status", ["untouched", "in progress", "done", "not done", "done by another annotator",
                                  "adjudicated (gold done)"], _status,
                       tooltip="Your own progress on the item (each annotator has their own), or others'"))
    register(SqlFilter("spans", list(_SPANS), lambda v, nav: (_SPANS[v], []),
                       tooltip="Items with or without evidence or bases marked (by anyone)"))
    register(SqlFilter("acceptability", ["acceptable", "mainly acceptable", "partially acceptable", "unacceptable"],
                       _acceptability, tooltip="Acceptability from the problem tags (EMBRACE typology)"))
    register(SqlFilter("eligibility", ["eligible", "not eligible"], _eligibility,
                       tooltip="Whether the item can be scored on the adapted Kirsch–Mosenthal scale"))
    register(SqlFilter("difficulty", [*_DIFFICULTY, "not scored"], _difficulty,
                       tooltip="The difficulty total (adapted Kirsch–Mosenthal points)"))
    register(SqlFilter("model", lambda nav: [*nav.flags(), "not scored"], _model,
                       tooltip="What the models say: right or wrong per input format, shortcut N and MI flags"))


_builtins()
