"""A model's NOTA choices against answerability labels: QuAIL's own, and annotators' in the store."""
import json
import re
from pathlib import Path

import pytest

from desktop.domain import nota
from desktop.domain.changes import Change
from desktop.formats import expmrc, quail
from desktop.reports import nota_labels
from desktop.store import Store

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
WORD = re.compile(r"\w+")


def lexical_overlap(items):
    """Word-overlap baseline (MCTest-style): share of an alternative's words found in the passage."""
    out = []
    for passage, _stem, alternatives, _ in items:
        words = set(WORD.findall(passage.lower()))
        out.append([len(set(WORD.findall(a.lower())) & words) / (1 + len(set(WORD.findall(a.lower()))))
                    for a in alternatives])
    return out


def test_quail_labels_and_its_own_not_enough_information(tmp_path):
    path = SHARED / "quail" / "challenge.jsonl"
    records = {r["id"]: r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines()) if r}
    passages = quail.read(path).passages
    assert nota_labels.has_labels(passages)
    rows = nota_labels.rows(passages, lexical_overlap)
    assert len(rows) == len(records)
    for r in rows:
        rec = records[r["question"]]
        nei = [a.strip().lower() for a in rec["answers"]].index("not enough information")
        assert r["nota"] == "ABCD"[nei]  # the file's own alternative, no NOTA text added
        assert r["label"] == ("unanswerable" if int(rec["correct_answer_id"]) == nei else "answerable")
    table, metrics = nota_labels.summary(rows)
    assert table["unanswerable"]["nota"] + table["unanswerable"]["other"] == 66
    assert table["answerable"]["nota"] + table["answerable"]["other"] == 490
    conf = nota.Confusion()
    for r in rows:
        key = "ABCD".index(r["key"])
        conf.add(r["label"] == "answerable", "ABCD".index(r["chosen"]), key, "ABCD".index(r["nota"]))
    assert metrics == nota.metrics(conf)
    assert metrics["recall"] == pytest.approx(table["unanswerable"]["nota"] / 66)
    files = nota_labels.write(rows, tmp_path, "overlap")
    assert [f.name for f in files] == ["labels_overlap.csv", "labels_overlap_summary.csv"]
    assert "unanswerable,%d,%d,66" % (table["unanswerable"]["nota"], table["unanswerable"]["other"]) \
        in files[1].read_text(encoding="utf-8")


def test_annotators_labels_from_the_store():
    store = Store.memory("anna")
    store.import_datasets([expmrc.read(SHARED / "expmrc" / "expmrc-race-dev.json")])
    ids = [q.id for q in store.load_datasets()[0].questions()]
    labels = {ids[0]: "unanswerable", ids[1]: "unanswerable", ids[2]: "answerable", ids[5]: "unsure"}
    for item, label in labels.items():
        store.apply(Change(item, "answerability", label))
    passages = store.load_datasets()[0].passages
    store.close()
    rows = nota_labels.rows(passages, lexical_overlap, seed=3)
    table, metrics = nota_labels.summary(rows)
    totals = {lab: t["nota"] + t["other"] for lab, t in table.items()}
    assert totals == {"answerable": 1, "unanswerable": 2, "unsure": 1, "unlabelled": 561 - 4}
    by_id = {q.id: q for p in passages for q in p.questions}
    for r in rows:
        q = by_id[r["question"]]
        # shown at C = 0: the key is kept, one distractor became the NOTA text
        assert r["key"] == "ABCDE"[q.key] and r["nota"] != r["key"]
        assert r["label"] == labels.get(q.id, "unlabelled")
    # metrics only over the three questions labelled answerable/unanswerable
    assert metrics["recall"] in (0.0, 0.5, 1.0) and metrics["specificity"] in (0.0, 1.0)
