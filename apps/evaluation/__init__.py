"""Recall quality: LoCoMo files, metrics, the `recall_eval` command (and later eval sets and
runs). A top layer: nothing imports it."""
