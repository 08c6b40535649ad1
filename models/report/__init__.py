"""The report of the shipped models, from the build's run records alone (docs/model_runs/):
docs/models.md and its figures (`python -m models.report`, `models_md`), the speed/accuracy
frontier of the candidates (`frontier`) and the CPU reader's two cards (`cpu_reader_card`)."""
