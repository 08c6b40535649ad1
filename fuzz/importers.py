"""Fuzz the importers: mutated real files must fail only through the clean `error:` path.

    python -m fuzz.importers --seconds 120                 # every importer, 120 s each
    python -m fuzz.importers --seconds 30 --format race    # one importer
    python -m fuzz.importers --seconds 20 --save /tmp/fuzz-failures

Each example is a real file from ../shared/data (a few records of it) mutated by
hypothesis: a JSON/XML/CSV value replaced by an arbitrary one, a key or element
dropped, a record duplicated, the bytes truncated, flipped or spliced.  The file then
goes through what `mcqlens import` does: `formats.read` (with the format named, and
with detection) and `Store.import_datasets` into an in-memory store.  The command's
own safety net (which turns any reader crash into an error line) is left out on
purpose, so that crashes are found in the readers.

Hostile values go in on purpose for every importer: lone surrogate escapes, NUL
characters, values nested hundreds deep, non-finite numbers (1e999, NaN) and duplicate
keys.  `--format annotate` sends such values as `mcqlens annotate` lines.

The property: the import (or the annotate line) succeeds, or it raises a `McqLensError`
(InputError, StoreError) whose message names the file; and whatever was stored, the
RACE, EMBRACE and ExpMRC writers write and our own importer reads back.  Anything else — a KeyError, a TypeError,
more than `--hang` seconds on one input — is a failure: the input is written to
`fuzz/failures/` (or `--save DIR`) with its traceback, for a regression file in
tests/data/bad/.
"""
from __future__ import annotations

import argparse
import copy
import csv
import hashlib
import io
import json
import re
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / ".." / "shared" / "data"
IMPORTERS = ("race", "embrace", "expmrc", "dream", "quail", "cosmosqa")
SUFFIX = {"annotate": ".jsonl", "race": ".jsonl", "embrace": ".jsonl", "expmrc": ".json", "dream": ".json", "quail": ".xml",
          "cosmosqa": ".csv"}


# ---------------------------------------------------------------- seeds: a few real records per format

def _expmrc_records(n: int) -> list[dict]:
    return json.loads((DATA / "expmrc" / "expmrc-race-dev.json").read_text(encoding="utf-8"))["data"][:n]


def seed(fmt: str) -> bytes:
    """A small, valid file of the format, cut from the real data."""
    if fmt == "race":
        recs = [{k: r[k] for k in ("id", "article", "questions", "options", "answers")} for r in _expmrc_records(2)]
        return "".join(json.dumps(r) + "\n" for r in recs).encode()
    if fmt == "embrace":
        lines = (DATA / "embrace" / "embrace_green.jsonl").read_text(encoding="utf-8").splitlines()
        return ("\n".join(lines[:2]) + "\n").encode()
    if fmt == "expmrc":
        return json.dumps({"version": "fuzz", "data": _expmrc_records(2)}).encode()
    if fmt == "dream":
        return json.dumps(json.loads((DATA / "dream" / "dev.json").read_text(encoding="utf-8"))[:2]).encode()
    if fmt == "quail":
        text = (DATA / "quail" / "quail_1.3_dev.xml").read_text(encoding="utf-8")
        end = text.index("</text>", text.index("<text ")) + len("</text>")
        return ("<data>\n" + text[text.index("<text "):end] + "\n</data>\n").encode()
    if fmt == "cosmosqa":  # no Cosmos QA file ships; QuAIL challenge records in its CSV layout
        rows = [json.loads(line) for line in
                (DATA / "quail" / "challenge.jsonl").read_text(encoding="utf-8").splitlines()[:3]]
        out = io.StringIO()
        w = csv.writer(out)
        w.writerow(["id", "context", "question", "answer0", "answer1", "answer2", "answer3", "label"])
        for r in rows:
            w.writerow([r["id"], r["context"], r["question"], *r["answers"][:4], r["correct_answer_id"]])
        return out.getvalue().encode()
    raise ValueError(fmt)


# ---------------------------------------------------------------- mutations

def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, prefix + (i,))


def _set(doc, path, new):
    if not path:
        return new
    node = doc
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = new
    return doc


def _delete(doc, path):
    if not path:
        return doc
    node = doc
    for k in path[:-1]:
        node = node[k]
    del node[path[-1]]
    return doc


def strategies(fmt: str):
    from hypothesis import strategies as st

    json_values = st.recursive(
        st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False)
        | st.text(max_size=20) | st.sampled_from(["A", "E", "", "0_0", "-1", "1e309", "evidence", "basis",
                                                    "\ud800", "a\x00b", "../x", "/", "sub/y"]),
        lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
        max_leaves=12)
    base = seed(fmt)

    @st.composite
    def structural(draw):
        """Parse, change one to three values/keys, serialise again."""
        if fmt in ("race", "embrace"):
            docs = [json.loads(line) for line in base.decode().splitlines() if line.strip()]
        elif fmt in ("expmrc", "dream"):
            docs = [json.loads(base)]
        else:
            return draw(textual())
        docs = copy.deepcopy(docs)
        for _ in range(draw(st.integers(1, 3))):
            i = draw(st.integers(0, len(docs) - 1))
            paths = list(_paths(docs[i]))
            path = draw(st.sampled_from(paths))
            action = draw(st.sampled_from(["replace", "replace", "delete", "duplicate", "retype"]))
            if action == "replace" or not path:
                docs[i] = _set(docs[i], path, draw(json_values))
            elif action == "delete":
                docs[i] = _delete(docs[i], path)
            elif action == "duplicate":
                docs.append(copy.deepcopy(docs[i]))
            else:  # the same value as another JSON type
                node = docs[i]
                for k in path:
                    node = node[k]
                retyped = {str: lambda v: [v], int: str, list: lambda v: {"0": v}, dict: lambda v: list(v.values())}
                docs[i] = _set(docs[i], path, retyped.get(type(node), lambda v: None)(node))
        if fmt in ("race", "embrace"):
            return "".join(json.dumps(d, ensure_ascii=draw(st.booleans())) + "\n"
                           for d in docs).encode("utf-8", errors="surrogatepass")
        return json.dumps(docs[0]).encode("utf-8", errors="surrogatepass")

    @st.composite
    def textual(draw):
        """Edit the text where the format's structure is: tags, attributes, separators."""
        text = base.decode()
        marks = {"quail": ['<', '>', '"', "</", "correct=", "True", "id=", "<a", "<q", "&", "]]>"],
                 "cosmosqa": [",", '"', "\n", "\r", "label", "answer", "0", "3"]}.get(fmt, ['"', ":", ",", "[", "{"])
        for _ in range(draw(st.integers(1, 4))):
            pos = draw(st.integers(0, len(text)))
            op = draw(st.sampled_from(["insert", "delete", "replace"]))
            piece = draw(st.sampled_from(marks) | st.text(max_size=6))
            n = draw(st.integers(1, 40))
            if op == "insert":
                text = text[:pos] + piece + text[pos:]
            elif op == "delete":
                text = text[:pos] + text[pos + n:]
            else:
                text = text[:pos] + piece + text[pos + n:]
        return text.encode("utf-8", errors="surrogatepass")

    @st.composite
    def byte_level(draw):
        data = bytearray(base)
        op = draw(st.sampled_from(["truncate", "flip", "splice", "bom", "nul"]))
        pos = draw(st.integers(0, len(data)))
        if op == "truncate":
            return bytes(data[:pos])
        if op == "flip":
            for _ in range(draw(st.integers(1, 8))):
                i = draw(st.integers(0, len(data) - 1))
                data[i] = draw(st.integers(0, 255))
            return bytes(data)
        if op == "splice":
            other = draw(st.integers(0, len(data)))
            return bytes(data[:pos] + data[other:])
        if op == "bom":
            return b"\xef\xbb\xbf" + bytes(data)
        return bytes(data[:pos]) + b"\x00" + bytes(data[pos:])

    @st.composite
    def hostile(draw):
        """What JSON (or XML, CSV) allows and the product cannot keep, put where a value is:
        lone surrogate escapes, NUL characters, deep nesting, non-finite numbers, duplicate keys."""
        text = base.decode()
        if fmt == "quail":
            pieces = ["&#xD800;", "&#0;", "\x00", "<a>" * 300 + "</a>" * 300, '" id="twice', "\ud800"]
        elif fmt == "cosmosqa":
            pieces = ["\x00", "\ud800", '"a\x00b"', "\x01"]
        else:
            pieces = ['\\ud800', '\\udfff', '\\u0000', '\\ud83d\\ude00', "\x00"]
        kind = draw(st.sampled_from(["string", "string", "nesting", "number", "duplicate"]))
        if fmt in ("quail", "cosmosqa") or kind == "string":
            # inside a string literal (after an opening quote) or anywhere for XML/CSV
            quotes = [i for i, ch in enumerate(text) if ch == '"'] or [0]
            pos = draw(st.sampled_from(quotes)) + 1 if fmt not in ("quail", "cosmosqa") else \
                draw(st.integers(0, len(text)))
            piece = draw(st.sampled_from(pieces))
            return (text[:pos] + piece + text[pos:]).encode("utf-8", errors="surrogatepass")
        opens = [i for i, ch in enumerate(text) if ch == "{"] or [0]
        pos = draw(st.sampled_from(opens)) + 1
        if kind == "nesting":
            depth = draw(st.integers(60, 900))
            piece = '"deep": ' + "[" * depth + "]" * depth + ", "
        elif kind == "number":
            piece = '"n": ' + draw(st.sampled_from(["1e999", "-1e400", "NaN", "Infinity", "1" * 5000])) + ", "
        else:  # a key the object already has (or "id"), given twice
            m = re.match(r'\s*"((?:[^"\\\\]|\\\\.)*)"', text[pos:])
            key = m.group(1) if m else "id"
            piece = f'"{key}": ' + draw(st.sampled_from(['"other"', "0", "null", "[]", "{}"])) + ", "
        return (text[:pos] + piece + text[pos:]).encode("utf-8", errors="surrogatepass")

    return st.one_of(structural(), textual(), byte_level(), hostile())


# ---------------------------------------------------------------- annotate

ANNOTATE_FIELDS = ("comment", "comments", "note", "answerability", "status", "difficulty.toi", "difficulty.tom",
                   "difficulty.pod", "difficulty.x", "text_format", "unit_type", "multiple_texts", "span.add",
                   "problem.add", "span.update", "span.remove", "problem.remove")


def annotate_strategy():
    """Lines for `mcqlens annotate`: plausible edits whose values are often hostile."""
    from hypothesis import strategies as st

    hostile_text = st.sampled_from(["\ud800", "a\x00b", "\udfff\ud800", "x" * 10, "", "\x00"])
    value = st.recursive(
        st.none() | st.booleans() | st.integers(-5, 10**20) | st.floats() | st.text(max_size=10) | hostile_text
        | st.sampled_from(["cause", "lm_lm", "inference", "continuous", "vocabulary", "evidence", "basis",
                           "spelling_errors", "question", "bogus"]),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
            st.sampled_from(["role", "start", "end", "alternative", "type", "element", "note", "extra", "origin",
                             "id", "\ud800"]), inner, max_size=6),
        max_leaves=10)

    @st.composite
    def line(draw):
        obj = {"item": draw(st.sampled_from(["5_0", "0_0", "missing", "\ud800"])),
               "field": draw(st.sampled_from(ANNOTATE_FIELDS)), "value": draw(value)}
        if draw(st.booleans()):
            depth = draw(st.integers(1, 120))
            deep: list = []
            for _ in range(depth):
                deep = [deep]
            obj["value"] = {"role": "evidence", "start": 0, "end": 1, "extra": {"x": deep}}
        text = json.dumps(obj, ensure_ascii=draw(st.booleans()), allow_nan=True)
        edit = draw(st.sampled_from(["none", "none", "dup", "inf", "bytes"]))
        if edit == "dup":
            text = text.replace('"value":', '"value": 1, "value":', 1)
        elif edit == "inf":
            text = text.replace('"value": ', '"value": 1e999, "x": ', 1)
        data = text.encode("utf-8", errors="surrogatepass")
        if edit == "bytes":
            data = data[:5] + bytes([draw(st.integers(128, 255))]) + data[5:]
        return data

    return line()


def check_annotate(line: bytes, workdir: Path) -> None:
    """One line through `annotate`: an `ok` or an error line, never a crash; and whatever was
    accepted, the exports write and read back."""
    from desktop.commands import annotate
    from desktop.domain.changes import Change
    from desktop.domain.errors import McqLensError
    from desktop.store import Store

    path = workdir / "seed.jsonl"
    if not path.exists():
        path.write_bytes(seed("embrace"))
    with Store.memory(annotator="fuzz") as store:
        from desktop import formats
        store.import_datasets(formats.read(path, "embrace"), file=str(path))
        try:
            answer = annotate._one(store, line, Change)
        except McqLensError:
            return
        except Exception as exc:
            raise Failure(f"annotate: {type(exc).__name__}: {exc}", line, traceback.format_exc()) from exc
        assert answer.startswith("ok")
        try:
            export_and_read_back(store, workdir)
        except Exception as exc:
            raise Failure(f"annotate accepted {line!r} but export failed: {type(exc).__name__}: {exc}", line,
                          traceback.format_exc()) from exc


# ---------------------------------------------------------------- the property

def import_like_the_cli(path: Path, fmt: str) -> None:
    """What `mcqlens import PATH --format FMT` does (read, then store), into an in-memory store."""
    from desktop import formats
    from desktop.store import Store

    # formats.read itself, not the command's safety net: a reader must raise InputError on its own
    datasets = formats.read(path, fmt)
    with Store.memory(annotator="fuzz") as store:
        store.import_datasets(datasets, file=str(path))
        export_and_read_back(store, path.parent)


def export_and_read_back(store, workdir: Path) -> None:
    """Whatever the store accepted, every writer writes and our own importer reads back."""
    from desktop import formats
    from desktop.domain.errors import McqLensError

    stored = store.load_datasets()
    if not any(d.passages for d in stored):
        return
    for kind, name in (("race", "back.jsonl"), ("race", "back_folder"), ("embrace", "back_e.jsonl"),
                       ("expmrc", "back_x.json")):
        sources = {"embrace": ["embrace"], "expmrc": ["expmrc"]}.get(kind)
        chosen = [d for d in stored if sources is None or d.source in sources]
        if not chosen:
            continue
        target = workdir / name
        if target.is_dir():
            import shutil
            shutil.rmtree(target)
        formats.write(kind, chosen, target)
        try:
            formats.read(target, kind)
        except McqLensError as exc:
            raise AssertionError(f"{kind} export of accepted data does not import again: {exc}") from exc


class Failure(Exception):
    def __init__(self, message: str, data: bytes, details: str):
        super().__init__(message)
        self.data, self.details = data, details


def save_failure(exc: Failure, fmt: str, save: Path) -> Path:
    name = f"{fmt}__fuzz_{hashlib.sha256(exc.data).hexdigest()[:10]}{SUFFIX[fmt]}"
    save.mkdir(parents=True, exist_ok=True)
    (save / name).write_bytes(exc.data)
    (save / (name + ".traceback.txt")).write_text(exc.details, encoding="utf-8")
    return save / name


def _failure_in(exc: BaseException) -> Failure | None:
    """The Failure inside what hypothesis raised (itself, or wrapped when flaky)."""
    if isinstance(exc, Failure):
        return exc
    for inner in list(getattr(exc, "exceptions", ())) + [exc.__cause__, exc.__context__]:
        if inner is not None and inner is not exc:
            found = _failure_in(inner)
            if found is not None:
                return found
    return None


class _Hang(BaseException):
    """Raised by the alarm; a BaseException so that no reader's `except` swallows it."""


def _alarm(signum, frame):
    raise _Hang()


HANG_SECONDS = 10.0


def check(data: bytes, fmt: str, workdir: Path) -> None:
    import signal

    from desktop.domain.errors import McqLensError

    path = workdir / f"fuzz{SUFFIX[fmt]}"
    path.write_bytes(data)
    for mode in (fmt, "auto"):
        signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
        try:
            import_like_the_cli(path, mode)
        except _Hang:
            raise Failure(f"{mode}: no answer within {HANG_SECONDS:g} s", data,
                          f"format given: {mode}\n" + traceback.format_exc()) from None
        except McqLensError as exc:
            if not str(exc).startswith(str(path)) and "database" not in str(exc) and "item" not in str(exc):
                raise Failure(f"{mode}: message does not name the file: {exc}", data,
                              f"format given: {mode}\n{exc}") from exc
        except Exception as exc:
            raise Failure(f"{mode}: {type(exc).__name__}: {exc}", data,
                          f"format given: {mode}\n" + traceback.format_exc()) from exc
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)


def fuzz(fmt: str, seconds: float, save: Path) -> tuple[int, list[str]]:
    """Run hypothesis rounds until `seconds` are spent; returns (examples, failures)."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings

    failures: list[str] = []
    count = 0
    strategy = annotate_strategy() if fmt == "annotate" else strategies(fmt)
    stop = time.monotonic() + seconds
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)

        @settings(max_examples=100, deadline=None, database=None, derandomize=False, verbosity=Verbosity.quiet,
                  report_multiple_bugs=False, print_blob=False,
                  phases=[Phase.generate, Phase.shrink], suppress_health_check=list(HealthCheck))
        @given(strategy)
        def round_(data):
            nonlocal count
            if time.monotonic() > stop:
                return
            count += 1
            if fmt == "annotate":
                check_annotate(data, workdir)
            else:
                check(data, fmt, workdir)

        while time.monotonic() < stop:
            try:
                round_()
            except Exception as exc:  # hypothesis re-raises the shrunk example's failure
                found = _failure_in(exc)
                if found is None:
                    raise
                failures.append(f"{found} (input saved as {save_failure(found, fmt, save)})")
                if len(failures) >= 5:
                    break
    return count, failures


def main(argv: list[str] | None = None) -> int:
    global HANG_SECONDS
    parser = argparse.ArgumentParser(prog="python -m fuzz.importers", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=120, help="time per importer (default 120)")
    parser.add_argument("--format", choices=IMPORTERS + ("annotate",), action="append",
                        help="only this importer, or `annotate` (repeatable)")
    parser.add_argument("--hang", type=float, default=HANG_SECONDS,
                        help="seconds one input may take before it counts as a hang (default 10)")
    parser.add_argument("--save", type=Path, default=ROOT / "fuzz" / "failures",
                        help="where failing inputs go (default fuzz/failures)")
    args = parser.parse_args(argv)
    HANG_SECONDS = args.hang
    total_failures = 0
    for fmt in args.format or IMPORTERS + ("annotate",):
        t = time.monotonic()
        n, failures = fuzz(fmt, args.seconds, args.save)
        print(f"{fmt}: {n} inputs in {time.monotonic() - t:.0f} s, {len(failures)} failure(s)", flush=True)
        for f in failures:
            print(f"  {f}", flush=True)
        total_failures += len(failures)
    return 1 if total_failures else 0


if __name__ == "__main__":
    sys.exit(main())
