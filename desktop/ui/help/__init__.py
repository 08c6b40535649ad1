"""Help: the keyboard-shortcut sheet and the annotation guide."""
