"""The model panel beside the alternatives, and the window's one model thread."""
