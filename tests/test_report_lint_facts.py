"""The linter's suggestions are stored at import, and the report reads them instead of linting again.

The corpus report on all of RACE spent two thirds of its time in the surface linter; a
passage's text and a question's stem and alternatives never change after import, so
their suggestions are found once, stored with a fingerprint of the rules, and read
back.  What the report writes must not change by it: the same columns as when the
linter runs over every item, and suggestions stored by other rules are found again.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path

from desktop.domain import surface_lint
from desktop.formats import read
from desktop.reports.corpus_items import build, tables_from_store
from desktop.store import Store
from desktop.store.lint_facts import decode, rules_version

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
FILES = [DATA / "embrace" / "embrace_green.jsonl", DATA / "embrace" / "embrace_yellow.jsonl",
         DATA / "expmrc" / "expmrc-race-dev.json"]
COLUMNS = ["item_id", "acceptability_with_suggestions", "suggested_problems"]


def _rows(tags) -> list[list]:
    return [[t.element, t.type, t.note, t.alternative, t.start, t.end] for t in tags]


def _imported(tmp_path) -> Path:
    db = tmp_path / "lint.db"
    with Store.open(db, annotator="imported") as store:
        for f in FILES:
            store.import_datasets(read(f), file=f)
    return db


def test_import_stores_what_the_linter_finds_in_every_passage_and_question(tmp_path):
    db = _imported(tmp_path)
    version = rules_version()
    texts = {}
    with sqlite3.connect(db) as conn:
        for pid, text, lint, v in conn.execute("SELECT id, text, lint, lint_version FROM passages"):
            assert v == version
            assert decode(lint) == _rows(surface_lint.detect_text(text)), pid
            texts[pid] = text
        n = with_suggestions = 0
        with Store.open(db, read_only=True) as store:
            for q in store.questions([r[0] for r in conn.execute("SELECT id FROM questions")]):
                lint, v = conn.execute("SELECT lint, lint_version FROM questions WHERE id = ?", (q.id,)).fetchone()
                assert v == version
                found = _rows(surface_lint.detect_item(q, texts[q.passage_id]))
                assert decode(lint) == found, q.id
                n += 1
                with_suggestions += bool(found)
    assert n == 1726 and with_suggestions > 100  # every question of the three files; many have suggestions


def test_the_report_reads_them_and_writes_what_linting_every_item_gives(tmp_path):
    db = _imported(tmp_path)
    with Store.open(db, read_only=True) as store:
        tables = tables_from_store(store)
    items, passages = tables.lint
    assert all(v is not None for v in items.values()) and all(v is not None for v in passages.values())
    stored = build(tables).frame[COLUMNS]
    tables.lint = None  # the linter over every passage and item, as before the suggestions were stored
    linted = build(tables).frame[COLUMNS]
    assert stored.equals(linted)
    assert (stored["suggested_problems"] != "").sum() > 100


def test_suggestions_stored_by_other_rules_are_found_again(tmp_path):
    db = _imported(tmp_path)
    with Store.open(db, read_only=True) as store:
        expected = build(tables_from_store(store)).frame[COLUMNS]
    with sqlite3.connect(db) as conn:  # as if stored by an older linter, which found nothing
        conn.execute("UPDATE questions SET lint = '[]', lint_version = 'older rules'")
        conn.execute("UPDATE passages SET lint = NULL, lint_version = NULL")  # as imported before schema 4
    with Store.open(db, read_only=True) as store:
        tables = tables_from_store(store)
        assert set(tables.lint[0].values()) == {None} and set(tables.lint[1].values()) == {None}
        again = build(tables).frame[COLUMNS]
    assert again.equals(expected)
