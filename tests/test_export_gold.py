"""Exports default to the adjudicated `gold` layer (issue: several annotators)."""
import json
import subprocess
import sys
from pathlib import Path

from desktop.app import merge as m
from desktop.store import Store

ROOT = Path(__file__).resolve().parents[1]
GREEN = ROOT.parent / "shared" / "data" / "embrace" / "embrace_green.jsonl"


def mcqlens(*args):
    return subprocess.run([sys.executable, "-m", "desktop.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_embrace_export_prefers_gold_difficulty(tmp_path):
    db = tmp_path / "a.db"
    assert mcqlens("import", str(GREEN), "--db", str(db)).returncode == 0
    original = json.loads(GREEN.read_text(encoding="utf-8").splitlines()[0])["test"][0]
    assert original["annotations"]["difficulty"]["pod"] == "two or more\ndistractors"
    with Store.open(str(db), annotator="adjudicator") as store:
        m.adjudicate(store, "0_0", "difficulty.pod", "inference")
    out = tmp_path / "out.jsonl"
    done = mcqlens("export", "embrace", "--db", str(db), "-o", str(out))
    assert done.returncode == 0, done.stderr
    first = json.loads(out.read_text(encoding="utf-8").splitlines()[0])["test"][0]
    assert first["id"] == "0_0"
    assert first["annotations"]["difficulty"]["pod"] == "inference"
    # asking for the imported layer explicitly still gives the file's value
    out2 = tmp_path / "imported.jsonl"
    assert mcqlens("export", "embrace", "--db", str(db), "-o", str(out2), "--annotator", "imported").returncode == 0
    again = json.loads(out2.read_text(encoding="utf-8").splitlines()[0])["test"][0]
    assert again["annotations"]["difficulty"]["pod"] == "two or more\ndistractors"
