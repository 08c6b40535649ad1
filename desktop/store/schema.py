"""The schema of annotations.db and its migrations.

The schema version lives in `schema_version` (one row) and in `PRAGMA user_version`.
Each migration runs inside one transaction together with the version bump, so a
crash mid-upgrade leaves the old schema; before upgrading a database that already
has data, `Store.open` writes a backup copy `<db>.bak-v<old version>` next to it.
"""
from __future__ import annotations

import sqlite3
from collections.abc import Callable

SCHEMA_VERSION = 5

_V1 = """
CREATE TABLE annotators (
    name TEXT PRIMARY KEY,
    kind TEXT NOT NULL DEFAULT 'human',          -- human | import | model
    created_at TEXT NOT NULL
);
CREATE TABLE datasets (                          -- one row per imported file (the "imports")
    id INTEGER PRIMARY KEY,
    source TEXT NOT NULL,
    file TEXT,
    sha256 TEXT,
    annotator TEXT NOT NULL,
    imported_at TEXT NOT NULL,
    extra TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX datasets_sha256 ON datasets(sha256);
CREATE TABLE imports (                           -- every file ever imported, new content or not
    id INTEGER PRIMARY KEY,
    file TEXT,
    sha256 TEXT,
    dataset_id INTEGER REFERENCES datasets(id),
    annotator TEXT NOT NULL,
    ts TEXT NOT NULL
);
CREATE INDEX imports_sha256 ON imports(sha256);
CREATE TABLE passages (
    id TEXT PRIMARY KEY,
    text TEXT NOT NULL,                          -- never edited after import
    source TEXT NOT NULL,
    split TEXT,
    level TEXT,
    extra TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE dataset_passages (                  -- a passage as one file holds it (order, file-level extras)
    dataset_id INTEGER NOT NULL REFERENCES datasets(id),
    passage_id TEXT NOT NULL REFERENCES passages(id),
    position INTEGER NOT NULL,
    source TEXT NOT NULL,
    split TEXT,
    level TEXT,
    extra TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (dataset_id, passage_id)
);
CREATE TABLE questions (
    id TEXT PRIMARY KEY,                         -- the source id: 0_0, <pid>-<j>
    dataset_id INTEGER NOT NULL REFERENCES datasets(id),
    passage_id TEXT NOT NULL REFERENCES passages(id),
    idx INTEGER NOT NULL,
    position INTEGER NOT NULL,                   -- order within its file
    stem TEXT NOT NULL,
    alternatives TEXT NOT NULL,                  -- JSON list
    key INTEGER,
    source TEXT NOT NULL,
    unanswerable_alternatives TEXT NOT NULL DEFAULT '[]',
    extra TEXT NOT NULL DEFAULT '{}',
    imported_annotations TEXT NOT NULL DEFAULT '',  -- fingerprint: same id, other content = error
    status TEXT NOT NULL DEFAULT 'untouched'
        CHECK (status IN ('untouched', 'in progress', 'done'))
);
CREATE INDEX questions_passage ON questions(passage_id);
CREATE INDEX questions_dataset ON questions(dataset_id, position);
CREATE TABLE spans (
    id INTEGER PRIMARY KEY AUTOINCREMENT,        -- never reused: undo/redo re-insert rows under their id
    question_id TEXT NOT NULL REFERENCES questions(id),
    role TEXT NOT NULL CHECK (role IN ('evidence', 'basis', 'required')),
    alternative INTEGER,
    start INTEGER NOT NULL,
    "end" INTEGER NOT NULL,
    annotator TEXT NOT NULL,
    origin TEXT NOT NULL CHECK (origin IN ('imported', 'human', 'model', 'model-accepted')),
    extra TEXT NOT NULL DEFAULT '{}',
    CHECK (start >= 0 AND "end" >= start)
);
CREATE INDEX spans_question ON spans(question_id, role);
CREATE TABLE assessments (
    id INTEGER PRIMARY KEY,
    question_id TEXT NOT NULL REFERENCES questions(id),
    annotator TEXT NOT NULL,
    origin TEXT NOT NULL DEFAULT 'human',
    "values" TEXT NOT NULL DEFAULT '{}',
    text_format TEXT,
    multiple_texts INTEGER,
    unit_type TEXT,
    extra TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX assessments_question ON assessments(question_id, annotator);
CREATE TABLE problems (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    question_id TEXT NOT NULL REFERENCES questions(id),
    type TEXT NOT NULL,
    element TEXT NOT NULL,
    annotator TEXT NOT NULL,
    origin TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    alternative INTEGER,
    start INTEGER,
    "end" INTEGER,
    extra TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX problems_question ON problems(question_id);
CREATE TABLE comments (
    id INTEGER PRIMARY KEY,
    question_id TEXT NOT NULL REFERENCES questions(id),
    annotator TEXT NOT NULL,
    origin TEXT NOT NULL,
    position INTEGER NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX comments_question ON comments(question_id, annotator);
CREATE TABLE answerability (
    question_id TEXT NOT NULL REFERENCES questions(id),
    annotator TEXT NOT NULL,
    label TEXT NOT NULL CHECK (label IN ('answerable', 'unanswerable', 'unsure')),
    origin TEXT NOT NULL,
    ts TEXT NOT NULL,
    PRIMARY KEY (question_id, annotator)
);
CREATE TABLE notes (                             -- the free-text problems note, per annotator
    question_id TEXT NOT NULL REFERENCES questions(id),
    annotator TEXT NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (question_id, annotator)
);
CREATE TABLE predictions (
    id INTEGER PRIMARY KEY,
    question_id TEXT NOT NULL REFERENCES questions(id),
    model_id TEXT NOT NULL,
    input_format TEXT NOT NULL,
    probabilities TEXT NOT NULL,                 -- JSON list
    evidence TEXT,
    extra TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    UNIQUE (question_id, model_id, input_format)
);
CREATE TABLE history (
    id INTEGER PRIMARY KEY,
    annotator TEXT NOT NULL,
    ts TEXT NOT NULL,
    item TEXT,
    field TEXT NOT NULL,
    before TEXT,                                 -- JSON
    after TEXT,                                  -- JSON
    kind TEXT NOT NULL DEFAULT 'change',         -- change, undo, redo, import, predictions
    ref INTEGER REFERENCES history(id),          -- the change an undo/redo acted on
    undone INTEGER NOT NULL DEFAULT 0            -- 1 while reverted, 2 once a newer change made redo impossible
);
CREATE INDEX history_item ON history(item);
CREATE INDEX history_annotator ON history(annotator, kind, undone);
"""


def _v1(conn: sqlite3.Connection) -> None:
    for statement in _V1.split(";"):
        if statement.strip():
            conn.execute(statement)


def _v2(conn: sqlite3.Connection) -> None:
    # row_version: bumped by every edit, undo and redo of the question, so a window can
    # tell with one integer that the item it shows was changed by another program;
    # the index serves the stale-edit check (latest history row of an item's field).
    conn.execute("ALTER TABLE questions ADD COLUMN row_version INTEGER NOT NULL DEFAULT 0")
    conn.execute("CREATE INDEX IF NOT EXISTS history_item_field ON history(item, field, id)")


def _fts(conn: sqlite3.Connection, table: str, columns: tuple[str, ...]) -> None:
    """An FTS5 index over `table`'s columns, kept current by triggers: the layout
    sqlite-utils' `enable_fts(columns, create_triggers=True)` makes (`<table>_fts`, external
    content, rowid), so `sqlite_utils.Database(...)[table].search()` works on it; written out
    here because `enable_fts` runs `executescript`, which would commit this migration's
    transaction half-way.  The update trigger fires on the indexed columns only: every edit
    bumps `questions.row_version`, and that must not re-index the stem."""
    fts = f"{table}_fts"
    cols = ", ".join(f"[{c}]" for c in columns)
    new = ", ".join(f"new.[{c}]" for c in columns)
    old = ", ".join(f"old.[{c}]" for c in columns)
    conn.execute(f"CREATE VIRTUAL TABLE [{fts}] USING FTS5 ({cols}, content=[{table}])")
    conn.execute(f"INSERT INTO [{fts}] (rowid, {cols}) SELECT rowid, {cols} FROM [{table}]")
    conn.execute(f"CREATE TRIGGER [{table}_ai] AFTER INSERT ON [{table}] BEGIN "
                 f"INSERT INTO [{fts}] (rowid, {cols}) VALUES (new.rowid, {new}); END")
    conn.execute(f"CREATE TRIGGER [{table}_ad] AFTER DELETE ON [{table}] BEGIN "
                 f"INSERT INTO [{fts}] ([{fts}], rowid, {cols}) VALUES ('delete', old.rowid, {old}); END")
    conn.execute(f"CREATE TRIGGER [{table}_au] AFTER UPDATE OF {cols} ON [{table}] BEGIN "
                 f"INSERT INTO [{fts}] ([{fts}], rowid, {cols}) VALUES ('delete', old.rowid, {old}); "
                 f"INSERT INTO [{fts}] (rowid, {cols}) VALUES (new.rowid, {new}); END")


def _v3(conn: sqlite3.Connection) -> None:
    # Progress belongs to each annotator: item_status holds (item, annotator) -> status;
    # no row means "untouched".  questions.status stays as the migration found it (legacy,
    # no longer read or written).  Who gets the old item status (docs/CONTRACTS.md):
    #  1. every annotator who changed the item (a history row of kind "change") is "in progress";
    #  2. the author of the item's latest status row (change, undo or redo) gets the item's status;
    #  3. an item not "untouched" without any status row: the author of its latest change,
    #     or else the annotator its file was imported by.
    conn.execute("""CREATE TABLE item_status (
        question_id TEXT NOT NULL REFERENCES questions(id),
        annotator TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('in progress', 'done')),
        ts TEXT NOT NULL,
        PRIMARY KEY (question_id, annotator)
    ) WITHOUT ROWID""")
    conn.execute("CREATE INDEX item_status_annotator ON item_status(annotator, status)")
    now = "strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now')"
    conn.execute(f"""INSERT OR IGNORE INTO item_status (question_id, annotator, status, ts)
        SELECT h.item, h.annotator, 'in progress', max(h.ts) FROM history h
        JOIN questions q ON q.id = h.item
        WHERE h.kind = 'change' AND h.field != 'status' GROUP BY h.item, h.annotator""")
    owners = conn.execute("""
        SELECT q.id, q.status, coalesce(
            (SELECT h.annotator FROM history h WHERE h.item = q.id AND h.field = 'status'
             AND h.kind IN ('change', 'undo', 'redo') ORDER BY h.id DESC LIMIT 1),
            CASE WHEN q.status != 'untouched' THEN coalesce(
                (SELECT h.annotator FROM history h WHERE h.item = q.id AND h.kind = 'change'
                 ORDER BY h.id DESC LIMIT 1),
                (SELECT d.annotator FROM datasets d WHERE d.id = q.dataset_id)) END)
        FROM questions q
        WHERE q.status != 'untouched' OR q.id IN (SELECT item FROM history WHERE field = 'status')""").fetchall()
    for item, status, owner in owners:
        if owner is None:
            continue
        if status == "untouched":
            conn.execute("DELETE FROM item_status WHERE question_id=? AND annotator=?", (item, owner))
        else:
            conn.execute(f"INSERT INTO item_status (question_id, annotator, status, ts) VALUES (?, ?, ?, {now}) "
                         "ON CONFLICT (question_id, annotator) DO UPDATE SET status=excluded.status",
                         (item, owner, status))
    # the navigator lists a passage's questions in import order, straight from this index
    conn.execute("CREATE INDEX questions_passage_order ON questions(passage_id, dataset_id, position)")
    # the filter boxes list the sources and splits: a few index seeks, not a pass over the bank
    conn.execute("CREATE INDEX questions_source ON questions(source)")
    conn.execute("CREATE INDEX passages_split ON passages(split)")
    # search: stems, alternatives and passages through SQLite FTS5
    _fts(conn, "questions", ("stem", "alternatives"))
    _fts(conn, "passages", ("text",))


def _v4(conn: sqlite3.Connection) -> None:
    # The shortcut model's give-away words per item (inference.giveaway): derived data, kept
    # so that the window's second visit to an item is instant and the report can read them.
    # `fingerprint` is of the stem and alternatives explained: an edited item's row is stale.
    conn.execute("""CREATE TABLE explanations (
        question_id TEXT NOT NULL REFERENCES questions(id),
        model_id TEXT NOT NULL,
        method TEXT NOT NULL,                        -- the variant: "delete", "mask+content", ...
        fingerprint TEXT NOT NULL,
        result TEXT NOT NULL,                        -- JSON: inference.giveaway.Explanation.to_json()
        created_at TEXT NOT NULL,
        PRIMARY KEY (question_id, model_id, method)
    ) WITHOUT ROWID""")


def _v5(conn: sqlite3.Connection) -> None:
    # The surface linter's suggestions, stored when a passage or question is imported (its
    # text never changes after), with the version of the rules that found them: the report
    # reads them instead of running the linter over every item (desktop/store/lint_facts.py).
    # NULL: not computed (imported before this version): the report computes those itself.
    for table in ("passages", "questions"):
        conn.execute(f"ALTER TABLE {table} ADD COLUMN lint TEXT")
        conn.execute(f"ALTER TABLE {table} ADD COLUMN lint_version TEXT")


# version reached -> function that upgrades from the previous version
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {1: _v1, 2: _v2, 3: _v3, 4: _v4, 5: _v5}


def current_version(conn: sqlite3.Connection) -> int:
    row = conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name='schema_version'").fetchone()
    if row is None:
        return 0
    row = conn.execute("SELECT version FROM schema_version").fetchone()
    return int(row[0]) if row else 0


def set_version(conn: sqlite3.Connection, version: int) -> None:
    conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    conn.execute("DELETE FROM schema_version")
    conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
    conn.execute(f"PRAGMA user_version = {int(version)}")
