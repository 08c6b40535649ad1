"""What a graph file holds besides its nodes: its weights as ONNX external data, and whether
its int8 weights are stored with float16 outlier rows (`models.export.int8_rows`)."""
from __future__ import annotations

from pathlib import Path


def stored_rows(path: Path) -> bool:
    """Whether the graph holds int8 weights with float16 outlier rows (`models.export.int8_rows`)."""
    try:
        import onnx

        meta = {p.key: p.value for p in onnx.load(str(path), load_external_data=False).metadata_props}
    except Exception:
        return False
    return meta.get("mcqlens.int8_recipe") == "int8-rows"


def external_data_problem(path: Path) -> str | None:
    """What is wrong with the files holding a graph's weights as ONNX external data
    (`model.int8.onnx.data0`...): '<file>: missing' or '<file>: cut short (N of M bytes)';
    None when they are whole, the graph keeps its weights inside, or onnx is absent.
    Asked only after a load failed: ONNX Runtime's own message does not always name the file."""
    try:
        import onnx
        from onnx.external_data_helper import ExternalDataInfo, uses_external_data

        graph = onnx.load(str(path), load_external_data=False)
    except Exception:
        return None
    needed: dict[str, int] = {}
    for t in graph.graph.initializer:
        if uses_external_data(t):
            info = ExternalDataInfo(t)
            end = int(info.offset or 0) + int(info.length or 0)
            needed[info.location] = max(needed.get(info.location, 0), end)
    for location, end in sorted(needed.items()):
        file = path.parent / location
        if not file.is_file():
            return f"{file}: missing (it holds weights of {path.name})"
        size = file.stat().st_size
        if size < end:
            return f"{file}: cut short ({size:,} of {end:,} bytes; it holds weights of {path.name})"
    return None
