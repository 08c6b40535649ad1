"""`mcqlens gui`: open the annotation workbench (also `python -m desktop`).

The one command that opens the window, so it sits at the top of the package, beside
`cli.py`, rather than among `desktop.commands`: the window (`desktop.ui`) sits above the
application layer (`desktop.app`) like the commands, and only this entry point imports it.  Nothing below this module imports
`desktop.ui` (the import-linter contracts in pyproject.toml), and it imports Qt only
inside `run`, so the rest of the command line never loads it.
"""
from __future__ import annotations

from desktop.domain.errors import McqLensError


def register(sub) -> None:
    p = sub.add_parser("gui", help="open the annotation workbench window",
                       description="Read passages, mark evidence and bases, score difficulty, tag problems. "
                                   "Every edit is saved at once in the database.")
    p.add_argument("--db", default="annotations.db", help="the annotation database (default: %(default)s)")
    p.add_argument("--item", help="open on this item id (e.g. 0_0)")
    p.add_argument("--annotator", help="your name as the author of your edits (remembered)")
    p.add_argument("--screenshot", metavar="OUT.png", help="render the window to this PNG and exit")
    p.add_argument("--model", metavar="DIR", help="model directory for the model panel, Score all and Why? (default: the one chosen last, else models/default/)")
    p.add_argument("--size", default="1600x1000", help="window size for --screenshot, WxH (default: %(default)s)")
    p.add_argument("--tab", help="show this tab of the side panel (difficulty, problems, comments, …)")
    p.add_argument("--allow-network-db", action="store_true",
                   help="write the database even on a network file system (NFS, SMB, sshfs), where it is "
                        "otherwise opened read-only; also MCQLENS_ALLOW_NETWORK_DB=1")
    p.set_defaults(func=run)


def run(args) -> int:
    try:
        w, h = (int(x) for x in args.size.lower().split("x"))
    except ValueError:
        raise McqLensError(f"--size must be WIDTHxHEIGHT, got {args.size!r}") from None
    # Qt is imported only here, so the rest of the command line never loads it.
    from desktop.ui.app import run as run_gui
    return run_gui(args.db, item=args.item, screenshot=args.screenshot, annotator=args.annotator, size=(w, h),
                   tab=args.tab, model=args.model,
                   allow_network=True if getattr(args, "allow_network_db", False) else None)
