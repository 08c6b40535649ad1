"""The model's queue without a model or a window (issue 29): what it does next, and the status
bar's few words on it.  In the window: tests/test_ui_model_queue.py."""
from desktop.ui.model.queue_order import ModelQueue, Target, status_text
from desktop.ui.model.stages import EVIDENCE, GIVEAWAY, PROBABILITIES


def test_the_plan_puts_the_open_item_first_and_probabilities_ahead_of_evidence():
    q = ModelQueue()
    all3 = [PROBABILITIES, EVIDENCE, GIVEAWAY]
    q.set_open(Target("a", question=object(), passage_text="p", need=list(all3)))
    q.set_ahead(["b", "c"])
    q.add_read([Target(i, question=object(), passage_text="p", need=list(all3)) for i in ("b", "c")], ["b", "c"])
    order = [(t.target.item_id, t.stage) for t in q.tasks()]
    # rank = distance + stage: the open item's give-away words only while its Why? tab shows
    assert order == [("a", PROBABILITIES), ("a", EVIDENCE), ("b", PROBABILITIES), ("b", EVIDENCE),
                     ("c", PROBABILITIES), ("b", GIVEAWAY), ("c", EVIDENCE), ("c", GIVEAWAY)]
    q.why = "a"
    assert [(t.target.item_id, t.stage) for t in q.tasks()][:3] == [("a", PROBABILITIES), ("a", GIVEAWAY),
                                                                   ("a", EVIDENCE)]
    for item, stage in [("a", PROBABILITIES), ("b", PROBABILITIES)]:
        q.finished(item, stage)
    assert q.ready_ahead() == 1
    q.paused = True
    assert q.next_task() is None and q.open_task() is None
    q.paused, q.hold = False, True  # the window is busy: the open item still goes on, nothing else
    assert q.open_task() is not None and q.next_task() is None


def test_the_status_bar_says_what_the_model_does_in_a_few_words():
    snap = {"paused": False, "hold": False, "running": None, "open": "a", "ahead": 5, "ready": 3, "busy": True}
    assert status_text(snap) == "model: 3 items ahead"
    assert status_text({**snap, "ready": 1}) == "model: 1 item ahead"
    assert status_text({**snap, "running": ("a", PROBABILITIES)}) == "model: scoring this item"
    assert status_text({**snap, "running": ("a", EVIDENCE)}) == "model: evidence…"
    assert status_text({**snap, "paused": True}) == "model: paused"
    assert status_text({**snap, "hold": True}) == "paused: window busy"
    assert status_text(snap, {"done": 12, "total": 40, "seconds_left": 240}) == "scoring 12 of 40 · about 4 min left"
    assert status_text(snap, loaded=False) == "model: loading…"
