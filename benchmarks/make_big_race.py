"""Write a large RACE JSON-lines file made of the real RACE items, repeated under distinct ids.

    python benchmarks/make_big_race.py /tmp/big_race.jsonl [--questions 1800000] [--per-passage 40]

The hostile input of issue 24: a 190 MB RACE file with 1.8 million questions, the size
where holding every question of an import at once took 3.6 GB.  RACE's questions average
about 200 bytes, so 1.8 million of them in 190 MB are its shortest ones (stem, four
options and answer of at most 102 bytes of JSON) under its shortest articles (at most 900
bytes), `--per-passage` questions to a record: the records are RACE's own words, only
repeated.  Each record's id is `big-<n>`; the file is written once and never committed.
"""
from __future__ import annotations

import argparse
import json
from itertools import cycle
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RACE = ROOT / ".." / "shared" / "data" / "race"


def _pools(max_question: int, max_article: int) -> tuple[list[str], list[tuple[str, list[str], str]]]:
    articles, questions = [], []
    for f in sorted(RACE.glob("*/*/*.txt")):
        rec = json.loads(f.read_text(encoding="utf-8"))
        if len(json.dumps(rec["article"])) <= max_article:
            articles.append(rec["article"])
        for stem, options, answer in zip(rec["questions"], rec["options"], rec["answers"]):
            if len(json.dumps([stem, options, answer])) <= max_question:
                questions.append((stem, options, answer))
    return articles, questions


def write(out: Path, n_questions: int, per_passage: int, max_question: int = 102, max_article: int = 900) -> dict:
    articles, questions = _pools(max_question, max_article)
    next_article, next_question = cycle(articles), cycle(questions)
    written = 0
    n = 0
    with open(out, "w", encoding="utf-8") as fh:
        while written < n_questions:
            k = min(per_passage, n_questions - written)
            qs = [next(next_question) for _ in range(k)]
            fh.write(json.dumps({"id": f"big-{n}", "article": next(next_article), "questions": [q[0] for q in qs],
                                 "options": [q[1] for q in qs], "answers": [q[2] for q in qs]}) + "\n")
            written += k
            n += 1
    return {"file": str(out), "bytes": out.stat().st_size, "passages": n, "questions": written,
            "distinct_articles": len(articles), "distinct_questions": len(questions)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--questions", type=int, default=1_800_000)
    ap.add_argument("--per-passage", type=int, default=40)
    args = ap.parse_args()
    print(json.dumps(write(args.out, args.questions, args.per_passage)))


if __name__ == "__main__":
    main()
