"""One row per question: difficulty points, total, eligibility and acceptability.

The report works on flat tables (`Tables`): the items, the passage texts, and every
assessment, problem tag and basis span as rows.  The store gives them in bulk
(`tables_from_store`, one query per table); files give them through
`tables_from_datasets`.  Per-item work is done by pandas over those tables; Python
loops run only over the annotations themselves (an item nobody annotated costs
nothing there) and over the texts for the surface linter, whose regular expressions
are per-text work by nature.

An item is *reviewed* when someone assessed it or recorded a problem tag on it.  An
item nobody reviewed has no acceptability yet: its class is "not reviewed", never
"acceptable" (no recorded problem is not the same as a review that found none).
"""
from __future__ import annotations

import re
from collections import namedtuple
from dataclasses import dataclass, field
from typing import Any

from desktop.domain import difficulty as D
from desktop.domain import resolve
from desktop.domain import surface_lint as L
from desktop.domain import typology as T
from desktop.domain.model import DEFAULT_ANNOTATOR, HUMAN, IMPORTED, MODEL, Assessment, Dataset
from desktop.store.lint_facts import decode

from . import giveaway_page

NOT_REVIEWED = "not reviewed"
CLASSES = (*T.ACCEPTABILITY, NOT_REVIEWED)

COLUMNS = ["item_id", "passage_id", "source", "file", "file_colour", *D.VARIABLES, "total", "eligible",
           "eligibility_note", "reviewed", "acceptability", "text_acceptability", "question_acceptability",
           "alternatives_acceptability", "mcq_unit_acceptability", "acceptability_with_suggestions",
           "toi_category", "tom_category", "pod_category", "text_format", "multiple_texts", "unit_type",
           "assessed_by", "time_on_item_s", "recorded_problems", "suggested_problems"]

# EMBRACE splits its release by the worst tier and names the files by colour
COLOUR_ACCEPTABILITY = {"green": T.ACCEPTABLE, "yellow": T.MAINLY, "orange": T.PARTIALLY, "red": T.UNACCEPTABLE}
_TIER_RANK = {T.SEVERE: 0, T.MODERATE: 1, T.MILD: 2}
_BY_RANK = {0: T.UNACCEPTABLE, 1: T.PARTIALLY, 2: T.MAINLY}
TAG_COLUMNS = ["item_id", "element", "type", "note", "origin", "alternative", "start", "end"]

_Q = namedtuple("_Q", "stem alternatives")


def file_colour(file: str | None) -> str | None:
    m = re.search(r"(green|yellow|orange|red)", str(file or "").rsplit("/", 1)[-1].lower())
    return m.group(1) if m else None


@dataclass
class Tables:
    """What the report reads.  `items`: item_id, passage_id, dataset_id, source, file, stem,
    alternatives (in file order); `assessments`: item_id, annotator, values, text_format,
    multiple_texts, unit_type (oldest first); `problems`: TAG_COLUMNS + annotator; `bases`:
    item_id, alternative, start, end; `time_on_item`: {item id: seconds} where known;
    `shortcut`: (item_id, model_id, key, probabilities, extra) of the stored shortcut predictions;
    `explanations`: the stored give-away words (`inference.giveaway.Explanation.to_json()` dicts)."""

    items: Any
    texts: dict[str, str]
    assessments: Any
    problems: Any
    bases: Any
    time_on_item: dict[str, float] | None = None
    shortcut: list = field(default_factory=list)
    explanations: list = field(default_factory=list)
    # the linter's suggestions stored at import ({question id: JSON}, {passage id: JSON}; None:
    # not stored by the current rules): `_suggested` runs the linter only where there are none
    lint: tuple[dict, dict] | None = None


def tables_from_store(store, source: str | None = None, annotator: str | None = None) -> Tables:
    shortcut = store.model_outputs.shortcut_predictions(source)
    # the stored give-away words of the flagged items only (all of RACE explained would be 500 MB)
    model, flagged = giveaway_page.flagged_ids(shortcut)
    explanations = store.model_outputs.explanations(model, item_ids=flagged) if model else []
    times: dict[str, float] = {}
    for t in store.time_on_item(annotator=annotator):
        times[t.item_id] = times.get(t.item_id, 0.0) + t.seconds
    return Tables(items=store.corpus.bulk_items(source), texts=store.corpus.bulk_passage_texts(source),
                  assessments=store.corpus.bulk_assessments(source, annotator),
                  problems=store.corpus.bulk_problems(source, annotator),
                  bases=store.corpus.bulk_spans("basis", source, annotator), time_on_item=times,
                  shortcut=shortcut, explanations=explanations, lint=store.corpus.bulk_lint(source))


def tables_from_datasets(datasets: list[Dataset]) -> Tables:
    import pandas as pd
    items, texts, assessments, problems, bases, shortcut = [], {}, [], [], [], []
    for i, ds in enumerate(datasets):
        file = str(ds.extra.get("file") or "")
        for p in ds.passages:
            texts.setdefault(p.id, p.text)
            for q in p.questions:
                items.append((q.id, p.id, i, q.source, file, q.stem, list(q.alternatives)))
                assessments += [(q.id, a.annotator, a.origin, dict(a.values), a.text_format, a.multiple_texts,
                                 a.unit_type) for a in q.assessments]
                problems += [(q.id, t.element, t.type, t.note, t.origin, t.alternative, t.start, t.end, t.annotator)
                             for t in q.problems]
                bases += [(q.id, s.alternative, s.start, s.end) for s in q.spans if s.role == "basis"]
                shortcut += [(q.id, p.model_id, q.key, list(p.probabilities), dict(p.extra)) for p in q.predictions
                             if p.input_format == "shortcut" and p.probabilities]
    return Tables(
        items=pd.DataFrame(items, columns=["item_id", "passage_id", "dataset_id", "source", "file", "stem",
                                           "alternatives"]),
        texts=texts,
        assessments=pd.DataFrame(assessments, columns=["item_id", "annotator", "origin", "values", "text_format",
                                                       "multiple_texts", "unit_type"]),
        problems=pd.DataFrame(problems, columns=TAG_COLUMNS + ["annotator"]),
        bases=pd.DataFrame(bases, columns=["item_id", "alternative", "start", "end"]), shortcut=shortcut)


@dataclass
class Corpus:
    """The report's per-item results: `frame` (COLUMNS); the recorded tags of every item
    (TAG_COLUMNS; a passage's text tags appear on each of its questions); the linter's
    suggestions on stems and alternatives per item (`suggested`) and on texts per passage
    (`text_suggested`: passage_id + TAG_COLUMNS but item_id, each passage once)."""

    frame: Any
    recorded: Any
    suggested: Any
    text_suggested: Any
    tables: Tables
    passage_units: Any = field(default=None)  # (file, passage_id, item_id) of each item

    def suggested_with_text(self, item_ids=None):
        """Item-level suggestions plus each item's passage's text suggestions (of `item_ids`)."""
        import pandas as pd
        units = self.passage_units
        if item_ids is not None:
            units = units[units["item_id"].isin(item_ids)]
        text = self.text_suggested.merge(units[["item_id", "passage_id"]], on="passage_id")
        items = self.suggested if item_ids is None else self.suggested[self.suggested["item_id"].isin(item_ids)]
        return pd.concat([text[TAG_COLUMNS], items[TAG_COLUMNS]], ignore_index=True)


def build(tables: Tables, suggestions: bool = True) -> Corpus:
    import pandas as pd

    it = tables.items.reset_index(drop=True).copy()
    it["pos"] = range(len(it))
    it["file"] = it["file"].map(lambda f: str(f).rsplit("/", 1)[-1])
    colour = {f: file_colour(f) for f in it["file"].unique()}
    it["file_colour"] = it["file"].map(colour)

    recorded = _recorded(it, tables.problems)
    if suggestions:
        suggested, text_suggested = _suggested(it, tables.texts, tables.lint)
    else:
        suggested = pd.DataFrame(columns=TAG_COLUMNS + ["pos", "seq"])
        text_suggested = pd.DataFrame(columns=["passage_id", *TAG_COLUMNS[1:], "seq"])

    frame = it[["item_id", "passage_id", "source", "file", "file_colour"]].copy()
    own = tables.problems
    own_reviewed = set(own.loc[own["origin"] != "model", "item_id"]) if len(own) else set()
    picked = _picked_assessments(tables.assessments)
    frame["reviewed"] = frame["item_id"].isin(own_reviewed) | frame["item_id"].isin(picked.index)

    worst_all = _worst(recorded, frame)
    for col, group in (("acceptability", None), ("text_acceptability", "text"),
                       ("question_acceptability", "question"), ("alternatives_acceptability", "alternatives"),
                       ("mcq_unit_acceptability", "unit")):
        frame[col] = _classes(_worst(recorded, frame, group), frame["reviewed"])
    both = pd.concat([recorded, suggested], ignore_index=True) if len(suggested) else recorded
    with_text = _worst(both, frame)
    if len(text_suggested):  # a passage's text suggestions count for each of its questions
        per_passage = _tier_rank(text_suggested["type"]).groupby(text_suggested["passage_id"]).min()
        with_text = pd.concat([with_text, it["passage_id"].map(per_passage)], axis=1).min(axis=1)
    frame["acceptability_with_suggestions"] = _classes(with_text, frame["reviewed"])

    _assessment_columns(frame, picked, worst_all)
    times = tables.time_on_item
    # from the store: 0 s for an item nobody edited; from files: unknown (empty)
    frame["time_on_item_s"] = frame["item_id"].map(times).fillna(0.0) if times is not None else None
    frame["recorded_problems"] = _tag_lists(recorded, frame)
    text_lists = _tag_lists(text_suggested, frame, key="passage_id", keys=it["passage_id"])
    item_lists = _tag_lists(suggested, frame)
    frame["suggested_problems"] = [f"{a}; {b}" if a and b else a or b for a, b in zip(text_lists, item_lists)]
    frame = frame[COLUMNS]
    units = it[["file", "passage_id", "item_id"]]
    return Corpus(frame=frame, recorded=recorded, suggested=suggested, text_suggested=text_suggested,
                  tables=tables, passage_units=units)


def _recorded(it, problems):
    """Recorded tags per item: the passage's text tags (each once, on every question of the
    passage in that file), then the item's own other tags; model suggestions left out."""
    import pandas as pd
    p = problems[problems["origin"] != "model"].copy() if len(problems) else problems.copy()
    if not len(p):
        return pd.DataFrame(columns=TAG_COLUMNS + ["pos", "part", "seq"])
    p["seq"] = range(len(p))
    p = p.merge(it[["item_id", "pos", "dataset_id", "passage_id"]], on="item_id")
    text = p[p["element"] == T.TEXT].sort_values(["pos", "seq"], kind="stable")
    text = text.drop_duplicates(["dataset_id", "passage_id", "type", "note", "start", "end"])
    text = text.drop(columns=["item_id"]).rename(columns={"pos": "src_pos"}).merge(
        it[["item_id", "pos", "dataset_id", "passage_id"]], on=["dataset_id", "passage_id"])
    text["part"] = 0
    rest = p[p["element"] != T.TEXT].assign(part=1)
    rest["src_pos"] = rest["pos"]
    out = pd.concat([text, rest], ignore_index=True).sort_values(["pos", "part", "src_pos", "seq"], kind="stable")
    return out[TAG_COLUMNS + ["pos", "part", "seq"]].reset_index(drop=True)


def _suggested(it, texts: dict[str, str], lint: tuple[dict, dict] | None = None):
    """The surface linter's suggestions: (per item: stems and alternatives, per passage: text),
    read from what the store keeps (`lint`) where it has them, found by the linter elsewhere."""
    import pandas as pd

    item_lint, passage_lint = lint if lint is not None else ({}, {})
    rows, text_rows = [], []
    for pid in dict.fromkeys(it["passage_id"]):
        stored = passage_lint.get(pid)
        found = decode(stored) if stored is not None else _tag_rows(L.detect_text(texts.get(pid, "")))
        for seq, (element, typ, note, alternative, start, end) in enumerate(found):
            text_rows.append((pid, element, typ, note, MODEL, alternative, start, end, seq))
    for pos, item_id, pid, stem, alts in zip(it["pos"], it["item_id"], it["passage_id"], it["stem"],
                                             it["alternatives"]):
        stored = item_lint.get(item_id)
        found = decode(stored) if stored is not None else _tag_rows(L.detect_item(_Q(stem, alts), texts.get(pid, "")))
        for seq, (element, typ, note, alternative, start, end) in enumerate(found):
            rows.append((item_id, element, typ, note, MODEL, alternative, start, end, pos, seq))
    return (pd.DataFrame(rows, columns=TAG_COLUMNS + ["pos", "seq"]),
            pd.DataFrame(text_rows, columns=["passage_id", *TAG_COLUMNS[1:], "seq"]))


def _tag_rows(tags) -> list[tuple]:
    return [(t.element, t.type, t.note, t.alternative, t.start, t.end) for t in tags]


def _tier_rank(types):
    return types.map(lambda k: _TIER_RANK.get(T.TYPES[k].tier) if k in T.TYPES else None)


def _worst(tags, frame, group: str | None = None):
    """Worst tier rank (0 severe .. 2 mild, NaN none) per item of `frame`, over `tags` of
    one element group ("unit": everything but the text)."""
    if not len(tags):
        return frame["item_id"].map({}).astype(float)
    sel = tags
    if group == "unit":
        sel = tags[tags["element"] != T.TEXT]
    elif group is not None:
        sel = tags[tags["element"].map(T.ELEMENT_GROUP.get) == group]
    ranks = _tier_rank(sel["type"])
    worst = ranks.groupby(sel["item_id"]).min()
    return frame["item_id"].map(worst)


def _classes(worst, reviewed):
    out = worst.map(_BY_RANK).fillna(T.ACCEPTABLE)
    out[~reviewed.to_numpy()] = NOT_REVIEWED
    return out


def _picked_assessments(assessments):
    """Each item's assessment as the window shows it and the exports write it: the layers
    resolved by `desktop.domain.resolve` (a later annotator's values over the imported
    ones, variable by variable); `annotator` names the layers, bottom to top."""
    import pandas as pd

    columns = ["values", "text_format", "multiple_texts", "unit_type", "annotator"]
    if not len(assessments):
        return pd.DataFrame(columns=["item_id", *columns]).set_index("item_id")
    origins = assessments["origin"] if "origin" in assessments else \
        assessments["annotator"].map(lambda a: IMPORTED if a == DEFAULT_ANNOTATOR else HUMAN)
    by_item: dict[str, list[Assessment]] = {}
    for item_id, annotator, origin, values, fmt, multiple, unit in zip(
            assessments["item_id"], assessments["annotator"], origins, assessments["values"],
            assessments["text_format"], assessments["multiple_texts"], assessments["unit_type"]):
        by_item.setdefault(item_id, []).append(Assessment(
            values=dict(values or {}), annotator=annotator, origin=origin, text_format=_none(fmt),
            multiple_texts=_none(multiple), unit_type=_none(unit)))
    rows = []
    for item_id, found in by_item.items():
        shown = resolve.assessment(found)
        rows.append((item_id, shown.values, shown.text_format, shown.multiple_texts, shown.unit_type,
                     ";".join(dict.fromkeys(shown.layers))))
    return pd.DataFrame(rows, columns=["item_id", *columns]).set_index("item_id")


def _none(value):
    """None for pandas' missing values (NaN, NA), the value otherwise."""
    return None if value is None or value != value else value


def _assessment_columns(frame, picked, worst_all) -> None:
    """Points, total, eligibility and the categories, from each item's picked assessment
    (a Python loop over the assessed items only)."""
    tiers = {0: T.SEVERE, 1: T.MODERATE, 2: T.MILD}
    cols: dict[str, list] = {c: [] for c in (*D.VARIABLES, "total", "eligible", "eligibility_note", "toi_category",
                                             "tom_category", "pod_category", "text_format", "multiple_texts",
                                             "unit_type", "assessed_by")}
    index = []
    worst = dict(zip(frame["item_id"], worst_all))
    for item_id, a in picked.iterrows():
        values = dict(a["values"] or {})
        for var in D.VARIABLES:
            v = values.get(var)
            if v is None and var == "toc" and values:
                v = "none"
            try:
                cols[var].append(D.points(var, v) if v is not None else None)
            except ValueError:
                cols[var].append(None)
        total = D.total(values) if values else None
        w = worst.get(item_id)
        if total is None:
            eligible, note = False, "incomplete: " + ", ".join(D.missing(values))
        else:
            eligible, note = D.eligibility(a["text_format"], a["unit_type"], tiers.get(w) if w == w else None)
        cols["total"].append(total)
        cols["eligible"].append(eligible)
        cols["eligibility_note"].append(note)
        cols["toi_category"].append(values.get("toi"))
        cols["tom_category"].append(D.tom_key(values["tom"]) if values.get("tom") is not None else None)
        cols["pod_category"].append(values.get("pod"))
        cols["text_format"].append(a["text_format"])
        cols["multiple_texts"].append(a["multiple_texts"])
        cols["unit_type"].append(a["unit_type"])
        cols["assessed_by"].append(a["annotator"])
        index.append(item_id)
    import pandas as pd
    got = pd.DataFrame(cols, index=index, dtype=object)
    for col in cols:
        mapped = frame["item_id"].map(got[col]) if len(got) else pd.Series([None] * len(frame), index=frame.index)
        frame[col] = mapped.astype(object).where(mapped.notna(), None)
    frame["eligible"] = frame["eligible"].map(lambda v: bool(v) if v is not None else False).astype(bool)
    frame.loc[~frame["item_id"].isin(index), "eligibility_note"] = "not assessed"
    for var in (*D.VARIABLES, "total"):
        frame[var] = pd.to_numeric(frame[var], errors="coerce")


def _tag_lists(tags, frame, key: str = "item_id", keys=None):
    """"element:type; ..." per item (or per `key` value, looked up with `keys`), each once,
    in order, notes left out."""
    keys = frame["item_id"] if keys is None else keys
    lists: dict[str, dict] = {}
    if len(tags):
        for k, element, typ in zip(tags[key], tags["element"], tags["type"]):
            if typ != T.NOTE:
                lists.setdefault(k, {})[f"{element}:{typ}"] = None
    return ["; ".join(lists[k]) if k in lists else "" for k in keys]


def colour_exceptions(corpus: Corpus) -> list[dict]:
    """Items whose acceptability differs from their file's colour, and the tags that decide it."""
    df = corpus.frame
    out = []
    coloured = df[df["file_colour"].notna() & df["reviewed"]]
    want = coloured["file_colour"].map(COLOUR_ACCEPTABILITY)
    odd = coloured[(coloured["acceptability"] != want) | (coloured["acceptability_with_suggestions"] != want)]
    if not len(odd):
        return out
    rec = {k: g for k, g in corpus.recorded[corpus.recorded["item_id"].isin(odd["item_id"])].groupby("item_id")}
    sug = {k: g for k, g in corpus.suggested_with_text(set(odd["item_id"])).groupby("item_id", sort=False)}
    empty = corpus.recorded.iloc[0:0]
    for _, r in odd.iterrows():
        colour = r["file_colour"]
        w = COLOUR_ACCEPTABILITY[colour]
        recorded = rec.get(r["item_id"], empty)
        both = [recorded, sug.get(r["item_id"], empty)]
        for basis, tags, got in (("recorded tags", [recorded], r["acceptability"]),
                                 ("with suggestions", both, r["acceptability_with_suggestions"])):
            if got == w:
                continue
            if T.ACCEPTABILITY.index(got) > T.ACCEPTABILITY.index(w):
                why = [f"{t.element}:{t.type}" + (f" {t.note}" if t.origin == "model" else "")
                       for g in tags for t in g.itertuples() if t.type in T.TYPES and T.tier(t.type) and
                       T.ACCEPTABILITY.index(T.acceptability_of_tier(T.tier(t.type))) > T.ACCEPTABILITY.index(w)]
            else:
                why = [f"no recorded tag of the {w} tier's kind"]
            out.append({"item_id": r["item_id"], "file_colour": colour, "basis": basis, "expected": w,
                        "got": got, "why": "; ".join(dict.fromkeys(why))})
    return out
