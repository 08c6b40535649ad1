"""`mcqlens nota`: the "None of the above" transformation (make) and the answerability grid (eval).

    mcqlens nota make INPUT -o OUT.json --c 0.3 --seed 1 [--replicas 5] [--text "..."]
    mcqlens nota make --db annotations.db -o OUT.json --c 0.3
    mcqlens nota eval --model DIR [--model DIR2 ...] --data INPUT --c 0,0.1,...,1 -o DIR

`make` writes RACE (a .json list, .jsonl, or a folder of .txt files when OUT has no
suffix) with, per passage, lists parallel to `questions`: `answerable` (true/false),
`replaced` (the letter of the alternative now holding the NOTA text) and
`replaced_text` (what it said before), plus `nota` {c, seed, replica, text} and the
passage's `split`/`level` when known.  Test (non-training) passages get `--replicas`
differently seeded copies, their ids suffixed ".r1", ".r2", ... when there are several.
"""
from __future__ import annotations

import argparse
from decimal import Decimal, InvalidOperation
from pathlib import Path

from desktop.commands.progress import Progress
from desktop.domain import nota, values
from desktop.domain.errors import InputError, McqLensError
from desktop.domain.nota import NOTA_TEXT
from desktop.domain.words import count
from desktop.formats import door
from desktop.reports import nota_eval, nota_heatmap, nota_labels
from desktop.reports.nota_output import write_race
from desktop.reports.nota_scoring import load_models
from desktop.store import Store

DEFAULT_CS = "0,0.1,...,1"


def register(sub) -> None:
    p = sub.add_parser("nota", help="None-of-the-above transformation and answerability evaluation",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    nsub = p.add_subparsers(dest="nota_command", metavar="ACTION")

    mk = nsub.add_parser("make", help="write a NOTA-transformed copy of a data set (RACE format)")
    mk.add_argument("input", nargs="?", help="any importable file or folder (or use --db)")
    _source_args(mk)
    mk.add_argument("-o", "--output", required=True, help="OUT.json, OUT.jsonl, or a folder")
    mk.add_argument("--c", required=True, type=_one_c, help="proportion of unanswerable questions, 0..1")
    _common(mk)
    mk.set_defaults(func=make)

    ev = nsub.add_parser("eval", help="score NOTA test sets with models: CSV and heatmaps")
    ev.add_argument("--model", action="append", required=True, metavar="DIR",
                    help="a model directory (repeat for several; each is a column)")
    ev.add_argument("--data", help="any importable file or folder (or use --db)")
    _source_args(ev)
    ev.add_argument("--c", default=DEFAULT_CS, type=parse_cs,
                    help=f"test-set proportions, comma separated; 'a,b,...,z' is a range (default {DEFAULT_CS})")
    ev.add_argument("-o", "--output", required=True, help="output folder")
    ev.add_argument("--input-format", default=None,
                    help="standard, shortcut, options, options_context (default: standard if the model has it)")
    ev.add_argument("--device", default="auto", help="auto, cpu or cuda")
    _common(ev)
    ev.set_defaults(func=evaluate)
    p.set_defaults(func=lambda args: p.print_help() or 0)


def _source_args(p) -> None:
    p.add_argument("--db", help="read the questions from this database instead of a file")
    p.add_argument("--source", help="with --db: only this source (race, expmrc, ...)")
    p.add_argument("--format", default="auto", dest="fmt",
                   help="file format of the input: race, expmrc, embrace, dream, quail, cosmosqa (default: detect)")


def _common(p) -> None:
    p.add_argument("--seed", default="1", help="random seed (same seed, same output)")
    p.add_argument("--replicas", type=int, default=5, help="copies of each test set, differently seeded (5)")
    p.add_argument("--text", default=NOTA_TEXT, help=f"the NOTA alternative (default {NOTA_TEXT!r})")


def _one_c(value: str) -> str:
    try:
        c = Decimal(value)
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not Decimal(0) <= c <= Decimal(1):
        raise argparse.ArgumentTypeError(f"C must be between 0 and 1, not {value}")
    return format(c.normalize(), "f")


def parse_cs(text: str) -> list[str]:
    """'0,0.1,...,1' → ['0', '0.1', ..., '1'] (exact decimals); '0.3,0.5' as given."""
    parts = [t.strip() for t in text.split(",") if t.strip()]
    if "..." not in parts:
        return [_one_c(t) for t in parts]
    i = parts.index("...")
    if i < 2 or i != len(parts) - 2:
        raise argparse.ArgumentTypeError("a range is written 'first,second,...,last'")
    a, b, z = (Decimal(_one_c(t)) for t in (parts[i - 2], parts[i - 1], parts[-1]))
    step = b - a
    if step <= 0 or (z - a) % step:
        raise argparse.ArgumentTypeError(f"{text!r}: the last value is not reached in steps of {step}")
    head = [_one_c(t) for t in parts[:i - 2]]
    n = int((z - a) / step)
    return head + [format((a + k * step).normalize(), "f") for k in range(n + 1)]


def load_passages(args, path: str | None):
    """Passages from a file/folder or from the database (--db)."""
    if args.db:
        store = Store.open(args.db, read_only=True)
        try:
            datasets = store.load_datasets(source=args.source)
        finally:
            store.close()
        where = args.db
    else:
        if not path:
            raise McqLensError("give an input file or folder, or --db DATABASE")

        datasets = door.read(path, args.fmt)
        where = path
    passages = [p for ds in datasets for p in ds.passages]
    if not any(p.questions for p in passages):
        raise InputError(where, None, None, "no questions to transform")
    return passages


def _seed(value: str):
    """A whole number (ASCII digits, as `values.whole_number` reads them) is a number seed;
    any other text ("²" included) is a text seed."""
    text = value.strip()
    n = values.whole_number(text.removeprefix("-"))
    if n is None:
        return value
    return -n if text.startswith("-") else n


def make(args) -> int:
    passages = load_passages(args, args.input)
    if args.replicas < 1:
        raise McqLensError("--replicas must be at least 1")
    copies = nota.transform_replicas(passages, args.c, _seed(args.seed), args.replicas, args.text)
    n = write_race(copies, args.output)
    unanswerable = sum(q.answerability == "unanswerable" for p in copies[0] for q in p.questions)
    total = sum(len(p.questions) for p in copies[0])
    print(f"wrote {count(n, 'question')} ({count(len(copies), 'replica')}) to {args.output}; "
          f"first copy: {unanswerable} of {total} unanswerable (C = {args.c})")
    return 0


def evaluate(args) -> int:
    passages = load_passages(args, args.data)
    out = Path(args.output)
    models = load_models(args.model, args.input_format, args.device)
    seed = _seed(args.seed)
    written = []
    labelled = nota_labels.has_labels(passages)
    native = [p for p in passages if any(q.unanswerable_alternatives for q in p.questions)]
    if not native:
        rows = nota_eval.run(models, passages, args.c, seed, args.replicas, args.text, progress=_progress())
        cells = nota_eval.grid(rows)
        written.append(nota_heatmap.write_csv(cells, out / "nota_metrics.csv"))
        written.append(nota_heatmap.write_csv(rows, out / "nota_replicas.csv", nota_heatmap.REPLICA_FIELDS))
        written += nota_heatmap.plot_all(cells, out)
    else:
        print("the data already has unanswerable alternatives (e.g. QuAIL's 'not enough information'): "
              "no NOTA grid, only the report against its answerability labels")
    if labelled:
        for m in models:
            rows_l = nota_labels.rows(passages, m.scorer, seed, args.text)
            written += nota_labels.write(rows_l, out, m.name)
    for w in written:
        print(w)
    return 0


def _progress():
    # the progress every long command shows: a bar on a terminal, a line every few seconds otherwise
    bars: dict[str, Progress] = {}

    def report(done: int, total: int, label: str) -> None:
        bar = bars.get(label)
        if bar is None:
            bar = bars[label] = Progress(total, "questions", label=f"scoring {label}")
        bar(done, total)
        if done >= total:
            bar.close()
    return report
