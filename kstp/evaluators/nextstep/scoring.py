"""Paper 2's scoring of one answer: set measures of the recommended tasks against the fringe.

The outer fringe of a knowledge state (the tasks not yet mastered whose prerequisites
are all mastered) is the complete set of admissible next steps; an answer is compared
with it as an unordered set (:func:`score_item`): exact-set match, precision, recall,
F1, Jaccard and the symmetric-difference size, with the paper's empty-set conventions.
An invalid answer is the worst answer in every measure: 0 in the five shares and the
largest symmetric difference, the number of tasks ``|Q|`` (the complement of the fringe),
so every measure keeps invalid answers in its denominator alike. :func:`agreement`
compares two answers of the same cell.

References
----------
Steiner, Hochweber 2026, "Benchmarking LLM Next-Step Recommendations with Knowledge
Space Theory", §2-§5. Doignon & Falmagne 1999, *Knowledge Spaces*, Def. 4.1.6.
"""

from __future__ import annotations

from kstp.errors import ConfigError

__all__ = ["METRICS", "HIGHER_IS_BETTER", "score_item", "agreement"]

METRICS = ("exact", "precision", "recall", "f1", "jaccard", "symDiff")
HIGHER_IS_BETTER = {"exact": True, "precision": True, "recall": True, "f1": True, "jaccard": True,
                    "symDiff": False}


def score_item(predicted, reference, tasks: int | None = None) -> dict:
    """Set measures of prediction P against reference fringe T (an invalid answer: P is None).

    Both empty: every measure 1. Empty P, non-empty T: every measure 0. Non-empty P,
    empty T: recall 1, the others 0. An invalid answer is the worst answer in every
    measure: 0 in the five shares and symmetric difference ``tasks`` = ``|Q|``, the
    largest there is (P the complement of T), so no measure drops it from its
    denominator.

    Parameters
    ----------
    predicted : set of str or None
        The recommended tasks; None for an invalid answer.
    reference : set of str
        The outer fringe.
    tasks : int, optional
        ``|Q|``, the catalogue's number of tasks; needed for an invalid answer.

    Raises
    ------
    ConfigError
        When ``predicted`` is None and ``tasks`` is not given.

    Returns
    -------
    dict
        ``exact`` (0/1), ``precision``, ``recall``, ``f1``, ``jaccard`` in [0, 1] and
        ``symDiff`` = ``|P xor T|`` (higher is worse).

    Examples
    --------
    >>> score_item({"a", "b"}, {"b", "c"})
    {'exact': 0.0, 'precision': 0.5, 'recall': 0.5, 'f1': 0.5, 'jaccard': 0.3333333333333333, 'symDiff': 2}
    >>> score_item(set(), set())["jaccard"], score_item({"a"}, set())["recall"], score_item(set(), {"a"})["recall"]
    (1.0, 1.0, 0.0)
    >>> score_item(None, {"b"}, tasks=4)["symDiff"]
    4
    """
    if predicted is None:
        if tasks is None:
            raise ConfigError("an invalid answer's symmetric difference is |Q|; give the number of tasks")
        return {"exact": 0.0, "precision": 0.0, "recall": 0.0, "f1": 0.0, "jaccard": 0.0, "symDiff": int(tasks)}
    p, t = set(predicted), set(reference)
    hit = len(p & t)
    if not p and not t:
        precision = recall = jaccard = 1.0
    elif not p:
        precision = recall = jaccard = 0.0
    elif not t:
        precision, recall, jaccard = 0.0, 1.0, 0.0
    else:
        precision, recall, jaccard = hit / len(p), hit / len(t), hit / len(p | t)
    f1 = 1.0 if not p and not t else (2 * precision * recall / (precision + recall) if hit else 0.0)
    return {"exact": float(p == t), "precision": precision, "recall": recall, "f1": f1, "jaccard": jaccard,
            "symDiff": len(p ^ t)}


def agreement(first, second) -> tuple[float, float]:
    """Exact agreement (0/1) and Jaccard of two predictions of the same cell (both empty: 1, 1).

    >>> agreement({"a"}, {"a", "b"})
    (0.0, 0.5)
    """
    a, b = set(first), set(second)
    return float(a == b), (len(a & b) / len(a | b) if a | b else 1.0)
