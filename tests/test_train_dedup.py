"""Training de-duplication on the real files: RACE train and dev lose every passage that also
occurs (normalised) in RACE test, EMBRACE or ExpMRC.

The numbers are what ../shared/data gives (computed by `python -m models.training.dedup`), checked
here against the official RACE counts (race/README.md: 25,137 / 87,866 train, 1,389 / 4,887
dev) and two ways of matching:

* exact normalised text: 29 train passages (108 questions) and 1 dev passage; by
  source, 3 EMBRACE texts and 22 ExpMRC passages in train, 1 ExpMRC passage in dev and
  1 in test.  race/README.md says 21 EMBRACE and 45 ExpMRC texts in train, 2 ExpMRC in
  test and 317 removed training questions: the README counts copies that differ by a
  word or two, which exact matching misses (train/high/299.txt is ExpMRC's passage with
  "a bit of" added).
* the rule `models.training.dedup` applies (equal text, or equal first or last 300 normalised
  characters): 147 train passages (526 questions; 76 RACE test, 28 EMBRACE and 65 ExpMRC
  texts have a copy there) and 8 dev passages (28 questions); ExpMRC in test: 4 (the
  first 300 characters alone give the README's 2).  The first 300 characters alone give the probe's 317 questions; the end
  finds 209 more questions of passages edited near their start or cut short.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from models.training import dedup as D

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

pytestmark = pytest.mark.slow  # reads the 27,933 RACE files once (~5 s of CPU)


@pytest.fixture(scope="module")
def race():
    return {s: D.read_race(DATA / "race", s) for s in ("train", "dev", "test")}


@pytest.fixture(scope="module")
def held():
    return D.held_out_texts(DATA)


def _exact(held):
    return {s: {k: i for k, i in index.items() if k.startswith("=")} for s, index in held.items()}


def test_race_has_its_official_counts(race):
    assert [(len(race[s]), sum(p.n_questions for p in race[s])) for s in ("train", "dev", "test")] == \
        [(25137, 87866), (1389, 4887), (1407, 4934)]


def test_exact_normalised_text_matches(race, held):
    exact = _exact(held)
    train = D.remove_held_out(race["train"], exact)
    dev = D.remove_held_out(race["dev"], exact)
    assert (len(train.removed), train.removed_questions) == (29, 108)
    assert train.source_texts_found == {"race-test": 7, "embrace": 3, "expmrc": 22}
    assert (len(dev.removed), dev.removed_questions) == (1, 3)
    assert dev.source_texts_found == {"race-test": 0, "embrace": 0, "expmrc": 1}
    ex_test = D.remove_held_out(race["test"], {"expmrc": exact["expmrc"]})
    assert ex_test.source_texts_found == {"expmrc": 1}
    # every EMBRACE text is a RACE test passage (EMBRACE annotates RACE-H test)
    test_texts = {D.normalise(p.article) for p in race["test"]}
    assert {k[1:] for k in exact["embrace"]} <= test_texts


def test_the_dedup_rule_also_removes_edited_copies(race, held):
    train = D.remove_held_out(race["train"], held)
    dev = D.remove_held_out(race["dev"], held)
    assert (len(train.removed), train.removed_questions) == (147, 526)
    assert train.source_texts_found == {"race-test": 76, "embrace": 28, "expmrc": 65}
    assert train.passages_by_source == {"race-test": 82, "embrace": 30, "expmrc": 68}
    assert (len(dev.removed), dev.removed_questions) == (8, 28)
    assert len(train.kept) + len(train.removed) == 25137
    ex_test = D.remove_held_out(race["test"], {"expmrc": held["expmrc"]})
    # race/README.md: 2 ExpMRC passages in test (what the first 300 characters alone give)
    assert ex_test.source_texts_found == {"expmrc": 4}
    removed = {p.file for p in train.removed}
    assert "train/high/299.txt" in removed  # ExpMRC's passage with "a bit of" added: not equal, still a copy
    # checked the long way: no kept passage equals, starts or ends like a held-out text
    held_texts = set()
    for source, index in held.items():
        held_texts |= {k[1:] for k in index if k.startswith("=")}
    starts = {t[:D.EDGE] for t in held_texts}
    ends = {t[-D.EDGE:] for t in held_texts}
    for p in train.kept + dev.kept:
        t = D.normalise(p.article)
        assert t not in held_texts and t[:D.EDGE] not in starts and t[-D.EDGE:] not in ends, p.file


def test_normalise_drops_case_spaces_and_punctuation():
    assert D.normalise("It's  a  Test.\n\n“Yes!”") == D.normalise("its a test yes") == "itsatestyes"
