"""Which format a file (or folder) is in: by its extension and the JSON structure of its first
bytes (the keys of the first record), never by string values."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

from desktop.domain.errors import InputError

from . import safe_read
from .folders import EXTENSIONS, walk

_SNIFF_BYTES = 64 * 1024


def detect(path: str | os.PathLike) -> str:
    """race | embrace | expmrc | expmrc-pred | dream | quail | cosmosqa, by extension and content.

    A folder is named after its first data file (`read` detects each file on its own)."""
    p = Path(path)
    if p.is_dir():
        files = walk(p)
        if not files:
            raise InputError(str(p), None, None, f"no data files ({', '.join(EXTENSIONS)}) in the folder")
        return detect(files[0])
    suffix = p.suffix.lower()
    if suffix == ".xml":
        return "quail"
    if suffix == ".csv":
        return "cosmosqa"
    try:
        with open(p, "rb") as fh:
            head = fh.read(_SNIFF_BYTES).decode("utf-8-sig", errors="replace")
    except OSError as exc:
        raise InputError(str(p), None, None, f"cannot read the file ({exc.strerror or exc})") from None
    if not head.strip():
        raise InputError(str(p), None, None, "the file is empty")
    first = head.lstrip()
    if first.startswith("{") and (suffix == ".jsonl" or "\n" in first.strip()):
        # JSON lines (or one object per line under another extension): the first record decides
        kind = _detect_first_line(p)
        if kind:
            return kind
    # Keys are read from the JSON structure of the head, never from string values: a RACE
    # option that says "test" or "mcq" does not make the file EMBRACE.
    shape = _Shape.of(head)
    kind = shape.kind()
    if kind:
        return kind
    if "context" in first.split("\n", 1)[0] and "answer0" in first.split("\n", 1)[0]:
        return "cosmosqa"
    raise InputError(str(p), None, None,
                     "cannot tell the format from the content; name it (race, embrace, expmrc, dream, quail, cosmosqa)")


def _kind_of_record(keys) -> str | None:
    keys = set(keys)
    if {"test", "text"} <= keys:
        return "embrace"
    if "context_id" in keys or "correct_answer_id" in keys:
        return "quail"
    if "article" in keys:
        return "race"
    return None


def _detect_first_line(p: Path) -> str | None:
    with open(p, "rb") as fh:
        line = fh.readline(safe_read.MAX_BYTES)
    try:
        rec = json.loads(line.decode("utf-8-sig"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return _kind_of_record(rec) if isinstance(rec, dict) else None


_COLON = re.compile(r"\s*(:?)")
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')


class _Shape:
    """The keys at the top of a JSON document, from its first bytes (which may end mid-way).

    top: "object" | "list"; keys: the top object's keys; first: the type of the top list's
    first element and that element's keys; data: the keys of the first object of "data"."""

    def __init__(self):
        self.top: str | None = None
        self.keys: list[str] = []
        self.first: str | None = None
        self.first_keys: list[str] = []
        self.data_keys: list[str] = []
        self.first_value: str | None = None  # the type of the top object's first value

    @classmethod
    def of(cls, head: str) -> "_Shape":
        shape = cls()
        stack: list[str] = []  # "{" or "[" per open container
        path: list = []  # per level: the current key (objects) or element index (lists)
        pending_key = None
        for m in _TOKEN.finditer(head):
            tok = m.group()
            if tok == ":":
                continue
            if tok in "{[":
                shape._enter(stack, path, tok)
                stack.append(tok)
                path.append(None if tok == "{" else 0)
                pending_key = None
                continue
            if tok in "}]":
                if not stack:
                    break
                stack.pop()
                path.pop()
                if not stack:
                    break
                continue
            if tok == ",":
                if stack and stack[-1] == "[":
                    path[-1] += 1
                    if len(stack) == 1:  # past the top list's first element: all that decides
                        break
                pending_key = None
                continue
            if stack and stack[-1] == "{" and pending_key is None and tok.startswith('"'):
                colon = _COLON.match(head, m.end())
                if colon.group(1) or colon.end() == len(head):
                    try:
                        key = json.loads(tok)
                    except ValueError:
                        key = tok.strip('"')
                    pending_key = key
                    path[-1] = key
                    shape._key(stack, path, key)
                    if len(stack) == 1 and _kind_of_record(shape.keys):
                        break  # a record's own keys decide (a RACE file: "article")
                    continue
            if not stack:
                shape.top = shape.top or "scalar"
            elif len(stack) == 1 and stack[0] == "{" and shape.first_value is None:
                shape.first_value = "scalar"
            elif len(stack) == 1 and stack[0] == "[" and path[0] == 0 and shape.first is None:
                shape.first = "scalar"
        return shape

    def _enter(self, stack, path, tok):
        kind = "object" if tok == "{" else "list"
        if not stack:
            self.top = self.top or kind
        elif len(stack) == 1 and stack[0] == "[" and path[0] == 0:
            self.first = self.first or kind
        elif len(stack) == 1 and stack[0] == "{" and self.first_value is None:
            self.first_value = kind

    def _key(self, stack, path, key):
        if len(stack) == 1:
            self.keys.append(key)
        elif len(stack) == 2 and stack[0] == "[" and path[0] == 0:
            self.first_keys.append(key)
        elif len(stack) == 3 and path[0] == "data" and stack[1] == "[" and path[1] == 0:
            self.data_keys.append(key)

    def kind(self) -> str | None:
        if self.top == "object":
            by_keys = _kind_of_record(self.keys)  # an ExpMRC document has no "article" of its own
            if by_keys:
                return by_keys
            if "data" in self.keys:
                return "expmrc"
            if self.keys and self.first_value == "object" and all(re.search(r"-[0-9]+$", k) for k in self.keys):
                return "expmrc-pred"
            return None
        if self.top == "list":
            if self.first == "list":
                return "dream"
            if self.first == "object":
                return _kind_of_record(self.first_keys)
        return None
