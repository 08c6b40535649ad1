"""The whole job in the window, as a linguist does it (pytest-qt, offscreen, real widgets), each
story ending in a file or stored rows compared with what the command line makes of the same data.

File pickers are not driven: the window asks `window.path_chooser` for paths (the system's
modal dialog in the program), and these stories give it the path a user would pick.
QSettings live in an ini file under the test's temporary folder.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings, Qt  # noqa: E402

from desktop import cli, formats  # noqa: E402
from desktop.app import score as score_cmd  # noqa: E402
from desktop.domain.changes import Change  # noqa: E402
from desktop.domain.model import BASIS  # noqa: E402
from desktop.store import Store  # noqa: E402
from desktop.ui.backend import Backend  # noqa: E402
from desktop.ui.main_window import MainWindow  # noqa: E402
from desktop.ui.menus.file import recent_databases  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
GREEN = ROOT.parent / "shared" / "data" / "embrace" / "embrace_green.jsonl"
YELLOW = ROOT.parent / "shared" / "data" / "embrace" / "embrace_yellow.jsonl"
TINY = Path(os.environ.get("MCQLENS_TEST_MODEL", ROOT / "tests" / "data" / "tiny_model"))


@pytest.fixture
def settings(tmp_path):
    return QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)


@pytest.fixture(autouse=True)
def no_model_panel_model(monkeypatch, tmp_path):
    """The model panel loads no model unless a story gives one (it would score items on its own)."""
    monkeypatch.setenv("MCQLENS_MODEL", str(tmp_path / "no-model"))


def _open(qtbot, db: Path, settings, annotator: str = "anna") -> MainWindow:
    window = MainWindow(Backend.open(str(db), annotator=annotator), settings=settings, facts=False)
    window.owns_backend = True
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window


def _choose(window: MainWindow, path: Path) -> None:
    """What the user picks in the next file dialog."""
    window.path_chooser = lambda parent, title, mode, start, name_filter: str(path)


def _replacement(qtbot, window: MainWindow) -> MainWindow:
    new = window.replaced_by
    assert new is not None and new is not window
    qtbot.addWidget(new)
    qtbot.waitExposed(new)
    return new


def _green(passages: int = 12):
    """The first passages of EMBRACE green (every story needs real items, not all 200 of them)."""
    datasets = formats.read(str(GREEN))
    for ds in datasets:
        ds.passages = ds.passages[:passages]
    return datasets


def _menu_action(menu, text: str):
    return next(a for a in menu.actions() if a.text() == text)


def _embrace_record(path: Path, item: str) -> dict:
    for line in path.read_text(encoding="utf-8").splitlines():
        for q in json.loads(line)["test"]:
            if q["id"] == item:
                return q
    raise KeyError(item)


def test_new_database_import_mark_a_basis_export_equals_the_cli(qtbot, tmp_path, settings):
    window = _open(qtbot, tmp_path / "annotations.db", settings)
    assert window.windowTitle().startswith("annotations.db")
    assert str(tmp_path / "annotations.db") in window.database_label.text()
    # File → New database…
    _choose(window, tmp_path / "review.db")
    window.file_menu.new_database_action.trigger()
    window = _replacement(qtbot, window)
    assert Path(window.backend.path) == tmp_path / "review.db"
    assert window.windowTitle().startswith("review.db")
    assert str(tmp_path / "review.db") in window.database_label.text()
    # File → Import… EMBRACE green
    _choose(window, GREEN)
    _menu_action(window.file_menu.menu, "&Import…").trigger()
    qtbot.waitUntil(lambda: not window.importing, timeout=60000)
    n_green = sum(1 for d in formats.read(str(GREEN)) for _ in d.questions())
    assert len(window.backend.items()) == n_green
    # mark the basis of B on the first item: select words, click the B button of the mark bar
    item = window.current
    text = window.state.passage_text
    start, end = 0, text.index(".") + 1  # the first sentence
    window.passage.set_selection(start, end)
    qtbot.mouseClick(window.mark_menu._basis_buttons.itemAt(1).widget(), Qt.LeftButton)
    mine = [s for s in window.backend.store.question(item).spans if s.annotator == "anna"]
    assert [(s.role, s.alternative) for s in mine] == [(BASIS, 1)]
    # File → Export… EMBRACE, the default layer, to a file
    window.file_menu.export_action.trigger()
    dialog = window.file_menu.export_dialog
    out_gui, out_cli = tmp_path / "gui.jsonl", tmp_path / "cli.jsonl"
    dialog.choose("embrace", path=str(out_gui))
    qtbot.mouseClick(dialog.ok, Qt.LeftButton)
    assert out_gui.is_file(), dialog.message.text()
    assert cli.main(["export", "embrace", "--db", str(tmp_path / "review.db"), "-o", str(out_cli)]) == 0
    assert out_gui.read_bytes() == out_cli.read_bytes()
    # and the export carries the basis just marked (anna's over the imported one)
    b = _embrace_record(out_gui, item)["annotations"]["bases"]["b"]
    assert (b["start"], b["end"]) == (mine[0].start, mine[0].end)
    assert b["text"] == text[mine[0].start:mine[0].end]
    # one annotator's layer, one source file, as a CSV table: the command line's --annotator and --file
    csv_gui, csv_cli = tmp_path / "anna.csv", tmp_path / "anna-cli.csv"
    dialog.choose("csv", layer="anna", file=str(GREEN), path=str(csv_gui))
    qtbot.mouseClick(dialog.ok, Qt.LeftButton)
    assert cli.main(["export", "csv", "--db", str(tmp_path / "review.db"), "-o", str(csv_cli),
                     "--annotator", "anna", "--file", GREEN.name]) == 0
    assert csv_gui.read_bytes() == csv_cli.read_bytes()
    dialog.close()
    window.close()


def test_open_a_second_database_from_the_recent_list(qtbot, tmp_path, settings):
    first, second = tmp_path / "first.db", tmp_path / "second.db"
    for db, path in ((first, GREEN), (second, YELLOW)):
        with Store.open(str(db)) as store:
            store.import_datasets(formats.read(str(path)), file=str(path))
    window = _open(qtbot, first, settings)
    _choose(window, second)
    window.file_menu.open_database_action.trigger()  # File → Open database…
    window = _replacement(qtbot, window)
    assert window.windowTitle().startswith("second.db")
    # the recent list (kept in the settings file) offers the first database
    assert recent_databases(QSettings(settings.fileName(), QSettings.IniFormat))[:2] == [str(second), str(first)]
    window.file_menu.recent_menu.aboutToShow.emit()
    entries = [a for a in window.file_menu.recent_menu.actions() if a.data()]
    assert [a.data() for a in entries] == [str(first)]
    entries[0].trigger()
    window = _replacement(qtbot, window)
    assert Path(window.backend.path) == first and window.windowTitle().startswith("first.db")
    with Store.open(str(first), create=False) as store:
        assert [r.item_id for r in window.backend.items()] == [r.item_id for r in store.items()]
    window.close()


def _basis_b(store: Store, item: str) -> list[tuple]:
    return sorted((s.annotator, s.start, s.end) for s in store.question(item).spans
                  if s.role == BASIS and s.alternative == 1)


def test_merge_a_colleague_see_the_disagreement_adjudicate_and_export_gold(qtbot, tmp_path, settings):
    green = _green()
    item = "0_0"
    anna_db, bob_db, cli_db = tmp_path / "anna.db", tmp_path / "bob.db", tmp_path / "anna-cli.db"
    text = None
    for db, who, span in ((anna_db, "anna", (0, 43)), (bob_db, "bob", (137, 206))):
        with Store.open(str(db), annotator=who) as store:
            store.import_datasets(green, file=str(GREEN))
            text = store.passage(store.question(item).passage_id).text
            store.apply(Change(item, "span.add", {"role": BASIS, "alternative": 1, "start": span[0],
                                                  "end": span[1]}, who))
            # and their evidence of 0_2 differs: a second item to adjudicate
            store.apply(Change("0_2", "span.add", {"role": "evidence", "start": span[0], "end": span[1]}, who))
    shutil.copy(anna_db, cli_db)  # the command line merges the same data
    window = _open(qtbot, anna_db, settings)
    # File → Merge a colleague's work…
    window.file_menu.merge_action.trigger()
    dialog = window.file_menu.merge_dialog
    dialog.path.set_path(str(bob_db))
    qtbot.mouseClick(dialog.merge_button, Qt.LeftButton)
    assert dialog.plan is not None and dialog.summary.text().startswith("Merged:"), dialog.summary.text()
    assert cli.main(["merge", str(bob_db), "--db", str(cli_db)]) == 0
    with Store.open(str(cli_db), create=False) as cli_store:
        assert _basis_b(window.backend.store, item) == _basis_b(cli_store, item)
    assert ("bob", 137, 206) in _basis_b(window.backend.store, item)
    dialog.close()
    # Reports → Agreement…: the item is listed; clicking it opens it
    window.go_menu.next_item()
    agreement = window.reports_menu.show_agreement()
    qtbot.waitUntil(lambda: agreement.report is not None, timeout=30000)
    assert item in agreement.listed_items()
    row = agreement.items.item(agreement.listed_items().index(item))
    agreement.items.itemClicked.emit(row)
    assert window.current == item
    assert "anna × bob" in agreement.report["pairs"]
    assert cli.main(["agreement", "--db", str(anna_db), "-o", str(tmp_path / "agreement")]) == 0
    written = json.loads((tmp_path / "agreement" / "agreement.json").read_text(encoding="utf-8"))
    assert json.loads(json.dumps(agreement.report)) == written
    shown = {agreement.table.horizontalHeaderItem(c).text(): agreement.table.item(0, c).text()
             for c in range(agreement.table.columnCount())}  # row 0: evidence F1, then basis F1
    basis = {agreement.table.horizontalHeaderItem(c).text(): agreement.table.item(1, c).text()
             for c in range(agreement.table.columnCount())}
    assert basis["anna × bob"] == f"{written['pairs']['anna × bob']['basis_f1']['value']:.1f}"
    assert set(shown) == {"all annotators", *written["pairs"]}
    agreement.close()
    # the navigator's "annotators disagree" filter shows it, and only the items with disagreements
    window.reports_menu.disagree_box.setChecked(True)  # found in a worker
    qtbot.waitUntil(lambda: window.navigator.visible_items() == [item, "0_2"], timeout=30000)
    assert window.reports_menu.disagree_action.isChecked() and window.reports_menu.disagreeing == [item, "0_2"]
    # Reports → Adjudicate the disagreements…: adopt bob's basis of B as gold
    dialog = window.reports_menu.adjudicate_disagreements()
    assert dialog.item == item and dialog.queue == [item, "0_2"]
    assert dialog.select("basis.1", "bob")
    qtbot.mouseClick(dialog.adopt_button, Qt.LeftButton)
    assert ("gold", 137, 206) in _basis_b(window.backend.store, item)
    qtbot.mouseClick(dialog.next_button, Qt.LeftButton)  # the next disagreement, opened in the window too
    assert dialog.item == "0_2" and window.current == "0_2" and dialog.fields() == ["evidence"]
    assert not dialog.next_button.isEnabled() and dialog.position.text() == "2 of 2"
    qtbot.mouseClick(dialog.previous_button, Qt.LeftButton)
    assert dialog.item == item and window.current == item
    dialog.close()
    # File → Export… (gold where adjudicated): the gold basis, and the file the command line writes
    out_gui, out_cli = tmp_path / "gold-gui.jsonl", tmp_path / "gold-cli.jsonl"
    export = window.file_menu.show_export_dialog()
    export.choose("embrace", path=str(out_gui))
    qtbot.mouseClick(export.ok, Qt.LeftButton)
    assert out_gui.is_file(), export.message.text()
    assert cli.main(["export", "embrace", "--db", str(anna_db), "-o", str(out_cli)]) == 0
    assert out_gui.read_bytes() == out_cli.read_bytes()
    b = _embrace_record(out_gui, item)["annotations"]["bases"]["b"]
    assert (b["start"], b["end"], b["text"]) == (137, 206, text[137:206])
    # everyone's layers, gold not preferred: the command line's --everyone
    every_gui, every_cli = tmp_path / "every-gui.csv", tmp_path / "every-cli.csv"
    export.choose("csv", layer="*", path=str(every_gui))
    qtbot.mouseClick(export.ok, Qt.LeftButton)
    assert cli.main(["export", "csv", "--db", str(anna_db), "-o", str(every_cli), "--everyone"]) == 0
    assert every_gui.read_bytes() == every_cli.read_bytes()
    export.close()
    window.close()


def test_merge_conflicts_are_listed_and_kept_as_the_cli_keeps_them(qtbot, tmp_path, settings):
    """The same annotator with two values: ours stays, theirs is kept as anna@<file> in both."""
    green = _green()
    mine_db, theirs_db, cli_db = tmp_path / "mine.db", tmp_path / "laptop.db", tmp_path / "mine-cli.db"
    for db, span in ((mine_db, (0, 43)), (theirs_db, (137, 206))):
        with Store.open(str(db), annotator="anna") as store:
            store.import_datasets(green, file=str(GREEN))
            store.apply(Change("0_1", "span.add", {"role": BASIS, "alternative": 1, "start": span[0],
                                                   "end": span[1]}, "anna"))
    shutil.copy(mine_db, cli_db)
    window = _open(qtbot, mine_db, settings)
    dialog = window.file_menu.show_merge_dialog()
    dialog.path.set_path(str(theirs_db))
    before = _basis_b(window.backend.store, "0_1")
    qtbot.mouseClick(dialog.preview_button, Qt.LeftButton)  # a dry run writes nothing
    assert dialog.summary.text().startswith("Preview: would add 0 items and 1 annotation;")
    assert len(dialog.conflicts()) == 1
    assert _basis_b(window.backend.store, "0_1") == before
    qtbot.mouseClick(dialog.merge_button, Qt.LeftButton)
    rows = dialog.conflicts()
    assert len(rows) == 1 and rows[0][:3] == ("0_1", "basis.1", "anna") and rows[0][4].endswith("anna@laptop")
    conflicts = tmp_path / "conflicts.json"
    assert cli.main(["merge", str(theirs_db), "--db", str(cli_db), "--conflicts", str(conflicts)]) == 0
    cli_conflicts = json.loads(conflicts.read_text())
    assert [(c["item"], c["field"], c["annotator"], c["kept_as"]) for c in cli_conflicts] == [
        (c.item, c.field, c.annotator, c.kept_as) for c in dialog.plan.conflicts]
    with Store.open(str(cli_db), create=False) as cli_store:
        assert _basis_b(window.backend.store, "0_1") == _basis_b(cli_store, "0_1")
    assert ("anna@laptop", 137, 206) in _basis_b(window.backend.store, "0_1")
    dialog.close()
    window.close()


needs_model = pytest.mark.skipif(not (TINY / "card.json").is_file(),
                                 reason=f"the tiny test model is not built yet ({TINY}; python -m models.export.tiny)")


def _predictions(store: Store) -> dict:
    return {(r.item_id, p.model_id, p.input_format): p for r in store.items() for p in store.predictions(r.item_id)}


@needs_model
def test_score_all_cancel_resume_stores_what_mcqlens_score_stores(qtbot, tmp_path, settings, monkeypatch):
    gui_db, cli_db = tmp_path / "gui.db", tmp_path / "cli.db"
    for db in (gui_db, cli_db):
        with Store.open(str(db)) as store:
            store.import_datasets(_green(), file=str(GREEN))
    monkeypatch.setattr(score_cmd, "CHUNK", 8)  # many chunks: a cancel lands between them
    window = _open(qtbot, gui_db, settings)
    # Model → Choose the model directory… (remembered in the settings)
    _choose(window, TINY)
    window.model_menu.choose_model_action.trigger()
    assert QSettings(settings.fileName(), QSettings.IniFormat).value("model_dir") == str(TINY)
    # the panel has loaded it (two loads at once in one process race on inference's cache of the CPU graph)
    qtbot.waitUntil(lambda: window.model_review.model is not None, timeout=30000)
    # Model → Score all…, cancelled once its first chunk is stored: the event the dialog's Cancel sets,
    # set in the worker's thread (the tiny model would finish before a click arrives)
    window.model_menu.score_all_action.trigger()
    dialog = window.model_menu.score_progress
    assert dialog is not None and dialog.isVisible()
    # the line is emitted in the model's thread (Score all runs on the panel's one model); this run only
    first_cancel = window.model_menu._score_cancel
    window.model_review.worker.batchText.connect(lambda text: text.startswith("Scored and stored")
                                                 and first_cancel.set(), Qt.DirectConnection)
    qtbot.waitUntil(lambda: window.model_menu.last_score_run is not None or bool(window.last_error), timeout=120000)
    assert not window.last_error
    first = window.model_menu.last_score_run
    n_items = len(window.backend.items())
    stored = _predictions(window.backend.store)
    assert first.cancelled and 0 < first.scored < n_items
    # Score all… again goes on from there
    window.model_menu.last_score_run = None
    window.model_menu.score_all_action.trigger()
    qtbot.waitUntil(lambda: window.model_menu.last_score_run is not None or bool(window.last_error), timeout=120000)
    assert not window.last_error
    second = window.model_menu.last_score_run
    assert not second.cancelled and second.already >= first.scored and second.questions == n_items
    gui = _predictions(window.backend.store)
    for key, p in stored.items():  # what the cancelled run stored was kept, not scored again
        if key[0] != window.current:  # the model panel scores the open item on its own, any time
            assert gui[key].probabilities == p.probabilities
    assert cli.main(["score", "--db", str(cli_db), "--model", str(TINY), "--device", "cpu", "--no-progress"]) == 0
    with Store.open(str(cli_db), create=False) as store:
        cli_rows = _predictions(store)
    assert set(gui) == set(cli_rows) and len(gui) == 2 * n_items
    # Equal up to the int8 graph's dynamic quantization, whose scales depend on which sequences share
    # a run (the model panel scores the open item alone; a resumed run cuts its chunks elsewhere).
    for key, p in cli_rows.items():
        q = gui[key]
        assert q.probabilities == pytest.approx(p.probabilities, abs=1e-5), key
        assert q.extra["predicted"] == p.extra["predicted"] or max(p.probabilities) - sorted(p.probabilities)[-2] < 1e-5
        for name in ("n_eff", "entropy_bits", "mi_bits"):
            assert q.extra.get(name) == pytest.approx(p.extra.get(name), abs=1e-4), (key, name)
    # File → Export… model predictions: the table `mcqlens export predictions` writes of the same rows
    out_gui, out_cli = tmp_path / "pred-gui.csv", tmp_path / "pred-cli.csv"
    export = window.file_menu.show_export_dialog()
    export.choose("predictions", path=str(out_gui))
    qtbot.mouseClick(export.ok, Qt.LeftButton)
    assert cli.main(["export", "predictions", "--db", str(gui_db), "-o", str(out_cli)]) == 0
    assert out_gui.read_bytes() == out_cli.read_bytes()
    import csv
    with open(out_gui, encoding="utf-8", newline="") as f:
        table = list(csv.DictReader(f))
    assert list(table[0]) == ["item_id", "model", "format", "probs", "predicted", "entropy_bits", "n_eff", "mi_bits",
                              "evidence"]
    assert len(table) == len(gui)
    for row in table:
        p = gui[(row["item_id"], row["model"], row["format"])]
        assert json.loads(row["probs"]) == pytest.approx(p.probabilities, abs=1e-12)
        assert float(row["n_eff"]) == pytest.approx(2 ** float(row["entropy_bits"]))
    export.close()
    window.close()
    # the next session (no --model) uses the model directory chosen in this one
    monkeypatch.delenv("MCQLENS_MODEL")
    window = _open(qtbot, gui_db, settings)
    assert window.model_menu.model_dir() == str(TINY)
    window.close()


def test_report_writes_what_mcqlens_report_writes_and_opens_index_html(qtbot, tmp_path, settings):
    db = tmp_path / "annotations.db"
    with Store.open(str(db)) as store:
        store.import_datasets(_green(), file=str(GREEN))
    window = _open(qtbot, db, settings)
    opened = []
    window.reports_menu.open_url = opened.append  # the system browser, in the program
    _choose(window, tmp_path / "report")
    window.reports_menu.report_action.trigger()  # Reports → Report…
    qtbot.waitUntil(lambda: bool(opened), timeout=60000)
    assert opened[0].toLocalFile() == str(tmp_path / "report" / "index.html")
    assert cli.main(["report", "--db", str(db), "-o", str(tmp_path / "report-cli")]) == 0
    assert (tmp_path / "report" / "items.csv").read_bytes() == (tmp_path / "report-cli" / "items.csv").read_bytes()
    window.close()


def test_the_menus_dialogs_name_every_control_for_a_screen_reader(qtbot, tmp_path, settings):
    from PySide6.QtWidgets import QAbstractButton, QAbstractItemView, QComboBox, QLineEdit

    db = tmp_path / "annotations.db"
    with Store.open(str(db)) as store:
        store.import_datasets(_green(), file=str(GREEN))
    window = _open(qtbot, db, settings)
    agreement = window.reports_menu.show_agreement()
    qtbot.waitUntil(lambda: agreement.report is not None, timeout=30000)
    dialogs = [window.file_menu.show_export_dialog(), window.file_menu.show_merge_dialog(), agreement, window.reports_menu.disagree_box]
    unnamed = []
    for d in dialogs:
        for w in [d, *d.findChildren(QAbstractButton), *d.findChildren(QComboBox), *d.findChildren(QLineEdit),
                  *d.findChildren(QAbstractItemView)]:
            if isinstance(w, (QAbstractButton, QComboBox, QLineEdit, QAbstractItemView)) and w.isVisibleTo(d) \
                    and not (w.accessibleName() and w.accessibleDescription()):
                unnamed.append(f"{type(d).__name__}: {type(w).__name__} {w.objectName()!r}")
    assert unnamed == [], "\n".join(unnamed)
    for d in dialogs[:3]:
        d.close()
    window.close()


@needs_model
def test_score_the_items_shown_scores_only_the_filtered_items(qtbot, tmp_path, settings):
    db = tmp_path / "annotations.db"
    with Store.open(str(db)) as store:
        store.import_datasets(_green(3), file=str(GREEN))
    window = _open(qtbot, db, settings)
    assert window.model_menu.choose_model_dir(str(TINY))  # Score all waits for the panel to load it
    assert window.go_to("0_1") and window.edit("status", "done") is not None
    # the open item goes first in the model's one queue (issue 29): open another one, so that
    # Score the items shown has 0_1 to score
    assert window.go_to("0_0")
    status = window.navigator.filters["status"]
    status.setCurrentIndex(status.findText("done"))  # the navigator shows the done items: 0_1 alone
    assert window.navigator.visible_items() == ["0_1"]
    window.model_menu.score_shown_action.trigger()  # Model → Score the items shown…
    qtbot.waitUntil(lambda: window.model_menu.last_score_run is not None, timeout=60000)
    run = window.model_menu.last_score_run
    assert (run.questions, run.scored, run.stored) == (1, 1, 2)
    scored = {r.item_id for r in window.backend.items() if window.backend.store.predictions(r.item_id)}
    assert "0_1" in scored and scored <= {"0_1", window.current}  # the panel scores the open item itself
    window.close()


def test_merge_a_colleagues_export_file_under_their_name(qtbot, tmp_path, settings):
    """An export file names no annotator: "Their name" attributes its layers, as --annotator does."""
    green = _green(3)
    anna_db, bob_db, cli_db = tmp_path / "anna.db", tmp_path / "bob.db", tmp_path / "anna-cli.db"
    for db, who in ((anna_db, "anna"), (bob_db, "bob")):
        with Store.open(str(db), annotator=who) as store:
            store.import_datasets(green, file=str(GREEN))
    with Store.open(str(bob_db), annotator="bob") as store:
        store.apply(Change("0_0", "span.add", {"role": BASIS, "alternative": 2, "start": 137, "end": 206}, "bob"))
    bob_file = tmp_path / "bob.jsonl"
    assert cli.main(["export", "embrace", "--db", str(bob_db), "-o", str(bob_file)]) == 0
    shutil.copy(anna_db, cli_db)
    window = _open(qtbot, anna_db, settings)
    dialog = window.file_menu.show_merge_dialog()
    dialog.path.set_path(str(bob_file))
    dialog.annotator.setText("bob")
    qtbot.mouseClick(dialog.merge_button, Qt.LeftButton)
    assert dialog.summary.text().startswith("Merged:"), dialog.summary.text()
    assert cli.main(["merge", str(bob_file), "--db", str(cli_db), "--annotator", "bob"]) == 0

    def layers(store):
        return sorted((s.annotator, s.role, s.alternative, s.start, s.end) for r in store.items()
                      for s in store.question(r.item_id).spans)

    with Store.open(str(cli_db), create=False) as cli_store:
        assert layers(window.backend.store) == layers(cli_store)
    assert ("bob", BASIS, 2, 137, 206) in layers(window.backend.store)
    dialog.close()
    window.close()


def test_report_proposes_a_folder_that_exists_and_says_where_it_is_when_no_browser_opens_it(qtbot, tmp_path,
                                                                                           settings):
    db = tmp_path / "annotations.db"
    with Store.open(str(db)) as store:
        store.import_datasets(_green(), file=str(GREEN))
    window = _open(qtbot, db, settings)
    proposed = []

    def cancel(parent, title, mode, start, name_filter):  # the user looks at the folder offered, then cancels
        proposed.append((start, os.path.isdir(start)))
        return None
    window.path_chooser = cancel
    window.reports_menu.report_action.trigger()
    assert proposed == [(str(tmp_path / "report"), True)]  # a folder the dialog can choose as it stands
    assert not (tmp_path / "report").exists()  # cancelled: the empty folder made for it is gone again
    # chosen, written, and no program opens .html files here: the window says where the report is
    window.reports_menu.open_url = lambda url: False
    window.path_chooser = lambda parent, title, mode, start, name_filter: start
    window.reports_menu.report_action.trigger()
    index = tmp_path / "report" / "index.html"
    qtbot.waitUntil(lambda: str(index) in window.last_error, timeout=60000)
    assert index.is_file() and "no web browser could open it" in window.last_error
    window.close()


def test_gui_creates_its_database_only_when_items_are_stored_in_it(qtbot, tmp_path, settings, monkeypatch):
    monkeypatch.chdir(tmp_path)
    default = tmp_path / "annotations.db"
    # `mcqlens gui` in a folder without a database, then File → New database… elsewhere
    window = MainWindow(Backend.open("annotations.db", annotator="anna", create_later=True), settings=settings,
                        facts=False)
    qtbot.addWidget(window)
    window.show()
    assert window.pages.currentWidget() is window.welcome and "created when you import" in \
        window.database_label.full_text()
    _choose(window, tmp_path / "elsewhere" / "review.db")
    (tmp_path / "elsewhere").mkdir()
    window.file_menu.new_database_action.trigger()
    window = _replacement(qtbot, window)
    assert (tmp_path / "elsewhere" / "review.db").is_file()
    assert not default.exists()  # nothing left behind in the start folder
    window.close()
    # the same start, then an import: now it is made, with the items in it
    window = MainWindow(Backend.open("annotations.db", annotator="anna", create_later=True), settings=settings,
                        facts=False)
    window.owns_backend = True
    qtbot.addWidget(window)
    window.show()
    assert not default.exists()
    _choose(window, GREEN)
    _menu_action(window.file_menu.menu, "&Import…").trigger()
    assert window.welcome.text.text().startswith("<h2>Importing ")  # not the instructions, half hidden
    qtbot.waitUntil(lambda: not window.importing, timeout=60000)
    assert default.is_file() and window.pages.currentWidget() is window.work
    n_green = sum(1 for d in formats.read(str(GREEN)) for _ in d.questions())
    with Store.open(str(default), read_only=True) as store:
        assert len(store.items()) == n_green
    assert "created when you import" not in window.database_label.full_text()
    window.close()
