"""The boundaries of docs/ARCHITECTURE.md, enforced: Qt only in desktop.ui, torch only in models."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_are_kept():
    # the running interpreter's import-linter (the test extra), not whichever `lint-imports` is first
    # on PATH: under `venv/bin/python -m pytest` without activation that is another environment's
    code = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "9 kept, 0 broken" in done.stdout


def test_the_command_line_starts_without_heavy_imports():
    # `mcqlens gui` must start fast: building the parser may not pull in pandas,
    # matplotlib, onnxruntime or torch.
    code = (
        "import sys; from desktop.cli import build_parser; build_parser();"
        "heavy = [m for m in ('pandas', 'matplotlib', 'onnxruntime', 'torch', 'transformers') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
