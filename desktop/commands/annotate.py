"""`mcqlens annotate --db DB [--annotator NAME]`: scripted edits, one JSON object per line on stdin.

    {"item": "0_0", "field": "comment", "value": "stem ambiguous"}
    {"item": "0_0", "field": "span.add", "value": {"role": "evidence", "start": 0, "end": 42}}
    {"undo": true}        {"redo": true}
    {"item": "0_0", "field": "comment", "value": "new", "expect": "old"}   (refused if no longer "old")

Each line is applied in its own transaction with its history row; `ok <history id>`
is printed (and flushed) only after the commit, so whatever was acknowledged survives
a crash.  A bad line prints `error: line N: ...` and the next line is read.  Exit
status 0 when every line was applied, 1 when some were not.
"""
from __future__ import annotations

import sys

from desktop.domain.changes import FIELDS, Change
from desktop.domain.difficulty import VARIABLES
from desktop.domain.errors import McqLensError, StoreError
from desktop.formats import safe_read
from desktop.store import Store


def register(sub) -> None:
    p = sub.add_parser("annotate", help="apply edits given as JSON lines on stdin (batch edits, scripts)",
                       description="Read one JSON object per line ({\"item\", \"field\", \"value\"[, \"annotator\"]}, "
                                   "or {\"undo\": true} / {\"redo\": true}); print 'ok <history id>' after each "
                                   "commit or 'error: ...' and go on.")
    p.add_argument("--db", default="annotations.db", help="database file (default: ./annotations.db)")
    p.add_argument("--annotator", default=None, help="who makes the edits (default: $MCQLENS_ANNOTATOR or the OS user)")
    p.set_defaults(func=run)


def run(args, stdin=None, stdout=None) -> int:
    stdin = stdin or sys.stdin
    # bytes, decoded line by line: an invalid byte is that line's error, not a lone
    # surrogate (Python's surrogateescape) that reaches the database insert
    stdin = getattr(stdin, "buffer", stdin)
    stdout = stdout or sys.stdout
    failed = 0
    with Store.open(args.db, annotator=args.annotator, create=False) as store:
        n = 0
        while True:
            line = stdin.readline()
            if not line:
                break
            n += 1
            if not line.strip():
                continue
            try:
                msg = _one(store, line, Change)
            except McqLensError as exc:
                msg = f"error: line {n}: {exc}"
                failed += 1
            print(msg, file=stdout, flush=True)
    return 1 if failed else 0


def _one(store, line: str | bytes, change_cls) -> str:
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise StoreError(f"invalid UTF-8 at byte {exc.start} of the line (stdin must be UTF-8)") from None
    try:
        # the importers' JSON rules: no duplicate keys, finite numbers, valid Unicode, bounded depth
        obj = safe_read.strict_loads(line)
    except safe_read.DuplicateKey as exc:
        raise StoreError(f"field {exc.key}: duplicate key in one object (which value was meant?)") from None
    except safe_read.BadValue as exc:
        raise StoreError(f"field {exc.path or 'value'}: {exc.message}") from None
    except (ValueError, RecursionError) as exc:
        raise StoreError(f"not JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise StoreError("expected a JSON object")
    who = obj.get("annotator")
    if who is not None and (not isinstance(who, str) or not who.strip()):
        raise StoreError("annotator must be a name")
    for op in ("undo", "redo"):
        if obj.get(op):
            row = getattr(store, op)(who)
            if row is None:
                raise StoreError(f"nothing to {op}")
            return f"ok {row.id}"
    missing = [k for k in ("item", "field", "value") if k not in obj]
    if missing:
        raise StoreError(f"missing {', '.join(missing)} (expected item, field, value)")
    if not isinstance(obj["item"], str) or not isinstance(obj["field"], str):
        raise StoreError("item and field must be texts")
    if not _known(obj["field"]):
        raise StoreError(f"item {obj['item']}, field {obj['field']}: unknown field; known fields: {known_fields()}")
    change = change_cls(item=obj["item"], field=obj["field"], value=obj["value"], annotator=who)
    # "expect": the value the script last saw; refused if another program changed it since
    hid = store.apply(change, expect=obj["expect"]) if "expect" in obj else store.apply(change)
    return f"ok {hid}"


def _known(field: str) -> bool:
    return field in FIELDS or (field.startswith("difficulty.") and field.split(".", 1)[1] in VARIABLES)


def known_fields() -> str:
    """The fields a line may set, as a list for the error message."""
    return ", ".join(FIELDS) + ", difficulty.<" + "|".join(VARIABLES) + ">"
