"""Evaluation on sets never trained or tuned on: the figures from logit rows (`summary`), the rows of a
trained checkpoint, of a shipped directory through the product's runtime and its CPU recipes, of the
shipped files' float model, and the evidence method's settings chosen by cross-validation."""
