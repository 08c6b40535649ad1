"""The NOTA grid on ExpMRC: cached scores give the same predictions as scoring every
transformed test set afresh; CSV and heatmaps leave undefined cells empty."""
import csv
import re
from pathlib import Path

import pytest

from desktop.domain import nota
from desktop.formats import expmrc
from desktop.reports import nota_eval, nota_heatmap

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "expmrc" / "expmrc-race-dev.json"
WORD = re.compile(r"\w+")


def lexical_overlap(items):
    """Word-overlap baseline (MCTest-style): share of an alternative's words found in the passage."""
    out = []
    for passage, stem, alternatives, _ in items:
        words = set(WORD.findall(passage.lower()))
        out.append([len(set(WORD.findall(a.lower())) & words) / (1 + len(set(WORD.findall(a.lower()))))
                    for a in alternatives])
    return out


@pytest.fixture(scope="module")
def passages():
    return expmrc.read(DATA).passages


def test_cached_grid_equals_scoring_each_test_set(passages):
    model = nota_eval.ModelUnderTest("overlap", lexical_overlap)
    rows = nota_eval.run([model], passages, ["0.3", "0.7"], seed=2, replicas=2)
    assert len(rows) == 4
    for row in rows:
        out, _ = nota.transform(passages, str(row["c"]), 2, row["replica"])
        conf = nota.Confusion()
        for p in out:
            scores = lexical_overlap([(p.text, q.stem, q.alternatives, q.unanswerable_alternatives[0])
                                      for q in p.questions])
            for q, s in zip(p.questions, scores):
                chosen = max(range(len(s)), key=lambda i: (s[i], -i))
                conf.add(q.answerability == "answerable", chosen, q.key, q.unanswerable_alternatives[0])
        assert row["n"] == 561 and row["unanswerable"] == nota.replaced_count(row["c"], 561)
        assert (row["true_nota"], row["missed_nota"], row["false_nota"], row["correct"], row["wrong"]) == \
            (conf.true_nota, conf.missed_nota, conf.false_nota, conf.correct, conf.wrong)
        assert {k: row[k] for k in nota.METRIC_NAMES} == nota.metrics(conf)


def test_each_question_is_encoded_once_for_the_whole_grid(passages):
    calls = []

    def counting(items):
        calls.append(len(items))
        # the NOTA alternative is marked, so the shared formatting can drop a cloze stem for it
        assert all(alts[ni] == nota.NOTA_TEXT and alts.count(nota.NOTA_TEXT) == 1 for _, _, alts, ni in items)
        return lexical_overlap(items)

    cache = nota_eval.AlternativeScores(counting, "standard")
    cache.ensure(passages, nota.NOTA_TEXT)
    cache.ensure(passages, nota.NOTA_TEXT)  # second time: all cached
    assert sum(calls) == 561 and cache.calls == 561


def test_csv_and_heatmaps(tmp_path, passages):
    always_nota = nota_eval.ModelUnderTest("always NOTA", lambda items: [[0.0] * (len(a) - 1) + [1.0]
                                                                         for _, _, a, _ in items])
    overlap = nota_eval.ModelUnderTest("overlap", lexical_overlap)
    rows = nota_eval.run([overlap, always_nota], passages, ["0", "0.5", "1"], seed=1, replicas=2)
    cells = nota_eval.grid(rows)
    path = nota_heatmap.write_csv(cells, tmp_path / "grid.csv")
    table = {(r["c"], r["model"]): r for r in csv.DictReader(open(path, encoding="utf-8"))}
    # C = 0: no unanswerable question, recall and J undefined → empty, not 0
    assert table[("0.0", "overlap")]["recall"] == "" and table[("0.0", "overlap")]["youden_j"] == ""
    assert table[("1.0", "overlap")]["specificity"] == ""
    # a model that always picks NOTA: accuracy = C, recall 1, specificity 0 (the seed's 100% column)
    assert float(table[("0.5", "always NOTA")]["general_accuracy"]) == pytest.approx(281 / 561)
    assert float(table[("0.5", "always NOTA")]["recall"]) == 1.0
    assert float(table[("0.5", "always NOTA")]["specificity"]) == 0.0
    m = nota_heatmap.matrix(cells, "recall")
    assert list(m.index) == ["avg", "100%", "50%", "0%"] and list(m.columns) == ["overlap", "always NOTA", "avg"]
    assert m.loc["0%"].isna().all()
    assert m.loc["avg", "always NOTA"] == 1.0  # averages skip the undefined row
    pngs = nota_heatmap.plot_all(cells, tmp_path)
    assert [p.name for p in pngs] == [f"heatmap_{n}.png" for n in nota.METRIC_NAMES]
    assert all(p.stat().st_size > 5000 for p in pngs)
