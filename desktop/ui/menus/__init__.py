"""The menu bar: one module per menu (File, Edit, Mark, Go, Annotators, Model, Reports, Help)."""
