"""Precision and recall of the surface linter against recorded problem tags.

A unit is one element of one item: the passage (counted once per passage, not per
question), the stem, or the alternatives of a question.  A detection of type t in a
unit is right when the recorded tags of that unit include t or its EMBRACE tool label
counterpart ("extra spaces" / "extra spaces (punctuation)" are one family: the tool
records both for one problem).  In EMBRACE's green items nothing is recorded, so every
detection there counts against precision.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from . import corpus_items as I


FAMILY = {
    "extra_spaces": "extra spaces", "extra_spaces_punctuation": "extra spaces",
    "missing_spaces": "missing spaces", "missing_spaces_punctuation": "missing spaces",
}
GROUP = {"text": "text", "question": "question", "alternatives": "alternatives",
         "between-alternatives": "alternatives"}


def family(t: str) -> str:
    return FAMILY.get(t, t)


@dataclass
class TypeScore:
    type: str
    detected_units: int = 0
    correct_units: int = 0
    recorded_units: int = 0
    found_units: int = 0
    green_units: int = 0  # detections in units with nothing recorded at all

    @property
    def precision(self) -> float | None:
        return self.correct_units / self.detected_units if self.detected_units else None

    @property
    def recall(self) -> float | None:
        return self.found_units / self.recorded_units if self.recorded_units else None


def _corpus(source):
    """A `corpus_items.Corpus`, from one or from datasets."""
    if isinstance(source, I.Corpus):
        return source
    return I.build(I.tables_from_datasets(list(source)))


def unit_families(source):
    """(recorded, detected): frames of (unit, family), each pair once.  Units: "<item>/question",
    "<item>/alternatives" for each item, "<passage>/text" once per passage of a file."""
    import pandas as pd
    corpus = _corpus(source)
    units = corpus.passage_units

    def families(tags, recorded: bool, text=None):
        """`text`: the passages' text tags (passage_id), else the items' text tags count."""
        t = tags[tags["element"].isin(GROUP.keys())]
        if recorded:
            t = t[t["type"] != "note"]
        item = t[t["element"] != "text"]
        out = [pd.DataFrame({"unit": item["item_id"] + "/" + item["element"].map(GROUP),
                             "family": item["type"].map(family)}, columns=["unit", "family"])]
        if text is None:
            text = t[t["element"] == "text"].merge(units, on="item_id")
        else:
            text = text[text["element"] == "text"].merge(units[["file", "passage_id"]].drop_duplicates(),
                                                         on="passage_id")
        out.append(pd.DataFrame({"unit": text["file"] + "\x00" + text["passage_id"] + "/text",
                                 "family": text["type"].map(family)}, columns=["unit", "family"]))
        return pd.concat(out, ignore_index=True).drop_duplicates()

    return (families(corpus.recorded, True),
            families(corpus.suggested, False, text=corpus.text_suggested))


def evaluate(source) -> dict[str, TypeScore]:
    """Scores per type or family over the units of `source` (datasets or a Corpus)."""
    recorded, detected = unit_families(source)
    hit = detected.merge(recorded, on=["unit", "family"])
    counts = {
        "detected_units": detected.groupby("family").size(),
        "correct_units": hit.groupby("family").size(),
        "recorded_units": recorded.groupby("family").size(),
        "found_units": hit.groupby("family").size(),
        "green_units": detected[~detected["unit"].isin(set(recorded["unit"]))].groupby("family").size(),
    }
    scores = {}
    for fam in sorted(set(detected["family"]) | set(recorded["family"])):
        scores[fam] = TypeScore(fam, **{k: int(v.get(fam, 0)) for k, v in counts.items()})
    return scores


def table(source):
    """The scores as a pandas DataFrame (one row per type or family); precision and recall
    are empty (NaN) where undefined: nothing detected, or nothing recorded."""
    import pandas as pd
    rows = [{"type (family)": s.type, "detected units": s.detected_units, "correct": s.correct_units,
             "precision": s.precision, "recorded units": s.recorded_units, "found": s.found_units,
             "recall": s.recall, "detections where nothing is recorded": s.green_units}
            for s in evaluate(source).values()]
    frame = pd.DataFrame(rows, columns=["type (family)", "detected units", "correct", "precision", "recorded units",
                                        "found", "recall", "detections where nothing is recorded"])
    for col in ("precision", "recall"):
        frame[col] = pd.to_numeric(frame[col], errors="coerce").astype(float)
    return frame
