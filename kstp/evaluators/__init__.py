"""Evaluators: one module per method; each computes its metrics and writes them back."""
