"""Long commands without a count of their own (export, report, agreement) still say they are alive
on a stderr that is not a terminal (issue 24 §5): a line every MCQLENS_PROGRESS_SECONDS."""
from __future__ import annotations

import io
import time
from pathlib import Path

from desktop import cli
from desktop.commands import progress
from desktop.commands.progress import Heartbeat

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def test_a_heartbeat_writes_its_phase_every_interval_and_nothing_for_a_short_step(monkeypatch):
    monkeypatch.setenv("MCQLENS_PROGRESS_SECONDS", "0.05")
    out = io.StringIO()
    with Heartbeat("export", stream=out) as beat:
        beat.step("writing x.jsonl")
        time.sleep(0.3)
    lines = out.getvalue().splitlines()
    assert len(lines) >= 3 and all(l.startswith("export: writing x.jsonl (") for l in lines)
    monkeypatch.setenv("MCQLENS_PROGRESS_SECONDS", "5")
    quiet = io.StringIO()
    with Heartbeat("export", stream=quiet):
        time.sleep(0.05)
    assert quiet.getvalue() == ""


def test_export_report_and_agreement_beat_on_a_non_terminal_stderr(tmp_path, capsys, monkeypatch):
    db = tmp_path / "a.db"
    assert cli.main(["import", str(DATA / "embrace" / "embrace_yellow.jsonl"), "--db", str(db)]) == 0
    capsys.readouterr()
    monkeypatch.setenv("MCQLENS_PROGRESS_SECONDS", "0.01")
    # each step lasts ten beats at least: a command faster than one beat (agreement on this small
    # database once took under 10 ms in CI) would print nothing, and the test would say nothing
    step = progress.Heartbeat.step

    def slow_step(self, phase):
        step(self, phase)
        time.sleep(0.1)

    monkeypatch.setattr(progress.Heartbeat, "step", slow_step)
    for argv, label in ((["export", "embrace", "--db", str(db), "-o", str(tmp_path / "out.jsonl")], "export: "),
                        (["report", "--db", str(db), "-o", str(tmp_path / "rep")], "report: "),
                        (["agreement", "--db", str(db), "-o", str(tmp_path / "agr")], "agreement: ")):
        assert cli.main(argv) == 0
        err = capsys.readouterr().err  # pytest's capture is not a terminal
        assert any(line.startswith(label) and line.endswith(" s)") for line in err.splitlines()), (label, err[-500:])
