"""Models: the backend interface and its registry, the backends, run bookkeeping (every
completion stored before it is scored), answer grading, sentence embeddings, NLI and
BERTScore."""
