"""The dialogs the menus open: export, merge, agreement, adjudication."""
