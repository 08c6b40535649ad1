"""Give-away words (issue 23): offsets exact on real items of every imported format, the word
that decides a constructed item ranked first by the tiny model, the stored explanation reused,
and `mcqlens explain` at the door and in its CSV."""
from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

import inference
from desktop import cli, formats
from desktop.app import explain as explain_cmd
from desktop.store import SCHEMA_VERSION, Store
from inference import giveaway as G

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
TINY = ROOT / "tests" / "data" / "tiny_model"
SOURCES = {
    "embrace": DATA / "embrace" / "embrace_yellow.jsonl",
    "expmrc": DATA / "expmrc" / "expmrc-race-dev.json",
    "quail": DATA / "quail" / "quail_1.3_dev.xml",
    "dream": DATA / "dream" / "dev.json",
}
GREEN = DATA / "embrace" / "embrace_green.jsonl"
# Words of the source files with letters beyond ASCII, found by reading them: QuAIL dev u154_2,
# DREAM dev 7-394-0 and ExpMRC dev 34c78aa8-0 (its apostrophe is U+02C8, a modifier letter).
NON_ASCII = {"quail": ("u154_2", "fiancé"), "dream": ("7-394-0", "café"), "expmrc": ("34c78aa8-0", "Whatˈs")}


@pytest.fixture(scope="module")
def model():
    return inference.load_model(TINY, device="cpu")


@pytest.fixture(scope="module")
def stored():
    """Every source imported through the product, and its questions read back from the store:
    the element texts exactly as stored."""
    out = {}
    for name, path in SOURCES.items():
        store = Store.memory(annotator="t")
        store.import_datasets(formats.read(str(path)), file=str(path))
        out[name] = store.questions([r.item_id for r in store.items()])
        store.close()
    return out


def _elements(q):
    return [(G.STEM, q.stem)] + [(G.element_name(i), a) for i, a in enumerate(q.alternatives)]


def _has(text: str, kind: str) -> bool:
    if kind == "hyphen":
        return any("-" in text[s:e] for s, e in G.words(text))
    if kind == "apostrophe":
        return any(c in text[s:e] for s, e in G.words(text) for c in "'’")
    if kind == "quote":
        return any(c in text for c in "\"“”")
    if kind == "non-ascii":
        return any(ord(c) > 127 and c.isalpha() for c in text)
    return any(c in text for c in ",.;:!?()")


def test_words_are_exact_on_every_stored_element_of_every_format(stored):
    kinds = {"hyphen", "apostrophe", "quote", "non-ascii", "punctuation"}
    seen = {k: 0 for k in kinds}
    for name, questions in stored.items():
        assert len(questions) > 500, name
        for q in questions:
            for _, text in _elements(q):
                spans = G.words(text)
                covered = set()
                for s, e in spans:
                    word = text[s:e]
                    assert word and not any(c.isspace() for c in word), (q.id, word)
                    assert word[0].isalnum() and word[-1].isalnum(), (q.id, word)  # no quote or hyphen at an edge
                    assert "_" not in word, (q.id, word)  # a cloze gap is never a word
                    covered.update(range(s, e))
                # every letter and digit of the element lies in a word
                missing = [i for i, c in enumerate(text) if c.isalnum() and c != "_" and i not in covered]
                assert not missing, (name, q.id, text, [text[i] for i in missing])
                for k in kinds:
                    seen[k] += _has(text, k)
    assert all(seen.values()), seen
    for name, (item, word) in NON_ASCII.items():
        q = next(q for q in stored[name] if q.id == item)
        found = [text[s:e] for _, text in _elements(q) for s, e in G.words(text)]
        assert word in found, (name, item, found)


def test_hyphens_apostrophes_numbers_and_quotes_in_a_real_stem():
    # EMBRACE green 0_0's stem as stored: a quoted phrase and a cloze gap
    q = next(q for d in formats.read(str(GREEN)) for q in d.questions() if q.id == "0_0")
    assert [q.stem[s:e] for s, e in G.words(q.stem)] == [
        "Confusion", "arises", "about", "what", "it", "means", "to", "be", "a", "good", "parent", "because"]
    text = "The 1,000-year-old café's “well-known” rule: 3.5 km, don't."
    assert [text[s:e] for s, e in G.words(text)] == [
        "The", "1,000-year-old", "café's", "well-known", "rule", "3.5", "km", "don't"]


def _flagged_sample(stored, per_source=6):
    """Per source, items whose elements hold a hyphenated word, an apostrophe, quotes or a
    letter beyond ASCII (the hard cases for offsets)."""
    out = []
    for name, questions in stored.items():
        hard = [q for q in questions
                if any(_has(t, k) for _, t in _elements(q) for k in ("hyphen", "apostrophe", "quote", "non-ascii"))]
        ids = {NON_ASCII[name][0]} if name in NON_ASCII else set()
        pick = [q for q in hard if q.id in ids] + [q for q in hard if q.id not in ids][:per_source]
        out += [(name, q) for q in pick]
    return out


def test_every_giveaway_offset_points_at_its_word_in_the_stored_text(model, stored):
    sample = _flagged_sample(stored)
    explanations = G.explain(model, [q for _, q in sample])
    assert len(explanations) == len(sample)
    for (name, q), ex in zip(sample, explanations):
        texts = dict(_elements(q))
        assert ex.item_id == q.id and ex.fingerprint == G.fingerprint(q.stem, q.alternatives)
        tried = {(a.element, a.start, a.end) for a in ex.words} | {
            (u.element, u.start, u.end) for g in ex.screened for u in g.words}  # alone, or in a screened group
        assert tried == {(el, s, e) for el, t in texts.items() for s, e in G.words(t)}
        for a in ex.words:
            assert texts[a.element][a.start:a.end] == a.word, (name, q.id, a)
        assert ex.giveaway(), (name, q.id)  # the tiny model leans on something in every item
        assert abs(sum(ex.probabilities) - 1) < 1e-6 and ex.predicted == max(range(len(q.alternatives)),
                                                                              key=ex.probabilities.__getitem__)


def _rescored_drops(model, q, method: str):
    """The drop in the predicted alternative's probability for each word taken out, computed here
    by slicing the element texts and scoring with `inference.score` (not through the explainer)."""
    mask = G.mask_token(model.tokenizer)
    put = mask if method == G.MASK else ""
    copies, keys = [q], []
    for el, text in _elements(q):
        for s, e in G.words(text):
            new = text[:s] + put + text[e:]
            if el == G.STEM:
                copies.append(dataclasses.replace(q, stem=new))
            else:
                alts = list(q.alternatives)
                alts[ord(el) - ord("A")] = new
                copies.append(dataclasses.replace(q, alternatives=alts))
            keys.append((el, s, e))
    scored = inference.score(model, copies, None, ["shortcut"], item_ids=[str(i) for i in range(len(copies))],
                             evidence=None)
    probs = [r.formats["shortcut"].probabilities for r in scored]
    pred = max(range(len(probs[0])), key=probs[0].__getitem__)
    return pred, probs[0], {k: probs[0][pred] - p[pred] for k, p in zip(keys, probs[1:])}


@pytest.mark.parametrize("method", [G.DELETE, G.MASK])
def test_effects_are_the_rescored_drops(model, stored, method):
    questions = [q for _, q in _flagged_sample(stored, per_source=2)]
    for q, ex in zip(questions, G.explain(model, questions, method=method, scope=G.ALL, together=0)):
        pred, p0, drops = _rescored_drops(model, q, method)
        assert ex.predicted == pred and ex.method == method
        assert ex.probabilities == pytest.approx(p0, abs=1e-6)
        got = {(a.element, a.start, a.end): a.effect for a in ex.words}
        assert got.keys() == drops.keys()
        for k, v in drops.items():
            assert got[k] == pytest.approx(v, abs=2e-6), (q.id, k)


def test_the_word_that_decides_a_constructed_item_comes_first(model):
    """Constructed items: a word is put before or after one alternative of a real EMBRACE item.
    Kept are those where re-scoring shows that the word decides the shortcut choice: with it
    the model picks that alternative, without it (the real item) another one, and taking out
    any other single word leaves the choice as it is.  The explainer must rank that word first."""
    questions = [q for d in formats.read(str(GREEN)) for q in d.questions()][:60]
    words = "always never because only money happy school children doctor nothing everyone must".split()
    base = {q.id: s.predicted for q, s in zip(questions, G.shortcut_probabilities(model, questions))}
    variants = []
    for q in questions:
        for j, alt in enumerate(q.alternatives):
            for w in words:
                for text in (f"{w} {alt}", f"{alt} {w}"):
                    alts = list(q.alternatives)
                    alts[j] = text
                    start = 0 if text.startswith(w + " ") else len(text) - len(w)
                    variants.append((dataclasses.replace(q, alternatives=alts), j, w, start))
    scores = G.shortcut_probabilities(model, [v[0] for v in variants])
    flipped = [v for v, s in zip(variants, scores) if s.predicted == v[1] != base[v[0].id]]
    # every single-word deletion of every flipped item, cut here from the texts, scored in one call
    copies, where = [], []
    for n, (v, j, w, start) in enumerate(flipped):
        for el, text in _elements(v):
            for s, e in G.words(text):
                if el == G.STEM:
                    copies.append(dataclasses.replace(v, stem=text[:s] + text[e:]))
                else:
                    alts = list(v.alternatives)
                    alts[ord(el) - ord("A")] = text[:s] + text[e:]
                    copies.append(dataclasses.replace(v, alternatives=alts))
                where.append((n, (el, s, e)))
    changes: dict[int, set] = {n: set() for n in range(len(flipped))}
    for (n, key), s in zip(where, G.shortcut_probabilities(model, copies)):
        if s.predicted != flipped[n][1]:
            changes[n].add(key)
    decided = [(v, (G.element_name(j), start, start + len(w)), w) for n, (v, j, w, start) in enumerate(flipped)
               if changes[n] == {(G.element_name(j), start, start + len(w))}]
    assert len(decided) >= 3, f"only {len(decided)} constructed items where one word decides"
    for (v, key, w), ex in zip(decided, G.explain(model, [d[0] for d in decided])):
        first = ex.giveaway()[0]
        assert (first.element, first.start, first.end) == key and first.word == w, (v.id, v.alternatives, first)


def test_content_words_leave_out_the_function_words(model):
    q = next(q for d in formats.read(str(GREEN)) for q in d.questions() if q.id == "4_0")
    full, content = G.explain(model, [q], scope=G.ALL, together=0), G.explain(model, [q], scope=G.CONTENT, together=0)
    left_out = {(a.element, a.start) for a in full[0].words} - {(a.element, a.start) for a in content[0].words}
    assert {a.word.lower() for a in full[0].words if (a.element, a.start) in left_out} <= G.FUNCTION_WORDS
    assert {a.word.lower() for a in content[0].words}.isdisjoint(G.FUNCTION_WORDS)
    # the same words, measured the same way, have the same effects
    same = {(a.element, a.start): a.effect for a in full[0].words}
    assert all(same[(a.element, a.start)] == pytest.approx(a.effect, abs=2e-6) for a in content[0].words)
    assert content[0].variant == "delete+content" and full[0].variant == "delete"


def test_phrases_and_the_giveaway_list(model):
    q = next(q for d in formats.read(str(GREEN)) for q in d.questions() if q.id == "0_1")
    ex = G.explain(model, [q], phrase=2, scope=G.ALL)[0]
    n_words = sum(len(G.words(t)) for _, t in _elements(q))
    n_pairs = sum(max(0, len(G.words(t)) - 1) for _, t in _elements(q))
    assert len(ex.words) == n_words + n_pairs and ex.phrase == 2
    listed = ex.giveaway()
    assert [a.effect for a in listed] == sorted((a.effect for a in listed), reverse=True)
    assert all(a.effect >= G.MIN_EFFECT for a in listed)
    for i, a in enumerate(listed):  # no listed unit overlaps a stronger one of its element
        assert not any(b.element == a.element and b.start < a.end and a.start < b.end for b in listed[:i])
    assert G.Explanation.from_json(json.loads(json.dumps(ex.to_json()))).giveaway() == listed


# ---------------------------------------------------------------------------- store and CLI

@pytest.fixture()
def db(tmp_path):
    path = tmp_path / "a.db"
    with Store.open(path) as store:
        store.import_datasets(formats.read(str(GREEN)), file=str(GREEN))
    return path


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_explain_writes_one_row_per_item_with_exact_offsets_and_stores_them(db, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MCQLENS_PROGRESS_SECONDS", "0")  # a line at every step, as a long run gets them
    out = tmp_path / "why.csv"
    assert cli.main(["explain", "--db", str(db), "-o", str(out), "--model", str(TINY), "--device", "cpu"]) == 0
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("explaining: ")]
    assert lines[-1] == "explaining: 200/200 questions"
    assert any(ln.endswith(" left") for ln in lines), lines  # the time left, on a long run
    with open(out, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["item_id", "model", "predicted", "n_eff", "giveaway", "together"]
    with Store.open(db, read_only=True) as store:
        questions = {q.id: q for q in store.questions([r.item_id for r in store.items()])}
        assert [r["item_id"] for r in rows] == [r.item_id for r in store.items()]
        for r in rows:
            q = questions[r["item_id"]]
            texts = dict(_elements(q))
            listed = json.loads(r["giveaway"])
            assert r["model"] == "tiny-bert-2x32" and r["predicted"] in "ABCD"[:len(q.alternatives)]
            assert 1.0 <= float(r["n_eff"]) <= len(q.alternatives) + 1e-6
            assert [x["effect"] for x in listed] == sorted((x["effect"] for x in listed), reverse=True)
            for x in listed:
                assert set(x) == {"word", "element", "start", "end", "effect"}
                assert texts[x["element"]][x["start"]:x["end"]] == x["word"]
            stored = G.Explanation.from_json(store.explanation(q.id, "tiny-bert-2x32", G.variant()))
            assert json.loads(stored.giveaway_json()) == listed
            together = json.loads(r["together"]) if r["together"] else None
            assert together == (stored.together.to_json(4) if stored.together is not None else None)
            for x in (together or {}).get("words", []):
                assert texts[x["element"]][x["start"]:x["end"]] == x["word"]


def test_a_second_run_reads_what_is_stored(db, tmp_path, monkeypatch):
    model = inference.load_model(TINY, device="cpu")
    calls = []
    real = G.explain

    def counting(m, questions, **kw):
        calls.append(len(questions))
        return real(m, questions, **kw)

    monkeypatch.setattr(G, "explain", counting)
    with Store.open(db) as store:
        first = explain_cmd.explain_store(store, model, ["0_0", "0_1", "4_0"])
        again = explain_cmd.explain_store(store, model, ["0_0", "0_1", "4_0"])
        assert calls == [3]
        assert [e.to_json() for e in again] == [G.Explanation.from_json(e.to_json()).to_json() for e in first]
        assert explain_cmd.explain_store(store, model, ["0_0"], recompute=True) and calls == [3, 1]
        assert explain_cmd.explain_store(store, model, ["0_0"], method=G.MASK) and calls == [3, 1, 1]
        assert explain_cmd.explain_store(store, model, ["0_0"], scope=G.CONTENT) and calls == [3, 1, 1, 1]
        assert explain_cmd.explain_store(store, model, ["0_0"], scope=G.CONTENT) and calls == [3, 1, 1, 1]
        # a stored explanation of other text (an edited item) is not shown again
        q = store.question("0_0")
        ex = G.Explanation.from_json(store.explanation("0_0", model.id, G.variant()))
        assert G.current(ex, q, model.id, G.variant()) and not G.current(ex, q, model.id, "mask")
        assert not G.current(ex, dataclasses.replace(q, alternatives=q.alternatives[:3] + ["other"]), model.id)


@pytest.mark.parametrize("args, message", [
    (["--items", "0_0", "no_such_item"], "error: {db}, record no_such_item, field --items: no such question in the database"),
    (["--phrase", "0"], "error: command line, field --phrase: must be 1 to 5 words, got 0"),
    (["--together", "1"], "error: command line, field --together: must be 0 or 2 to 5 words, got 1"),
    (["--model", "{tmp}"], "error: {tmp} holds no card.json: not a model directory"),
])
def test_bad_input_is_one_error_line_and_leaves_the_database_as_it_was(db, tmp_path, capsys, args, message):
    before = _sha(db)
    out = tmp_path / "why.csv"
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    code = cli.main(["explain", "--db", str(db), "-o", str(out), "--device", "cpu"]
                    + (["--model", str(TINY)] if "--model" not in args else []) + args)
    err = capsys.readouterr().err.strip()
    assert code == 2 and err == message.format(db=db, tmp=tmp_path), err
    assert _sha(db) == before and not out.exists()


def test_an_existing_output_is_kept_unless_forced(db, tmp_path, capsys):
    out = tmp_path / "why.csv"
    out.write_text("mine\n")
    assert cli.main(["explain", "--db", str(db), "-o", str(out), "--model", str(TINY), "--items", "0_0"]) == 2
    assert capsys.readouterr().err.strip() == f"error: {out} exists; add --force to overwrite it"
    assert out.read_text() == "mine\n"
    assert cli.main(["explain", "--db", str(db), "-o", str(out), "--model", str(TINY), "--items", "0_0,0_1",
                     "--force", "--top", "2", "--no-progress"]) == 0
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert [r["item_id"] for r in rows] == ["0_0", "0_1"] and all(len(json.loads(r["giveaway"])) <= 2 for r in rows)


def test_flagged_explains_only_items_the_shortcut_model_is_sure_of(db, tmp_path):
    out = tmp_path / "flagged.csv"
    assert cli.main(["explain", "--db", str(db), "-o", str(out), "--model", str(TINY), "--flagged",
                     "--no-progress"]) == 0
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    model = inference.load_model(TINY, device="cpu")
    with Store.open(db, read_only=True) as store:
        questions = store.questions([r.item_id for r in store.items()])
    expected = [q.id for q, s in zip(questions, G.shortcut_probabilities(model, questions)) if s.n_eff < 2]
    assert expected and [r["item_id"] for r in rows] == expected


def test_the_schema_upgrade_adds_the_explanations_table(tmp_path):
    v1 = tmp_path / "v1.db"
    v1.write_bytes((ROOT / "tests" / "data" / "schema_v1" / "annotations_v1.db").read_bytes())
    with Store.open(v1) as store:
        assert store.stats()["schema_version"] == SCHEMA_VERSION >= 4
        assert store.explanation("0_0", "m", G.DELETE) is None
    conn = sqlite3.connect(v1)
    assert conn.execute("SELECT count(*) FROM explanations").fetchone() == (0,)
    conn.close()


def test_a_model_without_the_shortcut_format_is_one_error_line(db, tmp_path, capsys):
    import shutil

    model_dir = tmp_path / "standard_only"
    shutil.copytree(TINY, model_dir)
    card = json.loads((model_dir / "card.json").read_text(encoding="utf-8"))
    card["formats"], card["temperature"] = ["standard"], {"standard": 1.0}
    (model_dir / "card.json").write_text(json.dumps(card), encoding="utf-8")
    before = _sha(db)
    out = tmp_path / "why.csv"
    assert cli.main(["explain", "--db", str(db), "-o", str(out), "--model", str(model_dir), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == ("error: model tiny-bert-2x32 does not serve the shortcut (Q+{O}) format (it serves "
                       "standard); give-away words explain that format")
    assert [ln for ln in err if ln.startswith("error:")] == err[-1:]
    assert _sha(db) == before and not out.exists()
