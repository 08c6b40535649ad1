"""The `mcqlens` command line.

Each subcommand lives in its own module under `desktop.commands` with a
`register(subparsers)` that only builds its parser (heavy imports happen inside the
command's function, so `mcqlens gui` starts fast); `gui`, the command that opens the
window, is `desktop.gui`, above the commands the window itself calls.  Errors of the product
(`McqLensError`) become one `error:` line on stderr and exit status 2.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from desktop.domain.errors import McqLensError

# Order here is the order in `mcqlens --help`; each is a module of `desktop.commands`, except
# `gui` (`desktop.gui`: the window's entry point sits above the commands the window calls).
COMMANDS = (
    "gui", "import_", "export", "stats", "annotate", "report", "score", "explain", "train",
    "expmrc", "nota", "merge", "agreement",
)
_MODULES = {"gui": "desktop.gui"}


def version() -> str:
    """The installed distribution's version (package metadata), or the checkout's pyproject.toml."""
    try:
        return metadata.version("mcqlens")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
        try:
            return tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]
        except (OSError, ValueError, KeyError):
            return "unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcqlens",
        description="MCQ Lens: review multiple-choice reading-comprehension items "
        "(evidence, bases, difficulty, problems, shortcut-model probabilities).",
    )
    parser.add_argument("--version", action="version", version=f"mcqlens {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(_MODULES.get(name, f"desktop.commands.{name}")).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        code = _main(argv)
        sys.stdout.flush()  # here, so a closed pipe is met inside the handler below, not at exit
        return code
    except BrokenPipeError:
        return _reader_went_away()
    except SystemExit:  # --help, usage errors: argparse printed, then exits
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            return _reader_went_away()
        raise


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except McqLensError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130


def _reader_went_away() -> int:
    """`mcqlens stats | head`: the reader closed the pipe.  Not an error of ours: no
    traceback, and stdout goes to /dev/null so the interpreter's last flush stays quiet.
    The status is the shell's for a command ended by SIGPIPE (128 + 13)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return 141


if __name__ == "__main__":
    sys.exit(main())
