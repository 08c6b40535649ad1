"""MCQ Lens: a desktop workbench for reviewing multiple-choice reading-comprehension items."""
__version__ = "0.1.0"
