"""What a newcomer meets in the first hour: clean errors, honest messages, outputs kept.

`mcqlens gui` with an unknown item or tab, or without a usable display, ends with one
`error:` line and exit status 2 (never Qt's abort); `--device cuda` without a GPU says
so on a line of its own; `expmrc predict -o` keeps an existing file unless --force and
never replaces anything but a regular file; a long prediction shows its progress;
`mcqlens --version`; `annotate` names the fields it knows.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from desktop.cli import main
from desktop.ui.kit import display

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / ".." / "shared" / "data"
GREEN = DATA / "embrace" / "embrace_green.jsonl"
DEV = DATA / "expmrc" / "expmrc-race-dev.json"
TINY = ROOT / "tests" / "data" / "tiny_model"
RUN = [sys.executable, "-c", "import sys; from desktop.cli import main; sys.exit(main())"]


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("db") / "green.db"
    assert main(["import", str(GREEN), "--db", str(path)]) == 0
    return path


def _env(tmp_path: Path, **extra) -> dict:
    env = dict(os.environ, MCQLENS_SETTINGS=str(tmp_path / "settings.ini"), MCQLENS_MODEL=str(TINY),
               XDG_CACHE_HOME=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))
    env.update(extra)
    return {k: v for k, v in env.items() if v is not None}


def _one_error_line(proc) -> str:
    lines = [line for line in proc.stderr.splitlines()
             if line.strip() and "propagateSizeHints" not in line]  # the offscreen plugin's own notice
    assert proc.returncode == 2, proc.stderr
    assert "terminate called" not in proc.stderr and "Traceback" not in proc.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0]


@pytest.mark.parametrize("args,expected", [
    (["--item", "no-such-item"], "no item 'no-such-item'"),
    (["--tab", "no-such-tab"], "no tab 'no-such-tab'; one of: difficulty, problems"),
])
def test_gui_with_an_unknown_item_or_tab_exits_2_with_one_line(db, tmp_path, args, expected):
    # the window (its model thread started) and the screenshot: both used to abort after the line
    for screenshot in ([], ["--screenshot", str(tmp_path / "shot.png")])[: 2 if args[0] == "--item" else 1]:
        proc = subprocess.run([*RUN, "gui", "--db", str(db), "--annotator", "kim", *args, *screenshot],
                              capture_output=True, text=True, timeout=120,
                              env=_env(tmp_path, QT_QPA_PLATFORM="offscreen"))
        assert expected in _one_error_line(proc)
        assert not (tmp_path / "shot.png").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Qt's xcb plugin is Linux's")
def test_gui_without_a_display_says_so_in_one_line(db, tmp_path):
    env = _env(tmp_path, QT_QPA_PLATFORM=None, DISPLAY=None, WAYLAND_DISPLAY=None)
    proc = subprocess.run([*RUN, "gui", "--db", str(db), "--annotator", "kim"], capture_output=True, text=True,
                          timeout=120, env=env)
    line = _one_error_line(proc)
    assert "cannot open the window: no display (DISPLAY is not set)" in line and "xvfb-run" in line
    for soname in display.missing_libraries():  # and what is missing besides, with its package
        assert soname in line and display.package_of(soname) in line


@pytest.mark.skipif(shutil.which("ldd") is None or display.xcb_plugin() is None, reason="needs ldd and PySide6")
def test_the_missing_libraries_are_those_ldd_cannot_find():
    out = subprocess.run(["ldd", str(display.xcb_plugin())], capture_output=True, text=True, timeout=60).stdout
    not_found = {line.split()[0] for line in out.splitlines() if "not found" in line}
    found = display.missing_libraries()
    assert set(found) == not_found, (found, not_found)


@pytest.mark.skipif(shutil.which("dpkg") is None or shutil.which("ldconfig") is None, reason="Debian/Ubuntu only")
def test_the_package_names_are_the_packages_that_ship_the_libraries():
    """For each library of the table present here, dpkg names the package README.md lists."""
    cache = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, timeout=60).stdout
    paths = {}
    for line in cache.splitlines():
        parts = line.split()
        if parts and parts[0] in display.XCB_LIBRARIES and parts[0] not in paths:
            paths[parts[0]] = os.path.realpath(parts[-1])
    assert paths
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    # one dpkg call; a path dpkg does not know (merged /usr, not from a package) is left out
    out = subprocess.run(["dpkg", "-S", *paths.values()], capture_output=True, text=True, timeout=60).stdout
    owners = {line.rsplit(": ", 1)[1]: line.split(":")[0] for line in out.splitlines() if ": " in line}
    assert owners
    for soname, path in paths.items():
        if path in owners:
            assert owners[path] == display.XCB_LIBRARIES[soname], (soname, owners[path])
    for package in display.XCB_LIBRARIES.values():
        assert f" {package}" in readme, f"README.md does not list {package}"


def test_a_display_that_does_not_answer_is_found_before_qt_aborts():
    if "libxcb.so.1" in display.missing_libraries():
        pytest.skip("libxcb is not installed")
    assert display._x_server_answers(":97") is False


def _subset(tmp_path: Path, n: int = 2) -> Path:
    data = json.loads(DEV.read_text(encoding="utf-8"))
    path = tmp_path / "subset.json"
    path.write_text(json.dumps({"version": data.get("version"), "data": data["data"][:n]}))
    return path


def test_expmrc_predict_keeps_an_existing_output_unless_forced(tmp_path, capsys):
    sub = _subset(tmp_path, 1)
    out = tmp_path / "pred.json"
    out.write_text("mine")
    args = ["expmrc", "predict", str(sub), "-o", str(out), "--model", str(TINY), "--device", "cpu", "--no-progress"]
    assert main(args) == 2
    assert "exists; add --force" in capsys.readouterr().err and out.read_text() == "mine"
    assert main([*args, "--force"]) == 0
    preds = json.loads(out.read_text())
    assert len(preds) == sum(len(p["questions"]) for p in json.loads(sub.read_text())["data"])
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".pred.json")] == []  # no temporary left


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_expmrc_predict_never_replaces_what_is_not_a_regular_file(tmp_path):
    sub = _subset(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    target = tmp_path / "kept.json"
    target.write_text("kept")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    for out, kind in ((fifo, "pipe"), (folder, "folder"), (link, "symbolic link"), (Path("/dev/null"), "device")):
        proc = subprocess.run([*RUN, "expmrc", "predict", str(sub), "-o", str(out), "--model", str(TINY),
                               "--device", "cpu", "--force"], capture_output=True, text=True, timeout=60,
                              env=_env(tmp_path))
        line = _one_error_line(proc)
        assert kind in line and "not replaced" in line
    assert fifo.is_fifo() and folder.is_dir() and link.is_symlink() and target.read_text() == "kept"


def test_expmrc_predict_shows_its_progress_on_stderr(tmp_path, capsys, monkeypatch):
    """stderr is not a terminal here: a plain line every MCQLENS_PROGRESS_SECONDS (0: at every
    step, so this short run shows them), the last one once; a run shorter than the interval
    prints none (the default is 5 s)."""
    sub = _subset(tmp_path, 3)
    n = sum(len(p["questions"]) for p in json.loads(sub.read_text())["data"])
    argv = ["expmrc", "predict", str(sub), "-o", str(tmp_path / "p.json"), "--model", str(TINY), "--device", "cpu",
            "--force"]
    monkeypatch.setenv("MCQLENS_PROGRESS_SECONDS", "0")
    assert main(argv) == 0
    captured = capsys.readouterr()
    steps = [line for line in captured.err.splitlines() if line.startswith("scoring: ")]
    assert steps and steps[-1] == f"scoring: {n}/{n} questions", captured.err
    done = [int(line.split()[1].split("/")[0]) for line in steps]
    assert len(steps) >= 2 and done == sorted(set(done)), steps  # growing, the last line once
    assert captured.out == ""
    monkeypatch.setenv("MCQLENS_PROGRESS_SECONDS", "600")
    assert main(argv) == 0
    assert not [line for line in capsys.readouterr().err.splitlines() if line.startswith("scoring: ")]


@pytest.mark.skipif("CUDAExecutionProvider" in __import__("onnxruntime").get_available_providers(),
                    reason="this machine has ONNX Runtime's CUDA provider")
def test_device_cuda_without_a_gpu_says_so_on_its_own_line(tmp_path, capsys):
    sub = _subset(tmp_path, 1)
    assert main(["expmrc", "predict", str(sub), "-o", str(tmp_path / "p.json"), "--model", str(TINY),
                 "--device", "cuda", "--no-progress"]) == 0
    err = capsys.readouterr().err.splitlines()
    warnings = [line for line in err if line.startswith("warning: ")]
    assert len(warnings) == 1 and "CUDA was asked for" in warnings[0] and "using the CPU" in warnings[0]
    assert main(["expmrc", "predict", str(sub), "-o", str(tmp_path / "q.json"), "--model", str(TINY),
                 "--device", "cpu", "--no-progress"]) == 0
    assert not [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning: ")]


def test_version_is_the_package_version(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert capsys.readouterr().out.strip() == f"mcqlens {version}"


def test_annotate_names_the_fields_it_knows(db, tmp_path):
    from desktop.domain.changes import FIELDS
    from desktop.domain.difficulty import VARIABLES

    copy = tmp_path / "a.db"
    shutil.copy(db, copy)
    lines = [json.dumps({"item": "0_0", "field": "commnet", "value": "x"}),
             json.dumps({"item": "0_0", "field": "difficulty.tio", "value": "x"})]
    proc = subprocess.run([*RUN, "annotate", "--db", str(copy)], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, timeout=60, env=_env(tmp_path))
    answers = proc.stdout.splitlines()
    assert proc.returncode == 1 and len(answers) == 2
    for answer, field in zip(answers, ("commnet", "difficulty.tio")):
        assert answer.startswith(f"error: line {answers.index(answer) + 1}: item 0_0, field {field}: unknown field")
        for name in FIELDS:
            assert name in answer
        assert "difficulty.<" + "|".join(VARIABLES) + ">" in answer
