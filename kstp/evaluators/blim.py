"""BLIM fits, person assessment and learned prerequisites of a dataset, read from and written to the graph.

Reads a dataset's human learners' answers and its structure (the knowledge space of
its derived question prerequisites, or the structure its Q-matrix delineates), fits the
basic local independence model (:mod:`kstp.kst.blim`), assesses each learner, and
writes the latest fit back: careless/guess rates on each Question, state probabilities
on (:KnowledgeState) nodes, each learner's most likely state on the Learner, the fit on
a (:Run). ITA/IITA relations (:mod:`kstp.kst.iita`) are written as
LEARNED_PREREQUISITE_OF edges, apart from the Eq. 1 PREREQUISITE_OF edges. Everything is
checked before anything is written: a refused fit writes nothing.

Higher is better for none of the fit figures: G^2, AIC, BIC and the discrepancy are
misfit (lower is better); a larger p value means less evidence against the model.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kstp._version import __version__
from kstp.errors import KstpError, UnknownIdError
from kstp.graph.store import GraphStore
from kstp.graph.structures import dataset_answers, dataset_questions, dataset_space, state_id_of
from kstp.inference.runs import now
from kstp.kst import blim as model
from kstp.kst import blim_gof as gof
from kstp.kst import iita as learned
from kstp.kst.spaces import TooManyStatesError

__all__ = ["VERSION", "STRUCTURES", "ResponseData", "response_data", "structure", "BlimReport", "fit_dataset",
           "write_fit", "next_steps", "learn_prerequisites", "PrerequisiteReport"]

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
        raise KstpError(f"no learner of dataset {dataset!r} answered {', '.join(unanswered)}; "
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

    def summary(self) -> dict:
        """The fit's figures as a JSON-ready dict."""
        f = self.fit
        return {"dataset": self.dataset, "runId": self.run_id, "structure": self.structure, "method": f.method,
                "states": len(f.states), "items": len(f.items), "learners": f.n_learners,
                "learnersLeftOut": self.data.incomplete, "patterns": len(f.patterns), "iterations": f.iterations,
                "logLikelihood": f.log_likelihood, "G2": f.g2, "df": f.df, "pValue": f.p_value,
                "nParameters": f.n_parameters, "AIC": f.aic, "BIC": f.bic, "discrepancy": f.discrepancy,
                "bootstrapP": self.bootstrap_p, "bootstrapSamples": self.bootstrap_samples,
                "standardErrors": self.se_source, "gofUndefined": self.gof_undefined(),
                "errors": f.errors}

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
        f = self.fit
        return pd.DataFrame({"questionId": f.items, "careless": f.beta, "carelessSe": f.beta_se, "guess": f.eta,
                             "guessSe": f.eta_se})


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


def fit_dataset(store: GraphStore, dataset: str, kind: str = "space", method: str = "ML", bootstrap: int = 0,
                seed: int = 0, careless_equal: bool = False, guess_equal: bool = False,
                fix_careless: dict[str, float] | None = None, fix_guess: dict[str, float] | None = None,
                limit: int = 20_000) -> BlimReport:
    """Fit the BLIM of ``dataset`` and assess its learners; nothing is written (see :func:`write_fit`).

    Parameters
    ----------
    kind : {"space", "delineated"}
    method : {"ML", "MD", "MDML"}
    bootstrap : int
        Parametric-bootstrap samples for the p value of G^2 (0: none); with them the
        standard errors of beta and eta are the bootstrap ones (the spread of the refits),
        else those of the observed information.
    careless_equal, guess_equal : bool
        Hold all items' careless (guess) rates equal.
    fix_careless, fix_guess : dict of question id (or ``"all"``) to rate
        Fixed rates.

    Raises
    ------
    KstpError
        As :func:`response_data`, :func:`structure` and :func:`kstp.kst.blim.fit_blim`.
    """
    data = response_data(store, dataset)
    states = structure(store, dataset, kind, data.items, limit)
    patterns, counts, inverse = model.response_patterns(data.matrix)
    every = [list(range(len(data.items)))]
    fit = model.fit_blim(states, patterns, counts, data.items, method,
                         beta_fix=_item_index(data.items, fix_careless, "--fix-careless"),
                         eta_fix=_item_index(data.items, fix_guess, "--fix-guess"),
                         beta_equal=every if careless_equal else None, eta_equal=every if guess_equal else None)
    best, post = model.most_likely_states(fit)
    p, se_source = None, "observed information (outer product of scores)"
    if bootstrap:
        sample = gof.bootstrap_p(fit, bootstrap, seed)
        p, se_source = sample.p, f"parametric bootstrap ({bootstrap} samples)"
        free_beta = np.isnan(fit.options["beta_fix"])
        free_eta = np.isnan(fit.options["eta_fix"])
        fit.beta_se = np.where(free_beta, sample.beta_sd, np.nan)
        fit.eta_se = np.where(free_eta, sample.eta_sd, np.nan)
    config = {"evaluator": "blim", "evaluatorVersion": VERSION, "dataset": dataset, "structure": kind,
              "method": method, "bootstrap": bootstrap, "seed": seed, "carelessEqual": careless_equal,
              "guessEqual": guess_equal, "fixCareless": fix_careless or {}, "fixGuess": fix_guess or {}}
    digest = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()
    return BlimReport(dataset, kind, f"blim:{dataset}:{kind}:{method}:{digest[:12]}", data, fit, best[inverse],
                      post[inverse], p, bootstrap, se_source, {**config, "configHash": digest})


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
    items = report.items_table().rename(columns={"questionId": "id"})
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
    space (least symmetric difference), each with its outer fringe, and ``source``
    says so.

    Raises
    ------
    UnknownIdError
        When the learner answered nothing in the dataset.
    TooManyStatesError
        Without a fit, when the space has more than ``limit`` states.
    """
    items = dataset_questions(store, dataset)["questionId"].tolist()
    kinds = store.frame("dataset_learners", {"dataset": dataset})
    humans = kinds.loc[kinds["kind"] == "human", "learnerId"].tolist()
    if learner is not None and learner not in set(kinds["learnerId"]):
        raise UnknownIdError(f"learner {learner!r} answered no question of dataset {dataset!r}; "
                             "learners are named <dataset>:<id>, e.g. frcsub:Subject001")
    wanted = [learner] if learner else humans
    fitted = store.frame("blim_learners", {"dataset": dataset}).set_index("learnerId")
    rows = []
    if fitted.index.isin(wanted).any():
        structures: dict[str, tuple[list[str], np.ndarray]] = {}
        for lid in wanted:
            if lid not in fitted.index:
                rows.append({"learnerId": lid, "source": "not assessed (not in the fit: incomplete answers)"})
                continue
            run_id, sid = fitted.at[lid, "runId"], fitted.at[lid, "stateId"]
            if run_id not in structures:
                structures[run_id] = _stored_structure(store, run_id, items)
            ids, states = structures[run_id]
            k = ids.index(sid)
            rows.append({"learnerId": lid, "source": run_id, "state": _members(items, states[k]),
                         "posterior": float(fitted.at[lid, "posterior"]),
                         "nextSteps": _members(items, model.outer_fringe(states, k)),
                         "nextStates": [_members(items, states[c] & ~states[k])
                                        for c in model.covering_states(states, k)]})
        return {"dataset": dataset, "fitted": True, "learners": rows}
    space = structure(store, dataset, "space", items, limit)
    answers = dataset_answers(store, dataset).astype({"learnerId": object, "questionId": object})
    correct = answers[answers["correct"].astype(bool)].groupby("learnerId")["questionId"].apply(set)
    column = {q: j for j, q in enumerate(items)}
    for lid in wanted:
        pattern = np.zeros(len(items), dtype=np.int32)
        pattern[[column[q] for q in correct.get(lid, set())]] = 1
        d = (space != pattern).sum(axis=1)
        nearest = np.flatnonzero(d == d.min())
        rows.append({"learnerId": lid, "source": "nearest states (no BLIM fit on the graph)",
                     "answeredCorrectly": _members(items, pattern), "distance": int(d.min()),
                     "nearest": [{"state": _members(items, space[k]),
                                  "nextSteps": _members(items, model.outer_fringe(space, k))} for k in nearest]})
    return {"dataset": dataset, "fitted": False, "learners": rows}


@dataclass
class PrerequisiteReport:
    """A learned relation and how it compares with the dataset's Eq. 1 edges."""

    dataset: str
    rule: str
    pairs: pd.DataFrame  # fromId, toId, counterexamples, errorRate, inEq1
    eq1_only: list[tuple[str, str]]
    details: dict

    def summary(self) -> dict:
        learned_pairs = set(zip(self.pairs["fromId"], self.pairs["toId"], strict=True))
        both = int(self.pairs["inEq1"].sum())
        return {"dataset": self.dataset, "rule": self.rule, "learned": len(learned_pairs), "eq1": both + len(
            self.eq1_only), "both": both, "learnedOnly": len(learned_pairs) - both, "eq1Only": len(self.eq1_only),
            **self.details}


def learn_prerequisites(store: GraphStore, dataset: str, rule: str = "iita", variant: int = 1,
                        threshold: int | None = None, search: str = "local", write: bool = True,
                        limit: int = 200_000) -> PrerequisiteReport:
    """Learn a prerequisite relation from the answers (ITA or IITA) and compare it with Eq. 1.

    The learned pairs are written as ``(:Question)-[:LEARNED_PREREQUISITE_OF {rule,
    counterexamples, errorRate, inEq1}]->(:Question)``, replacing the dataset's earlier
    learned relation (of either rule); the Eq. 1 ``PREREQUISITE_OF`` edges are read,
    never changed: every KST query (fringes, PSR, the space) reads those alone.

    ``limit`` bounds the knowledge space of each relation ITA weighs (its discrepancy
    needs the states listed).

    Raises
    ------
    KstpError
        On an unknown rule, and as :func:`response_data`.
    TooManyStatesError
        ITA only: when a relation on the way has a space of more than ``limit`` states.
    """
    if rule not in ("iita", "ita"):
        raise KstpError(f"unknown rule {rule!r}; use iita or ita")
    data = response_data(store, dataset)
    if rule == "iita":
        result = learned.iita(data.matrix, variant)
        relation, error = result.relation, result.error_rate
        details = {"variant": learned.IITA_VARIANTS[variant], "errorRate": error, "diff": float(result.diff[
            result.selected])}
    else:
        try:
            ita_result = learned.ita(data.matrix, threshold, search, space_limit=limit)
        except TooManyStatesError:
            raise TooManyStatesError(
                f"item tree analysis of {dataset!r}: a relation on the way ({search} threshold search) has a "
                f"knowledge space of more than {limit:,} states, whose discrepancy needs them listed; pass a larger "
                "--limit (time and memory grow with it), a --threshold, or --search local") from None
        relation, error = ita_result.relation & ~np.eye(len(data.items), dtype=bool), float("nan")
        details = {"threshold": ita_result.threshold, "discrepancy": ita_result.discrepancy}
    b = learned.counterexamples(data.matrix)
    eq1 = store.frame("question_prerequisite_edges", {"dataset": dataset}, categorical=True)
    eq1_pairs = set(zip(eq1["fromId"], eq1["toId"], strict=True))
    p, q = np.nonzero(relation)
    pairs = pd.DataFrame({"fromId": [data.items[i] for i in p], "toId": [data.items[j] for j in q],
                          "counterexamples": b[p, q].astype(np.int64), "errorRate": error})
    pairs["inEq1"] = [(a, c) in eq1_pairs for a, c in zip(pairs["fromId"], pairs["toId"], strict=True)]
    learned_pairs = set(zip(pairs["fromId"], pairs["toId"], strict=True))
    report = PrerequisiteReport(dataset, rule, pairs, sorted(eq1_pairs - learned_pairs), details)
    if write:
        # One learned edge per pair (writes are keyed by their endpoints): the graph keeps the
        # dataset's latest learned relation, whichever rule learned it.
        stored = pd.concat([store.frame("learned_prerequisites", {"dataset": dataset, "rule": r})
                            for r in ("iita", "ita")])
        edges = pairs.rename(columns={"fromId": "from_id", "toId": "to_id"}).assign(rule=rule)
        store.delete_stale("LEARNED_PREREQUISITE_OF", "Question", "Question",
                           stored.rename(columns={"fromId": "from_id", "toId": "to_id"}), edges)
        store.write_relationships("LEARNED_PREREQUISITE_OF", "Question", "Question", edges)
    return report
