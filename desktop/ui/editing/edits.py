"""Editing the open item: every change goes to the store at once, and what happens when
another window or program changed the same thing first (the banner over the passage).

`Editing` is a part of the window (`window.editing`), made before its widgets, which connect
their edit signals to it.  What it uses of the window: the open item (`current`, `state`,
`backend`), its widgets (`passage`, `problems`, `comments`, `navigator`, `banner`,
`save_label`, the status bar), `go_to`, `render`, `update_item_facts`, `error` and `watcher`.
"""
from __future__ import annotations

from typing import Any

from desktop.domain.errors import Locked, McqLensError
from desktop.store.conflicts import StaleEditError
from desktop.ui.editing import change_words
from desktop.ui.kit import colors
from desktop.ui.editing.other_windows import describe, when
from desktop.ui.item.suggestions import change_value


class Editing:
    def __init__(self, window):
        self.window = window
        self.last_saved: int | None = None  # history id of the last edit the store committed

    def edit(self, field: str, value: Any, redraw: bool = True) -> int | None:
        """Store one change of the current item at once; returns its history id (None: refused).
        `redraw=False`: the item is about to be left (Done & next), so only its navigator row is
        refreshed; drawing it again first would double the move's work."""
        if self.window.current is None:
            return None
        if field not in ("comment", "comments", "note"):
            # Text still being typed goes in first: the refresh below redraws the panels.
            self.flush()
        if self.window.current is None or self.window.state is None:
            return None
        item = self.window.current
        # What the widget showed: another window's edit since then refuses this one (StaleEditError).
        expect = self.window.backend.shown(self.window.state, field, value)
        words = self._words(field, value)  # read before the store changes what it describes
        try:
            hid = self.window.backend.apply(item, field, value, expect)
        except StaleEditError as exc:
            self._refused_stale(item, field, value, exc)
            return None
        except McqLensError as exc:
            if isinstance(exc, Locked):
                self._refused_locked(item, field, value, exc)
            elif not self._already_gone(item, field, value):
                self.window.error(f"Not saved: {exc}")
                self._safe_refresh()
            return None
        self.saved(hid, words)
        if self.window.banner.item == item:  # a newer edit of the item: the old offer would undo it
            self.window.banner.clear()
        if redraw:
            self.refresh()
        else:
            self.window.navigator.refresh_items([item])
        return hid

    # ---- other windows and programs on the same database ---------------------------------------
    def _refused_stale(self, item: str, field: str, value: Any, exc: StaleEditError) -> None:
        """Nothing was overwritten: show what is stored now, say who changed it, offer to apply mine."""
        self._safe_refresh()
        who = (f"{exc.by['annotator']} at {when(exc.by['ts'])}" if exc.by else "another window or program")
        if field.startswith(("span.", "problem.")) and exc.current is None:
            kind = "span" if field.startswith("span.") else "problem tag"
            self._warn(f"Not saved: this {kind} of {item} was removed by {who} (another window or program).")
            return
        self._warn(f"Not saved: {field} of {item} was changed by {who} in another window or program; "
                   f"it now reads {describe(field, exc.current)} (shown). Yours was {describe(field, value)}.",
                   "Apply mine anyway", lambda: self._again(item, field, value), item)

    def _refused_locked(self, item: str, field: str, value: Any, exc: McqLensError) -> None:
        self._warn(f"Not saved: {exc}. Another program is writing to this database; "
                   "try again when it has finished.", "Try again", lambda: self._again(item, field, value), item)
        self.window.last_error = self.window.banner.text
        self._safe_refresh()

    def _already_gone(self, item: str, field: str, value: Any) -> bool:
        """A span or tag removed by another window meanwhile: say so (and by whom), not 'error'."""
        if field not in ("span.remove", "span.update", "problem.remove") or not isinstance(value, dict):
            return False
        self._safe_refresh()
        kind = field.split(".", 1)[0]
        rows = self.window.state.question.spans if kind == "span" else self.window.state.question.problems
        if any(r.id == value.get("id") for r in rows):
            return False
        try:
            h = self.window.backend.removed_by(item, field, value.get("id"))
        except McqLensError:
            h = None
        who = f" by {h.annotator} at {when(h.ts)}" if h is not None else ""
        what = "span" if kind == "span" else "problem tag"
        self._warn(f"Nothing to do: this {what} was already removed{who} (another window or program).")
        return True

    def _again(self, item: str, field: str, value: Any) -> None:
        """Re-apply a refused edit on what is shown now: the later edit wins, the earlier stays in history."""
        if self.window.current != item and not self.window.go_to(item):
            return
        self.edit(field, value)

    def _warn(self, text: str, action: str | None = None, then=None, item: str | None = None) -> None:
        self.window.banner.warn(text, action, then, item)
        self._save_mark("✗ not saved (see the message above the passage)", colors.theme().error)
        self.window.statusBar().showMessage(text, 15000)

    def typing(self) -> bool:
        return self.window.comments.comment.is_dirty() or self.window.problems.note.is_dirty()

    def refresh_rows(self, items: list[str]) -> None:
        """Navigator rows (status, counts) of items edited elsewhere; selection and scroll stay."""
        self.window.navigator.refresh_items(items)

    def _safe_refresh(self) -> None:
        try:
            self.refresh()
        except McqLensError as exc:
            self.window.statusBar().showMessage(str(exc), 15000)

    def saved(self, hid: int, what: str) -> None:
        self.last_saved = hid
        if getattr(self.window, "watcher", None) is not None:  # None while the window is being built
            self.window.watcher.mark_own(hid)
        self._save_mark(f"✓ {what}", colors.theme().ok, f"{what} (history #{hid}; Ctrl+Z undoes)")

    def typing_started(self) -> None:
        self._save_mark("● typing… (saved when you pause)", colors.theme().warn)

    def _save_mark(self, text: str, colour: str, tip: str = "") -> None:
        """The status bar's word on the last edit, in the colour of its outcome."""
        from desktop.ui.kit.steady import set_style
        self.window.save_label.setText(text)
        self.window.save_label.set_tip(tip)
        set_style(self.window.save_label, f"QLabel {{ color: {colour}; }}")

    def _words(self, field: str, value: Any) -> str:
        """The edit as the annotator would say it ("basis of B added"), read before it is stored."""
        old = None
        if isinstance(value, dict) and "id" in value and self.window.state is not None:
            rows = self.window.state.question.spans if field.startswith("span.") else self.window.state.question.problems
            hit = next((r for r in rows if r.id == value["id"]), None)
            old = dict(vars(hit)) if hit is not None else None
            if field == "span.update" and old is not None:
                value = {**old, **value}
        return "Saved: " + change_words.words(field, value, old)

    def refresh(self, item_id: str | None = None) -> None:
        """Reload the current item from the store, and its navigator row."""
        item_id = item_id or self.window.current
        if item_id is None:
            return
        self.window.navigator.refresh_items([item_id])
        if item_id != self.window.current:
            return
        self.window.state = self.window.backend.load(item_id)
        self.window.render()
        self.window.update_item_facts(item_id)

    def flush(self) -> None:
        """Commit text still being typed (before leaving an item or closing)."""
        if self.window.current is not None:
            self.window.problems.flush()
            self.window.comments.flush()


    def tag_toggled(self, type_key: str, element: str, checked: bool) -> None:
        if checked:
            self.edit("problem.add", {"type": type_key, "element": element})
            return
        for tag in [p for p in self.window.state.question.problems if p.type == type_key and p.element == element
                    and p.alternative is None and p.origin != "model"]:
            if tag.id is not None:
                self.edit("problem.remove", {"id": tag.id})

    def alternative_tag_toggled(self, type_key: str, element: str, alternative: int, checked: bool) -> None:
        """A problem in one alternative only (a spelling error in C)."""
        if checked:
            self.edit("problem.add", {"type": type_key, "element": element, "alternative": alternative})
            return
        for tag in [p for p in self.window.state.question.problems if p.type == type_key and p.element == element
                    and p.alternative == alternative and p.origin != "model"]:
            if tag.id is not None:
                self.edit("problem.remove", {"id": tag.id})

    def suggestion_answered(self, tag, accept: bool) -> None:
        """Accept (store the tag as model-accepted) or dismiss (store that it was seen and is fine)."""
        self.edit("problem.add", change_value(tag, len(self.window.state.passage_text), accept))

    def suggestion_chosen(self, tag) -> None:
        """A suggestion in the passage: select what it found, so it can be seen (and marked)."""
        if tag.element == "text" and tag.start is not None and tag.end is not None:
            self.window.passage.set_selection(tag.start, tag.end)
            self.window.passage.ensureCursorVisible()

