"""Agreement between ExpMRC's two released evidence references (../shared/data/expmrc).

The product's number is checked against the same computation done here by hand from the
JSON file with the official scorer's rules (eval_expmrc.py: mixed segmentation, drop
a/an/the and punctuation tokens, token-overlap F1, max over references), and against
ExpMRC's published human evidence F1 on RACE+ dev (Table 3: 92.4).
"""
import json
import re
import string
from collections import Counter
from pathlib import Path

import pytest
from nltk.tokenize import NLTKWordTokenizer

from desktop.formats import expmrc
from desktop.reports.agreement_measures import compute

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "expmrc" / "expmrc-race-dev.json"

# eval_expmrc.py's SP_CHARS
SP = ['-', ':', '_', '*', '^', '/', '\\', '~', '`', '+', '=', '，', '。', '：', '？', '！', '“', '”', '；', '’',
      '《', '》', '……', '·', '、', '「', '」', '（', '）', '－', '～', '『', '』']
_WORDS = NLTKWordTokenizer()


def _nltk_words(text):
    # nltk.word_tokenize = punkt sentences, then the word tokenizer; punkt is not installed
    # here, so sentences end at . ! ? before whitespace.
    return [t for s in re.split(r"(?<=[.!?])\s+", text) if s for t in _WORDS.tokenize(s)]


def _hand_tokens(text):
    out, pending = [], ""
    for ch in str(text).strip():
        if re.search(r"[\u4e00-\u9fa5]", ch) or ch in SP:
            out += _nltk_words(pending) if pending else []
            pending = ""
            out.append(ch)
        else:
            pending += ch
    out += _nltk_words(pending) if pending else []
    drop = set(string.punctuation + "".join(SP))
    return [t.lower() for t in out if t not in ("a", "an", "the") and t not in drop]


def _hand_f1(prediction, reference):
    p, g = _hand_tokens(prediction), _hand_tokens(reference)
    if not p or not g:
        return float(p == g)
    same = sum((Counter(p) & Counter(g)).values())
    if not same:
        return 0.0
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


@pytest.fixture(scope="module")
def by_hand():
    doc = json.loads(DATA.read_text(encoding="utf-8"))
    out = {}
    for sample in doc["data"]:
        for j, refs in enumerate(sample["evidences"]):
            # cross-validation: each reference in turn is the prediction, the others the references
            held_out = [max(_hand_f1(refs[i], refs[k]) for k in range(len(refs)) if k != i)
                        for i in range(len(refs))]
            out[f"{sample['id']}-{j}"] = 100 * sum(held_out) / len(held_out)
    return out


@pytest.fixture(scope="module")
def report():
    ds = expmrc.read(DATA)
    return compute((q, p.text) for p in ds.passages for q in p.questions)


def test_reference_agreement_equals_the_hand_computation(report, by_hand):
    assert len(by_hand) == 561
    items = {r["item"]: r for r in report["items"]}
    assert set(items) == set(by_hand)
    for qid, value in by_hand.items():
        assert items[qid]["evidence_f1"] == pytest.approx(value, abs=1e-9), qid
        assert items[qid]["evidence_annotators"] == ["expmrc-ref-1", "expmrc-ref-2"]
    overall = report["overall"]["evidence_f1"]
    assert overall["items"] == 561
    assert overall["value"] == pytest.approx(sum(by_hand.values()) / 561, abs=1e-9)
    # ExpMRC Table 3, human performance, RACE+ dev, evidence: 92.4
    assert round(overall["value"], 1) == 92.4


def test_items_are_listed_lowest_agreement_first(report, by_hand):
    values = [r["agreement"] for r in report["items"]]
    assert values == sorted(values)
    assert values[0] == min(by_hand.values()) and values[-1] == max(by_hand.values())


def test_agreement_command_on_a_store(tmp_path, by_hand):
    # the user's story: import the released file, run `mcqlens agreement`, read the report
    from desktop.cli import main
    from desktop.formats import read
    from desktop.store import Store

    db = tmp_path / "annotations.db"
    with Store.open(db) as store:
        store.import_datasets(read(DATA), file=DATA)
    out = tmp_path / "agreement"
    assert main(["agreement", "--db", str(db), "-o", str(out)]) == 0
    report = json.loads((out / "agreement.json").read_text(encoding="utf-8"))
    items = {r["item"]: r["evidence_f1"] for r in report["items"]}
    assert items.keys() == by_hand.keys()
    assert all(items[k] == pytest.approx(v, abs=1e-9) for k, v in by_hand.items())
    assert report["overall"]["evidence_f1"]["value"] == pytest.approx(sum(by_hand.values()) / 561, abs=1e-9)
    html = (out / "agreement.html").read_text(encoding="utf-8")
    first, second = report["items"][0]["item"], report["items"][1]["item"]
    assert html.index(first) < html.index(second)  # lowest agreement first on the page too


def test_agreement_command_without_a_store_is_an_error(tmp_path, capsys):
    from desktop.cli import main

    assert main(["agreement", "--db", str(tmp_path / "none.db"), "-o", str(tmp_path / "out")]) == 2
    assert "error:" in capsys.readouterr().err


def test_gold_and_model_suggestions_are_not_raters():
    from desktop.domain.model import Span

    ds = expmrc.read(DATA)
    p = ds.passages[0]
    q = p.questions[0]
    before = compute([(q, p.text)])["items"][0]
    q.spans.append(Span(0, 20, "evidence", annotator="gold", origin="human"))
    q.spans.append(Span(0, 20, "evidence", annotator="shortcut-model", origin="model"))
    after = compute([(q, p.text)])["items"][0]
    assert after["evidence_annotators"] == ["expmrc-ref-1", "expmrc-ref-2"]
    assert after["evidence_f1"] == before["evidence_f1"]
