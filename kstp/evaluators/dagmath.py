"""DAG-MATH (paper 4): chain-of-thought as a DAG, logical closeness, perfect reasoning rate.

A model answers each problem N times in the DAG-MATH format (a JSON list of steps,
each with its justification, its parent steps and one conclusion; the last step
boxes the final answer), prompted with few-shot gold trajectories taken from the
graph, or with the authors' prompt file as their release sends it
(:mod:`kstp.evaluators.dagmath_release`), and constrained by a JSON schema where the
backend supports structured output.
Every completion is stored as a Response before it is checked; a valid one gets its
steps as ``(:CotStep)`` nodes joined by ``SUPPORTS`` (parent -> child). A completion
that breaks the format (no output, truncated, invalid JSON, a duplicate or unknown
step id, a cycle, a forward reference, no boxed answer) is stored with its reason and
counted; under kstp's policy (``fail``, the default) it is never dropped from a
denominator, under the release's (``retry:N``) it is asked again and then dropped. PASS@1 is answer accuracy, as in the
paper: a malformed reply whose last step boxes the right answer counts as correct; it
can never be closed or perfect, so the form of the DAG matters only for closeness, PRR
and the AUC. Ingested trajectories are scored by the same function
(:func:`kstp.loaders.cot.score_trajectory`), so the same replies get the same figures.

Metrics (computed in Cypher where they are graph questions, then written back):

- **logical closeness** (Definition 3.1): every non-final step has out-degree >= 1;
  ``closedShare`` is the share of closed non-final steps (``cot_closeness``);
- **perfect reasoning** (Definition 3.2): closed and the final answer correct
  (:func:`kstp.inference.grading.grade`); PRR-hat per problem is the mean over its N
  trajectories, R-hat the mean over problems (higher is better); PASS@1 the mean
  final-answer correctness (higher is better); the gap PASS@1 - R-hat (lower is better);
  Table 2's **Std** row (:func:`table2`): per dataset, the sample standard deviation
  (ddof = 1) over the models' rows, which reproduces the paper's printed Std cells;
- **AUC** (§5, Figure 4): the rate of trajectories that are correct with
  ``closedShare >= t``, swept over t in [0, 1] (t = 0 gives PASS@1, t = 1 gives R-hat);
  its area equals the mean of ``correct * closedShare`` exactly (higher is better);
- **graph statistics** (§4.2; Tables 1, 3, 4): nodes, edges, density 2E / (N (N - 1)),
  max in- and out-degree per trajectory, averaged over the trajectories of each class
  All / Incorrect / Correct / Perfect and per difficulty bin (k - 1, k] (Figure 3:
  difficulty 2.5 is in bin 3, 3.0 too).

References
----------
Zhang, Kuzborskij, Lee, Leng, Liu 2025, "DAG-Math: Graph-Guided Mathematical Reasoning
in LLMs", §3 (Definitions 3.1-3.2 and the estimators PRR-hat, R-hat after Figure 2),
§4.2, §5 (Table 1, Figures 3-4), Appendix F (Tables 2-4) (arXiv 2510.19842).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from kstp.errors import ConfigError, InputError, UnknownIdError
from kstp.evaluators.dagmath_release import FAIL, MalformedPolicy, PromptFile, file_prompt, kept_trajectories
from kstp.graph.store import GraphStore
from kstp.graph.structures import answerable_questions
from kstp.inference.backend import Backend, Completion, Message, RejectedRequestError, Sampling
from kstp.inference.replies import tidy
from kstp.inference.runs import (
    Generation,
    Grading,
    RunSpec,
    finish_run,
    generate_and_store,
    model_learner_id,
    open_run,
    verdict_properties,
)
from kstp.loaders.cot import Step, Trajectory, TrajectoryScore, score_trajectory, trajectory_json, write_steps

__all__ = ["NAME", "VERSION", "HIGHER_IS_BETTER", "SHOTS", "SYSTEM_PROMPT", "JSON_SCHEMA", "CLASSES", "STATISTICS",
           "build_prompt", "choose_shots", "class_members", "score_item", "grade_trajectory", "failure_kind",
           "run_metrics", "score_run", "FIGURES", "aggregate", "table2", "auc_curve", "statistics_by_class",
           "difficulty_bin", "statistics_by_difficulty", "run_policy", "malformed_figures", "DagMathResult",
           "evaluate"]

NAME = "dagmath"
# 1.1: PASS@1 counts a malformed DAG's right boxed answer; 1.2: read where ingest cot reads it, in the
# last step's conclusion of a JSON reply (1.1 took the last \boxed{} anywhere in the text), and
# \boxed or \frac written with one backslash in JSON (read as \b, \f escapes) keep their command
VERSION = "1.2"
HIGHER_IS_BETTER = {"passAt1": True, "perfectReasoningRate": True, "reasoningGap": False, "closenessAuc": True}
CLASSES = ("All", "Incorrect", "Correct", "Perfect")
STATISTICS = ("nodes", "edges", "density", "maxInDegree", "maxOutDegree")
SYSTEM_PROMPT = (
    "You solve mathematics problems as a directed acyclic graph of steps. Answer with JSON only: "
    '{"steps": [...]}. Each step has "step_id" (an integer, increasing), "thinking" (the justification, '
    'naming the earlier steps it uses), "direct_dependent_steps" (the ids of those earlier steps, or null '
    'for a fact read from the problem) and "text" (one conclusion). Every step except the last must be used '
    "by a later step. The last step states the final answer inside \\boxed{}.")
USER_TEMPLATE = "Problem:\n{text}"
JSON_SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["steps"],
    "properties": {"steps": {"type": "array", "minItems": 1, "items": {
        "type": "object", "additionalProperties": False,
        "required": ["step_id", "thinking", "direct_dependent_steps", "text"],
        "properties": {"step_id": {"type": "integer"}, "thinking": {"type": "string"},
                       "direct_dependent_steps": {"anyOf": [{"type": "null"},
                                                            {"type": "array", "items": {"type": "integer"}}]},
                       "text": {"type": "string"}}}}}}
#: Hash of the instructions and the schema, stored on the Run: a change is a new configuration.
TEMPLATE_HASH = hashlib.sha256((SYSTEM_PROMPT + "\x00" + USER_TEMPLATE + "\x00"
                                + json.dumps(JSON_SCHEMA, sort_keys=True)).encode()).hexdigest()
#: Few-shot gold trajectories per prompt (paper 4, §5: 4-shot).
SHOTS = 4
# "empty" covers the parser's "empty output" (a blank content) and the run's EMPTY_REPLY (a null one): one
# kind, so a retry:N policy asks both again (RETRIED_FAILURES) and the summary counts them together.
_FAILURE_KINDS = (("transport", "transport"), ("empty", "empty output"), ("truncated", "truncated"),
                  ("invalid JSON", "invalid JSON"), ("no steps", "malformed"), ("step ", "malformed"),
                  ("duplicate step id", "duplicate step id"), ("cycle", "cycle"),
                  ("no final boxed answer", "no final boxed answer"))


def failure_kind(reason: str | None) -> str | None:
    """The kind of a format failure, for counting (``None`` for a valid trajectory).

    >>> [failure_kind(r) for r in ("cycle 2 -> 3 -> 2", "step 4 depends on step 9, which does not exist",
    ...                            "step 2 depends on step 5, which comes later (forward reference)", None)]
    ['cycle', 'unknown parent', 'forward reference', None]
    >>> failure_kind("empty output"), failure_kind("empty: the reply has no content and no reasoning")
    ('empty output', 'empty output')
    >>> failure_kind("step 3: empty conclusion"), failure_kind("step 3: missing 'node' or 'text'")
    ('empty conclusion', 'malformed')
    """
    if reason is None:
        return None
    if reason.endswith("does not exist"):
        return "unknown parent"
    if reason.endswith("(forward reference)"):
        return "forward reference"
    if reason.endswith(": empty conclusion"):  # the release's schema takes an empty text: no malformed reply
        return "empty conclusion"
    return next((kind for prefix, kind in _FAILURE_KINDS if reason.startswith(prefix)), "other")


def build_prompt(problem: str, shots: list[tuple[str, Trajectory]]) -> list[Message]:
    """The chat for one problem: instructions, each shot as a (problem, gold JSON) exchange, then the problem."""
    chat = [{"role": "system", "content": SYSTEM_PROMPT}]
    for text, trajectory in shots:
        chat += [{"role": "user", "content": USER_TEMPLATE.format(text=text)},
                 {"role": "assistant", "content": trajectory_json(trajectory)}]
    return chat + [{"role": "user", "content": USER_TEMPLATE.format(text=problem)}]


def _trajectories(store: GraphStore, run_id: str) -> dict[str, tuple[str, str, Trajectory]]:
    rows = store.frame("cot_trajectories", {"runId": run_id})
    out = {}
    for rid, steps in rows.groupby("responseId", sort=True):
        ordered = []
        for _, step in steps.groupby("position", sort=True):
            parents = tuple(sorted(int(p) for p in step["parentStepId"].dropna()))
            first = step.iloc[0]
            ordered.append(Step(int(first["stepId"]), first["edge"] or "", parents, first["node"]))
        out[rid] = (steps["questionId"].iloc[0], steps["problem"].iloc[0], Trajectory(tuple(ordered)))
    return out


def choose_shots(store: GraphStore, run_id: str, k: int, exclude: set[str]) -> list[tuple[str, str, Trajectory]]:
    """Up to ``k`` perfect trajectories of run ``run_id`` as few-shot examples.

    One per problem, problems in id order, the lowest sample of each; problems in
    ``exclude`` (those being evaluated) are skipped so no answer leaks into its prompt.

    Returns
    -------
    list of (response id, problem text, Trajectory)
    """
    if k == 0:
        return []
    metrics = run_metrics(store, run_id)
    perfect = metrics[metrics["perfect"] & ~metrics["questionId"].isin(exclude)]
    chosen = perfect.sort_values(["questionId", "sampleIndex"]).drop_duplicates("questionId").head(k)
    steps = _trajectories(store, run_id)
    return [(rid, steps[rid][1], steps[rid][2]) for rid in chosen["responseId"]]


def score_item(completion: Completion, gold: str) -> TrajectoryScore:
    """Check one completion's format and grade its final answer.

    A transport failure keeps its error, and a truncated reply (``finish_reason ==
    "length"``) is invalid as ``truncated``: neither reached a final answer, so both are
    incorrect. Every other reply is scored by :func:`kstp.loaders.cot.score_trajectory`,
    the rule ``kstp ingest cot`` applies to the same steps: PASS@1 is answer accuracy
    (paper 4, §5), so a malformed DAG whose last step boxes the right answer is correct,
    with the reason ``"<grade> (invalid format: <why>)"``; closeness and perfect
    reasoning need a valid DAG, so it is never closed nor perfect.

    Examples
    --------
    >>> text = ('{"steps": [{"step_id": 1, "thinking": "given", "direct_dependent_steps": null, "text": "x = 3"},'
    ...         ' {"step_id": 2, "thinking": "double 1", "direct_dependent_steps": [1], "text": "\\\\\\\\boxed{6}"}]}')
    >>> score_item(Completion(0, 42, text=text, finish_reason="stop"), "6").verdict.correct
    True
    >>> score_item(Completion(0, 42, text='{"steps": [', finish_reason="length"), "6").error
    'truncated'
    >>> cyclic = ('{"steps": [{"step_id": 1, "thinking": "t", "direct_dependent_steps": [1], '
    ...           '"text": "\\\\\\\\boxed{6}"}]}')
    >>> bad = score_item(Completion(0, 42, text=cyclic, finish_reason="stop"), "6")
    >>> bad.error, bad.verdict.correct, bad.verdict.reason
    ('cycle 1 -> 1', True, 'correct (invalid format: cycle 1 -> 1)')
    """
    completion = tidy(completion)  # a reasoning trace written before the JSON is no part of it
    if completion.finish_reason == "length":
        return TrajectoryScore.unanswered("truncated")
    if completion.text is None and completion.error:
        return TrajectoryScore.unanswered(completion.error)
    return score_trajectory(completion.text, gold)


def grade_trajectory(completion: Completion, gold: str) -> dict:
    """The Response properties of :func:`score_item` (the grading function of a run), and ``_trajectory``:
    the valid trajectory whose steps the run writes, else None."""
    score = score_item(completion, gold)
    return {**verdict_properties(score.verdict), "cotValid": score.trajectory is not None, "cotError": score.error,
            "_trajectory": score.trajectory}


def _int(series: pd.Series) -> list:
    return [None if pd.isna(v) else int(v) for v in series]


def run_metrics(store: GraphStore, run_id: str) -> pd.DataFrame:
    """Per-trajectory metrics of a run, from the graph (Cypher) without writing.

    Returns
    -------
    pandas.DataFrame
        One row per Response: ``responseId, questionId, sampleIndex, difficulty,
        correct, verdict, cotValid, cotError, failure, steps, closedSteps,
        closedShare, closed, perfect`` and the :data:`STATISTICS`; ``closedShare``
        and the statistics are missing for an invalid trajectory (it has no graph).
    """
    responses = store.frame("cot_responses", {"runId": run_id})
    closeness = store.frame("cot_closeness", {"runId": run_id})[["responseId", "steps", "closedSteps",
                                                                  "closedShare", "closed"]]
    statistics = store.frame("cot_statistics", {"runId": run_id})
    out = responses.merge(closeness, on="responseId", how="left").merge(statistics, on="responseId", how="left")
    out["cotValid"] = out["cotValid"].eq(True)  # missing (never checked) is not valid
    out["correct"] = out["correct"].eq(True)  # answer accuracy, whatever the DAG's form
    out["closed"] = out["closed"].eq(True) & out["cotValid"]
    out["perfect"] = out["closed"] & out["correct"]
    out["failure"] = [failure_kind(e) if not ok else None for e, ok in zip(out["cotError"], out["cotValid"],
                                                                           strict=True)]
    for column in ("closedShare", "density"):
        out[column] = out[column].astype(float)
    for column in ("steps", "closedSteps", "nodes", "edges", "maxInDegree", "maxOutDegree"):
        out[column] = pd.array(_int(out[column]), dtype="Int64")  # missing after the left merges
    return out


#: The Table 2 figures of a run, each a mean over problems of a per-problem figure.
FIGURES = ("passAt1", "perfectReasoningRate", "reasoningGap", "closenessAuc")


def aggregate(metrics: pd.DataFrame) -> dict:
    """PASS@1, R-hat, gap, AUC and counts of one run: its row of paper 4, Table 2.

    Per problem: PASS@1 and PRR-hat are means over its N trajectories, the gap their
    difference and the AUC the mean of ``correct * closedShare``; the run figures are
    means over the M problems (R-hat = (1/M) sum_j PRR-hat(x_j), paper 4, §3). Invalid
    trajectories are never closed (their ``closedShare`` counts as 0); their boxed
    answer still counts for PASS@1. The Std row spans models: see :func:`table2`. Each
    figure has its standard error beside it (``passAt1Stderr``, ...): the sample standard
    deviation of the per-problem figures over sqrt(M), a problem's trajectories being one
    cluster; with N >= 2 trajectories of every problem also ``passAt2`` .. ``passAtN``
    (Chen et al. 2021's unbiased estimator, :func:`~kstp.inference.statistics.pass_at_k_table`).

    Examples
    --------
    >>> m = pd.DataFrame({"questionId": ["p", "p", "q"], "correct": [True, True, False],
    ...                   "perfect": [True, False, False], "closedShare": [1.0, 0.5, None],
    ...                   "cotValid": [True, True, False], "failure": [None, None, "truncated"]})
    >>> f = aggregate(m)
    >>> f["passAt1"], f["perfectReasoningRate"], f["reasoningGap"], f["closenessAuc"], f["invalidFormat"]
    (0.5, 0.25, 0.25, 0.375, 1)
    >>> f["passAt1Stderr"]  # problems p (1.0) and q (0.0): sd sqrt(1/2) over sqrt(2)
    0.5
    """
    from kstp.inference.statistics import mean_stderr, pass_at_k_table

    if metrics.empty:
        return {"problems": 0, "trajectories": 0, "invalidFormat": 0, **{f: float("nan") for f in FIGURES},
                "failures": {}}
    area = metrics["correct"].astype(float) * metrics["closedShare"].astype(float).fillna(0.0)
    per_problem = pd.DataFrame({"questionId": metrics["questionId"], "correct": metrics["correct"].astype(float),
                                "perfect": metrics["perfect"].astype(float), "area": area}) \
        .groupby("questionId").mean()
    per_problem = pd.DataFrame({"passAt1": per_problem["correct"], "perfectReasoningRate": per_problem["perfect"],
                                "reasoningGap": per_problem["correct"] - per_problem["perfect"],
                                "closenessAuc": per_problem["area"]})
    passes = pass_at_k_table(pd.DataFrame({"questionId": metrics["questionId"],
                                           "correct": metrics["correct"].astype(bool)}))
    return {"problems": len(per_problem), "trajectories": len(metrics),
            "invalidFormat": int((~metrics["cotValid"].astype(bool)).sum()),
            **{f: float(per_problem[f].mean()) for f in FIGURES},
            **{f"{f}Stderr": mean_stderr(per_problem[f].to_numpy(float)) for f in FIGURES},
            **{f"passAt{k}{part}": float(row[column]) for k, row in passes.iloc[1:].iterrows()
               for part, column in (("", "passAtK"), ("Stderr", "stderr"))},
            "failures": {k: int(v) for k, v in metrics["failure"].dropna().value_counts().sort_index().items()}}


def table2(runs: pd.DataFrame) -> pd.DataFrame:
    """Paper 4, Table 2 in long form: each model's row per dataset, then that dataset's Std row.

    Parameters
    ----------
    runs : pandas.DataFrame
        One row per run: ``model``, ``dataset`` and the :data:`FIGURES` (as
        :func:`aggregate` gives them), models in the order they are to be listed.

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, model`` and the :data:`FIGURES`; datasets in order of first
        appearance, each with its models' rows and a row ``model == "Std"``: the sample
        standard deviation (ddof = 1) over those models of each figure, NaN with a
        single model. This is how the paper's Std cells come about (its printed PASS@1
        and R-hat columns give them to the digit; paper 4, Appendix F, Table 2).

    Raises
    ------
    InputError
        When one model has two runs on one dataset (which one is its row?).

    Examples
    --------
    The paper's AIME 2025 rows (PASS@1, R-hat in %) give its Std cells 10.3 and 2.1:

    >>> aime = pd.DataFrame({"model": ["Gemini-2.5-F", "Gemini-2.5-F-L", "GPT-4.1", "GPT-4.1-M", "Qwen3-30B"],
    ...                      "dataset": "aime25", "passAt1": [52.4, 37.4, 26.5, 30.5, 43.1],
    ...                      "perfectReasoningRate": [17.0, 15.9, 16.8, 20.9, 15.8]})
    >>> aime = aime.assign(reasoningGap=aime["passAt1"] - aime["perfectReasoningRate"], closenessAuc=float("nan"))
    >>> std = table2(aime).iloc[-1]
    >>> std["model"], round(float(std["passAt1"]), 1), round(float(std["perfectReasoningRate"]), 1)
    ('Std', 10.3, 2.1)
    """
    twice = runs[runs.duplicated(["dataset", "model"], keep=False)]
    if len(twice):
        model, dataset = twice.iloc[0][["model", "dataset"]]
        raise InputError(f"model {model!r} has {len(twice)} runs on dataset {dataset!r}; Table 2 has one row per "
                         "model and dataset: pass one of its runs")
    parts = []
    for dataset, rows in runs.groupby("dataset", sort=False):
        rows = rows[["dataset", "model", *FIGURES]].astype({f: float for f in FIGURES})
        spread = rows[list(FIGURES)].std(ddof=1)
        parts += [rows, pd.DataFrame([{"dataset": dataset, "model": "Std", **spread.to_dict()}])]
    return pd.concat(parts, ignore_index=True)


def auc_curve(metrics: pd.DataFrame, points: int = 101) -> pd.DataFrame:
    """The closeness curve (Figure 4): for each threshold t, the mean over problems of the
    share of trajectories that are correct with ``closedShare >= t``.

    Returns
    -------
    pandas.DataFrame
        ``threshold`` (``points`` values from 0 to 1) and ``rate``; ``rate`` at 0 is
        PASS@1 (malformed but correct trajectories included) and at 1 is R-hat.
    """
    thresholds = np.linspace(0.0, 1.0, points)
    share = metrics["closedShare"].astype(float).fillna(0.0).to_numpy()  # a malformed DAG: nothing closed
    correct = metrics["correct"].astype(bool).to_numpy()
    rates = []
    for t in thresholds:
        hit = pd.Series(correct & (share >= t - 1e-12), index=metrics.index, dtype=float)
        rates.append(float(hit.groupby(metrics["questionId"]).mean().mean()) if len(metrics) else float("nan"))
    return pd.DataFrame({"threshold": thresholds, "rate": rates})


def class_members(metrics: pd.DataFrame) -> dict[str, pd.Series]:
    """Boolean masks of the classes of :data:`CLASSES` (All, Incorrect and Correct among valid trajectories)."""
    valid = metrics["cotValid"].astype(bool)
    return {"All": valid, "Incorrect": valid & ~metrics["correct"], "Correct": valid & metrics["correct"],
            "Perfect": metrics["perfect"].astype(bool)}


def statistics_by_class(metrics: pd.DataFrame) -> pd.DataFrame:
    """Mean graph statistics of valid trajectories per class (paper 4, Table 1 shape).

    Returns
    -------
    pandas.DataFrame
        Index :data:`CLASSES`; columns ``trajectories`` and the :data:`STATISTICS` means.
    """
    rows = []
    for name, members in class_members(metrics).items():
        part = metrics[members]
        rows.append({"class": name, "trajectories": len(part),
                     **{s: float(part[s].astype(float).mean()) if len(part) else float("nan") for s in STATISTICS}})
    return pd.DataFrame(rows).set_index("class")


def difficulty_bin(difficulty: pd.Series) -> pd.Series:
    """The Figure 3 bin of each difficulty: k for difficulty in (k - 1, k], i.e. its ceiling.

    >>> difficulty_bin(pd.Series([2.5, 3.0, 3.01, 0.5])).tolist()
    [3, 3, 4, 1]
    """
    return np.ceil(difficulty.astype(float) - 1e-9).astype(int)


def statistics_by_difficulty(metrics: pd.DataFrame) -> pd.DataFrame:
    """Mean graph statistics of valid trajectories per difficulty bin (paper 4, Figure 3).

    Returns
    -------
    pandas.DataFrame
        One row per non-empty bin in increasing order: ``difficulty`` (the bin's upper
        end k), ``bin`` (its label ``"(k-1, k]"``), ``trajectories`` and the
        :data:`STATISTICS` means.
    """
    valid = metrics[metrics["cotValid"].astype(bool) & metrics["difficulty"].notna()]
    if valid.empty:
        return pd.DataFrame(columns=["difficulty", "bin", "trajectories", *STATISTICS])
    grouped = valid.assign(difficulty=difficulty_bin(valid["difficulty"])).groupby("difficulty")
    out = grouped[list(STATISTICS)].agg(lambda s: float(s.astype(float).mean()))
    out.insert(0, "trajectories", grouped.size())
    out.insert(0, "bin", [f"({k - 1}, {k}]" for k in out.index])
    return out.reset_index()


def run_policy(store: GraphStore, run_id: str) -> tuple[MalformedPolicy, int]:
    """The malformed-reply policy a run was made with and its samples per problem (``fail`` for an ingest)."""
    from kstp.evaluators.dagmath_release import parse_malformed

    run = store.frame("run_by_id", {"runId": run_id})
    config = json.loads(run.iloc[0]["config"]) if len(run) and run.iloc[0]["config"] else {}
    policy = parse_malformed(config.get("options", {}).get("malformed", "fail"))
    return policy, int(config.get("sampling", {}).get("n", 1))


def score_run(store: GraphStore, run_id: str) -> pd.DataFrame:
    """Compute closeness, statistics and perfect reasoning of a run and write them back.

    Writes ``closed`` and ``outDegree`` on every CotStep, ``closed``, ``closedShare``,
    ``perfect`` and the ``cot*`` statistics on every Response, and ``passAt1``,
    ``perfectReasoningRate``, ``reasoningGap``, ``closenessAuc``, ``invalidFormat``,
    ``malformedPolicy`` and ``droppedMalformed`` on the Run. Returns :func:`run_metrics`
    of the trajectories the run's malformed-reply policy keeps
    (:func:`~kstp.evaluators.dagmath_release.kept_trajectories`; all under ``fail``), with
    ``attrs["dropped"]`` the sample slots it dropped and ``attrs["malformed"]`` the policy.
    """
    steps = store.frame("cot_step_closeness", {"runId": run_id})
    if len(steps):
        store.write_nodes("CotStep", pd.DataFrame({
            "id": steps["responseId"] + ":" + steps["stepId"].astype(int).astype(str),
            "closed": steps["closed"].astype(bool), "outDegree": _int(steps["outDegree"])}))
    metrics = run_metrics(store, run_id)
    if len(metrics):
        store.write_nodes("Response", pd.DataFrame({
            "id": metrics["responseId"], "closed": metrics["closed"], "perfect": metrics["perfect"],
            "closedShare": [None if pd.isna(v) else float(v) for v in metrics["closedShare"]],
            "cotNodes": _int(metrics["nodes"]), "cotEdges": _int(metrics["edges"]),
            "cotDensity": [None if pd.isna(v) else float(v) for v in metrics["density"]],
            "cotMaxInDegree": _int(metrics["maxInDegree"]), "cotMaxOutDegree": _int(metrics["maxOutDegree"])}))
    policy, samples = run_policy(store, run_id)
    metrics, dropped = kept_trajectories(metrics, samples, policy)
    figures = aggregate(metrics)
    store.write_nodes("Run", pd.DataFrame([{"id": run_id, **{k: figures[k] for k in (
        "passAt1", "perfectReasoningRate", "reasoningGap", "closenessAuc", "invalidFormat")},
        "malformedPolicy": str(policy), "droppedMalformed": dropped}]))
    metrics.attrs.update(dropped=dropped, malformed=str(policy))
    return metrics


def _retry_samples(metrics: pd.DataFrame, samples: int, attempt: int) -> dict[str, list[int]]:
    """Sample indices of attempt ``attempt`` for the slots whose attempt ``attempt - 1`` is stored malformed."""
    from kstp.evaluators.dagmath_release import RETRIED_FAILURES

    index = metrics["sampleIndex"].astype(int)
    bad = metrics[(index // samples == attempt - 1) & metrics["failure"].isin(RETRIED_FAILURES)]
    out: dict[str, list[int]] = {}
    for question, sample in zip(bad["questionId"], bad["sampleIndex"].astype(int), strict=True):
        out.setdefault(question, []).append(sample % samples + attempt * samples)
    return out


@dataclass
class DagMathResult:
    """Outcome of one evaluation run."""

    run_id: str
    resumed: bool
    requested: int
    generated: int
    shots: list[str]
    metrics: pd.DataFrame
    pending: int = 0
    last_failure: str | None = None
    rates: dict = field(default_factory=dict)

    def summary(self) -> dict:
        return {"runId": self.run_id, **aggregate(self.metrics), **malformed_figures(self.metrics),
                "resumed": self.resumed, "requested": self.requested, "generatedNow": self.generated,
                "pending": self.pending, "shots": len(self.shots), **self.rates}


def malformed_figures(metrics: pd.DataFrame) -> dict:
    """``malformed`` (the policy) and ``droppedMalformed`` (slots it dropped) of :func:`score_run`'s metrics."""
    return {"malformed": metrics.attrs.get("malformed", "fail"), "droppedMalformed": metrics.attrs.get("dropped", 0)}


def evaluate(store: GraphStore, backend: Backend, dataset: str, sampling: Sampling, shots_run: str | None = None,
             shots: int = SHOTS, limit: int | None = None, new_run: bool = False,
             progress: Callable[..., None] | None = None, window: int | None = None,
             prompt_file: PromptFile | None = None, malformed: MalformedPolicy = FAIL) -> DagMathResult:
    """Run (or resume) DAG-MATH generation and scoring of ``backend``'s model on ``dataset``.

    Parameters
    ----------
    sampling : Sampling
        ``n`` trajectories per problem (the paper uses 32), seeded per sample; its
        ``json_schema`` is set to :data:`JSON_SCHEMA`.
    shots_run : str, optional
        The run whose perfect trajectories serve as few-shot examples (an ingested gold
        run, ``cot:gold:<dataset>``); required when ``shots`` > 0.
    shots : int
        Few-shot examples per prompt (>= 0); 4 by default, as in the paper (§5).
    limit : int, optional
        Only the first ``limit`` problems (by position) with text and a gold answer.
    new_run : bool
        Allow a configuration that differs from the latest run's.
    progress : callable, optional
        ``progress(done, total, note=...)`` as completions arrive (``note`` where it takes one).
    window : int, optional
        Requests in flight (default: the backend's ``window``).
    prompt_file : PromptFile, optional
        The authors' few-shot prompt file (:func:`~kstp.evaluators.dagmath_release.read_prompt_file`):
        the prompt is the release's (the file as the system message, ``Problem: ...``
        ``Solution:`` as the user's) instead of kstp's instructions and graph shots; its name
        and SHA-256 are part of the run's configuration.
    malformed : MalformedPolicy
        ``fail`` (kstp's, the default): a malformed reply is kept and counted as a failure;
        ``retry:N`` (the release's): it is asked again with a new sample (seed) up to N
        times, then dropped (:func:`~kstp.evaluators.dagmath_release.kept_trajectories`);
        part of the run's configuration when it is not ``fail``.

    Raises
    ------
    UnknownIdError
        When the dataset has no problem with text and a gold answer, or ``shots`` > 0
        and ``shots_run`` has no perfect trajectory of another problem.
    ConfigError
        When ``prompt_file`` comes with ``shots`` > 0 (the file holds its own demonstrations).
    ConfigChangedError
        When the configuration changed and ``new_run`` is false.
    """
    if prompt_file is not None and shots and shots_run:
        raise ConfigError(f"the prompt file {prompt_file.name} holds its own demonstrations; pass --shots 0 "
                          "(or no --shots) with --prompt-file")
    questions = answerable_questions(store, dataset, limit)
    examples = choose_shots(store, shots_run, shots, set(questions["questionId"])) if shots_run else []
    if shots and not examples:
        raise UnknownIdError(f"no perfect gold trajectory of another problem in run {shots_run!r} to use as a "
                             "few-shot example; ingest gold trajectories (kstp ingest cot) or pass --shots 0")
    sampling = replace(sampling, json_schema=JSON_SCHEMA)
    options = {"questions": questions["questionId"].tolist() if limit is not None else "all",
               "shots": [rid for rid, _, _ in examples]}
    template_hash = TEMPLATE_HASH
    if prompt_file is not None:  # the release's prompt: a configuration of its own, named by the file's hash
        options.update(promptFile=prompt_file.name, promptFileSha256=prompt_file.sha256)
        template_hash = hashlib.sha256(f"{prompt_file.sha256}\x00{TEMPLATE_HASH}".encode()).hexdigest()
    if malformed.retries:  # absent under fail, so the runs made before the option keep their ids
        options["malformed"] = str(malformed)
    spec = RunSpec.of(backend, NAME, VERSION, dataset, sampling, template_hash, options)
    run_id, resumed = open_run(store, spec, new_run)
    learner = model_learner_id(backend.model)
    store.write_nodes("Learner", pd.DataFrame([{"id": learner, "kind": "model", "localId": backend.model}]))
    pairs = [(text, trajectory) for _, text, trajectory in examples]
    prompts = {q: file_prompt(prompt_file, t) if prompt_file is not None else build_prompt(t, pairs)
               for q, t in zip(questions["questionId"], questions["text"], strict=True)}
    gold = dict(zip(questions["questionId"], questions["answer"], strict=True))

    def written(graded: pd.DataFrame) -> None:
        if "_trajectory" in graded:  # absent where no reply of the group could be graded
            write_steps(store, {rid: t for rid, t in zip(graded["id"], graded["_trajectory"], strict=True)
                                if t is not None})

    grading = Grading(grade_trajectory, {q: (gold[q],) for q in prompts}, written)
    status, requested, generation = "interrupted", len(prompts) * sampling.n, Generation(len(prompts) * sampling.n, 0)
    try:
        generation = generate_and_store(store, backend, run_id, learner, prompts, sampling, grading,
                                        progress=progress, window=window)
        for attempt in range(1, malformed.retries + 1):
            again = _retry_samples(run_metrics(store, run_id), sampling.n, attempt)
            if not again:
                break
            generation += generate_and_store(store, backend, run_id, learner, {q: prompts[q] for q in again},
                                             sampling, grading, samples=again, progress=progress, window=window)
        requested, status = generation.requested, generation.status
    except RejectedRequestError:
        status = "failed"
        raise
    finally:
        metrics = score_run(store, run_id)
        responses = store.frame("run_responses", {"runId": run_id})
        finish_run(store, run_id, status, requested=requested, completed=int(responses["error"].isna().sum()),
                   failed=int(responses["error"].notna().sum()), correct=int(metrics["correct"].sum()),
                   **generation.rates())
    return DagMathResult(run_id, resumed, requested, generation.stored, [rid for rid, _, _ in examples], metrics,
                         generation.pending, generation.last_failure, generation.rates())

