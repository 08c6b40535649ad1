"""A small demo set written for MCQ Lens: three original passages with six questions.

The texts are the product's own (no outside source), so they can ship in the
repository.  A few spans are pre-marked so that a first look at the window shows
what evidence and bases look like; offsets are found from the quoted phrases,
never typed by hand.
"""
from __future__ import annotations

from desktop.domain.model import BASIS, EVIDENCE, IMPORTED, Dataset, Passage, Question, Span

_PASSAGES = [
    (
        "demo-lighthouse",
        "For forty years, Ada Morel kept the lighthouse on Gull Rock. Every evening she climbed the "
        "ninety-one steps to light the lamp, and every morning she wrote the weather in a blue notebook.\n"
        "When the harbour board installed an electric lamp in 1962, many people expected her to leave. "
        "Instead she stayed on as a guide, telling visitors how ships had once depended on a single flame.\n"
        "Her notebooks are now kept in the town museum. Scientists still read them, because they are the "
        "only daily record of the island's winds from those years.",
        [
            ("What did Ada Morel do every morning?",
             ["She climbed the steps to light the lamp.", "She wrote down the weather.",
              "She guided visitors around the island.", "She repaired the harbour boats."], 1,
             {0: "climbed the ninety-one steps to light the lamp", 1: "wrote the weather in a blue notebook",
              2: "she stayed on as a guide"},
             ["every morning she wrote the weather in a blue notebook"]),
            ("Why do scientists still read Ada's notebooks?",
             ["They were written by a famous writer.", "They describe how ships were built.",
              "They are the only daily record of the winds at that time.",
              "They explain how the electric lamp works."], 2,
             {2: "they are the only daily record of the island's winds from those years"},
             ["because they are the only daily record of the island's winds from those years"]),
        ],
    ),
    (
        "demo-garden",
        "The school garden began as a patch of weeds behind the gym. Two students, Tomas and Lin, asked "
        "the head teacher for permission to clear it, and she agreed on one condition: the garden had to "
        "feed someone.\n"
        "In the first spring they planted beans, because beans grow quickly and need little care. By June "
        "the beans were climbing the fence, and the kitchen served them at lunch twice a week.\n"
        "Now every class looks after one bed. The youngest children grow sunflowers, which are easy to "
        "measure, and they record the height of each plant on a chart by the door.",
        [
            ("Why did Tomas and Lin plant beans first?",
             ["Beans were the head teacher's favourite food.", "Beans grow fast and are easy to look after.",
              "Beans were the only seeds they could buy.", "Beans can be measured on a chart."], 1,
             {1: "beans grow quickly and need little care", 3: "record the height of each plant on a chart"},
             ["because beans grow quickly and need little care"]),
            ("The head teacher agreed to the garden on condition that _ .",
             ["it produced food for people", "the students cleared the gym",
              "every class looked after one bed", "sunflowers were planted first"], 0,
             {0: "the garden had to feed someone", 2: "every class looks after one bed"},
             []),
        ],
    ),
    (
        "demo-bridge",
        "The old rope bridge over the Tarn River was replaced last autumn. Engineers chose steel cables "
        "instead of rope, since steel does not rot in the damp valley air.\n"
        "Villagers were worried that the new bridge would spoil the view. The designers answered by painting "
        "the towers dark green so that they would blend into the forest behind them.\n"
        "Since the opening, the number of walkers crossing each weekend has doubled, and the village café "
        "has had to hire two more people.",
        [
            ("What was the main reason for using steel cables?",
             ["Steel is cheaper than rope.", "Steel does not rot in wet air.",
              "Steel can be painted green.", "Steel bridges attract more walkers."], 1,
             {0: "", 1: "steel does not rot in the damp valley air",
              2: "painting the towers dark green", 3: "the number of walkers crossing each weekend has doubled"},
             ["since steel does not rot in the damp valley air"]),
            ("What can we learn from the last paragraph?",
             ["The villagers still dislike the bridge.", "The bridge has helped local business.",
              "The café was closed during the building work.", "Fewer people visit the forest now."], 1,
             {1: "the village café has had to hire two more people"},
             []),
        ],
    ),
]


def _find(text: str, phrase: str) -> tuple[int, int]:
    start = text.find(phrase)
    if start < 0:
        raise ValueError(f"demo phrase not in passage: {phrase!r}")
    return start, start + len(phrase)


def demo_dataset() -> Dataset:
    """The demo items as one Dataset of source "demo" (import it like any file)."""
    passages = []
    for pid, text, questions in _PASSAGES:
        p = Passage(id=pid, text=text, source="demo", split="demo")
        for j, (stem, alternatives, key, bases, evidence) in enumerate(questions):
            spans = []
            for alt, phrase in bases.items():
                if phrase:
                    s, e = _find(text, phrase)
                    spans.append(Span(s, e, BASIS, alt, annotator=IMPORTED, origin=IMPORTED))
            for phrase in evidence:
                s, e = _find(text, phrase)
                spans.append(Span(s, e, EVIDENCE, annotator=IMPORTED, origin=IMPORTED))
            p.questions.append(Question(id=f"{pid}-{j}", passage_id=pid, index=j, stem=stem,
                                        alternatives=alternatives, key=key, source="demo", spans=spans))
        passages.append(p)
    return Dataset(source="demo", passages=passages, extra={"about": "MCQ Lens demo items (original texts)"})
