"""The seven answerability metrics against hand-built confusion matrices, undefined cases included."""
import pytest

from desktop.domain import nota


def _confusion(rows):
    c = nota.Confusion()
    for answerable, predicted, key, nota_index in rows:
        c.add(answerable, predicted, key, nota_index)
    return c


def test_counting_by_hand():
    # 10 questions, NOTA always at D (3):
    #   4 unanswerable (key D): 3 chose D, 1 chose A        -> TP 3, FN 1
    #   6 answerable (key A):   2 chose D, 3 chose A, 1 B   -> FP 2, correct 3, wrong 1
    rows = [(False, 3, 3, 3)] * 3 + [(False, 0, 3, 3)] \
        + [(True, 3, 0, 3)] * 2 + [(True, 0, 0, 3)] * 3 + [(True, 1, 0, 3)]
    c = _confusion(rows)
    assert (c.true_nota, c.missed_nota, c.false_nota, c.correct, c.wrong) == (3, 1, 2, 3, 1)
    m = nota.metrics(c)
    assert m["general_accuracy"] == pytest.approx(6 / 10)
    assert m["answerable_accuracy"] == pytest.approx(3 / 6)
    assert m["recall"] == pytest.approx(3 / 4)
    assert m["specificity"] == pytest.approx(4 / 6)
    assert m["answerability_accuracy"] == pytest.approx(7 / 10)
    assert m["nota_proportion"] == pytest.approx(5 / 10)
    assert m["youden_j"] == pytest.approx(3 / 4 + 4 / 6 - 1)
    assert list(m) == list(nota.METRIC_NAMES)


def test_no_unanswerable_questions_leaves_recall_and_j_undefined():
    # C = 0: the seed's greyed bottom row of recall and Youden's J
    c = _confusion([(True, 0, 0, 3), (True, 2, 0, 3), (True, 3, 0, 3)])
    m = nota.metrics(c)
    assert m["recall"] is None and m["youden_j"] is None
    assert m["specificity"] == pytest.approx(2 / 3)
    assert m["general_accuracy"] == pytest.approx(1 / 3)
    assert m["nota_proportion"] == pytest.approx(1 / 3)


def test_no_answerable_questions_leaves_specificity_and_answerable_accuracy_undefined():
    # C = 1: every key is NOTA
    c = _confusion([(False, 1, 1, 1), (False, 0, 1, 1)])
    m = nota.metrics(c)
    assert m["specificity"] is None and m["answerable_accuracy"] is None and m["youden_j"] is None
    assert m["recall"] == 0.5 and m["general_accuracy"] == 0.5 and m["answerability_accuracy"] == 0.5


def test_zero_is_not_undefined():
    # the model never picks NOTA on unanswerable questions: recall is a defined 0, J is -specificity... +
    c = _confusion([(False, 0, 3, 3), (True, 0, 0, 3)])
    m = nota.metrics(c)
    assert m["recall"] == 0.0 and m["recall"] is not None
    assert m["youden_j"] == 0.0 and m["youden_j"] is not None


def test_empty_set_is_undefined_everywhere():
    assert all(v is None for v in nota.metrics(nota.Confusion()).values())


def test_several_nota_alternatives_count_as_nota():
    c = nota.Confusion()
    c.add(True, 2, 0, [2, 3])
    assert c.false_nota == 1


def test_means_skip_undefined_values():
    assert nota.mean_defined([None, 0.5, 1.0]) == 0.75
    assert nota.mean_defined([None, None]) is None
    assert nota.mean_defined([0.0, 0.0]) == 0.0
    rows = [{"recall": None, "youden_j": None, "general_accuracy": 0.5},
            {"recall": None, "youden_j": None, "general_accuracy": 0.7}]
    m = nota.mean_metrics(rows)
    assert m["recall"] is None and m["general_accuracy"] == pytest.approx(0.6)
