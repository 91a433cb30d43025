"""BLIM fits, person assessment and learned prerequisites of a dataset, read from and written to the graph.

Reads a dataset's human learners' answers and its structure (the knowledge space of
its derived question prerequisites, or the structure its Q-matrix delineates), fits the
basic local independence model (:mod:`kstp.kst.blim`), assesses each learner, and
writes the latest fit back: careless/guess rates on each Question, state probabilities
on (:KnowledgeState) nodes, each learner's most likely state on the Learner, the fit on
a (:Run). Everything is checked before anything is written: a refused fit writes nothing.
Prerequisites learned from the same answers are :mod:`kstp.evaluators.prerequisites`.

Any structure can be fitted, not only the ones kstp builds: a file in one of the field's
formats (:mod:`kstp.loaders.kstio`: kstIO's structure, space, basis or relation files, a
pks-style 0/1 CSV) is read onto the dataset's questions (:func:`structure_file`), and
:func:`fit_files` fits a structure file to a response file with no graph at all, as
pks's ``blim(K, N.R)`` does.

Higher is better for none of the fit figures: G^2, AIC, BIC and the discrepancy are
misfit (lower is better); a larger p value means less evidence against the model.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from kstp._version import __version__
from kstp.errors import KstpError, UnknownIdError
from kstp.graph.store import GraphStore
from kstp.graph.structures import dataset_answers, dataset_questions, dataset_space, state_id_of
from kstp.inference.runs import now
from kstp.kst import blim as model
from kstp.kst import blim_gof as gof
from kstp.kst import blim_identify as identify
from kstp.kst.analysis import Structure, span
from kstp.kst.spaces import KnowledgeSpace, TooManyStatesError
from kstp.loaders.kstio import align_columns, read_kst_file

__all__ = ["VERSION", "STRUCTURES", "ResponseData", "response_data", "structure", "structure_file", "BlimReport",
           "fit_dataset", "fit_files", "write_fit", "next_steps", "NextSteps"]

VERSION = "1.0"
#: Where the structure comes from: the knowledge space of the derived prerequisites, or
#: the structure delineated from the Q-matrix by the conjunctive skill function.
STRUCTURES = ("space", "delineated")


@dataclass
class ResponseData:
    """Complete 0/1 answers of a dataset's human learners: items in question order."""

    items: list[str]
    learners: list[str]
    matrix: np.ndarray  # (learners, items) uint8
    incomplete: int  # learners left out: they did not answer every item


def response_data(store: GraphStore, dataset: str) -> ResponseData:
    """The human learners' answers as a complete learners x items matrix.

    Learners who did not answer every item are left out (and counted): the BLIM needs
    whole response patterns.

    Raises
    ------
    UnknownIdError
        When the dataset is not in the graph.
    KstpError
        When an item was answered by nobody, or no learner answered every item.
    """
    items = dataset_questions(store, dataset)["questionId"].tolist()
    kinds = store.frame("dataset_learners", {"dataset": dataset})
    humans = set(kinds.loc[kinds["kind"] == "human", "learnerId"])
    answers = dataset_answers(store, dataset).astype({"learnerId": object, "questionId": object})
    answers = answers[answers["learnerId"].isin(humans)]
    unanswered = sorted(set(items) - set(answers["questionId"]))
    if unanswered:
        named = ", ".join(unanswered[:5]) + (f" and {len(unanswered) - 5:,} more" if len(unanswered) > 5 else "")
        if len(unanswered) == len(items):
            raise KstpError(f"no learner answered the questions of dataset {dataset!r}; ingest responses first "
                            "(kstp ingest responses)")
        raise KstpError(f"no learner of dataset {dataset!r} answered {named}; "
                        "a BLIM needs answers to every item (ingest responses for it or drop the question)")
    wide = answers.pivot_table(index="learnerId", columns="questionId", values="correct", aggfunc="last")
    wide = wide.reindex(columns=items)
    complete = wide.dropna()
    if complete.empty:
        raise KstpError(f"no learner of dataset {dataset!r} answered all {len(items)} items")
    return ResponseData(items, complete.index.tolist(), complete.to_numpy().astype(np.uint8),
                        len(wide) - len(complete))


def structure(store: GraphStore, dataset: str, kind: str, items: list[str], limit: int = 20_000) -> np.ndarray:
    """The states (states, items) of the dataset's structure of ``kind`` (see :data:`STRUCTURES`).

    Raises
    ------
    KstpError
        On an unknown kind, a Q-matrix that leaves a question without skills (delineation
        then puts it in every state: not a knowledge structure), or no derived
        prerequisites and no Q-matrix at all.
    TooManyStatesError
        When the space has more than ``limit`` states.
    """
    if kind not in STRUCTURES:
        raise KstpError(f"unknown structure {kind!r}; use one of {', '.join(STRUCTURES)}")
    if kind == "space":
        try:
            states = dataset_space(store, dataset).states(limit)
        except TooManyStatesError:
            raise TooManyStatesError(f"the knowledge space of {dataset!r} has more than {limit:,} states; a BLIM "
                                     "needs every state: derive question prerequisites first, raise --limit or "
                                     "fit --structure delineated") from None
        out = np.zeros((len(states), len(items)), dtype=np.uint8)
        column = {q: j for j, q in enumerate(items)}
        for row, state in enumerate(states):
            out[row, [column[q] for q in state]] = 1
        return out
    pairs = store.frame("question_concepts", {"dataset": dataset})
    if pairs.empty:
        raise KstpError(f"dataset {dataset!r} has no Q-matrix (no ASSESSES edges) to delineate a structure from; "
                        "ingest items with --qmatrix or use --structure space")
    q = pd.crosstab(pairs["questionId"], pairs["conceptId"]).reindex(index=items, fill_value=0)
    states = model.delineate(q.to_numpy() > 0)
    if len(states) > limit:
        raise KstpError(f"the delineated structure has {len(states):,} states, more than {limit:,}")
    return states


def structure_file(path: str | Path, items: list[str], limit: int = 20_000) -> tuple[np.ndarray, str]:
    """The states of a structure file, as columns of ``items``, and a note on how they were read.

    A structure or space file gives its states; a basis file the space it spans
    (:func:`kstp.kst.analysis.span`); a relation file (surmise relation, row p column q
    when p is a prerequisite of q) its quasi-ordinal space. A CSV header names the
    items (ids or local ids, in any order); a file without names (kstIO's SRBT, KST and
    matrix layouts) has one column per item of ``items``, in that order.

    Raises
    ------
    KstpError
        When the file holds response data, names an item not in ``items`` or lacks one,
        has another number of columns than ``items`` (without names), repeats a state,
        is not a knowledge structure (no empty state or no full one), or has more than
        ``limit`` states; the message names the file.
    InputError
        As :func:`kstp.loaders.kstio.read_kst_file`.
    """
    path = Path(path)
    read = read_kst_file(path)
    if read.kind == "data":
        raise KstpError(f"{path} holds response patterns (a data file), not states; fit it as --responses")
    matrix, how = align_columns(read, items, path)
    if read.kind in ("basis", "surmisefunction"):
        matrix, how = span(matrix, limit), how + "; the space its basis spans"
    elif read.kind == "relation":
        pairs = [(items[p], items[q]) for p, q in zip(*np.nonzero(matrix), strict=True) if p != q]
        states = KnowledgeSpace.build(items, pairs).states(limit)
        column = {q: j for j, q in enumerate(items)}
        matrix = np.zeros((len(states), len(items)), np.uint8)
        for r, state in enumerate(states):
            matrix[r, [column[q] for q in state]] = 1
        how += "; the quasi-ordinal space of its surmise relation"
    try:
        Structure.build(items, matrix)  # a repeated state, named by its rows
        model.check_structure(matrix, items)
    except KstpError as exc:
        raise type(exc)(f"{path}: {exc}") from None
    if len(matrix) > limit:
        raise KstpError(f"{path} has {len(matrix):,} states, more than --limit {limit:,}")
    return matrix, f"{path.name}: {len(matrix)} states ({read.kind or 'structure'}, {read.format}); {how}"


@dataclass
class BlimReport:
    """A fit with its data, the run it belongs to and each learner's assessment."""

    dataset: str
    structure: str
    run_id: str
    data: ResponseData
    fit: model.BlimFit
    learner_state: np.ndarray  # (learners,) row of fit.states
    learner_posterior: np.ndarray  # (learners,)
    bootstrap_p: float | None
    bootstrap_samples: int
    se_source: str  # how the standard errors of beta and eta were obtained
    config: dict
    structure_note: str = field(default="")  # where the states came from (a file: how its columns were read)
    identified: identify.Identifiability | None = None  # which parameters the structure identifies

    def summary(self) -> dict:
        """The fit's figures as a JSON-ready dict."""
        f = self.fit
        return {"dataset": self.dataset, "runId": self.run_id, "structure": self.structure,
                "structureSource": self.structure_note or None, "method": f.method,
                "states": len(f.states), "items": len(f.items), "learners": f.n_learners,
                "learnersLeftOut": self.data.incomplete, "patterns": len(f.patterns), "iterations": f.iterations,
                "logLikelihood": f.log_likelihood, "G2": f.g2, "df": f.df, "pValue": f.p_value,
                "nParameters": f.n_parameters, "AIC": f.aic, "BIC": f.bic, "discrepancy": f.discrepancy,
                "bootstrapP": self.bootstrap_p, "bootstrapSamples": self.bootstrap_samples,
                "converged": f.converged, "maxIter": f.options["max_iter"], "tol": f.options["tol"],
                "lastChange": None if np.isnan(f.last_change) else f.last_change,
                "convergenceNote": self.convergence_note(), "identifiability": self.identifiability(),
                "boundaryNote": self.boundary_note(),
                "standardErrors": self.se_source, "gofUndefined": self.gof_undefined(),
                "residualsNote": self.residuals_note(), "errors": f.errors}

    def identifiability(self) -> dict | None:
        """The Jacobian's rank, the parameters it cannot identify and why their standard errors are blank."""
        i = self.identified
        if i is None:
            return None
        note = i.reason
        if i.checked and i.unidentified:
            rates = [n for n in i.unidentified if not n.startswith("probability ")]
            states = len(i.unidentified) - len(rates)
            named = ", ".join(rates) + (" and " if rates and states else "") + (
                f"{states} state probabilit{'y' if states == 1 else 'ies'}" if states else "")
            note = (f"not identifiable: {named} (Jacobian rank {i.rank} of {i.n_parameters} free parameters, as "
                    "pks's blimit computes it): other values of them, with other state probabilities, give every "
                    "response pattern the same probability, so no data can fix them; their standard errors are "
                    "left blank")
        return {"checked": i.checked, "rank": i.rank, "parameters": i.n_parameters,
                "nullSpaceDimension": i.null_dimension, "unidentified": i.unidentified, "note": note}

    def boundary_note(self) -> str | None:
        """Which free rates have no standard error because they sit at the boundary (0 or 1), or None."""
        f, o = self.fit, self.fit.options
        if self.bootstrap_samples:
            return None
        at = [f"{label} {q.split(':', 1)[-1]}" for label, rates, fixed in (("careless", f.beta, o["beta_fix"]),
                                                                           ("guess", f.eta, o["eta_fix"]))
              for q, rate, fix in zip(f.items, rates, fixed, strict=True)
              if np.isnan(fix) and not 1.01e-6 < rate < 1 - 1.01e-6]  # kst.blim: SE only inside
        return (f"no standard error for {', '.join(at)}: estimated at the boundary (0 or 1), where the observed "
                "information gives none (--bootstrap gives one)") if at else None

    def convergence_note(self) -> str | None:
        """Why the estimates are not the EM's limit (it stopped at ``max_iter``), or None when it converged.

        pks's ``blim`` warns "iteration maximum has been exceeded" in the same case.
        """
        f = self.fit
        if f.converged:
            return None
        return (f"the EM did not converge: it stopped at the maximum of {f.options['max_iter']:,} iterations with "
                f"a parameter still moving by {f.last_change:.3g} (more than --tol {f.options['tol']:g}); the "
                "estimates are not the maximum-likelihood ones: raise --max-iter")

    def residuals_note(self) -> str | None:
        """Why the deviance residuals are all zero (df <= 0), or None when they are not.

        pks's ``residuals.blim`` sets every deviance residual to 0 when the fit has no
        degrees of freedom; the Pearson residuals are still defined, and the residual
        plot shows those instead (:func:`kstp.reports.plots.residual_plot`).
        """
        if self.fit.df > 0:
            return None
        return (f"deviance residuals are all 0: with df = {self.fit.df} (no degrees of freedom left) pks defines "
                "them as 0; the residual plot shows Pearson residuals instead")

    def gof_undefined(self) -> str | None:
        """Why the G2 test has no p value (df <= 0, as pks reports it), or None when it has one.

        The saturated model has one free probability per independent cell (distinct
        response patterns, at most the learners); a structure with at least as many free
        parameters leaves no degrees of freedom, and G2 no chi-square distribution.
        """
        f = self.fit
        if f.df > 0:
            return None
        return (f"the goodness-of-fit test is not defined: the structure has {f.n_parameters} free parameters, "
                f"not fewer than the {f.n_parameters + f.df} independent cells of the data (distinct response "
                f"patterns, at most the learners), so df = {f.df} and G2 has no chi-square reference; compare fits "
                "by AIC/BIC, or fit a structure with fewer states")

    def items_table(self) -> pd.DataFrame:
        """careless (beta) and guess (eta) with standard errors, one row per question."""
        f, i = self.fit, self.identified
        table = pd.DataFrame({"questionId": f.items, "careless": f.beta, "carelessSe": f.beta_se, "guess": f.eta,
                              "guessSe": f.eta_se})
        if i is not None and i.checked:  # False: blank standard error, the parameter cannot be identified
            table = table.assign(carelessIdentified=i.beta_identified, guessIdentified=i.eta_identified)
        return table

    def states_table(self) -> pd.DataFrame:
        """One row per state: a 0/1 column per item (local ids), then its probability (kstIO's CSV layout, as R
        reads it with ``read.csv``)."""
        f = self.fit
        table = pd.DataFrame(f.states.astype(np.int64), columns=[q.split(":", 1)[-1] for q in f.items])
        return table.assign(probability=f.p_k)

    def learners_table(self) -> pd.DataFrame:
        """Each learner's most likely state, its posterior probability and its outer fringe (the next steps)."""
        f = self.fit
        local = [q.split(":", 1)[-1] for q in f.items]
        fringes = {int(k): " ".join(_members(local, model.outer_fringe(f.states, k)))
                   for k in np.unique(self.learner_state)}
        return pd.DataFrame({"learnerId": self.data.learners,
                             "state": [" ".join(_members(local, f.states[k])) for k in self.learner_state],
                             "posterior": self.learner_posterior,
                             "nextSteps": [fringes[int(k)] for k in self.learner_state]})

def _item_index(items: list[str], spec: dict[str, float] | None, what: str) -> np.ndarray | None:
    if not spec:
        return None
    out = np.full(len(items), np.nan)
    for item, value in spec.items():
        if item == "all":
            out[:] = value
            continue
        if item not in items:
            raise UnknownIdError(f"{what}: {item!r} is not a question of the dataset")
        out[items.index(item)] = value
    return out


def fit_dataset(store: GraphStore, dataset: str, kind: str | Path = "space", method: str = "ML",
                bootstrap: int = 0, seed: int = 0, careless_equal: bool = False, guess_equal: bool = False,
                fix_careless: dict[str, float] | None = None, fix_guess: dict[str, float] | None = None,
                limit: int = 20_000, progress: Callable[[int, int], None] | None = None, max_iter: int = 10_000,
                tol: float = 1e-7) -> BlimReport:
    """Fit the BLIM of ``dataset`` and assess its learners; nothing is written (see :func:`write_fit`).

    Parameters
    ----------
    kind : {"space", "delineated"} or path
        A structure kstp builds (:data:`STRUCTURES`), or a structure file
        (:func:`structure_file`).
    method : {"ML", "MD", "MDML"}
    bootstrap : int
        Parametric-bootstrap samples for the p value of G^2 (0: none); with them the
        standard errors of beta and eta are the bootstrap ones (the spread of the refits),
        else those of the observed information.
    careless_equal, guess_equal : bool
        Hold all items' careless (guess) rates equal.
    fix_careless, fix_guess : dict of question id (or ``"all"``) to rate
        Fixed rates.
    progress : callable, optional
        ``progress(done, bootstrap)`` after each bootstrap refit.
    max_iter, tol : int, float
        The EM's stopping rule (:func:`kstp.kst.blim.fit_blim`; pks's ``maxiter``, ``tol``);
        a fit that stops at ``max_iter`` says so (:meth:`BlimReport.convergence_note`).

    Raises
    ------
    KstpError
        As :func:`response_data`, :func:`structure`, :func:`structure_file` and
        :func:`kstp.kst.blim.fit_blim`.
    """
    data = response_data(store, dataset)
    if str(kind) in STRUCTURES:
        kind, note, source = str(kind), "", {}
        states = structure(store, dataset, kind, data.items, limit)
    else:
        path = Path(kind)
        states, note = structure_file(path, data.items, limit)
        kind, source = f"file:{path.name}", {"structureSha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    return _fit(data, states, dataset, kind, method, bootstrap, seed, careless_equal, guess_equal, fix_careless,
                fix_guess, source, note, progress, max_iter, tol)


def fit_files(structure_path: str | Path, responses_path: str | Path, method: str = "ML", bootstrap: int = 0,
              seed: int = 0, careless_equal: bool = False, guess_equal: bool = False,
              fix_careless: dict[str, float] | None = None, fix_guess: dict[str, float] | None = None,
              limit: int = 20_000, progress: Callable[[int, int], None] | None = None, max_iter: int = 10_000,
              tol: float = 1e-7) -> BlimReport:
    """Fit a BLIM of a structure file to a response file, with no graph: pks's ``blim(K, N.R)``.

    The response file (:func:`kstp.loaders.kstio.read_kst_file`: a kstIO data file, or a
    0/1 CSV with item names, learner ids first where it has them) gives the items; the
    structure file is read onto them (:func:`structure_file`). The report's ``dataset``
    is the response file's name without its ending. Parameters as :func:`fit_dataset`;
    fixed rates name items as the response file does.

    Raises
    ------
    KstpError
        As :func:`structure_file`, :func:`kstp.loaders.kstio.read_kst_file` and
        :func:`kstp.kst.blim.fit_blim`.
    """
    responses_path, structure_path = Path(responses_path), Path(structure_path)
    read = read_kst_file(responses_path, kind="data")
    learners = read.labels or [str(i + 1) for i in range(len(read.matrix))]
    data = ResponseData(read.items, learners, read.matrix, 0)
    states, note = structure_file(structure_path, read.items, limit)
    digests = {"structureSha256": hashlib.sha256(structure_path.read_bytes()).hexdigest(),
               "responsesSha256": hashlib.sha256(responses_path.read_bytes()).hexdigest()}
    return _fit(data, states, responses_path.stem, f"file:{structure_path.name}", method, bootstrap, seed,
                careless_equal, guess_equal, fix_careless, fix_guess, digests, note, progress, max_iter, tol)


def _fit(data: ResponseData, states: np.ndarray, dataset: str, kind: str, method: str, bootstrap: int, seed: int,
         careless_equal: bool, guess_equal: bool, fix_careless: dict[str, float] | None,
         fix_guess: dict[str, float] | None, source: dict, note: str,
         progress: Callable[[int, int], None] | None = None, max_iter: int = 10_000,
         tol: float = 1e-7) -> BlimReport:
    patterns, counts, inverse = model.response_patterns(data.matrix)
    every = [list(range(len(data.items)))]
    fit = model.fit_blim(states, patterns, counts, data.items, method,
                         beta_fix=_item_index(data.items, fix_careless, "--fix-careless"),
                         eta_fix=_item_index(data.items, fix_guess, "--fix-guess"),
                         beta_equal=every if careless_equal else None, eta_equal=every if guess_equal else None,
                         tol=tol, max_iter=max_iter)
    best, post = model.most_likely_states(fit)
    p, se_source = None, "observed information (outer product of scores)"
    if bootstrap:
        sample = gof.bootstrap_p(fit, bootstrap, seed, progress)
        p, se_source = sample.p, f"parametric bootstrap ({bootstrap} samples)"
        free_beta = np.isnan(fit.options["beta_fix"])
        free_eta = np.isnan(fit.options["eta_fix"])
        fit.beta_se = np.where(free_beta, sample.beta_sd, np.nan)
        fit.eta_se = np.where(free_eta, sample.eta_sd, np.nan)
    o = fit.options
    identified = identify.identifiability(fit.states, fit.items, o["beta_fix"], o["eta_fix"], o["beta_equal"],
                                          o["eta_equal"])
    if identified.checked:  # a standard error of a parameter no data can fix says nothing
        fit.beta_se = np.where(identified.beta_identified, fit.beta_se, np.nan)
        fit.eta_se = np.where(identified.eta_identified, fit.eta_se, np.nan)
    config = {"evaluator": "blim", "evaluatorVersion": VERSION, "dataset": dataset, "structure": kind,
              "method": method, "bootstrap": bootstrap, "seed": seed, "carelessEqual": careless_equal,
              "guessEqual": guess_equal, "fixCareless": fix_careless or {}, "fixGuess": fix_guess or {}, **source}
    if (max_iter, tol) != (10_000, 1e-7):  # the defaults stay out: the run ids of earlier fits stay as they were
        config.update(maxIter=max_iter, tol=tol)
    digest = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()
    label = "file" if kind.startswith("file:") else kind
    return BlimReport(dataset, kind, f"blim:{dataset}:{label}:{method}:{digest[:12]}", data, fit, best[inverse],
                      post[inverse], p, bootstrap, se_source, {**config, "configHash": digest}, note, identified)


def _members(items, row) -> list[str]:
    return [q for q, x in zip(items, row, strict=True) if x]


def write_fit(store: GraphStore, report: BlimReport) -> None:
    """Write the fit onto the graph (the dataset's latest fit; re-writing it changes nothing)."""
    f, dataset = report.fit, report.dataset
    state_ids = [state_id_of(dataset, _members(f.items, row)) for row in f.states]
    store.write_nodes("KnowledgeState", pd.DataFrame({
        "id": state_ids, "dataset": dataset, "size": f.states.sum(axis=1).astype(np.int64),
        "probability": f.p_k, "blimRunId": report.run_id}))
    links = [(sid, q) for sid, row in zip(state_ids, f.states, strict=True) for q in _members(f.items, row)]
    store.write_relationships("CONTAINS", "KnowledgeState", "Question",
                              pd.DataFrame(links, columns=["from_id", "to_id"]))
    items = report.items_table()[["questionId", "careless", "carelessSe", "guess", "guessSe"]].rename(
        columns={"questionId": "id"})
    store.write_nodes("Question", items.assign(blimRunId=report.run_id))
    store.write_nodes("Learner", pd.DataFrame({
        "id": report.data.learners, "blimStateId": [state_ids[i] for i in report.learner_state],
        "blimPosterior": report.learner_posterior, "blimRunId": report.run_id}))
    s = report.summary()
    store.write_nodes("Run", pd.DataFrame([{
        "id": report.run_id, "evaluator": "blim", "evaluatorVersion": VERSION, "dataset": dataset,
        "configHash": report.config["configHash"], "config": json.dumps(report.config, sort_keys=True),
        "kstpVersion": __version__, "finishedAt": now(), "status": "finished", "structure": report.structure,
        "method": f.method, "states": len(f.states), "logLikelihood": f.log_likelihood, "g2": f.g2, "df": f.df,
        "pValue": f.p_value, "aic": f.aic, "bic": f.bic, "nParameters": f.n_parameters,
        "discrepancy": f.discrepancy, "iterations": f.iterations, "bootstrapP": s["bootstrapP"],
        "bootstrapSamples": report.bootstrap_samples, "learners": f.n_learners}]))


def _stored_structure(store: GraphStore, run_id: str, items: list[str]) -> tuple[list[str], np.ndarray]:
    rows = store.frame("blim_states", {"runId": run_id})
    ids = sorted(set(rows["stateId"]))
    column = {q: j for j, q in enumerate(items)}
    states = np.zeros((len(ids), len(items)), dtype=np.uint8)
    position = {sid: i for i, sid in enumerate(ids)}
    for sid, q in zip(rows["stateId"], rows["questionId"], strict=True):
        if isinstance(q, str):
            states[position[sid], column[q]] = 1
    return ids, states


def next_steps(store: GraphStore, dataset: str, learner: str | None = None, limit: int = 20_000) -> dict:
    """Each learner's (or one learner's) assessed state and its outer fringe: what to learn next.

    With a BLIM fit on the graph, the state is the learner's most likely state and the
    next steps its outer fringe in the fitted structure (q not in K with K + {q} a
    state), and ``nextStates`` what each covering state adds (in a structure that is
    not a space the outer fringe may be empty below Q). Without one, the learner's
    answered-correct set is matched to the nearest states of the dataset's knowledge
    space (least symmetric difference), each with its outer fringe and ``nextStates``
    (equally informative questions are learnt together, so the item-level fringe of a
    state can be empty below Q: the covering states say what comes next), and
    ``source`` says so. :class:`NextSteps` reads the dataset once for many calls.

    Raises
    ------
    UnknownIdError
        When the learner answered nothing in the dataset.
    TooManyStatesError
        Without a fit, when the space has more than ``limit`` states.
    """
    steps = NextSteps(store, dataset, limit)
    return steps.of([learner] if learner is not None else steps.humans)


class NextSteps:
    """What :func:`next_steps` reads of a dataset (its questions, learners, BLIM fit, and without a fit its
    knowledge space and answers), read once and kept for any number of calls of :meth:`of`: the explorer's
    learner pages ask for one learner at a time."""

    def __init__(self, store: GraphStore, dataset: str, limit: int = 20_000):
        self.store, self.dataset, self.limit = store, dataset, limit
        self.items = dataset_questions(store, dataset)["questionId"].tolist()
        kinds = store.frame("dataset_learners", {"dataset": dataset})
        self.known = set(kinds["learnerId"])
        self.humans = kinds.loc[kinds["kind"] == "human", "learnerId"].tolist()
        self.fitted = store.frame("blim_learners", {"dataset": dataset}).set_index("learnerId")
        self._structures: dict[str, tuple[list[str], np.ndarray]] = {}
        self._space: tuple[np.ndarray, pd.Series] | None = None

    def of(self, wanted: list[str]) -> dict:
        """:func:`next_steps`'s result for the learners ``wanted`` (fitted states where the fit holds any of
        them; each one's nearest states of the space otherwise)."""
        for lid in wanted:
            if lid not in self.known:
                raise UnknownIdError(f"learner {lid!r} answered no question of dataset {self.dataset!r}; "
                                     "learners are named <dataset>:<id>, e.g. frcsub:Subject001")
        if self.fitted.index.isin(wanted).any():
            return {"dataset": self.dataset, "fitted": True, "learners": [self._fitted_row(lid) for lid in wanted]}
        return {"dataset": self.dataset, "fitted": False, "learners": [self._nearest_row(lid) for lid in wanted]}

    def _fitted_row(self, lid: str) -> dict:
        items, fitted = self.items, self.fitted
        if lid not in fitted.index:
            return {"learnerId": lid, "source": "not assessed (not in the fit: incomplete answers)"}
        run_id, sid = fitted.at[lid, "runId"], fitted.at[lid, "stateId"]
        if run_id not in self._structures:
            self._structures[run_id] = _stored_structure(self.store, run_id, items)
        ids, states = self._structures[run_id]
        k = ids.index(sid)
        return {"learnerId": lid, "source": run_id, "state": _members(items, states[k]),
                "posterior": float(fitted.at[lid, "posterior"]),
                "nextSteps": _members(items, model.outer_fringe(states, k)),
                "nextStates": [_members(items, states[c] & ~states[k]) for c in model.covering_states(states, k)]}

    def _nearest_row(self, lid: str) -> dict:
        items = self.items
        if self._space is None:
            space = structure(self.store, self.dataset, "space", items, self.limit)
            answers = dataset_answers(self.store, self.dataset).astype({"learnerId": object, "questionId": object})
            self._space = space, answers[answers["correct"].astype(bool)].groupby("learnerId")["questionId"].apply(set)
        space, correct = self._space
        column = {q: j for j, q in enumerate(items)}
        pattern = np.zeros(len(items), dtype=np.int32)
        pattern[[column[q] for q in correct.get(lid, set())]] = 1
        d = (space != pattern).sum(axis=1)
        nearest = np.flatnonzero(d == d.min())
        return {"learnerId": lid, "source": "nearest states (no BLIM fit on the graph)",
                "answeredCorrectly": _members(items, pattern), "distance": int(d.min()),
                "nearest": [{"state": _members(items, space[k]),
                             "nextSteps": _members(items, model.outer_fringe(space, k)),
                             "nextStates": [_members(items, space[c] & ~space[k])
                                            for c in model.covering_states(space, k)]} for k in nearest]}
