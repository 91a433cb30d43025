"""Simulated assessments: how many questions each rule asks, how often it finds the true state, how well it
predicts accuracy.

Learners are drawn from a BLIM (:func:`kstp.kst.blim_gof.simulate`: a state by its
probability, then every answer by the state and the rates), each is assessed by a rule
with the oracle of its own answers, and every step is kept: the most likely state and
its posterior, its distance (symmetric difference) to the true state, and the predicted
accuracy. The questions a rule picks do not depend on the stopping threshold, only on
the answers so far, so one run to the end gives the outcome under every threshold
(:func:`by_threshold`) and the curve of recovery against questions asked
(:func:`curve`). Asking every question is the last step of any run (the same for all
rules: the posterior does not depend on the order); random order is the ``random`` rule.

Large domains (:func:`simulate_surmise`) run :class:`~kstp.kst.assess_large.SurmiseProcedure`
to a budget and keep the predicted accuracy and the distance of the reported state.

References
----------
Doignon & Falmagne 1999, *Knowledge Spaces*, ch. 10-11; Heller & Repitsch 2012 (the
stopping threshold against questions asked); R's mycaas ``performance_simulation``
(efficiency: questions asked; accuracy: distance to the true state, per threshold).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kstp.kst.assess import Procedure, check_model, mastery
from kstp.kst.assess_large import SurmiseProcedure
from kstp.kst.blim import fit_blim, response_patterns
from kstp.kst.blim_gof import simulate

__all__ = ["Runs", "simulate_listed", "by_threshold", "curve", "SurmiseRuns", "simulate_surmise",
           "expected_accuracy", "replay_patterns", "LOO_TOLERANCE"]

#: EM's tolerance when a learner is left out: it starts at the full fit's estimates, one learner away from the
#: answer (on frcsub 5 steps, estimates within 1e-6 of those EM reaches at pks's 1e-7, where it takes 290).
LOO_TOLERANCE = 1e-4


def expected_accuracy(held: np.ndarray, beta: np.ndarray, eta: np.ndarray, observed: dict[int, bool]) -> float:
    """Predicted share of all questions answered correctly: the answers given, and 1 - beta / eta weighed by the
    mass L_q for the rest.

    >>> expected_accuracy(np.array([1.0, 0.0]), np.array([0.1, 0.1]), np.array([0.2, 0.2]), {0: False})
    0.1
    """
    p = held * (1 - beta) + (1 - held) * eta
    for q, correct in observed.items():
        p[q] = float(correct)
    return float(p.mean())


@dataclass
class Runs:
    """Simulated assessments on a listed structure, one row per learner, one column per question asked.

    Attributes
    ----------
    rule : str
    truth : ndarray (learners,)
        The drawn state (row of ``states``).
    answers : ndarray (learners, items)
        Each learner's full answer pattern (the oracle).
    state, posterior, distance, accuracy : ndarray (learners, steps)
        After each question: the most likely state, its posterior, its symmetric distance
        to the true state, the predicted accuracy over all questions.
    states : ndarray (states, items)
    """

    rule: str
    truth: np.ndarray
    answers: np.ndarray
    state: np.ndarray
    posterior: np.ndarray
    distance: np.ndarray
    accuracy: np.ndarray
    states: np.ndarray

    @property
    def true_accuracy(self) -> np.ndarray:
        """Each learner's share of right answers over all questions (what asking every question measures)."""
        return self.answers.mean(axis=1)


def simulate_listed(states, p_k, beta, eta, rule: str, learners: int, seed: int, prior=None,
                    budget: int | None = None) -> Runs:
    """Draw ``learners`` from the BLIM and assess each under ``rule`` until every question is asked (or ``budget``).

    Parameters
    ----------
    states : array-like of shape (states, items), 0/1
    p_k : array-like of shape (states,)
        The state probabilities the learners are drawn from.
    beta, eta : array-like of shape (items,)
    rule : {"half-split", "entropy", "variance", "random"}
    learners : int
    seed : int
        Seeds the draw; learner i's assessment is seeded ``seed + i``.
    prior : array-like of shape (states,), optional
        The assessment's prior (default ``p_k``: the model the learners come from).
    budget : int, optional

    Returns
    -------
    Runs

    Raises
    ------
    AssessmentError
        As :class:`~kstp.kst.assess.Procedure`.

    Examples
    --------
    >>> K = [[0, 0], [1, 0], [1, 1]]
    >>> runs = simulate_listed(K, [0.2, 0.3, 0.5], [0.0, 0.0], [0.0, 0.0], "half-split", 3, seed=1)
    >>> bool((runs.distance[:, -1] == 0).all())  # error-free answers: every state found
    True
    """
    states, beta, eta, p_k = check_model(states, beta, eta, p_k)
    prior = p_k if prior is None else prior
    answers, truth = simulate(states, p_k, beta, eta, learners, np.random.default_rng(seed))
    n = states.shape[1]
    steps = n if budget is None else min(budget, n)
    shape = (learners, steps)
    out = {k: np.full(shape, np.nan) for k in ("state", "posterior", "distance", "accuracy")}
    for i in range(learners):
        p = Procedure(states, beta, eta, prior, rule=rule, threshold=1.0, budget=steps, min_information=0.0,
                      seed=seed + i)
        for t in range(steps):
            q = p.next()[0]
            p.record(q, bool(answers[i, q]))
            best = p.path[-1].state
            out["state"][i, t], out["posterior"][i, t] = best, p.path[-1].posterior
            out["distance"][i, t] = int((states[best] != states[truth[i]]).sum())
            out["accuracy"][i, t] = expected_accuracy(mastery(p.posterior, states), beta, eta, p.observed)
    return Runs(rule, truth, answers, out["state"].astype(np.int64), out["posterior"],
                out["distance"].astype(np.int64), out["accuracy"], states)


def by_threshold(runs: Runs, thresholds) -> list[dict]:
    """Per threshold: questions asked (mean), true state found (share), within distance 1 (share), mean distance,
    and the predicted accuracy's error (mean absolute, and its 95th percentile).

    An assessment stops at the first answer after which the most likely state's
    posterior is above the threshold, else when every question was asked.

    >>> K = [[0, 0], [1, 0], [1, 1]]
    >>> runs = simulate_listed(K, [0.2, 0.3, 0.5], [0.0, 0.0], [0.0, 0.0], "half-split", 4, seed=1)
    >>> by_threshold(runs, [0.99])[0]["exact"]
    1.0
    """
    rows = []
    steps = runs.posterior.shape[1]
    for threshold in thresholds:
        above = runs.posterior > threshold
        stop = np.where(above.any(axis=1), above.argmax(axis=1), steps - 1)
        pick = np.arange(len(stop))
        distance = runs.distance[pick, stop]
        error = np.abs(runs.accuracy[pick, stop] - runs.true_accuracy)
        rows.append({"rule": runs.rule, "threshold": float(threshold), "asked": float((stop + 1).mean()),
                     "exact": float((distance == 0).mean()), "withinOne": float((distance <= 1).mean()),
                     "distance": float(distance.mean()), "accuracyError": float(error.mean()),
                     "accuracyError95": float(np.quantile(error, 0.95))})
    return rows


def curve(runs: Runs) -> list[dict]:
    """After t questions (t = 1 .. all), over the learners: true state found, within distance 1, mean distance.

    >>> K = [[0, 0], [1, 0], [1, 1]]
    >>> [r["asked"] for r in curve(simulate_listed(K, [0.2, 0.3, 0.5], [0, 0], [0, 0], "random", 2, seed=1))]
    [1, 2]
    """
    d = runs.distance
    return [{"rule": runs.rule, "asked": t + 1, "exact": float((d[:, t] == 0).mean()),
             "withinOne": float((d[:, t] <= 1).mean()), "distance": float(d[:, t].mean())}
            for t in range(d.shape[1])]


@dataclass
class SurmiseRuns:
    """Simulated assessments on the surmise relation, one row per learner.

    Attributes
    ----------
    rule : str
    asked : ndarray (learners,)
    accuracy, true_accuracy : ndarray (learners,)
        Predicted accuracy over all questions at the end, and the learner's own.
    distance : ndarray (learners,)
        Symmetric distance of the reported state to the true one.
    seconds : ndarray (learners,)
        CPU seconds per question asked (the sampler's and the rule's).
    covered : ndarray (learners,) bool
        Whether the predicted accuracy's interval holds the learner's own (with ``draws``).
    """

    rule: str
    asked: np.ndarray
    accuracy: np.ndarray
    true_accuracy: np.ndarray
    distance: np.ndarray
    seconds: np.ndarray
    covered: np.ndarray

    def summary(self) -> dict:
        """Means and shares over the learners (accuracy points are percentage points)."""
        error = np.abs(self.accuracy - self.true_accuracy) * 100
        return {"rule": self.rule, "learners": len(self.asked), "asked": float(self.asked.mean()),
                "accuracyErrorPoints": float(error.mean()), "accuracyError95Points": float(np.quantile(error, 0.95)),
                "withinTwoPoints": float((error <= 2).mean()), "distance": float(self.distance.mean()),
                "intervalCoverage": float(self.covered.mean()) if len(self.covered) else None,
                "secondsPerQuestion": float(self.seconds.mean())}


def simulate_surmise(space, beta, eta, truth: np.ndarray, rule: str, budget: int, seed: int, batch: int = 1,
                     draws: int = 0, progress=None, **sampler) -> SurmiseRuns:
    """Assess learners of known states (``truth``, (learners, items) 0/1) on the surmise relation of ``space``.

    Each learner's answers are drawn from the BLIM (``beta``, ``eta``), the procedure asks
    ``budget`` questions (``batch`` at a time) and reports its state and predicted accuracy;
    ``draws`` states give the accuracy's 95 % interval too. ``sampler`` goes to
    :class:`~kstp.kst.assess_large.SurmiseProcedure` (``chains``, ``sweeps``, ``burn_in``).
    ``progress(done, learners)`` after each learner.
    """
    import time

    truth = np.asarray(truth, dtype=bool)
    beta, eta = np.asarray(beta, np.float64), np.asarray(eta, np.float64)
    rng = np.random.default_rng(seed)
    answers = rng.random(truth.shape) < np.where(truth, 1 - beta, eta)
    out = {k: [] for k in ("asked", "accuracy", "distance", "seconds", "covered")}
    for i in range(len(truth)):
        p = SurmiseProcedure(space, beta, eta, rule=rule, band=(0.0, 1.0), budget=budget, min_information=0.0,
                             seed=seed + i, **sampler)
        begun = time.process_time()
        while True:
            chosen = p.next(batch)
            if not chosen:
                break
            p.record_many([(q, bool(answers[i, q])) for q in chosen])
        seconds = (time.process_time() - begun) / max(len(p.path), 1)
        outcome = p.outcome(draws=draws)
        held = p.mastery()
        out["asked"].append(len(p.path))
        out["accuracy"].append(expected_accuracy(held, p.beta, p.eta, p.observed))
        out["distance"].append(int((outcome.items_in_state != truth[i]).sum()))
        out["seconds"].append(seconds)
        if draws:
            low, high = outcome.prediction.accuracy_interval
            out["covered"].append(low <= answers[i].mean() <= high)
        if progress is not None:
            progress(i + 1, len(truth))
    return SurmiseRuns(rule, np.array(out["asked"]), np.array(out["accuracy"]), answers.mean(axis=1),
                       np.array(out["distance"]), np.array(out["seconds"]), np.array(out["covered"], dtype=bool))


def replay_patterns(states, answers, method: str, p_k, beta, eta, settings, learners=None,
                    leave_one_out: bool = True, progress=None) -> dict:
    """Replay recorded answer patterns adaptively, each against the state its full pattern gives.

    Each learner is assessed with their own recorded answers as the oracle (the
    procedure of ``settings``, a :class:`~kstp.evaluators.assess.model.Settings` or anything
    with ``rule``, ``threshold``, ``budget``, ``batch`` and ``seed``), under the BLIM fitted
    without them when ``leave_one_out`` (EM from the full fit's estimates to
    :data:`LOO_TOLERANCE`; learners with the same pattern share the refit), and compared
    with the most likely state of their full pattern under that same fit.

    Parameters
    ----------
    states : array-like of shape (states, items), 0/1
    answers : array-like of shape (learners, items), 0/1
    method : {"ML", "MD", "MDML"}
    p_k, beta, eta : array-like
        The full fit's estimates (the starting values of each refit).
    learners : array-like of int, optional
        Rows of ``answers`` to replay (default all).
    progress : callable, optional
        ``progress(done, total)`` after each learner.

    Returns
    -------
    dict
        ``learners``, ``leaveOneOut``, ``method``, ``settings``, ``asked`` (mean), ``exact`` and
        ``withinOne`` (shares), ``distance`` (mean), ``accuracyError`` (mean absolute
        difference of the predicted and the recorded accuracy) and ``rows`` per learner
        (``asked``, ``distance``, ``posterior``, ``accuracy``, ``predicted``).

    Examples
    --------
    Learners who answer exactly their states, two in each: left out, each still has a
    twin in the fit, and their state is found.

    >>> K = np.array([[0, 0], [1, 0], [1, 1]])
    >>> R = np.array([[0, 0], [0, 0], [1, 0], [1, 0], [1, 1], [1, 1]])
    >>> class S: rule, threshold, budget, batch, seed = "half-split", 0.9, None, 1, 0
    >>> out = replay_patterns(K, R, "MD", [1/3, 1/3, 1/3], [0, 0], [0, 0], S())
    >>> out["exact"], out["learners"], out["asked"]
    (1.0, 6, 2.0)

    References
    ----------
    Heller & Repitsch 2012 (assessing learners whose data the structure and its parameters
    were not estimated from).
    """
    states = np.asarray(states, np.uint8)
    matrix = np.asarray(answers, np.uint8)
    chosen = np.arange(len(matrix)) if learners is None else np.asarray(learners, np.int64)
    patterns, counts, inverse = response_patterns(matrix)
    items = [f"q{j}" for j in range(states.shape[1])]
    full = fit_blim(states, patterns, counts, items, method, p_k=p_k, beta=beta, eta=eta,
                    standard_errors=False) if leave_one_out else None
    fits: dict = {}
    rows = []
    for done, i in enumerate(chosen, 1):
        k = int(inverse[i])
        if leave_one_out:
            if k not in fits:
                left = counts.copy()
                left[k] -= 1
                keep = left > 0
                fits[k] = fit_blim(states, patterns[keep], left[keep], items, method, p_k=full.p_k, beta=full.beta,
                                   eta=full.eta, tol=LOO_TOLERANCE, standard_errors=False)
            fit = fits[k]
            prior, b, e = fit.p_k, fit.beta, fit.eta
        else:
            prior, b, e = np.asarray(p_k, np.float64), np.asarray(beta, np.float64), np.asarray(eta, np.float64)
        procedure = Procedure(states, b, e, prior, settings.rule, settings.threshold, settings.budget,
                              seed=settings.seed)
        while chosen_items := procedure.next(settings.batch):
            for q in chosen_items:
                procedure.record(q, bool(matrix[i, q]))
        best = int(procedure.posterior.argmax())
        everything = Procedure(states, b, e, prior, threshold=1.0)
        for q in range(states.shape[1]):
            everything.record(q, bool(matrix[i, q]))
        truth = int(everything.posterior.argmax())
        rows.append({"asked": len(procedure.path), "distance": int((states[best] != states[truth]).sum()),
                     "posterior": float(procedure.posterior[best]), "accuracy": float(matrix[i].mean()),
                     "predicted": expected_accuracy(mastery(procedure.posterior, states), b, e, procedure.observed)})
        if progress is not None:
            progress(done, len(chosen))
    distance = np.array([r["distance"] for r in rows])
    return {"learners": len(rows), "leaveOneOut": leave_one_out, "method": method,
            "settings": {k: getattr(settings, k) for k in ("rule", "threshold", "budget", "batch", "seed")},
            "asked": float(np.mean([r["asked"] for r in rows])), "exact": float((distance == 0).mean()),
            "withinOne": float((distance <= 1).mean()), "distance": float(distance.mean()),
            "accuracyError": float(np.mean([abs(r["accuracy"] - r["predicted"]) for r in rows])), "rows": rows}
