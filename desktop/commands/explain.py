"""`mcqlens explain --db DB [--items ID ...] -o OUT.csv [--model DIR]`: what gives the key away.

For every question (or the ones named), the words of the stem and of each alternative that
move the shortcut model's (Q+{O}, no passage) choice, by occlusion (`inference.giveaway`,
the function the window's Why? view calls).  One CSV row per question:
`item_id, model, predicted, n_eff, giveaway, together`, where `giveaway` is a JSON list,
strongest first, of {"word", "element", "start", "end", "effect"}: `element` is "stem" or the
alternative's letter, `start`/`end` are character offsets into that element's text as
stored (`text[start:end] == word`) and `effect` is the drop in the predicted alternative's
probability when the word alone is taken out; `together` is {"effect", "words"}: the words
that take the most away when taken out together and that *joint* drop (empty with
--together 0).  Explanations are stored in the database (the window shows them at once); one
already stored for the same model, variant (method, words, phrase length, together) and item
text is reused unless --recompute.
"""
from __future__ import annotations

import os
import sys

from desktop.app import paths
from desktop.commands.progress import Progress
from desktop.domain.errors import InputError, ModelError, StoreError
from desktop.domain.giveaway_kinds import FLAGGED_N
from desktop.formats import door
from desktop.store import Store


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
    p.add_argument("--words", choices=("screened", "all", "content"), default=None,
                   help="screened (default): content words one at a time, the function words (articles, "
                        "prepositions, be/have, pronouns) in groups first and alone only where their group takes "
                        "enough away; all: every word one at a time; content: content words only")
    p.add_argument("--together", type=int, default=None, metavar="K",
                   help="also find the K words that take the most away together, by their joint effect "
                        "(default 3; 0: none)")
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


def run(args) -> int:
    # inside: `inference` (numpy, tokenizers, onnxruntime) stays out of the command line's start-up
    import inference
    from desktop.app.explain import explain_store, write_csv
    from inference import giveaway as G
    from inference.catalog import locate_model

    # at the door: the database, the output, the options and the items, before the model loads
    if not os.path.exists(args.db):
        raise StoreError(f"{args.db}: no such database (create it with `mcqlens import`)")
    door.input_file(args.db, what="database")  # stat only: the database file is opened by SQLite alone
    paths.output_file(args.output, args.force)
    if args.phrase < 1 or args.phrase > 5:
        raise InputError("command line", None, "--phrase", f"must be 1 to 5 words, got {args.phrase}")
    if args.together is not None and not (args.together == 0 or 2 <= args.together <= 5):
        raise InputError("command line", None, "--together", f"must be 0 or 2 to 5 words, got {args.together}")
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
    model_dir = locate_model(args.model)
    if not args.model and not (model_dir / "card.json").is_file():
        raise ModelError(f"no model is installed at {model_dir}; pass --model DIR")
    model = inference.load_model(model_dir, device=args.device)
    if model.fallback:
        print(f"warning: {model.fallback}", file=sys.stderr)
    print(f"model {model.id} ({model.card.name}): {model.message}", file=sys.stderr)
    G.check_model(model)
    method = args.method or G.DEFAULT_METHOD
    if method == G.MASK and G.mask_token(model.tokenizer) is None:
        raise ModelError(f"the tokenizer of {model.id} has no mask token; use --method delete")
    together = G.DEFAULT_TOGETHER if args.together is None else args.together
    with Store.open(args.db, create=False) as store, \
            Progress(0, "questions", quiet=args.no_progress, label="explaining", eta=True) as bar:
        explanations = explain_store(store, model, ids, source=args.source, method=method, phrase=args.phrase,
                                     scope=args.words, together=together,
                                     recompute=args.recompute, flagged=args.flagged, progress=bar)
    n = write_csv(explanations, args.output, force=args.force, top=args.top)
    flagged = sum(ex.n_eff < FLAGGED_N for ex in explanations)
    what = G.variant(method, args.words or G.DEFAULT_SCOPE, args.phrase, together)
    print(f"{args.output}: {n} questions explained by {model.id} ({what}); {flagged} with shortcut N < {FLAGGED_N:g}",
          file=sys.stderr)
    return 0
