"""What pyproject.toml declares, the README's commands and .ci/run agree with what the code needs.

* every third-party module the tests import (``import``, ``from``, ``pytest.importorskip``)
  comes from a distribution declared in the dependencies or the ``test`` extra;
* the README's set-up command installs no test tools and no torch (a user who opens the
  window needs neither), its test command installs the ``test`` extra, and ``.ci/run``
  runs exactly that command;
* torch is pinned to one version in every extra that lists it.
"""
import ast
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
OWN = {"desktop", "inference", "models", "tests", "fuzz", "benchmarks", "conftest"}
# Helper modules beside the tests (tests/race_copies.py …): pytest puts tests/ on the path.
OWN |= {path.stem for path in (ROOT / "tests").glob("*.py")}


def _name(requirement: str) -> str:
    """The normalized distribution name of a requirement ('PySide6-Essentials>=6.6' → 'pyside6-essentials')."""
    name = re.match(r"[A-Za-z0-9._-]+", requirement.strip()).group(0)
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared(*extras: str) -> set[str]:
    names = {_name(r) for r in PROJECT["dependencies"]}
    todo = list(extras)
    while todo:
        for r in PROJECT["optional-dependencies"][todo.pop()]:
            m = re.fullmatch(r"mcqlens\[([\w,]+)\]", r.strip())
            if m:  # an extra that includes another one of this project
                todo.extend(m.group(1).split(","))
            else:
                names.add(_name(r))
    return names


def _imported_modules(folder: Path) -> dict[str, str]:
    """{top-level module: first file importing it} for every .py file under folder."""
    found: dict[str, str] = {}
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr == "importorskip" and node.args and isinstance(node.args[0], ast.Constant)):
                names = [node.args[0].value]
            for name in names:
                found.setdefault(name.split(".")[0], str(path.relative_to(ROOT)))
    return found


def test_every_module_the_tests_import_is_declared():
    declared = _declared("test")
    distributions = metadata.packages_distributions()
    missing = []
    for module, where in sorted(_imported_modules(ROOT / "tests").items()):
        if module in sys.stdlib_module_names or module in OWN or module == "__future__":
            continue
        dists = {re.sub(r"[-_.]+", "-", d).lower() for d in distributions.get(module, [])}
        assert dists, f"{module} (imported by {where}) is not installed here: cannot check its distribution"
        if not dists & declared:
            missing.append(f"{module} ({where}; from {', '.join(sorted(dists))})")
    assert not missing, "imported by the tests but not declared in pyproject.toml: " + "; ".join(missing)


def _readme_command(heading: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split(f"## {heading}\n", 1)[1]
    return next(line.strip() for line in section.splitlines() if line.startswith("    "))


def test_readme_set_up_installs_the_window_only_and_ci_runs_the_readme_test_command():
    setup = _readme_command("Set up and run")
    assert re.match(r'pip install -e \.( |$)', setup), setup  # no extra: dependencies only
    base = _declared()
    assert not {"torch", "pytest", "pytest-qt", "hypothesis", "scikit-learn"} & base
    test = _readme_command("Run the tests")
    assert 'pip install -e ".[test]"' in test and test.endswith("pytest"), test
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    assert test in ci, f".ci/run does not run the README's test command {test!r}"


def test_torch_is_pinned_wherever_an_extra_needs_it():
    pins = {extra: r for extra, reqs in PROJECT["optional-dependencies"].items() for r in reqs
            if _name(r) == "torch"}
    assert pins and "torch" not in {_name(r) for r in PROJECT["dependencies"]}
    assert set(pins.values()) == {"torch==2.13.0"}, pins
    assert {"train", "test"} <= set(pins)
