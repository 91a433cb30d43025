"""The simple learning model (SLM) of a structure file fitted to a response file, with no graph.

pks's ``slm(K, N.R, method)`` from two files: the response file gives the items, the
structure file (:func:`kstp.evaluators.blim.structure_file`: any kstIO structure, space,
basis or relation file, or a 0/1 CSV) is read onto them, and :func:`kstp.kst.slm.fit_slm`
fits one learning rate per item with the BLIM's careless and guess rates. The structure
must be a learning space (closed under union and well-graded).

Higher is better for none of the fit figures: G^2, AIC, BIC and the discrepancy are
misfit (lower is better); a larger p value means less evidence against the model.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from kstp.evaluators.blim import structure_file
from kstp.kst import blim as model
from kstp.kst.slm import SlmFit, fit_slm
from kstp.kst.validation import deviance_table
from kstp.loaders.kstio import read_kst_file

__all__ = ["VERSION", "SlmReport", "fit_slm_files", "MODELS", "WITHIN", "compare_files"]

VERSION = "1.0"
#: The models :func:`compare_files` fits: the SLM, and the BLIM with all rates free or some held equal.
MODELS = {"slm": "simple learning model", "blim-equal": "BLIM, every careless and every guess rate equal",
          "blim-careless-equal": "BLIM, every careless rate equal", "blim-guess-equal": "BLIM, every guess rate equal",
          "blim": "BLIM, every rate free"}
#: The models each one is nested in (a restriction of): the SLM restricts the BLIM's state probabilities,
#: the BLIMs with rates held equal restrict the BLIM's rates.
WITHIN = {"slm": {"blim"}, "blim-equal": {"blim-careless-equal", "blim-guess-equal", "blim"},
          "blim-careless-equal": {"blim"}, "blim-guess-equal": {"blim"}, "blim": set()}


@dataclass
class SlmReport:
    """An SLM fit of a response file, with where its structure came from."""

    name: str  # the response file's name without its ending
    structure: str  # the structure file's name
    structure_note: str  # how the structure file was read
    learners: int
    fit: SlmFit
    config: dict

    def summary(self) -> dict:
        """The fit's figures as a JSON-ready dict (pks's names in the comments of ``fit_slm``)."""
        f = self.fit
        return {"evaluator": "slm", "evaluatorVersion": VERSION, "responses": self.name,
                "structure": self.structure, "structureSource": self.structure_note, "method": f.method,
                "states": len(f.states), "learners": self.learners,
                "patterns": self.config["patterns"],
                "iterations": f.iterations, "converged": f.converged, "logLikelihood": f.log_likelihood,
                "G2": f.g2, "df": f.df, "pValue": None if np.isnan(f.p_value) else f.p_value,
                "parameters": f.n_parameters, "AIC": f.aic, "BIC": f.bic, "discrepancy": f.discrepancy,
                "convergenceNote": None if f.converged else
                f"the EM stopped at --max-iter {f.iterations} before no parameter moved more than --tol; "
                "raise --max-iter (pks: 'iteration maximum has been exceeded')"}

    def items_table(self) -> pd.DataFrame:
        """Per item: the learning rate (g), careless (beta) and guess (eta) rates."""
        f = self.fit
        return pd.DataFrame({"item": f.items, "learning": f.g, "careless": f.beta, "guess": f.eta})

    def states_table(self) -> list[dict]:
        """Every state with its probability (pks's ``P.K``), JSON-ready."""
        f = self.fit
        return [{"state": [q for q, x in zip(f.items, row, strict=True) if x], "size": int(row.sum()),
                 "probability": float(p)} for row, p in zip(f.states, f.p_k, strict=True)]


def fit_slm_files(structure_path: str | Path, responses_path: str | Path, method: str = "ML",
                  limit: int = 20_000, max_iter: int = 10_000, tol: float = 1e-7) -> SlmReport:
    """Fit the SLM of a structure file to a response file: pks's ``slm(K, N.R, method)``.

    Parameters
    ----------
    structure_path : path
        A learning space in any format :func:`kstp.evaluators.blim.structure_file` reads
        (a basis spans its space, a relation gives its quasi-ordinal space).
    responses_path : path
        A kstIO data file or a 0/1 CSV with item names (learner ids first, if any); its
        items name the structure's columns.
    method : {"ML", "MD", "MDML"}
    limit : int
        Refuse a structure with more states.
    max_iter, tol : int, float
        The EM's stopping rule (pks's ``maxiter``, ``tol``).

    Returns
    -------
    SlmReport

    Raises
    ------
    KstpError
        As :func:`kstp.evaluators.blim.structure_file` and
        :func:`kstp.loaders.kstio.read_kst_file`; :class:`kstp.kst.blim.BlimError` when the
        structure is not a learning space (the message says which property fails).

    References
    ----------
    Doignon & Falmagne 1999, *Knowledge Spaces*, §11.3; pks 0.6-0, ``slm``.
    """
    responses_path, structure_path = Path(responses_path), Path(structure_path)
    read = read_kst_file(responses_path, kind="data")
    states, note = structure_file(structure_path, read.items, limit)
    patterns, counts, _ = model.response_patterns(read.matrix)
    try:
        fit = fit_slm(states, patterns, counts, list(read.items), method, tol=tol, max_iter=max_iter)
    except model.BlimError as exc:
        raise model.BlimError(f"{structure_path}: {exc}") from None
    config = {"evaluator": "slm", "evaluatorVersion": VERSION, "method": method, "maxIter": max_iter, "tol": tol,
              "patterns": len(patterns),
              "structureSha256": hashlib.sha256(structure_path.read_bytes()).hexdigest(),
              "responsesSha256": hashlib.sha256(responses_path.read_bytes()).hexdigest()}
    return SlmReport(responses_path.stem, structure_path.name, note, len(read.matrix), fit, config)


def compare_files(structure_path: str | Path, responses_path: str | Path, models: list[str], method: str = "ML",
                  limit: int = 20_000) -> list[dict]:
    """Fit nested models of one structure to one response file and test each against the one before.

    pks's ``anova(m1, m2, ...)`` on ``blim`` and ``slm`` fits: a row per model, its
    residual df and deviance (G^2), and from the second on the likelihood-ratio test
    against the row before (:func:`kstp.kst.validation.deviance_table`).

    Parameters
    ----------
    models : list of str
        Keys of :data:`MODELS`, most restricted first (e.g. ``slm``, ``blim``; ``slm``
        needs a learning space).
    method : {"ML", "MD", "MDML"}

    Returns
    -------
    list of dict
        ``{"model", "description", "parameters", "residDf", "residDeviance", "df", "deviance", "p"}``.

    Raises
    ------
    KstpError
        On an unknown model, fewer than two, a model given twice or not nested in the one after
        it (:data:`WITHIN`; the drop in deviance would be negative, or of models the
        likelihood-ratio test does not apply to), before anything is fitted; and as
        :func:`fit_slm_files` and :func:`kstp.kst.blim.fit_blim`.
    """
    from kstp.errors import KstpError

    unknown = [m for m in models if m not in MODELS]
    if unknown:
        raise KstpError(f"unknown model {unknown[0]!r}; use {', '.join(MODELS)}")
    if len(models) < 2:
        raise KstpError("compare two or more models, most restricted first (e.g. slm blim)")
    for before, after in zip(models[:-1], models[1:], strict=True):
        if after == before:
            raise KstpError(f"model {after} is given twice; give each model once, most restricted first")
        if after not in WITHIN[before]:
            order = (f"give {after} before {before}, most restricted first" if before in WITHIN[after] else
                     f"{before} and {after} are not nested (neither restricts the other), so the likelihood-ratio "
                     "test does not apply; compare each with blim")
            raise KstpError(f"{after} does not contain {before}: {order}")
    responses_path, structure_path = Path(responses_path), Path(structure_path)
    read = read_kst_file(responses_path, kind="data")
    states, _ = structure_file(structure_path, read.items, limit)
    patterns, counts, _ = model.response_patterns(read.matrix)
    every = [list(range(len(read.items)))]
    fits = []
    for name in models:
        if name == "slm":
            try:
                fits.append(fit_slm(states, patterns, counts, list(read.items), method))
            except model.BlimError as exc:
                raise model.BlimError(f"{structure_path}: {exc}") from None
            continue
        equal = {"blim-equal": (every, every), "blim-careless-equal": (every, None),
                 "blim-guess-equal": (None, every)}.get(name, (None, None))
        fits.append(model.fit_blim(states, patterns, counts, list(read.items), method, beta_equal=equal[0],
                                   eta_equal=equal[1]))
    return [{**row, "model": name, "description": MODELS[name], "parameters": int(f.n_parameters)}
            for name, f, row in zip(models, fits, deviance_table(*fits), strict=True)]
