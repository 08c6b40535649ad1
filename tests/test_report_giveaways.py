"""The report's item writer's page (issue 23) on EMBRACE yellow scored and explained by the tiny
model: every number on the page recomputed from what the database holds."""
from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

import pytest

import inference
from desktop import cli, formats
from desktop.domain import giveaway_kinds as K
from desktop.domain.changes import Change
from desktop.store import Store
from inference import giveaway as G

ROOT = Path(__file__).resolve().parents[1]
YELLOW = ROOT.parent / "shared" / "data" / "embrace" / "embrace_yellow.jsonl"
GREEN = ROOT.parent / "shared" / "data" / "embrace" / "embrace_green.jsonl"
TINY = ROOT / "tests" / "data" / "tiny_model"


def _item(path, item_id):
    return next(q for d in formats.read(str(path)) for q in d.questions() if q.id == item_id)


def test_kinds_on_real_items():
    # EMBRACE green 131_3: "Which hotel would invite artists ...?" and C "The Ice Hotel."
    q = _item(GREEN, "131_3")
    cues = {c.kind: c for c in K.find(q.stem, q.alternatives, 2)}
    assert K.STEM_KEY_OVERLAP in cues
    words = {(el, q.stem[s:e] if el == "stem" else q.alternatives[2][s:e]) for el, s, e in cues[K.STEM_KEY_OVERLAP].words}
    assert words == {("C", "Hotel"), ("stem", "hotel")}
    # EMBRACE green 97_0: "Why couldn't Alice get a doll as a child?": a negation in the stem
    q = _item(GREEN, "97_0")
    neg = next(c for c in K.find(q.stem, q.alternatives, q.key) if c.kind == K.NEGATION)
    assert [q.stem[s:e] for _, s, e in neg.words] == ["couldn't"]


@pytest.mark.parametrize("stem, alternatives, picked, kinds", [
    ("What does the writer think of city parks?", ["City parks are always crowded.", "They are useful to everyone.",
                                                   "Parks help people relax.", "They never close."], 2,
     {K.STEM_KEY_OVERLAP, K.ABSOLUTE_DISTRACTORS}),
    ("Which of the following is NOT true?", ["He left.", "She stayed.", "They won.", "We lost."], 0, {K.NEGATION}),
    ("When did the school open?", ["In 1998.", "Last week.", "In May.", "Soon."], 0, {K.NUMBERS_DATES}),
    ("Why did Tom go home?", ["He was ill.", "Because he had finished all of his homework early that day.",
                              "To eat.", "It rained."], 1, {K.LONGEST}),
])
def test_each_kind_on_a_constructed_item(stem, alternatives, picked, kinds):
    found = K.find(stem, alternatives, picked)
    assert {c.kind for c in found} == kinds
    texts = {"stem": stem, **{K.LETTERS[i]: a for i, a in enumerate(alternatives)}}
    for c in found:
        assert all(texts[el][s:e] and texts[el][s:e] == texts[el][s:e].strip() for el, s, e in c.words)


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("giveaways")
    db = tmp / "a.db"
    with Store.open(db, annotator="anna") as store:
        store.import_datasets(formats.read(str(YELLOW)), file=str(YELLOW))
    assert cli.main(["score", "--db", str(db), "--model", str(TINY), "--formats", "shortcut", "--no-progress"]) == 0
    assert cli.main(["explain", "--db", str(db), "--model", str(TINY), "--flagged", "-o", str(tmp / "why.csv"),
                     "--no-progress"]) == 0
    # one flagged item the annotator tags "answerable without reading"
    with Store.open(db, annotator="anna") as store:
        first = next(r["item_id"] for r in csv.DictReader((tmp / "why.csv").open(encoding="utf-8")))
        store.apply(Change(first, "problem.add", {"type": "answerable_without_reading", "element": "question"}))
    assert cli.main(["report", "--db", str(db), "-o", str(tmp / "rep")]) == 0
    return db, tmp / "rep", first


def _n_eff(p):
    return 2 ** -sum(x * math.log2(x) for x in p if x > 0)


def test_every_flagged_item_is_a_row_with_its_kinds_words_and_tags(reported):
    db, rep, tagged = reported
    rows = list(csv.DictReader((rep / "giveaways.csv").open(encoding="utf-8")))
    with Store.open(db, read_only=True) as store:
        shortcut = {i: (k, p) for i, m, k, p, _ in store.model_outputs.shortcut_predictions()}
        flagged = [i for i, (_, p) in shortcut.items() if _n_eff(p) < 2]
        assert flagged and [r["item_id"] for r in rows] == flagged
        questions = {q.id: q for q in store.questions(flagged)}
        problems = store.corpus.bulk_problems()
    recorded: dict[str, set] = {}
    for item, typ in zip(problems["item_id"], problems["type"]):
        if typ != "note":
            recorded.setdefault(item, set()).add(typ)
    for r in rows:
        q = questions[r["item_id"]]
        _, p = shortcut[r["item_id"]]
        picked = max(range(len(p)), key=p.__getitem__)
        assert r["picked"] == K.LETTERS[picked] and float(r["n_eff"]) == pytest.approx(_n_eff(p), abs=1e-4)
        kinds = r["kinds"].split("; ") if r["kinds"] else []
        assert kinds == [c.kind for c in K.find(q.stem, q.alternatives, picked)]
        texts = {"stem": q.stem, **{K.LETTERS[i]: a for i, a in enumerate(q.alternatives)}}
        for w in json.loads(r["giveaway"]):
            assert texts[w["element"]][w["start"]:w["end"]] == w["word"]
        assert set(filter(None, r["recorded_tags"].split("; "))) == recorded.get(q.id, set())
    assert "answerable_without_reading" in next(r for r in rows if r["item_id"] == tagged)["recorded_tags"]


def test_the_page_counts_what_the_rows_hold_and_links_every_example(reported):
    db, rep, tagged = reported
    rows = list(csv.DictReader((rep / "giveaways.csv").open(encoding="utf-8")))
    page = (rep / "giveaways.html").read_text(encoding="utf-8")
    n = len(rows)
    for kind in K.KINDS:
        with_it = [r for r in rows if kind in r["kinds"].split("; ")]
        related = set(K.RELATED_TYPES[kind])
        agree = sum(bool(related & set(r["recorded_tags"].split("; "))) for r in with_it)
        suggested = sum(bool(related & set(r["suggested_tags"].split("; "))) for r in with_it)
        row = re.search(rf"<b>{re.escape(K.NAMES[kind])}</b>.*?</tr>", page, re.S).group(0)
        cells = re.findall(r"<td>(.*?)</td>", row, re.S)
        shown = f"{len(with_it)} ({100 * len(with_it) / n:.0f}%)"
        assert shown in cells, (kind, cells)
        if with_it:
            assert f"{agree} ({100 * agree / len(with_it):.0f}%)" in cells
            assert f"{suggested} ({100 * suggested / len(with_it):.0f}%)" in cells
        if kind != K.LONGEST:  # the model's strongest words carry the kind: recomputed from the rows
            with Store.open(db, read_only=True) as store:
                qs = {q.id: q for q in store.questions([r["item_id"] for r in with_it])}
            carried = sum(bool(K.confirmed(next(c for c in K.find(qs[r["item_id"]].stem, qs[r["item_id"]].alternatives,
                                                                     K.LETTERS.index(r["picked"])) if c.kind == kind),
                                           json.loads(r["giveaway"]))) for r in with_it)
            assert f"{carried} of {len(with_it)}" in cells
    # the item the annotator tagged counts as agreeing for every kind it shows (or for "none of these")
    kinds = next(r for r in rows if r["item_id"] == tagged)["kinds"]
    assert all(K.ANSWERABLE in K.RELATED_TYPES[k] for k in kinds.split("; ")) if kinds else True
    links = set(re.findall(r"href='#(item-[^']+)'", page))
    anchors = set(re.findall(r"id='(item-[^']+)'", page))
    assert links and links == anchors
    index = (rep / "index.html").read_text(encoding="utf-8")
    assert 'href="giveaways.html"' in index and f"{n} of the" in index


def test_without_shortcut_predictions_the_page_says_what_to_run(tmp_path):
    db = tmp_path / "a.db"
    with Store.open(db) as store:
        store.import_datasets(formats.read(str(GREEN)), file=str(GREEN))
    assert cli.main(["report", "--db", str(db), "-o", str(tmp_path / "rep")]) == 0
    page = (tmp_path / "rep" / "giveaways.html").read_text(encoding="utf-8")
    assert "mcqlens score --db DB" in page and "mcqlens explain" in page
    assert (tmp_path / "rep" / "giveaways.csv").read_text().strip() == ",".join(
        ["item_id", "source", "model", "n_eff", "picked", "key", "kinds", "giveaway", "recorded_tags",
         "suggested_tags"])
