"""The navigator on the left: items by passage, filters, search, progress."""
