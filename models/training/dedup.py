"""Training data without the evaluation passages: RACE train and dev minus every passage whose
text also occurs in RACE test, EMBRACE or ExpMRC (race/README.md's rule).

Texts are compared normalised (lower-cased, non-word characters removed), because RACE
repeats passages under other file names and with other spacing or punctuation.  Equal
normalised texts are not enough: RACE also repeats passages with a word changed
("if you notice a bit of them" / "if you notice them", "the sets" / "the sunsets",
"says Lindsey Johnson" / "says Johnson"), so two texts are one passage when their
normalised texts are equal, or share their first or their last `EDGE` (300) normalised
characters (about 60 words).  On the real files, exact matching finds 29 RACE train
passages (108 questions); the edge rule finds the edited copies too (see `main`).  EMBRACE
and ExpMRC items are then evaluation-only: the model never trains on them, nor on a
copy of their passage.

    python -m models.training.dedup ../shared/data      # prints the counts per source
"""
from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

_NON_WORD = re.compile(r"\W+")
EDGE = 300  # normalised characters (~60 words) that, equal at the start or the end, make two texts one passage
HELD_OUT_SOURCES = ("race-test", "embrace", "expmrc")


def normalise(text: str) -> str:
    """Lower-cased with every non-word character (spaces and punctuation) removed."""
    return _NON_WORD.sub("", text.lower())


@dataclass
class RacePassage:
    split: str  # train, dev, test
    level: str  # high, middle
    file: str  # e.g. "train/high/1.txt"
    article: str
    questions: list[str]
    options: list[list[str]]
    answers: list[str]

    @property
    def n_questions(self) -> int:
        return len(self.questions)


def read_race(root: str | Path, split: str) -> list[RacePassage]:
    """Every passage file of one RACE split, in file order (original layout, one JSON per file)."""
    root = Path(root)
    out = []
    for level in ("high", "middle"):
        folder = root / split / level
        files = sorted(folder.glob("*.txt"), key=lambda p: (len(p.stem), p.stem))
        for f in files:
            r = json.loads(f.read_text(encoding="utf-8"))
            out.append(RacePassage(split, level, f"{split}/{level}/{f.name}", r["article"], r["questions"],
                                   r["options"], r["answers"]))
    return out


def keys(text: str) -> set[str]:
    """The normalised text, its first and its last EDGE characters (tagged so they never
    collide with each other)."""
    t = normalise(text)
    return {"=" + t, "<" + t[:EDGE], ">" + t[-EDGE:]}


def held_out_texts(data: str | Path) -> dict[str, dict[str, int]]:
    """Per evaluation source (RACE test, EMBRACE green + yellow, ExpMRC RACE+ dev): the
    `keys` of its passage texts, each mapped to the number of the distinct text it comes from."""
    data = Path(data)
    texts: dict[str, list[str]] = {s: [] for s in HELD_OUT_SOURCES}
    texts["race-test"] = [p.article for p in read_race(data / "race", "test")]
    for f in sorted((data / "embrace").glob("embrace_*.jsonl")):
        with open(f, encoding="utf-8") as fh:
            texts["embrace"] += [json.loads(line)["text"] for line in fh if line.strip()]
    ex = json.loads((data / "expmrc" / "expmrc-race-dev.json").read_text(encoding="utf-8"))
    texts["expmrc"] = [s["article"] for s in ex["data"]]
    out: dict[str, dict[str, int]] = {}
    for source, items in texts.items():
        distinct = {normalise(t): i for i, t in enumerate(dict.fromkeys(map(normalise, items)))}
        out[source] = {k: distinct[normalise(t)] for t in items for k in keys(t)}
    return out


@dataclass
class Dedup:
    kept: list[RacePassage]
    removed: list[RacePassage]
    # per held-out source: how many passages of this split it removes, and their questions
    passages_by_source: dict[str, int] = field(default_factory=dict)
    questions_by_source: dict[str, int] = field(default_factory=dict)
    # per held-out source: how many of its distinct (normalised) texts have a copy in this split
    source_texts_found: dict[str, int] = field(default_factory=dict)

    @property
    def removed_questions(self) -> int:
        return sum(p.n_questions for p in self.removed)


def remove_held_out(passages: list[RacePassage], held_out: dict[str, dict[str, int]]) -> Dedup:
    """The passages that share no `keys` with any held-out source, and counts."""
    kept, removed = [], []
    by_source = {s: 0 for s in held_out}
    q_by_source = {s: 0 for s in held_out}
    found: dict[str, set[int]] = {s: set() for s in held_out}
    for p in passages:
        mine = keys(p.article)
        hit = False
        for s, index in held_out.items():
            which = {index[k] for k in mine if k in index}
            if which:
                hit = True
                by_source[s] += 1
                q_by_source[s] += p.n_questions
                found[s] |= which
        (removed if hit else kept).append(p)
    return Dedup(kept, removed, by_source, q_by_source, {s: len(v) for s, v in found.items()})


def training_splits(data: str | Path) -> dict[str, Dedup]:
    """RACE train and dev, each without the held-out passages."""
    data = Path(data)
    held = held_out_texts(data)
    return {split: remove_held_out(read_race(data / "race", split), held) for split in ("train", "dev")}


def main(argv=None) -> int:
    data = Path((argv or sys.argv[1:] or ["../shared/data"])[0])
    for split, d in training_splits(data).items():
        print(json.dumps({"split": split, "passages": len(d.kept) + len(d.removed), "removed_passages": len(d.removed),
                          "removed_questions": d.removed_questions, "passages_by_source": d.passages_by_source,
                          "questions_by_source": d.questions_by_source,
                          "source_texts_found": d.source_texts_found}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
