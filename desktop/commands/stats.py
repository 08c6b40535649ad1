"""`mcqlens stats --db DB [--json]`: counts per source, per annotation status, per table."""
from __future__ import annotations

import json

from desktop.store import Store


def register(sub) -> None:
    p = sub.add_parser("stats", help="counts per source and per annotation status")
    p.add_argument("--db", default="annotations.db", help="database file (default: ./annotations.db)")
    p.add_argument("--json", action="store_true", help="print the counts as one JSON object")
    p.set_defaults(func=run)


def run(args) -> int:
    with Store.open(args.db, read_only=True) as store:
        s = store.stats()
        note = (f"schema {store.migrated_from}, read through an upgraded copy in memory; the file is unchanged"
                if store.upgraded_in_memory else f"schema {s['schema_version']}")
    if args.json:
        print(json.dumps(s, ensure_ascii=False, indent=1))
        return 0
    print(f"database: {args.db} ({note})")
    statuses = list(s["status"])
    header = f"{'source':<12}{'files':>6}{'texts':>7}{'passages':>9}{'questions':>10}" + "".join(
        f"{st:>13}" for st in statuses)
    print(header)
    for src, c in s["sources"].items():
        by = s["status_by_source"].get(src, {})
        print(f"{src:<12}{c['files']:>6}{c['texts']:>7}{c['passages']:>9}{c['questions']:>10}"
              + "".join(f"{by.get(st, 0):>13}" for st in statuses))
    print(f"{'all':<12}{sum(c['files'] for c in s['sources'].values()):>6}"
          f"{sum(c['texts'] for c in s['sources'].values()):>7}{s['annotations']['passages']:>9}"
          f"{s['annotations']['questions']:>10}" + "".join(f"{s['status'][st]:>13}" for st in statuses))
    roles = ", ".join(f"{k} {v}" for k, v in sorted(s["spans_by_role"].items()))
    a = s["annotations"]
    print(f"spans: {a['spans']}" + (f" ({roles})" if roles else ""))
    print(", ".join(f"{k}: {a[k]}" for k in ("assessments", "problems", "comments", "answerability", "notes",
                                              "predictions")))
    print(f"annotators: {', '.join(s['annotators']) or '-'}")
    print(f"history: {s['history']} rows")
    for f in _by_folder(s["files"]):
        print(f"  {f['source']:<10} {f['texts']:>5} texts {f['questions']:>6} questions  {f['file']}")
    return 0


def _by_folder(files: list[dict]) -> list[dict]:
    """One line per imported folder (its files summed, per source) and per single file."""
    out: list[dict] = []
    groups: dict[tuple, dict] = {}
    for f in files:
        folder = f.get("folder")
        if not folder:
            out.append(f)
            continue
        key = (folder, f["source"])
        if key not in groups:
            groups[key] = {"source": f["source"], "texts": 0, "questions": 0, "n": 0, "folder": folder}
            out.append(groups[key])
        g = groups[key]
        g["texts"] += f["texts"]
        g["questions"] += f["questions"]
        g["n"] += 1
        g["file"] = f"{folder} ({g['n']} file{'s' if g['n'] != 1 else ''})"
    return out
