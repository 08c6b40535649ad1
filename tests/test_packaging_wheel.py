"""Installed from a wheel, the product behaves as it does from the checkout.

The wheel is built from a copy of the files pyproject.toml packages (so no stale build/
folder of the checkout leaks in), installed into a fresh virtual environment that finds
its dependencies in the environment running the tests (nothing is downloaded), and run
from an empty folder without PYTHONPATH: the wheel's own files are imported, not the
checkout's (checked).

"The environment running the tests" is `sys.executable`'s: the venv the README's
`pip install -e ".[test]"` made.  `venv --system-site-packages` would not do: a venv made
from a venv's Python sees the BASE interpreter's site-packages, which on a fresh machine
lack tokenizers and the rest.  The running environment's site-packages folders are put
on the new venv's path by a `.pth` file instead, after its own site-packages (so the
wheel's files come first) and without running that environment's own `.pth` files (so
the checkout's editable install does not leak in).  The default model, whose weights are
ONNX external data files (`model.int8.onnx.data0`...) that the wheel must carry, then scores
two ExpMRC questions exactly as the checkout does (the MPNet reader takes one to two seconds
a question on two cores: two are enough to tell one set of weights from another).
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT / ".." / "shared" / "data" / "expmrc" / "expmrc-race-dev.json"

pytestmark = pytest.mark.slow

# Run by the installed package and by the checkout: what the default model says.
SCORE = r"""
import json, sys
import desktop, inference
from inference.catalog import DEFAULT as DEFAULT_MODEL
from desktop.formats import expmrc

ds = expmrc.read(sys.argv[1])
questions = [q for p in ds.passages for q in p.questions]
model = inference.load_model(DEFAULT_MODEL, device="cpu")
scores = inference.score(model, questions, {p.id: p for p in ds.passages}, ["standard", "shortcut"])
print(json.dumps({
    "desktop": desktop.__file__, "inference": inference.__file__, "model": str(DEFAULT_MODEL),
    "scores": {s.item_id: {f: v.probabilities for f, v in s.formats.items()} for s in scores},
}))
"""


def _dataset(tmp: Path) -> Path:
    """The first two questions of the first ExpMRC RACE+ dev passage."""
    data = json.loads(DEV.read_text(encoding="utf-8"))
    first = dict(data["data"][0])
    for key in ("questions", "options", "answers", "evidences"):
        if key in first:
            first[key] = first[key][:2]
    path = tmp / "items.json"
    path.write_text(json.dumps({"version": data.get("version"), "data": [first]}), encoding="utf-8")
    return path


def _clean_env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PYTHONNOUSERSITE"] = "1"
    return env


def _running_site_packages() -> list[str]:
    """The site-packages folders of the interpreter running the tests (its venv's, or the
    system's when the tests run without one)."""
    import site

    folders = [d for d in site.getsitepackages() if Path(d).is_dir()]
    assert folders, "the running interpreter has no site-packages folder"
    return folders


def test_the_wheel_carries_what_the_runtime_reads_and_scores_as_the_checkout(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for package in ("desktop", "inference", "models"):
        shutil.copytree(ROOT / package, src / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    env = _clean_env()
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path / "dist"), str(src)], check=True, cwd=tmp_path, env=env, timeout=300)
    wheel, = (tmp_path / "dist").glob("mcqlens-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, env=env, timeout=120)
    python = venv / "bin" / "python"
    installed = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    (installed / "_running_environment.pth").write_text("".join(f"{d}\n" for d in _running_site_packages()),
                                                         encoding="utf-8")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                    "--no-index", str(wheel)], check=True, cwd=tmp_path, env=env, timeout=300)
    # every file of the checkout's model directory is in the installed package
    def files(d: Path) -> list[str]:  # the default's files and its shortcut part's (shortcut/...)
        return sorted(p.relative_to(d).as_posix() for p in d.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    shipped = files(ROOT / "models" / "default")
    assert files(installed / "models" / "default") == shipped
    # the graph's weights are its external data files: without them the graph cannot load
    assert any(name.startswith("model.int8.onnx.data") for name in shipped)
    assert any(name.startswith("shortcut/model.int8.onnx.data") for name in shipped)
    for name in shipped:
        assert (installed / "models" / "default" / name).read_bytes() == (ROOT / "models" / "default" / name).read_bytes()

    run_dir = tmp_path / "elsewhere"
    run_dir.mkdir()
    items = _dataset(tmp_path)
    version = subprocess.run([str(venv / "bin" / "mcqlens"), "--version"], capture_output=True, text=True,
                             cwd=run_dir, env=env, timeout=60, check=True)
    assert version.stdout.strip() == "mcqlens 0.1.0"
    got = subprocess.run([str(python), "-c", SCORE, str(items)], capture_output=True, text=True, cwd=run_dir,
                         env={**env, "XDG_CACHE_HOME": str(tmp_path / "cache-wheel")}, timeout=300)
    assert got.returncode == 0, got.stderr[-2000:]
    wheel_run = json.loads(got.stdout)
    for key in ("desktop", "inference", "model"):
        assert Path(wheel_run[key]).resolve().is_relative_to(installed.resolve()), (key, wheel_run[key])

    here = subprocess.run([sys.executable, "-c", SCORE, str(items)], capture_output=True, text=True, cwd=ROOT,
                          env={**env, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(tmp_path / "cache-checkout")},
                          timeout=300)
    assert here.returncode == 0, here.stderr[-2000:]
    checkout = json.loads(here.stdout)
    assert Path(checkout["desktop"]).resolve().is_relative_to(ROOT.resolve())

    assert len(wheel_run["scores"]) == 2
    assert wheel_run["scores"] == checkout["scores"]
    for formats in wheel_run["scores"].values():
        assert set(formats) == {"standard", "shortcut"}
        assert all(abs(sum(p) - 1) < 1e-6 and len(p) == 4 for p in formats.values())
