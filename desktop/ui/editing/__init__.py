"""Editing the open item: each change stored at once, its words, other windows on the same database."""
