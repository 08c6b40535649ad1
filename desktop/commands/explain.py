"""`mcqlens explain --db DB [--items ID ...] -o OUT.csv [--model DIR]`: what gives the key away.

For every question (or the ones named), the words of the stem and of each alternative that
move the shortcut model's (Q+{O}, no passage) choice, by occlusion (`inference.giveaway`,
the function the window's Why? view calls).  One CSV row per question:
`item_id, model, predicted, n_eff, giveaway`, where `giveaway` is a JSON list, strongest
first, of {"word", "element", "start", "end", "effect"}: `element` is "stem" or the
alternative's letter, `start`/`end` are character offsets into that element's text as
stored (`text[start:end] == word`) and `effect` is the drop in the predicted alternative's
probability when the word is taken out.  Explanations are stored in the database (the
window shows them at once); one already stored for the same model, variant (method, words,
phrase length) and item text is reused unless --recompute.
"""
from __future__ import annotations

import csv
import os
import sys
from pathlib import Path
from typing import Callable

COLUMNS = ("item_id", "model", "predicted", "n_eff", "giveaway")
CHUNK = 64  # questions per store transaction: an interruption loses at most this much
FLAGGED_N = 2.0  # --flagged: the shortcut model's N below this (the "answerable without the passage")


def register(sub) -> None:
    p = sub.add_parser("explain", help="the words that give the key away to the shortcut model (Q+{O}), per question",
                       description=__doc__.split("\n\n")[1])
    p.add_argument("--db", default="annotations.db", help="database file (default: ./annotations.db)")
    p.add_argument("--items", nargs="+", metavar="ID", default=None,
                   help="only these questions (ids as stored, e.g. 0_0 test/high/10024-0; commas also separate)")
    p.add_argument("--source", default=None, help="only questions of this source")
    p.add_argument("--flagged", action="store_true",
                   help=f"only questions the shortcut model answers with N < {FLAGGED_N:g}")
    p.add_argument("-o", "--output", required=True, metavar="OUT.csv", help="the CSV file to write")
    p.add_argument("--model", default=None, help="model directory (default: the shipped models/default)")
    p.add_argument("--method", choices=("delete", "mask"), default=None,
                   help="take a word out by deleting it or by the tokenizer's mask token (default: delete, "
                        "the more faithful by ERASER comprehensiveness; docs/giveaway.md)")
    p.add_argument("--words", choices=("all", "content"), default=None,
                   help="take out every word (default) or content words only (a third less work: articles, "
                        "prepositions, be/have and pronouns are not tried)")
    p.add_argument("--phrase", type=int, default=1, metavar="N",
                   help="also take out runs of up to N adjacent words (default 1: single words)")
    p.add_argument("--top", type=int, default=None, metavar="K", help="at most K words per question in the CSV")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    p.add_argument("--recompute", action="store_true", help="compute again what is already stored")
    p.add_argument("--force", action="store_true", help="overwrite OUT.csv if it exists")
    p.add_argument("--no-progress", action="store_true", help="no progress on stderr")
    p.set_defaults(func=run)


def _item_ids(args_items: list[str] | None) -> list[str] | None:
    if args_items is None:
        return None
    out: list[str] = []
    for a in args_items:
        out += [x.strip() for x in a.split(",") if x.strip()]
    return list(dict.fromkeys(out))


def explain_store(store, model, item_ids: list[str] | None = None, source: str | None = None,
                  method: str | None = None, phrase: int = 1, scope: str | None = None, recompute: bool = False,
                  flagged: bool = False,
                  progress: Callable[[int, int], None] | None = None) -> list:
    """The `Explanation` of every question asked for, in import order: read from the store when
    one is stored for this model, variant and item text, else computed and stored.  The
    questions are read, explained and stored CHUNK at a time (one transaction each: an
    interruption loses at most that much, and all of RACE is never in memory at once).  With
    `flagged`, only the questions the shortcut model answers with N < 2.  `progress(done,
    total)` counts the questions considered."""
    from inference import giveaway as G

    method = method or G.DEFAULT_METHOD
    scope = scope or G.DEFAULT_SCOPE
    key = G.variant(method, scope, phrase)
    G.check_model(model)
    if item_ids is None:
        item_ids = [r.item_id for r in store.items(source=source)]
    total, done, out = len(item_ids), 0, []
    if progress is not None:
        progress(0, total)
    for start in range(0, total, CHUNK):
        questions = store.questions(item_ids[start:start + CHUNK])
        have: dict[str, object] = {}
        if not recompute:
            for q in questions:
                data = store.explanation(q.id, model.id, key)
                ex = G.Explanation.from_json(data) if data is not None else None
                if G.current(ex, q, model.id, key):
                    have[q.id] = ex
        if flagged:
            todo = [q for q in questions if q.id not in have]
            keep = {q.id for q, s in zip(todo, G.shortcut_probabilities(model, todo))
                    if s is not None and s.n_eff < FLAGGED_N}
            keep |= {i for i, ex in have.items() if ex.n_eff < FLAGGED_N}
            questions = [q for q in questions if q.id in keep]
        todo = [q for q in questions if q.id not in have]
        ready = done + len(item_ids[start:start + CHUNK]) - len(todo)

        def step(k, _n, ready=ready):
            if progress is not None:
                progress(ready + k, total)

        got = G.explain(model, todo, method=method, phrase=phrase, scope=scope, progress=step) if todo else []
        if got:
            store.add_explanations([ex.to_json() for ex in got])
        have.update((ex.item_id, ex) for ex in got)
        out += [have[q.id] for q in questions if q.id in have]
        done += len(item_ids[start:start + CHUNK])
        if progress is not None:
            progress(done, total)
    return out


def write_csv(explanations, out_path, force: bool = False, top: int | None = None) -> int:
    """The CSV (COLUMNS), written to a temporary file next to OUT and renamed into place."""
    from desktop.commands import paths
    from desktop.domain.errors import McqLensError
    from desktop.domain.model import letter

    out = Path(out_path)
    paths.output_file(out, force)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}{out.suffix}")
    try:
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            w = csv.writer(f)
            w.writerow(COLUMNS)
            for ex in explanations:
                w.writerow([ex.item_id, ex.model_id, letter(ex.predicted), f"{ex.n_eff:.4f}", ex.giveaway_json(top)])
        os.replace(tmp, out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise McqLensError(f"cannot write {out}: {exc.strerror or exc}; nothing was written") from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return len(explanations)


def run(args) -> int:
    import inference
    from desktop.commands import paths
    from desktop.commands.progress import Progress
    from desktop.commands.score import DEFAULT_MODEL, default_model_dir
    from desktop.domain.errors import InputError, ModelError, StoreError
    from desktop.store import Store

    # at the door: the database, the output, the options and the items, before the model loads
    if not os.path.exists(args.db):
        raise StoreError(f"{args.db}: no such database (create it with `mcqlens import`)")
    from desktop.formats import door

    door.input_file(args.db, what="database")  # stat only: the database file is opened by SQLite alone
    paths.output_file(args.output, args.force)
    if args.phrase < 1 or args.phrase > 5:
        raise InputError("command line", None, "--phrase", f"must be 1 to 5 words, got {args.phrase}")
    if args.top is not None and args.top < 1:
        raise InputError("command line", None, "--top", f"must be at least 1, got {args.top}")
    ids = _item_ids(args.items)
    if ids is not None and not ids:
        raise InputError("command line", None, "--items", "names no item")
    with Store.open(args.db, create=False, read_only=True) as store:
        if ids is not None:
            known = {q.id for q in store.questions(ids)}
            missing = [i for i in ids if i not in known]
            if missing:
                raise InputError(args.db, missing[0], "--items", "no such question in the database"
                                 + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
        elif not store.items(source=args.source):
            raise StoreError(f"{args.db}: no questions" + (f" of source {args.source}" if args.source else ""))
    model_dir = Path(args.model) if args.model else default_model_dir()
    if model_dir is None:
        raise ModelError(f"no model is installed at {DEFAULT_MODEL}; pass --model DIR")
    model = inference.load_model(model_dir, device=args.device)
    if model.fallback:
        print(f"warning: {model.fallback}", file=sys.stderr)
    print(f"model {model.id} ({model.card.name}): {model.message}", file=sys.stderr)
    from inference import giveaway as G

    G.check_model(model)
    method = args.method or G.DEFAULT_METHOD
    if method == G.MASK and G.mask_token(model.tokenizer) is None:
        raise ModelError(f"the tokenizer of {model.id} has no mask token; use --method delete")
    with Store.open(args.db, create=False) as store, \
            Progress(0, "questions", quiet=args.no_progress, label="explaining", eta=True) as bar:
        explanations = explain_store(store, model, ids, source=args.source, method=method, phrase=args.phrase,
                                     scope=args.words,
                                     recompute=args.recompute, flagged=args.flagged, progress=bar)
    n = write_csv(explanations, args.output, force=args.force, top=args.top)
    flagged = sum(ex.n_eff < FLAGGED_N for ex in explanations)
    what = G.variant(method, args.words or G.DEFAULT_SCOPE, args.phrase)
    print(f"{args.output}: {n} questions explained by {model.id} ({what}); {flagged} with shortcut N < {FLAGGED_N:g}",
          file=sys.stderr)
    return 0
