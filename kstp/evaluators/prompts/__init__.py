"""Prompt templates reproduced from the papers, kept as data files (one per prompt).

Each ``<name>.yaml`` holds the texts of one prompt and its ``source`` (paper, appendix,
prompt number); the comment at its top says what is verbatim and what layout is kstp's.
The evaluators read them by name; a file's texts are part of the evaluator's template
hash, so a run with a paper prompt is a different run from one with kstp's own prompt.

References
----------
Cui, Do, Sachan 2026, "Do LLMs Exhibit Coherent Knowledge Structures in Mathematical
Reasoning?", Appendix A, Prompts 1-3 (arXiv 2609.05245).
"""

from __future__ import annotations

from functools import cache
from importlib import resources

import yaml

from kstp.errors import ConfigError

__all__ = ["load"]


@cache
def load(name: str) -> dict[str, str]:
    """The texts of the prompt file ``<name>.yaml``, by key (``source``, ``system``, ``user`` ...).

    Raises
    ------
    ConfigError
        When no prompt file has that name.

    Examples
    --------
    >>> load("paper1_evaluation")["user"]
    '{text}'
    """
    path = resources.files(__name__) / f"{name}.yaml"
    if not path.is_file():
        known = sorted(p.name.removesuffix(".yaml") for p in resources.files(__name__).iterdir()
                       if p.name.endswith(".yaml"))
        raise ConfigError(f"no prompt file {name!r}; known: {', '.join(known)}")
    return yaml.safe_load(path.read_text(encoding="utf-8"))
