"""A graph written with its weights as ONNX external data, in files below 16 MiB (`save_split`):
every file stays far under the 95 MB a git host takes, and each can come back from a GPU
machine."""
from __future__ import annotations

from pathlib import Path

PART_BYTES = 15 * 1024 * 1024  # external data files: each under the 16 MiB a device call brings back


def save_split(model, directory: str | Path, name: str, part_bytes: int = PART_BYTES) -> list[str]:
    """Write `name` (the graph) and its weights as external data in `name`.dataN files of at
    most `part_bytes` each; returns the file names written."""
    from onnx import external_data_helper

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    import onnx

    model = onnx.ModelProto.FromString(model.SerializeToString())
    files, part, used, handle = [], -1, part_bytes, None
    try:
        for t in sorted(model.graph.initializer, key=lambda t: -len(t.raw_data or b"")):
            external_data_helper.convert_external_data_location = None
            if not t.HasField("raw_data"):
                from onnx import numpy_helper

                t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t), t.name))
            data = t.raw_data
            if len(data) < 4096:
                continue
            if len(data) > part_bytes:
                raise ValueError(f"tensor {t.name} ({len(data)} bytes) exceeds the part size")
            if used + len(data) > part_bytes:
                if handle:
                    handle.close()
                part += 1
                fname = f"{name}.data{part}"
                files.append(fname)
                handle = open(directory / fname, "wb")
                used = 0
            external_data_helper.set_external_data(t, location=files[-1], offset=used, length=len(data))
            handle.write(data)
            used += len(data)
            t.ClearField("raw_data")
            t.data_location = onnx.TensorProto.EXTERNAL
    finally:
        if handle:
            handle.close()
    with open(directory / name, "wb") as f:
        f.write(model.SerializeToString())
    return [name, *files]
