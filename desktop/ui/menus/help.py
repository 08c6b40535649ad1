"""The Help menu: a slot for the keyboard-shortcut sheet (F1) and the annotation guide.

The guide's content belongs to the help issue; this module only places the menu, last
in the menu bar, so that the help module can add its actions to `window.help_menu`.
A mixin of `MainWindow`.
"""
from __future__ import annotations


class HelpMenu:
    def _build_help_menu(self) -> None:
        self.help_menu = self.menuBar().addMenu("&Help")
        about = self.help_menu.addAction("About MCQ Lens")
        about.triggered.connect(self._about)

    def _about(self) -> None:
        from PySide6.QtWidgets import QMessageBox

        box = QMessageBox(QMessageBox.Information, "About MCQ Lens",
                          "MCQ Lens: a workbench for reviewing multiple-choice reading-comprehension items. "
                          f"This window works on {self.database_where()}.", QMessageBox.Ok, self)
        box.setAccessibleName("About MCQ Lens")
        box.setAccessibleDescription("What this program is and which database the window works on")
        box.open()  # not exec(): the window keeps running
