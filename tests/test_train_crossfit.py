"""Cross-fitting and data packing on the real data: no stored prediction comes from a model that trained on it."""
from pathlib import Path

import pytest

from models.training.data import CROSSFIT, DEV, load_records, passage_group, read_jsonl, write_jsonl
from models.training.train_run import assign_folds, split_for_run

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
SOURCES = [DATA / "embrace" / "embrace_green.jsonl", DATA / "expmrc" / "expmrc-race-dev.json",
           DATA / "dream" / "dev.json"]


@pytest.fixture(scope="module")
def records():
    return load_records([str(p) for p in SOURCES])


def test_roles_follow_the_source(records):
    by_source = {}
    for r in records:
        by_source.setdefault(r["source"], set()).add(r["role"])
    assert by_source["embrace"] == {CROSSFIT} and by_source["expmrc"] == {CROSSFIT}
    assert by_source["dream"] == {DEV}  # DREAM's own dev split stays dev
    # counts from the files: 200 EMBRACE green MCQs, 561 ExpMRC questions, 2040 DREAM dev questions
    assert sum(r["source"] == "embrace" for r in records) == 200
    assert sum(r["source"] == "expmrc" for r in records) == 561
    assert sum(r["source"] == "dream" for r in records) == 2040
    for r in records[:50]:
        assert 0 <= r["key"] < len(r["alternatives"])


@pytest.mark.parametrize("k", [2, 4, 5])
def test_every_in_domain_item_is_held_out_exactly_once_and_never_trained_on(records, k):
    crossfit = {r["id"] for r in records if r["role"] == CROSSFIT}
    seen = []
    for fold in range(k):
        train, dev, held = split_for_run(records, k, fold)
        train_ids, train_groups = {r["id"] for r in train}, {r["group"] for r in train}
        assert not train_ids & {r["id"] for r in held}
        # the passage does not leak either: no held-out passage is in that fold's training data
        assert not train_groups & {r["group"] for r in held}
        seen.extend(r["id"] for r in held)
    assert sorted(seen) == sorted(crossfit)
    final_train, _, final_held = split_for_run(records, k, None)
    assert crossfit <= {r["id"] for r in final_train} and not final_held


def test_folds_are_balanced_and_keep_passages_together(records):
    folds = assign_folds(records, 4)
    sizes = [0] * 4
    for r in records:
        if r["role"] == CROSSFIT:
            sizes[folds[r["group"]]] += 1
            assert folds[r["group"]] == folds[passage_group(r["passage"])]
    assert max(sizes) - min(sizes) <= 10  # the largest passage of RACE holds at most 5-6 questions


def test_a_source_only_run_predicts_every_in_domain_item(records):
    train, _, held = split_for_run(records, 4, None, train_sources="dream")
    assert all(r["source"] == "dream" for r in train)
    assert len(held) == sum(r["role"] == CROSSFIT for r in records)


def test_packed_file_round_trips(records, tmp_path):
    path = tmp_path / "data.jsonl.gz"
    write_jsonl(records[:100], path)
    assert read_jsonl(path) == records[:100]
    assert load_records([str(path)]) == records[:100]


def test_nota_hook_transforms_training_items_with_proportion_c():
    from desktop.domain.nota import NOTA_TEXT, replaced_count

    recs = load_records([str(DATA / "dream" / "dev.json"), str(DATA / "quail" / "challenge.jsonl")], nota=0.25)
    dream = [r for r in recs if r["source"] == "dream"]
    quail = [r for r in recs if r["source"] == "quail"]
    assert all(r["alternatives"][r["nota"]] == NOTA_TEXT for r in dream)
    # DREAM dev is one group (one split, no level): round(C × N) items lose their key to NOTA
    assert sum(r["key"] == r["nota"] for r in dream) == replaced_count(0.25, len(dream))
    # QuAIL already has "not enough information": left untouched
    assert all("nota" not in r for r in quail)
