"""What `mcqlens export` and File → Export… can write, and which layer each item carries: the
words both show (kept apart from `export`, so the command line's parser loads no store)."""
from __future__ import annotations

KINDS = ("embrace", "expmrc", "race", "csv", "predictions")

# Which layer is written: said by `mcqlens export --help` and the window's export dialog alike.
LAYERS = ("Each item is written as the window shows it: the imported annotations at the bottom, each "
          "annotator who edited the item over them, one difficulty variable, text format, unit type, basis "
          "or required paragraphs at a time (a corrected NI keeps every other imported value); evidence, "
          "problem tags and comments of every layer. RACE files carry no annotations; predictions are the "
          "models', not an annotator's.")
ON_TOP = ("On top: the adjudicated 'gold' layer where it exists (default), no annotator preferred "
          "(--everyone), or NAME (--annotator NAME: the imported annotations and NAME's only, as NAME's "
          "window shows them).")
