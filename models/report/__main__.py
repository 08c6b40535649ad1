"""`python -m models.report`: regenerate docs/models.md and its figures (`models.report.models_md`)."""
import sys

from models.report.models_md import main

sys.exit(main())
