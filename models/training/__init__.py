"""Training: the data (records, de-duplication, the RACE pack), token ids and batches, the readers in
PyTorch (the seed's architecture, MPNet, the one-sequence reader), fine-tuning and distillation on
one or several GPUs, the checkpoint directory and the run's logit files.  Imports nothing else of
models/ (import-linter: "models: training, export, evaluation, then shipping and the report")."""
