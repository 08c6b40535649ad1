"""Stored rows read back: JSON columns (a damaged or hostile value is one StoreError line, not a
traceback), and a question's or a prediction's row as its domain object.

The store writes these columns itself, so a value that is not JSON, or JSON of the
wrong shape (an `extra` that is not an object, alternatives that are not a list),
means another program edited the file: say which table, column and row.
"""
from __future__ import annotations

import json
from typing import Any

from desktop.domain.errors import Corrupt
from desktop.domain.model import Prediction, Question

_NAMES = {dict: "an object", list: "a list"}


def loads(text: Any, table: str, column: str, row: Any, kind: type | None = None) -> Any:
    """json.loads(text), or Corrupt (a StoreError) naming where the database is damaged."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        shown = repr(text)[:40]
        raise Corrupt(f"damaged database: {table}.{column} of row {row} is not JSON ({shown}); "
                         "was the file edited by another program?") from None
    if kind is not None and not isinstance(value, kind):
        raise Corrupt(f"damaged database: {table}.{column} of row {row} is not {_NAMES.get(kind, kind.__name__)}; "
                         "was the file edited by another program?")
    return value


def question_row(r) -> Question:
    return Question(id=r["id"], passage_id=r["passage_id"], index=r["idx"], stem=r["stem"],
                    alternatives=loads(r["alternatives"], "questions", "alternatives", r["id"], list), key=r["key"], source=r["source"],
                    unanswerable_alternatives=loads(r["unanswerable_alternatives"], "questions",
                                                    "unanswerable_alternatives", r["id"], list),
                    extra=loads(r["extra"], "questions", "extra", r["id"], dict))


def prediction_row(r) -> Prediction:
    return Prediction(model_id=r["model_id"], input_format=r["input_format"],
                      probabilities=loads(r["probabilities"], "predictions", "probabilities", r["id"], list),
                      evidence=r["evidence"],
                      extra=loads(r["extra"], "predictions", "extra", r["id"], dict))
