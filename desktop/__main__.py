"""`python -m desktop` opens the workbench, like `mcqlens gui`."""
import sys

from desktop.cli import main

if __name__ == "__main__":
    sys.exit(main(["gui", *sys.argv[1:]]))
