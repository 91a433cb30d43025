"""A campaign's progress and results, read from the runs stored in the graph (no model is asked).

Each cell's run is the newest run of its evaluator, model and dataset whose stored
configuration holds what the cell sets: backend, tag, seed, samples and the gen-kwargs
the plan names (:func:`cell_run`; not the servers, which are not a run's identity). A
cell without one has not started. The figures are the runs' own: accuracy and its
standard error as the answers run stored them, PSR of the model's answers
(:func:`kstp.evaluators.psr.evaluate_dataset`, nothing written back), scaffolding gain
per strategy from the scaffolding run's responses
(:func:`kstp.evaluators.scaffolding.aggregate`), the other evaluators' headline figure
(:data:`kstp.graph.manage.HEADLINE`).
"""

from __future__ import annotations

import json

import pandas as pd

from kstp.evaluators.campaign.plan import Cell, Plan
from kstp.evaluators.campaign.runner import cell_hash
from kstp.graph.manage import HEADLINE, list_runs
from kstp.graph.store import GraphStore
from kstp.inference.runs import model_learner_id

__all__ = ["cell_run", "campaign_status", "campaign_report", "STATUS_COLUMNS"]

#: The columns of :func:`campaign_status`.
STATUS_COLUMNS = ("evaluator", "model", "dataset", "seed", "tag", "status", "done", "total", "tokens",
                  "completionsPerS", "tokensPerS", "leftS", "skip", "runId")


def _matches(config: dict, match: dict) -> bool:
    """Whether a stored run configuration holds everything a cell sets (see the module notes)."""
    if config.get("backend") != match["backend"] or config.get("tag") != match["tag"]:
        return False
    sampling = config.get("sampling") or {}
    return all(sampling.get(key) == value for key, value in match["sampling"].items())


def cell_run(store: GraphStore, cell: Cell, cache: dict | None = None) -> pd.Series | None:
    """The run of ``cell`` (a row of :func:`~kstp.graph.manage.list_runs`), or None where it has not started.

    ``cache`` keeps the runs of each (evaluator, model, dataset) between calls.

    Examples
    --------
    >>> match = {"backend": "openai", "tag": None, "sampling": {"seed": 42, "n": 2}}
    >>> _matches({"backend": "openai", "endpoint": {"baseUrl": "http://h/v1"}, "sampling": {"seed": 42, "n": 2,
    ...           "temperature": 0.6}}, match)
    True
    >>> _matches({"backend": "openai", "endpoint": {"baseUrl": "http://h/v1"}, "sampling": {"seed": 43, "n": 2}},
    ...          match)
    False
    """
    match = cell.match
    key = (match["evaluator"], match["model"], match["dataset"])
    cache = {} if cache is None else cache
    if key not in cache:
        listed = list_runs(store, *key)
        raw = store.frame("run_list", {"evaluator": key[0], "model": key[1], "dataset": key[2] or ""})
        cache[key] = listed.merge(raw[["runId", "config"]], on="runId", how="left")
    for row in cache[key].itertuples(index=False):
        if _matches(json.loads(row.config) if row.config else {}, match):
            return pd.Series(row._asdict())
    return None


def _number(value) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


def campaign_status(store: GraphStore, plan: Plan) -> pd.DataFrame:
    """Each cell's progress: run status, completions done of the total, output tokens, rate, time left.

    Returns
    -------
    pandas.DataFrame
        One row per cell, columns :data:`STATUS_COLUMNS`: the cell (``evaluator`` its kind, ``model`` its
        label, ``dataset``, ``seed``, ``tag``), ``status`` the run's (``not started``
        without one; ``interrupted (process N is gone)`` for a run killed mid-way), ``done``
        and ``total`` completions stored and asked for (total blank until the run has
        counted them, save where its questions tell them: answers, dagmath and scaffolding runs),
        ``tokens`` the output tokens of its stored replies, ``completionsPerS`` and ``tokensPerS``
        the pace of its last finished session (a run in its first session: completions since it
        started), ``leftS`` the seconds left at that pace (0 when done; blank without a pace), ``skip`` whether
        the run finished with the cell's command as it is now (its ``campaignCell``, :func:`~kstp.evaluators.
        campaign.runner.cell_hash`): ``kstp campaign run`` skips such a cell as finished.
    """
    cache: dict = {}
    rows = []
    for cell in plan.cells:
        run = cell_run(store, cell, cache)
        named = {"evaluator": cell.kind, "model": cell.model, "dataset": cell.dataset, "seed": cell.seed,
                 "tag": cell.tag}
        if run is None:
            rows.append({**named, "status": "not started", "done": 0, "skip": False})
            continue
        node = store.nodes("Run", [run["runId"]]).iloc[0]
        # a row per question and sample of the run's own dataset, as its total counts them (a reply another
        # dataset's question shares is not among them); tokens are counted once per reply
        samples = store.frame("run_samples", {"runId": run["runId"]})
        done = len(samples) if pd.isna(run["done"]) else int(run["done"])
        done = max(done, len(samples))
        total = _planned(store, cell, json.loads(run["config"]) if run["config"] else {}) \
            if pd.isna(run["planned"]) else int(run["planned"])
        rate, tokens_rate = _number(node.get("completionsPerS")), _number(node.get("tokensPerS"))
        if rate is None and str(run["status"]) == "running" and done:  # a first session: its pace so far
            rate = _pace(done, node.get("startedAt"))
        left = 0.0 if total is not None and done >= total and run["status"] == "finished" else \
            round((total - done) / rate, 1) if total is not None and rate else None
        rows.append({**named, "status": run["status"], "done": done, "total": total,
                     "tokens": int(pd.to_numeric(samples.drop_duplicates("responseId")["tokensOut"],
                                                 errors="coerce").fillna(0).sum()) if len(samples) else 0,
                     "completionsPerS": rate, "tokensPerS": tokens_rate, "leftS": left,
                     "skip": run["status"] == "finished" and node.get("campaignCell") == cell_hash(cell),
                     "runId": run["runId"]})
    table = pd.DataFrame(rows, columns=list(STATUS_COLUMNS))
    return table.astype({"seed": "Int64", "done": "Int64", "total": "Int64", "tokens": "Int64"})


def _planned(store: GraphStore, cell: Cell, config: dict) -> int | None:
    """The completions a run that has not counted them yet (one running, or killed) asks for: its questions x
    samples (x strategies for scaffolding), where its configuration tells them; None otherwise."""
    options = config.get("options") or {}
    questions, n = options.get("questions"), (config.get("sampling") or {}).get("n") or 1
    if questions == "all" and cell.kind == "answers":
        from kstp.graph.structures import answerable_questions

        questions = answerable_questions(store, cell.dataset)["questionId"].tolist()
    if not isinstance(questions, list):
        return None
    if cell.kind == "scaffolding":
        return len(questions) * len(options.get("strategies") or []) or None
    return len(questions) * n if cell.kind in ("answers", "dagmath") else None


def _pace(done: int, started) -> float | None:
    """Completions per second since ``started`` (ISO 8601), for a run that has not recorded its pace yet."""
    if not isinstance(started, str):
        return None
    from datetime import UTC, datetime

    seconds = (datetime.now(UTC) - datetime.fromisoformat(started)).total_seconds()
    return round(done / seconds, 3) if seconds > 0 else None


def _psr(store: GraphStore, dataset: str, cache: dict) -> pd.DataFrame:
    """Accuracy and PSR of every learner of ``dataset`` (paper 1's defaults, nothing written)."""
    if dataset not in cache:
        from kstp.errors import KstpError
        from kstp.evaluators import psr

        try:
            cache[dataset] = psr.evaluate_dataset(store, dataset, write_back=False).learners
        except KstpError:  # no PSR to read (a dataset without learners' answers): the row keeps its accuracy
            cache[dataset] = pd.DataFrame(columns=["psrMicro", "psrMacro"])
    return cache[dataset]


def campaign_report(store: GraphStore, plan: Plan) -> pd.DataFrame:
    """The table across models in paper 1's Table 2 shape, with the other evaluators' headline figures.

    Returns
    -------
    pandas.DataFrame
        One row per model, dataset, seed (and tag) that has a run: ``accuracy`` and
        ``accuracyStderr`` (a fraction; the answers run's), ``psrMicro`` and ``psrMacro``
        (of the model's answers on the dataset: its newest answers run's, paper 1 Eq. 2-4 with
        the release's denominator; a single learner has no standard error), ``SG <strategy>``
        and ``SG <strategy> stderr`` (scaffolding gain in percentage points, Eq. 5 x 100),
        ``<kind> <figure>`` for dagmath, rqeval and nextstep (their headline), and the
        ``runs`` read. Columns no run fills are left out.
    """
    from kstp.evaluators import scaffolding

    cache: dict = {}
    psr_cache: dict = {}
    rows: dict[tuple, dict] = {}
    for cell in plan.cells:
        run = cell_run(store, cell, cache)
        if run is None:
            continue
        key = (cell.model, cell.dataset, cell.seed, cell.tag)
        row = rows.setdefault(key, {"model": cell.model, "dataset": cell.dataset, "seed": cell.seed,
                                    "tag": cell.tag, "runs": []})
        row["runs"].append(run["runId"])
        if cell.kind == "answers":
            node = store.nodes("Run", [run["runId"]]).iloc[0]
            row["accuracy"], row["accuracyStderr"] = _number(node.get("accuracy")), \
                _number(node.get("accuracyStderr"))
            learners = _psr(store, cell.dataset, psr_cache)
            learner = model_learner_id(cell.match["model"])
            if learner in learners.index:
                row["psrMicro"] = _number(learners.at[learner, "psrMicro"])
                row["psrMacro"] = _number(learners.at[learner, "psrMacro"])
        elif cell.kind == "scaffolding":
            table = scaffolding.aggregate(store.frame("scaffolding_responses", {"runId": run["runId"]}))
            if "none" in table.index:
                row["accuracy (no context)"] = _number(table.at["none", "accuracy"])
            for strategy in table.index.drop("none", errors="ignore"):
                row[f"SG {strategy}"] = _number(table.at[strategy, "scaffoldingGainPoints"])
                row[f"SG {strategy} stderr"] = _number(table.at[strategy, "scaffoldingGainPointsStderr"])
        elif isinstance(HEADLINE.get(cell.match["evaluator"]), str):
            row[f"{cell.kind} {HEADLINE[cell.match['evaluator']]}"] = _number(run["value"])
    table = pd.DataFrame(list(rows.values()))
    if table.empty:
        return table
    if table["tag"].isna().all():
        table = table.drop(columns="tag")
    table["runs"] = table["runs"].map(" ".join)
    return table[[c for c in table.columns if c != "runs"] + ["runs"]]
