"""The tasks a user runs (import, export, merge, score, explain, report, agreement), Qt-free.

The command line (`desktop.commands`) and the window (`desktop.ui`) call the same functions
here, so both write the same files; nothing here imports either of them.  See
docs/CONTRACTS.md, "Where each task lives".
"""
