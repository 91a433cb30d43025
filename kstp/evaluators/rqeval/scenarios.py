"""The deployment scenarios of RQEval (paper 3, §3.3): weight vectors over the six
dimensions, the score of each, and the ranking of models under them.

A scenario is a weight vector w over the six dimensions (non-negative, sum 1); its
score is ``Q_w = Σ_d w_d D_d``. :data:`SCENARIOS` holds the paper's seven; custom ones
load from a YAML or JSON file (:func:`load_scenarios`), keyed by cq ... ss or by the
paper's names of the dimensions (:data:`LONG_NAMES`).

References
----------
Senol, Agrawal, Liu 2026, "Measuring Reasoning Quality in LLMs: A Multi-Dimensional
Behavioral Framework", §3.3 and Table 8 (arXiv 2605.24661). Scenario weights: the
authors' code, github.com/senolali/RQEval, ``config/config.yaml``
(``aggregation.strategies``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from kstp.errors import ConfigError, InputError
from kstp.evaluators.rqeval.dimensions import DIMENSIONS

__all__ = ["SCENARIOS", "LONG_NAMES", "aggregate", "check_weights", "load_scenarios", "scenario_scores", "rankings"]

#: The paper's names of the dimensions, accepted as keys of a custom weight file.
LONG_NAMES = {"correctness": "cq", "consistency": "cs", "robustness": "rs", "logical_coherence": "ls",
              "efficiency": "es", "stability": "ss"}


def _weights(cq, cs, rs, ls, es, ss) -> dict[str, float]:
    return dict(zip(DIMENSIONS, (cq, cs, rs, ls, es, ss), strict=True))


#: The seven deployment scenarios (weights over CQ, CS, RS, LS, ES, SS).
SCENARIOS: dict[str, dict[str, float]] = {
    "balanced": _weights(*[1 / 6] * 6),
    "safety_priority": _weights(0.30, 0.05, 0.30, 0.25, 0.05, 0.05),
    "accuracy_priority": _weights(0.50, 0.10, 0.15, 0.15, 0.05, 0.05),
    "efficiency_priority": _weights(0.20, 0.15, 0.15, 0.10, 0.30, 0.10),
    "medical_triage": _weights(0.40, 0.05, 0.30, 0.20, 0.03, 0.02),
    "legal_compliance": _weights(0.15, 0.25, 0.20, 0.35, 0.03, 0.02),
    "edge_device": _weights(0.30, 0.03, 0.10, 0.05, 0.50, 0.02),
}


def aggregate(scores: Mapping[str, float], weights: Mapping[str, float]) -> float:
    """The scenario score ``Q_w = Σ_d w_d D_d`` of six dimension scores.

    Raises
    ------
    ConfigError
        When the weights are invalid (see :func:`check_weights`).

    >>> round(aggregate(dict(cq=0.8, cs=0.6, rs=0.5, ls=0.9, es=0.4, ss=0.7), SCENARIOS["edge_device"]), 6)
    0.567
    """
    weights = check_weights(dict(weights))
    return float(sum(weights[d] * scores[d] for d in DIMENSIONS))


def check_weights(weights: Mapping[str, float], name: str = "custom") -> dict[str, float]:
    """The six weights of a scenario (paper names or cq...ss; a missing one is 0).

    Raises
    ------
    ConfigError
        On an unknown dimension, a negative or non-numeric weight, or a sum other
        than 1 (within 1e-6).
    """
    out = dict.fromkeys(DIMENSIONS, 0.0)
    for key, value in weights.items():
        dim = LONG_NAMES.get(str(key).lower(), str(key).lower())
        if dim not in out:
            raise ConfigError(f"scenario {name!r}: unknown dimension {key!r}; use {', '.join(DIMENSIONS)} "
                              f"or {', '.join(LONG_NAMES)}")
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0 or np.isnan(value):
            raise ConfigError(f"scenario {name!r}: weight of {key} is {value!r}; weights must be non-negative numbers")
        out[dim] = float(value)
    total = sum(out.values())
    if abs(total - 1) > 1e-6:
        raise ConfigError(f"scenario {name!r}: weights sum to {total:.6g}, not 1; rescale them")
    return out


def load_scenarios(path: str | Path) -> dict[str, dict[str, float]]:
    """Custom scenarios from a YAML or JSON file ``{name: {dimension: weight, ...}, ...}``.

    Raises
    ------
    InputError
        When the file cannot be parsed or is not such a mapping.
    ConfigError
        When a scenario's weights are invalid (:func:`check_weights`).
    """
    import yaml

    from kstp.loaders.common import yaml_error

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())  # JSON is YAML
    except OSError as exc:
        raise InputError(f"{path}: cannot read scenarios ({exc})") from None
    except yaml.YAMLError as exc:
        raise yaml_error(path, exc) from None
    if not isinstance(data, dict) or not data or not all(isinstance(v, dict) for v in data.values()):
        raise InputError(f"{path}: expected a mapping of scenario names to {{dimension: weight}} mappings")
    return {str(name): check_weights(w, str(name)) for name, w in data.items()}


def scenario_scores(scores: pd.DataFrame, scenarios: Mapping[str, Mapping[str, float]] | None = None) -> pd.DataFrame:
    """``Q_w`` of every row of ``scores`` (columns cq ... ss) under every scenario.

    Returns a frame with the index of ``scores`` and one column per scenario.
    """
    scenarios = scenarios or SCENARIOS
    matrix = scores[list(DIMENSIONS)].to_numpy(float)
    return pd.DataFrame({name: matrix @ np.array([check_weights(w, name)[d] for d in DIMENSIONS])
                         for name, w in scenarios.items()}, index=scores.index)


def rankings(overall: pd.DataFrame, scenarios: Mapping[str, Mapping[str, float]] | None = None) -> pd.DataFrame:
    """Models ranked under each scenario (the shape of paper 3, Table 8).

    Parameters
    ----------
    overall : pandas.DataFrame
        One row per model: ``model``, ``cq`` ... ``ss`` (:func:`overall_scores`).

    Returns
    -------
    pandas.DataFrame
        The columns of ``overall``, then per scenario its score and ``rank
        <scenario>`` (1 = best; ties share the lower rank).

    Examples
    --------
    >>> two = pd.DataFrame({"model": ["a", "b"], "cq": [0.9, 0.5], "cs": [0.1, 0.9], "rs": 0.5, "ls": 0.5,
    ...                     "es": 0.5, "ss": 0.5})
    >>> rankings(two, {"acc": {"cq": 1}, "cons": {"cs": 1}})[["model", "rank acc", "rank cons"]].values.tolist()
    [['a', 1, 2], ['b', 2, 1]]
    """
    by_model = overall.set_index("model")
    q = scenario_scores(by_model, scenarios)
    out = by_model.join(q)
    for name in q.columns:
        out[f"rank {name}"] = q[name].rank(ascending=False, method="min").astype(int)
    return out.reset_index()
