"""Safe reading and validation shared by the format modules.

Every reader goes through these helpers so that a malformed file always fails the
same way: an `InputError` naming the file, the record (line or id) and the field,
raised before any domain object leaves the reader (never a partial dataset).
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import threading
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Iterator

from desktop.domain import values
from desktop.domain.errors import InputError
from desktop.domain.model import LETTERS

from . import atomic

# Files are read whole; this bounds memory for a user who points us at the wrong file.
MAX_BYTES = 200 * 1024 * 1024

# Set by `formats.read(progress=...)` for the reading thread only: an object with
# `file(path)` (a file is about to be read) and `record(n, total)` (JSON-lines records).
READING: ContextVar = ContextVar("READING", default=None)
MIN_ALTERNATIVES, MAX_ALTERNATIVES = 2, 5


# Set by `formats.read` around each file: {path: sha256 of the bytes read}, so that the
# "already imported" fingerprint is of what was read, not of the file as it is later.
DIGESTS: ContextVar = ContextVar("DIGESTS", default=None)


def _size_checked(p: Path) -> int:
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise InputError(str(p), None, None, f"cannot read the file ({exc.strerror or exc})") from None
    if size > MAX_BYTES:
        raise InputError(str(p), None, None,
                         f"file is {size / 2**20:.0f} MB, above the {MAX_BYTES // 2**20} MB limit")
    return size


def _digest(p: Path, sha: str) -> None:
    digests = DIGESTS.get()
    if digests is None:
        return
    old = digests.setdefault(str(p), sha)
    if old != sha:  # read twice (layout sniffing) and the bytes differ: replaced while we read it
        raise InputError(str(p), None, None, "the file changed while it was being read; nothing was imported")


def read_bytes(path: str | os.PathLike) -> bytes:
    """The file's bytes, refusing huge or empty files; the sha256 of exactly these bytes is noted."""
    p = Path(path)
    if READING.get() is not None:
        READING.get().file(p)
    size = _size_checked(p)
    try:
        with open(p, "rb") as fh:
            # read(n) allocates n bytes up front: ask for the size stat gave (and one more, to see growth)
            chunks = [fh.read(size + 1)]
            total = len(chunks[0])
            while total > size:  # it grew since stat: read on, in small pieces, up to the cap
                more = fh.read(1 << 20)
                if not more:
                    break
                chunks.append(more)
                total += len(more)
                if total > MAX_BYTES:
                    raise InputError(str(p), None, None, f"file is above the {MAX_BYTES // 2**20} MB limit")
    except OSError as exc:
        raise InputError(str(p), None, None, f"cannot read the file ({exc.strerror or exc})") from None
    data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    if not data.strip():
        raise InputError(str(p), None, None, "the file is empty")
    _digest(p, hashlib.sha256(data).hexdigest())
    return data


def read_text(path: str | os.PathLike) -> str:
    """The file's text as UTF-8 (a BOM is tolerated), refusing huge, empty or undecodable files."""
    p = Path(path)
    data = read_bytes(p)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(str(p), f"line {line}", None,
                         f"invalid UTF-8 at byte {exc.start} (the file must be UTF-8 encoded)") from None


def _parse_constant(name: str):
    # NaN/Infinity are not JSON; Python would accept them silently.
    raise ValueError(f"{name} is not valid JSON")


class DuplicateKey(ValueError):
    def __init__(self, key: str):
        super().__init__(f"duplicate key {key!r}")
        self.key = key


def _pairs(pairs: list) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):  # the first value would be silently lost
        seen = set()
        for k, _ in pairs:
            if k in seen:
                raise DuplicateKey(k)
            seen.add(k)
    return out


_FLOATS = threading.local()


def _parse_float(text: str) -> float:
    value = float(text)
    if value in (math.inf, -math.inf):  # 1e999: `values.problem` then names the field
        _FLOATS.nonfinite = True
    return value


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_float=_parse_float, parse_constant=_parse_constant)
# A lone surrogate can only come from an escape (the text itself was valid UTF-8)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def strict_loads(text: str) -> Any:
    """json.loads that refuses what JSON allows but the product cannot keep: duplicate keys,
    non-finite numbers, lone surrogates, values nested deeper than `values.MAX_DEPTH`.
    Raises ValueError (json.JSONDecodeError for syntax; DuplicateKey; ValueError(path, message))."""
    _FLOATS.nonfinite = False
    obj = _DECODER.decode(text)
    # the walk only where something can be wrong: it costs more than the parse itself
    if (_FLOATS.nonfinite or text.count("[") + text.count("{") > values.MAX_DEPTH
            or ("\\u" in text and _SURROGATE_ESCAPE.search(text))):
        bad = values.problem(obj)
        if bad is not None:
            raise BadValue(*bad)
    return obj


class BadValue(ValueError):
    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}" if path else message)
        self.path, self.message = path, message


def loads(text: str, file: str, record: str | None = None) -> Any:
    try:
        return strict_loads(text)
    except json.JSONDecodeError as exc:
        where = record or f"line {exc.lineno}"
        hint = " (truncated file?)" if exc.pos >= len(text.rstrip()) else ""
        raise InputError(file, where, None,
                         f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}{hint}") from None
    except DuplicateKey as exc:
        raise InputError(file, record, exc.key,
                         "duplicate key in one object (JSON readers keep only one of the values)") from None
    except BadValue as exc:
        raise InputError(file, record, exc.path or None, exc.message) from None
    except RecursionError:
        raise InputError(file, record, None, f"invalid JSON: nested more than {values.MAX_DEPTH} levels deep") from None
    except ValueError as exc:
        raise InputError(file, record, None, f"invalid JSON: {exc}") from None


def load_json(path: str | os.PathLike) -> Any:
    return loads(read_text(path), str(path))


def iter_jsonl(path: str | os.PathLike, style: dict | None = None) -> Iterator[tuple[int, Any]]:
    """(line number, object) for each non-blank line; every line must be a JSON object.

    Streams: one line at a time is held as text, so a large file costs its records,
    not its text twice over; the sha256 of the bytes read is noted at the end.
    `style`, if given, is filled with the file's `json_style` (from its first record, with
    ASCII escapes and the final newline judged on every line)."""
    p = Path(path)
    file = str(p)
    reading = READING.get()
    if reading is not None:
        reading.file(p)
    size = _size_checked(p)
    h = hashlib.sha256()
    read = 0
    content = False
    ascii_only, escapes, last = True, False, b""
    try:
        fh = open(p, "rb")
    except OSError as exc:
        raise InputError(file, None, None, f"cannot read the file ({exc.strerror or exc})") from None
    with fh:
        for n, raw in enumerate(fh, 1):
            h.update(raw)
            read += len(raw)
            last = raw
            if read > MAX_BYTES:
                raise InputError(file, None, None, f"file is above the {MAX_BYTES // 2**20} MB limit")
            try:
                line = raw.decode("utf-8-sig" if n == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(file, f"line {n}", None,
                                 f"invalid UTF-8 at byte {read - len(raw) + exc.start} "
                                 "(the file must be UTF-8 encoded)") from None
            if not line.strip():
                continue
            if style is not None:
                if not content:
                    style.update(json_style(line.rstrip("\n")))
                if ascii_only and not line.isascii():
                    ascii_only = False
                escapes = escapes or (ascii_only and has_escapes(line))
            content = True
            if reading is not None:
                reading.record(read, max(size, read))
            obj = loads(line, file, f"line {n}")
            if not isinstance(obj, dict):
                raise InputError(file, f"line {n}", None, f"expected a JSON object, found {type_name(obj)}")
            yield n, obj
    if not content:
        raise InputError(file, None, None, "the file is empty")
    if style is not None:
        style["ensure_ascii"] = ascii_only and escapes
        style["final_newline"] = last.endswith(b"\n")
    _digest(p, h.hexdigest())


def type_name(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false",
            int: "a number", float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


_KINDS = {
    "object": (dict,), "list": (list,), "string": (str,), "integer": (int,),
    "number": (int, float), "string or number": (str, int),
}


def check_type(value: Any, kind: str, file: str, record: Any, field: str, nullable: bool = False) -> Any:
    if value is None and nullable:
        return value
    ok = isinstance(value, _KINDS[kind]) and not (isinstance(value, bool) and kind != "bool")
    if not ok:
        raise InputError(file, record, field, f"expected {kind}, found {type_name(value)}")
    return value


def check_id(value: Any, file: str, record: Any, field: str = "id") -> str:
    """An id read from a file (string or number) as text; refused when it holds control
    characters (NUL, newline...): an id is shown, typed, and becomes a file name."""
    check_type(value, "string or number", file, record, field)
    bad = values.id_problem(str(value))
    if bad:
        raise InputError(file, record, field, bad)
    return str(value)


def get(obj: dict, key: str, kind: str, file: str, record: Any, prefix: str = "",
        nullable: bool = False) -> Any:
    """obj[key], checked for presence and type."""
    field = f"{prefix}{key}"
    if key not in obj:
        raise InputError(file, record, field, "missing key")
    return check_type(obj[key], kind, file, record, field, nullable)


def check_alternatives(alts: Any, file: str, record: Any, field: str) -> list[str]:
    if type(alts) is list and MIN_ALTERNATIVES <= len(alts) <= MAX_ALTERNATIVES and all(type(a) is str for a in alts):
        return alts  # a good list, as JSON gives it: no field name is built for each alternative
    check_type(alts, "list", file, record, field)
    if not MIN_ALTERNATIVES <= len(alts) <= MAX_ALTERNATIVES:
        raise InputError(file, record, field,
                         f"{len(alts)} alternatives; between {MIN_ALTERNATIVES} and {MAX_ALTERNATIVES} are needed")
    for i, a in enumerate(alts):
        check_type(a, "string", file, record, f"{field}[{i}]")
    return alts


def key_from_letter(value: Any, n_alternatives: int, file: str, record: Any, field: str) -> int:
    check_type(value, "string", file, record, field)
    letter = value.strip().upper()
    if len(letter) != 1 or letter not in LETTERS:
        raise InputError(file, record, field, f"answer {value!r} is not a letter A-{LETTERS[n_alternatives - 1]}")
    index = LETTERS.index(letter)
    if index >= n_alternatives:
        raise InputError(file, record, field,
                         f"answer {value!r} is out of range: only {n_alternatives} alternatives "
                         f"(A-{LETTERS[n_alternatives - 1]})")
    return index


def index(value: Any, n: int, file: str, record: Any, field: str, what: str = "") -> int:
    """A key given as the index of an alternative (QuAIL, CosmosQA), checked by
    `values.index_in`: never int() on text that merely passes str.isdigit ("²")."""
    k = values.index_in(value, n)
    if k is None:
        raise InputError(file, record, field, f"{what}{value!r} is not an index 0-{n - 1}")
    return k


def check_span(text: str, start: Any, end: Any, file: str, record: Any, field: str) -> tuple[int, int]:
    check_type(start, "integer", file, record, f"{field}.start")
    check_type(end, "integer", file, record, f"{field}.end")
    if not 0 <= start <= end <= len(text):
        raise InputError(file, record, field,
                         f"offsets {start}..{end} are outside the passage (length {len(text)})")
    return start, end


def _fingerprint(content: Any) -> bytes:
    """A digest that is equal for equal records (key order aside): what `IdRegistry` keeps."""
    if isinstance(content, bytes):
        data = content
    else:
        data = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                          default=repr).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=16).digest()


class IdRegistry:
    """Duplicate ids are fine when the records are equal and an error otherwise.

    Keeps a 16-byte digest of each record, not the record: a registry that held the
    records held the whole file (a 1.8-million-question RACE file: gigabytes)."""

    def __init__(self, file: str, what: str):
        self.file, self.what, self.seen = file, what, {}

    def add(self, ident: Any, content: Any, record: Any, field: str = "id") -> bool:
        """True when new, False for an exact duplicate (to be skipped)."""
        key = str(ident)
        digest = _fingerprint(content)
        if key not in self.seen:
            self.seen[key] = (digest, record)
            return True
        if self.seen[key][0] == digest:
            return False
        raise InputError(self.file, record, field,
                         f"duplicate {self.what} id {key!r} with different content "
                         f"(first seen at {self.seen[key][1]})")


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write next to the target then rename, so a failed export never leaves half a file."""
    atomic.write_text(path, text)


def dumps_line(obj: Any, style: dict | None = None) -> str:
    """One JSON value in the file's own style (`json_style`), so an unedited export is byte-identical."""
    style = style or {}
    indent = style.get("indent")
    item, key = style.get("separators") or ((",", ": ") if indent is not None else (", ", ": "))
    return json.dumps(obj, ensure_ascii=bool(style.get("ensure_ascii", False)), indent=indent,
                      separators=(item, key))


_STYLE_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[,:]\s*|[^",:]+')


def json_style(text: str) -> dict:
    """How a JSON file was written (from its first 64 KB): indent, separators, ASCII escapes,
    final newline; what `dumps_line` needs to write the same bytes for the same values."""
    head = text[:65536]
    stripped = head.lstrip()
    indent = None
    if stripped[:1] in "{[" and stripped[1:2] == "\n":
        second = stripped[2:].split("\n", 1)[0]
        indent = len(second) - len(second.lstrip(" "))
        if indent == 0:
            indent = None
    item = key = None
    for m in _STYLE_TOKEN.finditer(head):
        tok = m.group()
        if tok[0] == ":" and key is None:
            key = ": " if tok[1:2] == " " else ":"
        elif tok[0] == "," and item is None:
            item = ", " if tok[1:2] == " " and indent is None else ","
        if item is not None and key is not None:
            break
    return {"indent": indent,
            "separators": [item or (", " if indent is None else ","), key or ": "],
            "ensure_ascii": text.isascii() and has_escapes(text),
            "final_newline": text.endswith("\n")}


_NON_ASCII_ESCAPE = re.compile(r"\\u(?:00[89a-fA-F]|0[1-9a-fA-F]|[1-9a-fA-F])")


def has_escapes(text: str) -> bool:
    """Whether the text writes a non-ASCII character as a \\uXXXX escape (json.dumps' default)."""
    return _NON_ASCII_ESCAPE.search(text) is not None
