"""Prerequisite edges checked against learner data: counterexamples with confidence intervals.

An edge p -> q claims that mastering q needs p. A learner who answers q correctly and
p wrongly is a **counterexample** to it (item tree analysis: Van Leeuwe 1974; Schrepp
1999). Among the human learners who answered both ends, the counterexample rate
b / n estimates how often the data contradict the edge; a few counterexamples are
expected from careless errors and lucky guesses, so an edge is flagged as
**contradicted** only when the lower end of the Wilson score interval of the rate
(``statsmodels.stats.proportion.proportion_confint``, level 1 - alpha) lies above a
tolerance (default 0.1): the data then show, beyond sampling error, more than that
share of counterexamples. Edges nobody answered both ends of are untested (NaN rate).

**Question level**: every stored ``(:Question)-[:PREREQUISITE_OF]->(:Question)`` edge
into the dataset (the Eq. 1 derivation or any other source), by the
``question_prerequisite_counterexamples`` query.

**Concept level**: every ``(:Concept)-[:PREREQUISITE_OF]->(:Concept)`` edge c -> d
whose two concepts are both assessed by questions of the dataset. A concept is judged
through the questions that assess it **and not the other end** (a question assessing
both c and d answers for both at once and cannot contradict the edge); a learner
masters a concept when the share of those questions answered correctly exceeds
``mastery`` (default 0.5, the rule that also makes an ability group's knowledge state
in :mod:`kstp.evaluators.koc`); a counterexample masters d but not c. With one question
per concept this is exactly the question-level count. Done by the
``concept_prerequisite_counterexamples`` query.

The figures are written on the edge (``attemptedBoth``, ``counterexamples``,
``counterexampleRate``, ``counterexampleLow``, ``counterexampleHigh``,
``contradicted``, ``checkedOn`` = the dataset); a concept edge checked against several
datasets keeps the last. Lower counterexample rates are better.

References
----------
Van Leeuwe, J. F. J. (1974). Item tree analysis. *Nederlands Tijdschrift voor de
Psychologie*, 29, 475-484. Schrepp, M. (1999). On the empirical construction of
implications between bi-valued test items. *Mathematical Social Sciences*, 38, 361-375.
Wilson, E. B. (1927). Probable inference... *JASA*, 22, 209-212.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from kstp.errors import KstpError
from kstp.graph.store import GraphStore
from kstp.graph.structures import dataset_questions

__all__ = ["VERSION", "HIGHER_IS_BETTER", "LEVELS", "TOLERANCE", "ALPHA", "MASTERY", "score_edges",
           "CheckResult", "check_prerequisites"]

VERSION = "1.0"
HIGHER_IS_BETTER = {"counterexampleRate": False}
LEVELS = ("question", "concept")
#: Counterexample rate an edge may show before the data count as contradicting it.
TOLERANCE = 0.1
ALPHA = 0.05
MASTERY = 0.5
_LABEL = {"question": "Question", "concept": "Concept"}
_QUERY = {"question": "question_prerequisite_counterexamples", "concept": "concept_prerequisite_counterexamples"}


def score_edges(counts: pd.DataFrame, tolerance: float = TOLERANCE, alpha: float = ALPHA) -> pd.DataFrame:
    """Counterexample rate, its Wilson interval and the verdict for each edge.

    Parameters
    ----------
    counts : pandas.DataFrame
        ``fromId, toId, attemptedBoth, counterexamples`` (ints, 0 <= counterexamples <=
        attemptedBoth), one row per edge.
    tolerance : float
        In [0, 1): the counterexample rate an edge may have.
    alpha : float
        In (0, 1): the interval is two-sided at level 1 - alpha.

    Returns
    -------
    pandas.DataFrame
        ``counts`` plus ``counterexampleRate``, ``counterexampleLow``,
        ``counterexampleHigh`` (NaN for an untested edge) and ``contradicted`` (bool:
        the lower bound exceeds ``tolerance``).

    Examples
    --------
    30 of 100 learners solved q but not p: the interval [0.219, 0.396] lies above 0.1.

    >>> edges = pd.DataFrame({"fromId": ["p", "a"], "toId": ["q", "b"], "attemptedBoth": [100, 0],
    ...                       "counterexamples": [30, 0]})
    >>> out = score_edges(edges)
    >>> out[["counterexampleLow", "counterexampleHigh"]].round(3).values.tolist()
    [[0.219, 0.396], [nan, nan]]
    >>> out["contradicted"].tolist()
    [True, False]
    """
    from statsmodels.stats.proportion import proportion_confint
    if not 0 <= tolerance < 1 or not 0 < alpha < 1:
        raise KstpError(f"tolerance {tolerance} must lie in [0, 1) and alpha {alpha} in (0, 1)")
    out = counts.copy()
    n = out["attemptedBoth"].to_numpy(np.int64)
    k = out["counterexamples"].to_numpy(np.int64)
    tested = n > 0
    rate = np.full(len(out), np.nan)
    low, high = rate.copy(), rate.copy()
    if tested.any():
        rate[tested] = k[tested] / n[tested]
        low[tested], high[tested] = proportion_confint(k[tested], n[tested], alpha=alpha, method="wilson")
    out["counterexampleRate"], out["counterexampleLow"], out["counterexampleHigh"] = rate, low, high
    out["contradicted"] = tested & (np.nan_to_num(low, nan=0.0) > tolerance)
    return out


@dataclass
class CheckResult:
    """The checked edges of one dataset, worst first (by the interval's lower bound, then rate)."""

    dataset: str
    edges: pd.DataFrame
    tolerance: float
    alpha: float
    mastery: float

    def summary(self) -> list[dict]:
        """Per level: edges, tested edges, contradicted edges, mean counterexample rate of the tested ones."""
        rows = []
        for level in LEVELS:
            part = self.edges[self.edges["level"] == level]
            if part.empty:
                continue
            tested = part[part["attemptedBoth"] > 0]
            rows.append({"dataset": self.dataset, "level": level, "edges": len(part), "tested": len(tested),
                         "contradicted": int(part["contradicted"].sum()),
                         "meanRate": float(tested["counterexampleRate"].mean()) if len(tested) else float("nan"),
                         "tolerance": self.tolerance, "alpha": self.alpha})
        return rows


def check_prerequisites(store: GraphStore, dataset: str, levels: tuple[str, ...] = LEVELS,
                        tolerance: float = TOLERANCE, alpha: float = ALPHA, mastery: float = MASTERY,
                        write_back: bool = True) -> CheckResult:
    """Count counterexamples to every prerequisite edge of ``dataset`` and judge each edge.

    Parameters
    ----------
    levels : tuple of {"question", "concept"}
        Which edges to check.
    tolerance, alpha : float
        See :func:`score_edges`.
    mastery : float
        In [0, 1): concept level only, the share of a concept's questions a learner must
        exceed to master it.
    write_back : bool
        Write the figures on the edges.

    Returns
    -------
    CheckResult
        ``edges``: ``level, fromId, toId, attemptedBoth, counterexamples``, the scores
        of :func:`score_edges`, sorted worst first.

    Raises
    ------
    UnknownIdError
        When the dataset is not in the graph.
    KstpError
        On an unknown level or a parameter out of range.
    """
    unknown = [level for level in levels if level not in LEVELS]
    if unknown or not levels:
        raise KstpError(f"unknown level {unknown[0] if unknown else ''!r}; use {' and/or '.join(LEVELS)}")
    if not 0 <= mastery < 1:
        raise KstpError(f"mastery {mastery} must lie in [0, 1)")
    dataset_questions(store, dataset)
    parts = []
    for level in levels:
        params = {"dataset": dataset, "mastery": float(mastery)} if level == "concept" else {"dataset": dataset}
        counts = store.frame(_QUERY[level], params).astype({"attemptedBoth": np.int64, "counterexamples": np.int64})
        scored = score_edges(counts, tolerance, alpha)
        if write_back and len(scored):
            store.write_relationships("PREREQUISITE_OF", _LABEL[level], _LABEL[level], pd.DataFrame({
                "from_id": scored["fromId"], "to_id": scored["toId"], "attemptedBoth": scored["attemptedBoth"],
                "counterexamples": scored["counterexamples"], "counterexampleRate": scored["counterexampleRate"],
                "counterexampleLow": scored["counterexampleLow"],
                "counterexampleHigh": scored["counterexampleHigh"], "contradicted": scored["contradicted"],
                "checkedOn": dataset}))
        parts.append(scored.assign(level=level))
    columns = ["level", "fromId", "toId", "attemptedBoth", "counterexamples", "counterexampleRate",
               "counterexampleLow", "counterexampleHigh", "contradicted"]
    edges = pd.concat(parts, ignore_index=True)[columns]
    edges = edges.sort_values(["counterexampleLow", "counterexampleRate", "level", "fromId", "toId"],
                              ascending=[False, False, True, True, True], na_position="last", ignore_index=True)
    return CheckResult(dataset, edges, tolerance, alpha, mastery)
