"""Lossless round trips on the real EMBRACE and ExpMRC files, directly and after the
domain objects went through JSON (as they do through the store), and edits overlaid."""
from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path

import pytest

from desktop import formats
from desktop.domain.model import (
    BASIS, EVIDENCE, HUMAN, REQUIRED, Assessment, Dataset, Passage, Prediction, ProblemTag, Question, Span,
)
from desktop.formats import embrace, expmrc, race

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
EMBRACE = sorted((DATA / "embrace").glob("*.jsonl"))
EXPMRC = DATA / "expmrc" / "expmrc-race-dev.json"


def through_json(ds: Dataset) -> Dataset:
    """What the store gives back: every extra JSON-serialised and read again."""
    d = json.loads(json.dumps(dataclasses.asdict(ds)))

    def question(q):
        q["spans"] = [Span(**s) for s in q["spans"]]
        q["assessments"] = [Assessment(**a) for a in q["assessments"]]
        q["problems"] = [ProblemTag(**t) for t in q["problems"]]
        q["predictions"] = [Prediction(**p) for p in q["predictions"]]
        return Question(**q)

    passages = [Passage(**{**p, "questions": [question(q) for q in p["questions"]]}) for p in d["passages"]]
    return Dataset(source=d["source"], passages=passages, extra=d["extra"])


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


@pytest.fixture(scope="module")
def embrace_sets():
    return {p.name: formats.read(p)[0] for p in EMBRACE}


@pytest.fixture(scope="module")
def expmrc_set():
    return formats.read(EXPMRC)[0]


@pytest.mark.parametrize("path", EMBRACE, ids=lambda p: p.name)
@pytest.mark.parametrize("via_store", [False, True], ids=["direct", "through-json"])
def test_embrace_round_trip_every_line(path, via_store, embrace_sets, tmp_path):
    ds = embrace_sets[path.name]
    if via_store:
        ds = through_json(ds)
    out = tmp_path / "out.jsonl"
    formats.write("embrace", ds, out)
    original, written = lines(path), lines(out)
    assert len(written) == len(original)
    for n, (a, b) in enumerate(zip(original, written), 1):
        assert a == b, f"line {n} differs"


def test_embrace_counts_match_the_file(embrace_sets):
    for path in EMBRACE:
        recs = lines(path)
        ds = embrace_sets[path.name]
        qrecs = [q for r in recs for q in r["test"]]
        qs = list(ds.questions())
        assert [q.id for q in qs] == [q["id"] for q in qrecs]
        assert len(ds.passages) == len(recs)
        n_bases = sum(b is not None for q in qrecs for b in q["annotations"]["bases"].values())
        n_required = sum(q["annotations"].get("required_paragraphs") is not None for q in qrecs)
        assert sum(len(q.spans_with(BASIS)) for q in qs) == n_bases
        assert sum(len(q.spans_with(REQUIRED)) for q in qs) == n_required
        # every span's text is the passage at its offsets, as the file says
        text = {p.id: p.text for p in ds.passages}
        for q, qrec in zip(qs, qrecs):
            for s in q.spans_with(BASIS):
                b = qrec["annotations"]["bases"][s.extra["letter"]]
                assert text[q.passage_id][s.start:s.end] == b["text"]
            assert q.stem == qrec["mcq"]["stem"]
            assert len(q.alternatives) == len(qrec["mcq"]["choices"])
            assert q.comments == qrec["annotations"]["comments"]


def test_embrace_reader_uses_the_vocabulary(embrace_sets):
    from desktop.formats import embrace_vocab
    ds = embrace_sets["embrace_green.jsonl"]
    q = next(ds.questions())
    (a,) = q.assessments
    assert a.values == embrace_vocab.parse_difficulty(q.extra["embrace"]["annotations"]["difficulty"])
    assert a.values  # the first green item has a full difficulty record
    with_flags = [q for q in ds.questions() if "flags" in q.extra["embrace"]]
    assert with_flags and all(q.problems for q in with_flags)


def test_five_choice_item_keeps_its_labels(embrace_sets, tmp_path):
    ds = embrace_sets["embrace_yellow.jsonl"]
    (q,) = [q for q in ds.questions() if len(q.alternatives) == 5]
    raw = q.extra["embrace"]["mcq"]
    # key "B" names the choice labelled (B); the basis of "d" belongs to the choice labelled (D)
    assert q.alternatives[q.key] == raw["choices"][1][len("(B) "):]
    (d,) = [s for s in q.spans_with(BASIS) if s.extra["letter"] == "d"]
    assert raw["choices"][d.alternative].startswith("(D) ")


def test_expmrc_round_trip_whole_document(expmrc_set, tmp_path):
    for ds in (expmrc_set, through_json(expmrc_set)):
        out = tmp_path / "out.json"
        formats.write("expmrc", ds, out)
        assert json.loads(out.read_text(encoding="utf-8")) == json.loads(EXPMRC.read_text(encoding="utf-8"))


def test_expmrc_every_reference_is_located(expmrc_set):
    doc = json.loads(EXPMRC.read_text(encoding="utf-8"))
    n_refs = sum(len(refs) for p in doc["data"] for refs in p["evidences"])
    counts = expmrc_set.extra["counts"]
    assert sum(counts.values()) == n_refs
    assert counts["exact"] + counts["whitespace"] == n_refs - counts["unlocated"]
    assert len(expmrc_set.extra["warnings"]) == counts["unlocated"]
    by_id = {p["id"]: p for p in doc["data"]}
    for p in expmrc_set.passages:
        for q in p.questions:
            assert q.id == f"{p.id}-{q.index}"
            refs = by_id[p.id]["evidences"][q.index]
            for s in q.spans_with(EVIDENCE):
                assert s.annotator == f"expmrc-ref-{s.extra['ref_index'] + 1}"
                if s.extra["match"] == "exact":
                    assert p.text[s.start:s.end] == refs[s.extra["ref_index"]]


def test_whitespace_insensitive_location_and_unlocated_reference(tmp_path):
    article = "First line.\nSecond   sentence  here,\n  and more. End."
    doc = {"version": "v", "data": [{"id": "p", "article": article, "questions": ["Q?"],
                                     "options": [["a", "b"]], "answers": ["A"],
                                     "evidences": [["Second sentence here, and more.", "nowhere to be found"]]}]}
    path = tmp_path / "e.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    (ds,) = formats.read(path)
    (q,) = ds.questions()
    (s,) = q.spans
    assert s.extra["match"] == "whitespace"
    assert article[s.start:s.end] == "Second   sentence  here,\n  and more."
    assert ds.extra["warnings"] == [{"level": "error", "file": str(path), "record": "p-0", "field": "evidences[0][1]",
                                     "message": "evidence reference not found in the article; kept unlocated"}]
    out = tmp_path / "o.json"
    formats.write("expmrc", through_json(ds), out)
    assert json.loads(out.read_text(encoding="utf-8")) == doc


def test_embrace_edits_are_overlaid(embrace_sets, tmp_path):
    ds = copy.deepcopy(embrace_sets["embrace_green.jsonl"])
    p = ds.passages[0]
    q = p.questions[0]
    original = copy.deepcopy(q.extra["embrace"])
    q.stem = "A new stem?"
    q.key = 0
    basis_a = q.spans_with(BASIS, 0)[0]
    q.spans.remove(basis_a)
    q.spans.append(Span(start=0, end=20, role=BASIS, alternative=1, annotator="ann", origin=HUMAN))
    q.comments = ["too easy"]
    out = tmp_path / "o.jsonl"
    formats.write("embrace", ds, out)
    rec = lines(out)[0]["test"][0]
    assert rec["mcq"]["stem"] == "A new stem?"
    assert rec["mcq"]["key"] == "A" and rec["annotations"]["difficulty"]["key"] == "A"
    assert rec["mcq"]["choices"] == original["mcq"]["choices"]
    bases, diff = rec["annotations"]["bases"], rec["annotations"]["difficulty"]
    assert bases["a"] is None and "a_base_s" not in diff and "a_base_e" not in diff
    assert bases["b"]["start"] == 0 and bases["b"]["end"] == 20 and bases["b"]["text"] == p.text[:20]
    assert bases["b"]["marker"] == original["annotations"]["bases"]["b"]["marker"]
    assert (diff["b_base_s"], diff["b_base_e"]) == (0, 20)
    assert rec["annotations"]["comments"] == ["too easy"]
    # the rest of the record, and the other lines, are untouched
    assert rec["annotations"]["bases"]["c"] == original["annotations"]["bases"]["c"]
    assert lines(out)[1:] == lines(EMBRACE[0])[1:]


def test_embrace_problem_edit_goes_back_through_the_vocabulary(embrace_sets, tmp_path):
    ds = copy.deepcopy(embrace_sets["embrace_yellow.jsonl"])
    q = next(q for q in ds.questions() if "flags" in q.extra["embrace"])
    field = next(iter(q.extra["embrace"]["flags"]))
    removed = [t for t in q.problems if t.extra.get("embrace", {}).get("field") == field]
    q.problems = [t for t in q.problems if t not in removed]
    out = tmp_path / "o.jsonl"
    formats.write("embrace", ds, out)
    rec = next(r for line in lines(out) for r in line["test"] if r["id"] == q.id)
    assert field not in (rec.get("flags") or {})


def test_expmrc_edits_are_overlaid(expmrc_set, tmp_path):
    ds = copy.deepcopy(expmrc_set)
    p = ds.passages[0]
    q = p.questions[0]
    ref1 = q.spans[0]
    ref1.start, ref1.end = 0, 10
    q.spans.append(Span(start=2, end=12, role=EVIDENCE, annotator="lena", origin=HUMAN))
    q.key = 3
    out = tmp_path / "o.json"
    formats.write("expmrc", ds, out)
    rec = json.loads(out.read_text(encoding="utf-8"))["data"][0]
    original = json.loads(EXPMRC.read_text(encoding="utf-8"))["data"][0]
    assert rec["evidences"][0] == [p.text[0:10], original["evidences"][0][1], p.text[2:12]]
    assert rec["answers"][0] == "D"
    assert rec["evidences"][1:] == original["evidences"][1:]


def test_race_layouts_round_trip(expmrc_set, tmp_path):
    doc = json.loads(EXPMRC.read_text(encoding="utf-8"))
    race_recs = [{k: v for k, v in r.items() if k != "evidences"} for r in doc["data"]]
    as_list = tmp_path / "race.json"
    as_list.write_text(json.dumps(race_recs), encoding="utf-8")
    (ds,) = formats.read(as_list)
    assert formats.detect(as_list) == "race"
    assert sum(len(p.questions) for p in ds.passages) == sum(len(r["questions"]) for r in race_recs)
    for target in (tmp_path / "out.json", tmp_path / "out.jsonl", tmp_path / "folder"):
        formats.write("race", through_json(ds), target)
        back = formats.read(target, fmt="race")  # a folder: one dataset per file
        got = [race.record_from_passage(p) for d in back for p in d.passages]
        assert sorted(got, key=lambda r: r["id"]) == sorted(race_recs, key=lambda r: r["id"])
    # RACE's own layout: a folder of .txt files without ids, named by the file
    folder = tmp_path / "RACE" / "dev" / "high"
    folder.mkdir(parents=True)
    for r in race_recs[:3]:
        (folder / f"{r['id']}.txt").write_text(json.dumps({k: v for k, v in r.items() if k != "id"}),
                                               encoding="utf-8")
    datasets = formats.read(tmp_path / "RACE")
    passages = [p for d in datasets for p in d.passages]
    assert [p.id for p in passages] == sorted(f"{r['id']}.txt" for r in race_recs[:3])
    assert {p.level for p in passages} == {"high"} and {p.split for p in passages} == {"dev"}
    out = tmp_path / "RACE2"
    formats.write("race", datasets, out)
    for f in folder.iterdir():
        assert json.loads((out / "dev" / "high" / f.name).read_text(encoding="utf-8")) == json.loads(f.read_text())


def test_expmrc_predictions(tmp_path):
    path = tmp_path / "bert-base.json"
    path.write_text(json.dumps({"p1-0": {"answer": "C", "evidence": "some text"}, "p1-1": {"answer": "A",
                                                                                          "evidence": ""}}))
    assert formats.detect(path) == "expmrc-pred"
    preds = expmrc.read_predictions(path, {"p1-0": 4, "p1-1": 3})
    assert preds["p1-0"].model_id == "bert-base" and preds["p1-0"].probabilities == [0, 0, 1, 0]
    assert preds["p1-1"].probabilities == [1, 0, 0] and preds["p1-0"].evidence == "some text"
    (ds,) = formats.read(path)
    assert ds.source == "expmrc-pred" and set(ds.extra["predictions"]) == {"p1-0", "p1-1"}
    out = tmp_path / "o.json"
    expmrc.write_predictions(preds, out)
    assert json.loads(out.read_text()) == json.loads(path.read_text())


def test_unknown_difficulty_string_is_kept_and_reported(tmp_path):
    rec = lines(EMBRACE[0])[0]
    rec["test"][0]["annotations"]["difficulty"]["tom"] = "a value from a later release"
    path = tmp_path / "later.jsonl"
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    (ds,) = formats.read(path)
    q = ds.passages[0].questions[0]
    assert "tom" not in q.assessments[0].values and "toi" in q.assessments[0].values
    (w,) = ds.extra["warnings"]
    assert w["record"] == q.id and w["field"].endswith("difficulty.tom") and w["level"] == "warning"
    out = tmp_path / "o.jsonl"
    formats.write("embrace", through_json(ds), out)
    assert lines(out) == [rec]
    # an edit of another variable rewrites that one and keeps the unknown string
    values = dict(q.assessments[0].values)
    values["nphr"] = "1" if values.get("nphr") != "1" else "2"
    q.assessments[0].values = values
    formats.write("embrace", ds, out)
    diff = lines(out)[0]["test"][0]["annotations"]["difficulty"]
    assert diff["tom"] == "a value from a later release" and diff["phr"] == values["nphr"]


def test_text_flag_removed_on_one_question_leaves_the_text(embrace_sets, tmp_path):
    ds = copy.deepcopy(embrace_sets["embrace_yellow.jsonl"])
    p = next(p for p in ds.passages if len(p.questions) > 1 and p.extra["embrace"]["flags"])
    field, values = next(iter(p.extra["embrace"]["flags"].items()))
    q = p.questions[0]
    q.problems = [t for t in q.problems if not (t.extra.get("embrace", {}).get("source") == "flags"
                                                and t.extra["embrace"]["field"] == field)]
    out = tmp_path / "o.jsonl"
    formats.write("embrace", ds, out)
    rec = next(r for r in lines(out) if str(r["id"]) == p.id)
    assert not rec["flags"].get(field)
    original = next(r for r in lines(EMBRACE[1]) if str(r["id"]) == p.id)
    assert {k: v for k, v in rec["flags"].items() if k != field} == \
        {k: v for k, v in original["flags"].items() if k != field}
    assert rec["test"] == original["test"]  # no question record changed
