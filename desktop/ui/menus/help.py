"""The Help menu: a slot for the keyboard-shortcut sheet (F1) and the annotation guide.

The guide's content belongs to the help issue; this module only places the menu, last
in the menu bar, so that the help window (desktop/ui/help/window.py) can add its actions
to `window.help_menu.menu`.  `HelpMenu` is a part of the window (`window.help_menu`); what it
uses of the window: the menu bar and `database_where` (About names the database).
"""
from __future__ import annotations


class HelpMenu:
    def __init__(self, window):
        self.window = window

    def build(self) -> None:
        """The Help menu, placed next (last) in the menu bar."""
        self.menu = self.window.menuBar().addMenu("&Help")
        about = self.menu.addAction("About MCQ Lens")
        about.triggered.connect(self._about)

    def _about(self) -> None:
        from PySide6.QtWidgets import QMessageBox

        box = QMessageBox(QMessageBox.Information, "About MCQ Lens",
                          "MCQ Lens: a workbench for reviewing multiple-choice reading-comprehension items. "
                          f"This window works on {self.window.database_where()}.", QMessageBox.Ok, self.window)
        box.setAccessibleName("About MCQ Lens")
        box.setAccessibleDescription("What this program is and which database the window works on")
        box.open()  # not exec(): the window keeps running
