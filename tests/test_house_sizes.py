"""Issue 30's size rules over the whole product, not only the store: no module of desktop/,
inference/ or models/ over 400 lines, and no class over 40 methods, counting the methods a class
takes from its parts (`name = forward(Part, ...)` in desktop/store/store.py) as its own."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("desktop", "inference", "models")


def _modules():
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def _methods(cls: ast.ClassDef) -> int:
    defs = sum(isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef)) for b in cls.body)
    forwarded = sum(isinstance(b, ast.Assign) and isinstance(b.value, ast.Call)
                    and getattr(b.value.func, "id", "") == "forward" for b in cls.body)
    return defs + forwarded


def test_the_tree_is_read_by_ast():
    # the rules below mean something only if they saw the product's modules
    names = {p.relative_to(ROOT).as_posix() for p in _modules()}
    assert {"desktop/store/store.py", "desktop/ui/main_window.py", "inference/catalog.py"} <= names


def test_no_module_over_400_lines():
    long = {p.relative_to(ROOT).as_posix(): n for p in _modules()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400}
    assert long == {}


def test_no_class_over_40_methods():
    wide = {}
    for p in _modules():
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and _methods(node) > 40:
                wide[f"{p.relative_to(ROOT).as_posix()}:{node.name}"] = _methods(node)
    assert wide == {}
