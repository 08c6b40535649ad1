"""The store is parts, not mixins: each part an object with a small public surface in a module named
after what it does; no module of desktop/store over 400 lines, no class over 40 methods, no
private name imported from another module; `Store` keeps the interface its callers use."""
from __future__ import annotations

import ast
from pathlib import Path

from desktop.store import Store

STORE = Path(__file__).resolve().parents[1] / "desktop" / "store"


def _modules():
    return sorted(p for p in STORE.glob("*.py"))


def test_no_module_over_400_lines_no_class_over_40_methods_no_private_import():
    long = [p.name for p in _modules() if len(p.read_text(encoding="utf-8").splitlines()) > 400]
    assert long == []
    wide, private = [], []
    for p in _modules():
        tree = ast.parse(p.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                n = sum(isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef)) for b in node.body)
                if n > 40:
                    wide.append(f"{p.name}:{node.name} ({n})")
            if isinstance(node, ast.ImportFrom):
                private += [f"{p.name}: {a.name}" for a in node.names if a.name.startswith("_")
                            and a.name != "__future__" and node.module != "__future__"]
    assert wide == [] and private == []


def test_store_is_made_of_parts_and_keeps_its_interface():
    assert Store.__mro__ == (Store, object)  # no mixins
    s = Store.memory("anna")
    parts = {"reads": s.reads, "corpus": s.corpus, "edits": s.edits, "undoing": s.undoing, "audit": s.audit,
             "model_outputs": s.model_outputs, "importer": s.importer}
    for name, part in parts.items():
        public = [m for m in dir(type(part)) if not m.startswith("_")]
        assert len(public) <= 15, (name, public)
        for method in public:  # each part's method is the store's too, documented where it is written
            if hasattr(Store, method):
                assert getattr(Store, method).__doc__ == getattr(type(part), method).__doc__
    # undo reaches the audit trail through its public methods only (it once called `self._history_row`)
    assert not any(n in dir(Store) for n in ("_history", "_history_row", "_questions", "_restore"))
    s.close()
