"""Rows into the tables the search index follows (questions, passages), one statement per part."""
from __future__ import annotations

QUESTION_COLUMNS = ("id", "dataset_id", "passage_id", "idx", "position", "stem", "alternatives", "key", "source",
                     "unanswerable_alternatives", "extra", "imported_annotations", "lint", "lint_version")
PASSAGE_COLUMNS = ("id", "text", "source", "split", "level", "extra", "lint", "lint_version")


def insert_rows(conn, table: str, columns: tuple[str, ...], rows: list[tuple]) -> None:
    """INSERT `rows` into `table` in one statement: through a TEMP table and INSERT ... SELECT.

    The search index is kept by triggers on questions and passages (`schema._fts`), and FTS5
    writes its pending terms out at the end of every statement that changed it; executemany
    runs one statement per row, which left a segment per row to merge (100,000 questions:
    7.1 s CPU, 5.8 of them in the index; one INSERT ... SELECT: 1.3 s, the index the same).
    The TEMP table's columns have no type, so the values reach `table` as given."""
    if not rows:
        return
    staging = f"temp.import_{table}"
    cols = ", ".join(columns)
    conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS import_{table} ({cols})")
    try:
        conn.executemany(f"INSERT INTO {staging} VALUES ({','.join('?' * len(columns))})", rows)
        conn.execute(f"INSERT INTO main.{table} ({cols}) SELECT {cols} FROM {staging} ORDER BY rowid")
    finally:
        conn.execute(f"DELETE FROM {staging}")
