"""Word-embedding rows that no text can reach, left out of a stored graph.

BERT's vocabulary (MPNet's too) holds 994 tokens ``[unused0]`` … ``[unused993]``, in two blocks
of ids around ``[UNK]``, ``[CLS]``, ``[SEP]`` and ``[MASK]`` (kept: ``[UNK]`` is the word-piece
model's unknown token).  The pre-tokenizer splits ``[`` and ``]`` off as punctuation, so no text
is ever encoded as one of them, and the one-sequence layout uses none as a marker
(`inference.one_sequence`).  Their rows are 0.76 MB of int8 per model; the shortcut part of the
shipped default (`models/default/shortcut`) leaves them out so that all the shipped models fit
their 180 MB.

The low half of the word table (`models.export.mpnet_onnx.build`: ``Gather(word_embeddings_0,
Min(ids, cut - 1))``) then holds the other rows; an id past a block is moved down by the block's
length before the lookup (``ids_packed``).  Every id the tokenizer can produce meets the row it
met before, so the logits are the same bit for bit (checked on RACE dev when the part was made:
docs/model_runs/cpu-reader-2026-11-27/shortcut-m6/vocab_gap_check.json).
`restore` puts zero rows back where the blocks were, for PyTorch (`mpnet_onnx.state_from_graph`).

    python -m models.export.vocab_gap SRC_DIR OUT_DIR     # a stored model directory without the blocks
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from pathlib import Path

import numpy as np

from models.export import external_data

META = "mcqlens.vocab_gap"  # "start,stop;start,stop": the ids left out of word_embeddings_0
TABLE = "word_embeddings_0"


def unreachable_blocks(tokenizer_json: Path) -> list[tuple[int, int]]:
    """[(start, stop), ...]: the runs of consecutive ids of ``[unusedN]`` tokens that are not added
    tokens (an added token is matched in the text as it stands, before the pre-tokenizer)."""
    data = json.loads(Path(tokenizer_json).read_text(encoding="utf-8"))
    added = {t["id"] for t in data.get("added_tokens", [])}
    ids = sorted(i for tok, i in data["model"]["vocab"].items()
                 if re.fullmatch(r"\[unused\d+\]", tok) and i not in added)
    blocks: list[tuple[int, int]] = []
    for i in ids:
        if blocks and blocks[-1][1] == i:
            blocks[-1] = (blocks[-1][0], i + 1)
        else:
            blocks.append((i, i + 1))
    return blocks


def gaps_of(model) -> list[tuple[int, int]]:
    meta = {p.key: p.value for p in model.metadata_props}
    return [tuple(int(x) for x in part.split(",")) for part in meta[META].split(";")] if META in meta else []


def drop(model, blocks: list[tuple[int, int]]):
    """The stored graph (weights loaded) without the word rows of `blocks`; changed in place."""
    from onnx import helper, numpy_helper

    if gaps_of(model):
        raise ValueError("the graph already leaves word rows out")
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    keep = np.ones(numpy_helper.to_array(inits[TABLE + "_q"]).shape[0], dtype=bool)
    for start, stop in blocks:
        keep[start:stop] = False
    for suffix in ("_q", "_scale", "_zp"):  # the int8 rows and their per-row scale and zero point
        t = inits[TABLE + suffix]
        t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t)[keep], t.name))
    at = next(i for i, n in enumerate(g.node) if n.op_type == "Min" and n.output[0] == "ids_low_out")
    lookup = g.node[at]
    ids, cut_last = lookup.input[0], lookup.input[1]
    last_id = numpy_helper.to_array(inits[cut_last])  # the low half's last id (shape [1])
    nodes, shifted = [], ids
    for k, (start, stop) in enumerate(blocks):  # an id past a block moves down by the block's length
        g.initializer.extend([numpy_helper.from_array(np.array(stop, dtype=np.int64), f"gap{k}_stop"),
                              numpy_helper.from_array(np.array(stop - start, dtype=np.int64), f"gap{k}_length")])
        nodes += [helper.make_node("GreaterOrEqual", [ids, f"gap{k}_stop"], [f"past_gap{k}_out"], name=f"past_gap{k}"),
                  helper.make_node("Cast", [f"past_gap{k}_out"], [f"past_gap{k}_i64_out"], name=f"past_gap{k}_i64",
                                   to=7),
                  helper.make_node("Mul", [f"past_gap{k}_i64_out", f"gap{k}_length"], [f"gap{k}_shift_out"],
                                   name=f"gap{k}_shift"),
                  helper.make_node("Sub", [shifted, f"gap{k}_shift_out"], [f"ids_packed{k}_out"],
                                   name=f"ids_packed{k}")]
        shifted = f"ids_packed{k}_out"
    left_out = sum(stop - start for start, stop in blocks)
    g.initializer.append(numpy_helper.from_array((last_id - left_out).astype(np.int64), "cut_last_packed"))
    # the high half and the Where that picks a half still compare the ids as given with the cut
    lookup.input[0], lookup.input[1] = shifted, "cut_last_packed"
    for k, n in enumerate(nodes):
        g.node.insert(at + k, n)
    prop = model.metadata_props.add()
    prop.key, prop.value = META, ";".join(f"{a},{b}" for a, b in blocks)
    return model


def restore(low_table: np.ndarray, model) -> np.ndarray:
    """The low half of the word table with zero rows where the graph left blocks out."""
    for start, stop in gaps_of(model):  # in order: each block's rows go back at its own ids
        low_table = np.concatenate([low_table[:start], np.zeros((stop - start, low_table.shape[1]), low_table.dtype),
                                    low_table[start:]])
    return low_table


def main(argv=None) -> int:
    import onnx

    ap = argparse.ArgumentParser(prog="python -m models.export.vocab_gap", description=__doc__.split("\n")[0])
    ap.add_argument("src")
    ap.add_argument("out")
    args = ap.parse_args(argv)
    src, out = Path(args.src), Path(args.out)
    card = json.loads((src / "card.json").read_text(encoding="utf-8"))
    blocks = unreachable_blocks(src / card.get("tokenizer", "tokenizer.json"))
    model = drop(onnx.load(str(src / card["files"]["int8"])), blocks)
    out.mkdir(parents=True, exist_ok=True)
    files = external_data.save_split(model, out, card["files"]["int8"])
    shutil.copy(src / card.get("tokenizer", "tokenizer.json"), out / card.get("tokenizer", "tokenizer.json"))
    card.setdefault("quantization", {})["files"] = files
    card["quantization"]["vocab_gap"] = {"rows_left_out": [list(b) for b in blocks],
                                         "why": "the [unusedN] tokens: no text reaches them"}
    (out / "card.json").write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({"out": str(out), "rows_left_out": sum(b - a for a, b in blocks), "files": files,
                      "bytes": sum((out / f).stat().st_size for f in files)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
