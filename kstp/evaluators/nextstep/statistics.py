"""Paper 2's statistics: the tables of a scored design, with intervals and paired tests.

:func:`aggregate` reads one row per cell (as :func:`kstp.evaluators.nextstep.run.rescore`
returns them). States weigh equally (a sampled state by its draw count); within a
state and condition the scores are averaged over models and presentations (macro F1
is this state-weighted mean of per-answer F1); the overall row averages each state
over its conditions; condition contrasts of exact-set accuracy, recall and F1 are
paired over states; 95% percentile intervals from ``scipy.stats.bootstrap`` over
states, two-sided sign-flip tests (``scipy.stats.permutation_test``,
``permutation_type='samples'``), Holm adjustment over the adjacent contrasts of each
measure (:func:`holm`, as ``statsmodels``' ``multipletests(method="holm")``). Agreement
between presentations and the per-domain figures are also pooled over models and conditions.

References
----------
Steiner, Hochweber 2026, "Benchmarking LLM Next-Step Recommendations with Knowledge
Space Theory", §3.3-§4.5, Tables 3 and 4, Figures 1-3.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kstp.evaluators.nextstep.prompts import CONDITIONS
from kstp.evaluators.nextstep.scoring import METRICS, agreement

__all__ = ["aggregate", "holm", "NextstepReport"]


@dataclass
class NextstepReport:
    """The tables of a report (paper 2, Tables 3 and 4, the data of Figures 1-3, their companions)."""

    conditions: pd.DataFrame
    contrasts: pd.DataFrame
    models: pd.DataFrame
    domains: pd.DataFrame
    model_domains: pd.DataFrame
    domain_summary: pd.DataFrame
    agreement: pd.DataFrame
    by_fringe: pd.DataFrame
    invalid: pd.DataFrame

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table by its file stem (``nextstep_<name>.csv``)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


#: Metrics whose adjacent contrasts are tested (each family Holm-adjusted on its own).
CONTRAST_METRICS = ("exact", "recall", "f1")
#: Metrics with a 95% bootstrap interval in the condition table (Figure 1: exact and macro F1).
INTERVAL_METRICS = ("exact", "f1")


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjusted p-values (Holm 1979), in the order given.

    The i-th smallest of m p-values is multiplied by m - i + 1 (i from 1), the running maximum
    taken in that order and capped at 1: the values ``statsmodels.stats.multitest.multipletests(p,
    method="holm")[1]`` returns (tests/evaluators/test_nextstep.py checks them against it). Not that
    function itself: it runs ``gc.collect()`` at every call, 60 ms in a fresh interpreter and more
    in a process that holds a large heap (a report called it once per measure).

    Parameters
    ----------
    p_values : sequence of float, shape (m,)
        A NaN sorts last and makes every adjusted value after it NaN, as in statsmodels.

    Returns
    -------
    numpy.ndarray of float, shape (m,)
    """
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p)
    adjusted = np.minimum(np.maximum.accumulate(p[order] * np.arange(len(p), 0, -1)), 1.0)
    out = np.empty_like(adjusted)
    out[order] = adjusted
    return out


def _expanded(frame: pd.DataFrame, column: str) -> np.ndarray:
    """Per-state values repeated by weight: a sampled state counts once per draw."""
    return np.repeat(frame[column].to_numpy(float), frame["weight"].to_numpy(int))


def _interval(values: np.ndarray, seed: int, resamples: int) -> tuple[float, float]:
    from scipy import stats
    if len(values) < 2 or np.all(values == values[0]):
        value = float(values.mean()) if len(values) else float("nan")
        return value, value
    result = stats.bootstrap((values,), np.mean, n_resamples=resamples, confidence_level=0.95,
                             method="percentile", rng=np.random.default_rng(seed))
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def _sign_flip(differences: np.ndarray, seed: int, flips: int) -> float:
    from scipy import stats
    if not len(differences) or np.all(differences == 0):
        return 1.0
    result = stats.permutation_test((differences,), np.mean, permutation_type="samples", n_resamples=flips,
                                    alternative="two-sided", rng=np.random.default_rng(seed))
    return float(result.pvalue)


def _state_means(scored: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Scores averaged within (by..., state, condition) over what is not in ``by``."""
    keys = [*by, "catalogue", "stateId", "condition"]
    means = scored.groupby(keys)[list(METRICS)].mean().reset_index()
    weights = scored.groupby(keys)["weight"].first().reset_index(drop=True)
    return means.assign(weight=weights.to_numpy())


def _pooled_states(cells: pd.DataFrame, by: list[str] | None = None) -> pd.DataFrame:
    """Per state (within ``by``), the mean over its conditions of :func:`_state_means` rows."""
    keys = [*(by or []), "catalogue", "stateId"]
    grouped = cells.groupby(keys)
    return grouped[list(METRICS)].mean().assign(weight=grouped["weight"].first()).reset_index()


def _weighted(frame: pd.DataFrame, column: str) -> float:
    values = frame[column].to_numpy(float)
    weights = frame["weight"].to_numpy(float)
    keep = ~np.isnan(values)
    return float(np.average(values[keep], weights=weights[keep])) if keep.any() else float("nan")


def _summary_row(part: pd.DataFrame, raw: pd.DataFrame, seed: int, resamples: int) -> dict:
    """A row of the condition table: counts from ``raw`` cells, state-weighted measures of ``part``."""
    answered = raw["validity"] != "missing"
    row = {"states": len(part), "responses": int(answered.sum()),
           "valid": float((raw.loc[answered, "validity"] == "valid").mean()) if answered.any() else float("nan"),
           "invalid": int((raw["validity"] == "invalid").sum()), "missing": int((~answered).sum()),
           **{metric: _weighted(part, metric) for metric in METRICS}}
    for metric in INTERVAL_METRICS:
        row[f"{metric} low"], row[f"{metric} high"] = _interval(_expanded(part, metric), seed, resamples)
    return row


def _agreement_rows(pairs: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    return pairs.groupby(keys).agg(pairs=("jaccard", "size"), **{"exact agreement": ("exact agreement", "mean")},
                                   jaccard=("jaccard", "mean")).reset_index()


def aggregate(scored: pd.DataFrame, seed: int = 0, resamples: int = 10_000, flips: int = 100_000) -> NextstepReport:
    """Tables of a scored design (one row per cell, as :func:`kstp.evaluators.nextstep.run.rescore` returns).

    Technically missing cells are left out and counted; invalid answers are in the
    denominators with the worst score of each measure. For each condition, every
    state's score is the mean over models and presentations; the condition's figure
    is the weighted mean over states with 95% percentile bootstrap intervals of
    exact-set accuracy and macro F1 (``resamples`` resamples of states). The
    ``all`` row pools the conditions: each state's mean over its conditions, then
    the weighted mean over states. Adjacent contrasts P1-P0, P2-P1, P3-P2 (with a
    subset of conditions: each present condition against the previous present one)
    of exact-set accuracy, recall and F1 are paired over states, tested by
    two-sided sign flips (``flips`` random flips, or all 2^n when fewer) and
    Holm-adjusted within each measure. Every random statistic draws from
    ``numpy.random.default_rng(seed)`` anew, so reports are reproducible.

    Returns
    -------
    NextstepReport
        ``conditions`` (paper 2, Table 3 shape, with the ``all`` row),
        ``contrasts`` (one row per measure and contrast), ``models`` (Table 4 shape:
        model x condition exact-set accuracy with ranks; ties share a rank and the
        next rank is skipped), ``domains`` (catalogue x condition exact-set accuracy
        and ``all``: Figure 2), ``model_domains`` (model x catalogue x condition:
        states, answered responses, exactly right ones and the state-weighted
        exact-set accuracy: Figure 3's "94.4% (17/18)" for any cell),
        ``domain_summary`` (per catalogue, every measure pooled over conditions and
        models), ``agreement`` (between presentations of a cell
        whose answers are both valid: per model and condition, pooled over models
        per condition, and over everything, model and condition ``all``),
        ``by_fringe`` (exact-set accuracy by condition and outer-fringe size, kstp's
        own breakdown; size 0 is the terminal state, §4.5.1's "192 terminal-state
        responses"), ``invalid`` (counts by kind).

    Examples
    --------
    >>> cells = pd.DataFrame({"model": "m", "catalogue": "c", "stateId": ["s0", "s1", "s0", "s1"], "weight": 1,
    ...                       "fringeSize": 1, "condition": ["P0", "P0", "P1", "P1"], "presentation": 0,
    ...                       "validity": "valid", "predicted": [frozenset()] * 4, "invalidKind": None,
    ...                       "exact": [0.0, 1.0, 1.0, 1.0], "precision": 1.0, "recall": 1.0, "f1": 1.0,
    ...                       "jaccard": 1.0, "symDiff": 0})
    >>> aggregate(cells, resamples=100, flips=100).conditions[["condition", "exact"]].values.tolist()
    [['P0', 0.5], ['P1', 1.0], ['all', 0.75]]
    """
    answered = scored[scored["validity"] != "missing"]
    cells = _state_means(answered, [])
    conditions = [c for c in CONDITIONS if c in set(cells["condition"])]
    rows = [{"condition": c, **_summary_row(cells[cells["condition"] == c], scored[scored["condition"] == c],
                                            seed, resamples)} for c in conditions]
    if len(conditions) > 1:
        rows.append({"condition": "all", **_summary_row(_pooled_states(cells), scored, seed, resamples)})
    by_condition = pd.DataFrame(rows)
    contrasts = []
    for metric in CONTRAST_METRICS:
        family = []
        for first, second in itertools.pairwise(conditions):
            a = cells[cells["condition"] == first].set_index(["catalogue", "stateId"])
            b = cells[cells["condition"] == second].set_index(["catalogue", "stateId"])
            both = a.index.intersection(b.index)
            paired = pd.DataFrame({metric: b.loc[both, metric] - a.loc[both, metric], "weight": a.loc[both, "weight"]})
            diff = _expanded(paired, metric)
            low, high = _interval(diff, seed, resamples)
            family.append({"metric": metric, "contrast": f"{second}-{first}", "states": len(both),
                           "difference": float(diff.mean()) if len(diff) else float("nan"),
                           "low": low, "high": high, "p": _sign_flip(diff, seed, flips)})
        if family:
            adjusted = holm([row["p"] for row in family])
            contrasts += [{**row, "pHolm": float(q)} for row, q in zip(family, adjusted, strict=True)]
    contrasts = pd.DataFrame(contrasts, columns=["metric", "contrast", "states", "difference", "low", "high", "p",
                                                 "pHolm"])
    per_model = _state_means(answered, ["model"])
    table4 = per_model.groupby(["model", "condition"]).apply(lambda g: _weighted(g, "exact"), include_groups=False)
    models = table4.unstack("condition").reindex(columns=conditions)
    models["mean"] = models.mean(axis=1)
    for column in [*conditions, "mean"]:
        # Equal accuracies summed in another order can differ in the last bits (thirds with three
        # presentations); rounding to 12 places lets them tie as Table 4's ties do.
        models[f"rank {column}"] = models[column].round(12).rank(method="min", ascending=False).astype("Int64")
    models = models.reset_index()
    domains = cells.groupby(["catalogue", "condition"]).apply(lambda g: _weighted(g, "exact"), include_groups=False) \
        .unstack("condition").reindex(columns=conditions)
    pooled = _pooled_states(cells)
    domains["all"] = pooled.groupby("catalogue").apply(lambda g: _weighted(g, "exact"), include_groups=False)
    domains = domains.reset_index()
    keys = ["model", "catalogue", "condition"]
    per_cell = per_model.groupby(keys)
    model_domains = pd.concat([per_cell.size().rename("states"),
                               answered.assign(right=answered["exact"] == 1.0).groupby(keys)
                               .agg(responses=("right", "size"), correct=("right", "sum")),
                               per_cell.apply(lambda g: _weighted(g, "exact"), include_groups=False).rename("exact")],
                              axis=1).reset_index()
    domain_summary = pd.DataFrame([{"catalogue": catalogue, "states": len(group),
                                    **{metric: _weighted(group, metric) for metric in METRICS}}
                                   for catalogue, group in pooled.groupby("catalogue")],
                                  columns=["catalogue", "states", *METRICS])
    pairs = []
    for (model, _, _, condition), group in answered.groupby(["model", "catalogue", "stateId", "condition"]):
        valid = group[group["validity"] == "valid"].sort_values("presentation")
        for (_, x), (_, y) in itertools.combinations(valid.iterrows(), 2):
            exact, jaccard = agreement(x["predicted"], y["predicted"])
            pairs.append({"model": model, "condition": condition, "exact agreement": exact, "jaccard": jaccard})
    columns = ["model", "condition", "pairs", "exact agreement", "jaccard"]
    if pairs:
        pairs = pd.DataFrame(pairs)
        agreement_table = pd.concat([_agreement_rows(pairs, ["model", "condition"]),
                                     _agreement_rows(pairs.assign(model="all"), ["model", "condition"]),
                                     _agreement_rows(pairs.assign(model="all", condition="all"),
                                                     ["model", "condition"])], ignore_index=True)[columns]
    else:
        agreement_table = pd.DataFrame(columns=columns)
    sizes = answered.groupby(["catalogue", "stateId"])["fringeSize"].first()
    sized = cells.join(sizes, on=["catalogue", "stateId"])
    by_fringe = pd.DataFrame([{"condition": condition, "fringeSize": int(size), "states": len(group),
                               "exact": _weighted(group, "exact"), "f1": _weighted(group, "f1")}
                              for (condition, size), group in sized.groupby(["condition", "fringeSize"])],
                             columns=["condition", "fringeSize", "states", "exact", "f1"])
    invalid = scored[scored["validity"] == "invalid"].groupby(["condition", "invalidKind"]).size() \
        .rename("responses").reset_index()
    return NextstepReport(by_condition, contrasts, models, domains, model_domains, domain_summary, agreement_table,
                          by_fringe, invalid)
