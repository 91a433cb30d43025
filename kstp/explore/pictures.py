"""The pictures of the explorer's pages, made from what the pages gather (:mod:`kstp.explore.pages`) with the
shared charts (:mod:`kstp.explore.charts`): PSR against accuracy, per-question PSR, the PSR distributions,
the Q-matrix grid, BLIM's state probabilities and item rates, a run at a glance.

No graph reads here: each function takes the figures a page already holds, so the pictures show
exactly the numbers of the tables beside them (the commands' figures: ``kstp evaluate psr``, ``kstp fit
blim``, ``kstp runs show``).
"""

from __future__ import annotations

import math

import pandas as pd

from kstp.explore.charts import bars, grid, hbars, histogram, scatter, strip, ticks
from kstp.explore.values import plain, slug

__all__ = ["psr_pictures", "qmatrix_grid", "blim_pictures", "run_pictures", "expected_observed", "QUESTIONS_DRAWN",
           "GRID_LIMIT", "STATES_DRAWN", "QUESTION_BARS"]

#: Most target questions the per-question PSR chart draws (the most broken); its table holds every scored question,
#: of which a page lists the first 500 and ``psr-questions/<dataset>.csv`` gives all.
QUESTIONS_DRAWN = 30
#: Largest Q-matrix drawn as a grid (questions x skills cells); a larger one stays a list.
GRID_LIMIT = 6000
#: Most BLIM states drawn as bars (the likeliest).
STATES_DRAWN = 20
#: A run of fewer questions gets a labelled bar per question (its share right beside the humans'); more, a strip.
QUESTION_BARS = 100


def psr_pictures(dataset: str, learners: pd.DataFrame, questions: pd.DataFrame, summary: list[dict],
                 buckets: list[str]) -> dict:
    """The PSR page's pictures: accuracy x PSR per learner, PSR per target question, the distributions.

    Parameters
    ----------
    learners : pandas.DataFrame
        :class:`~kstp.evaluators.psr.PsrResult`'s ``learners`` (indexed by ``learnerId``; ``accuracy``,
        ``psrMicro``, ``kind``): the rows of ``psr_learners_<dataset>.csv``.
    questions : pandas.DataFrame
        :func:`~kstp.evaluators.psr.question_table` (most broken first).
    summary, buckets
        ``PsrResult.summary()``'s rows and the six bucket names.

    Returns
    -------
    dict
        ``scatter``, ``questions`` (None without a scored question), ``distribution`` (None when no
        row has a pair in it) and ``empty`` (the rows with an empty distribution: a note each).
    """
    points = [(str(ident), plain(a), plain(p), str(kind))
              for ident, a, p, kind in zip(learners.index, learners["accuracy"], learners["psrMicro"],
                                           learners["kind"], strict=True)]
    spread = scatter("Accuracy × PSR (micro), a point per learner", points, "accuracy",
                     "PSR micro")
    worst = questions.head(QUESTIONS_DRAWN)
    per_question = None
    if len(worst):
        per_question = bars(f"PSR per target question, the {len(worst)} most broken (human learners who answered "
                            "it right)", [q.split(":", 1)[-1] for q in worst["questionId"]],
                            {"PSR macro": [plain(v) for v in worst["psrMacro"]],
                             "share missing a prerequisite": [plain(v) for v in worst["broken"]]},
                            "target question", "share", y_max=1.0, band=14,
                            links=[f"question/{slug(q)}.html" for q in worst["questionId"]])
        per_question["table"] = {"columns": ["question", "learners", "PSR micro", "PSR macro",
                                             "share missing a prerequisite", "prerequisites per learner"],
                                 "rows": [[r["questionId"], plain(r["learners"]), plain(r["psrMicro"]),
                                           plain(r["psrMacro"]), plain(r["broken"]),
                                           plain(r["prerequisitesPerLearner"])] for _, r in questions.iterrows()]}
    drawn = [r for r in summary if r.get("pairsInDistribution")]
    empty = [r["learner"] for r in summary if not r.get("pairsInDistribution")]
    distribution = None
    if drawn:
        distribution = bars("Question-level PSR distribution: human learners and each model",
                            list(buckets), {r["learner"]: [_share(r.get(f"psr {b}")) for b in buckets]
                                            for r in drawn}, "PSR of a (learner, question) pair",
                            "share of pairs", y_max=1.0, band=max(8.0, 40.0 / len(drawn)))
    return {"scatter": spread, "questions": per_question, "distribution": distribution, "empty": empty}


def _share(value) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def qmatrix_grid(dataset: str, rows: list[dict], skills: dict[str, dict]) -> dict | None:
    """The Q-matrix as a 0/1 grid, questions by skills, each skill's description and each question's text in
    its tooltip; None when it has no link or more than :data:`GRID_LIMIT` cells.

    ``rows`` are the Q-matrix rows of the page (``id``, ``localId``, ``concepts``, ``text``); ``skills``
    the concepts' nodes by id (``code``, ``description``).
    """
    columns = sorted({c for r in rows for c in r["concepts"]})
    if not columns or len(columns) * len(rows) > GRID_LIMIT:
        return None
    names = {c: str(skills.get(c, {}).get("code") or c.split(":", 1)[-1]) for c in columns}
    on = {(str(r["localId"] or r["id"]), names[c]) for r in rows for c in r["concepts"]}
    column_titles = {names[c]: f"{c}: {skills.get(c, {}).get('description') or 'no description'}" for c in columns}
    row_titles = {str(r["localId"] or r["id"]): f"{r['id']}: {r.get('text') or 'no text'}" for r in rows}
    chart = grid(f"Q-matrix of {dataset}: the skills each question assesses", [str(r["localId"] or r["id"])
                                                                              for r in rows],
                 [names[c] for c in columns], on, "skill (concept)", "question", row_titles, column_titles,
                 column_links={names[c]: f"concept/{slug(c)}.html" for c in columns})
    chart["key"] = [{"name": names[c], "id": c, "description": skills.get(c, {}).get("description")} for c in columns]
    return chart


def blim_pictures(blim: dict) -> dict:
    """BLIM's likeliest states as bars and β, η per item with ± one standard error (where the fit has them)."""
    states = blim["states"][:STATES_DRAWN]
    probabilities = bars(f"The {len(states)} likeliest knowledge states (of {blim['stateCount']}) by fitted "
                         "probability", [f"#{k + 1}" for k in range(len(states))],
                         {"probability": [s["probability"] for s in states]}, "state (by rank; the table names its "
                         "questions)", "probability", band=22)
    probabilities["table"] = {"columns": ["rank", "probability", "state"],
                              "rows": [[k + 1, s["probability"], ", ".join(s.get("local", s["state"])) or "∅"]
                                       for k, s in enumerate(states)]}
    items = blim["questions"]
    names = [q["questionId"].split(":", 1)[-1] for q in items]
    has_se = any(q.get("carelessSe") is not None for q in items)
    errors = ({"careless β": [q.get("carelessSe") for q in items], "guess η": [q.get("guessSe") for q in items]}
              if has_se else None)
    rates = bars("Careless error β and lucky guess η per question" + (" (± one standard error)" if has_se else ""),
                 names, {"careless β": [q["careless"] for q in items], "guess η": [q["guess"] for q in items]},
                 "question", "rate", errors=errors, band=12)
    return {"states": probabilities, "rates": rates}


def run_pictures(rows: list[dict], failures: list[tuple[str, int]],
                 humans: dict[str, float | None] | None = None) -> dict:
    """A run at a glance: per question the share of right samples (a failed or invalid sample counts as not
    right, as in the run's accuracy) beside the share of human learners who answered it right, as labelled
    bars up to :data:`QUESTION_BARS` questions and a strip of cells past it; the failures by kind, each
    label whole; and histograms of output tokens and latency where the samples have them.

    ``rows`` are the run page's samples (``questionId``, ``localId``, ``kind``, ``responseId``,
    ``tokensOut``, ``latencyS``); ``failures`` its (reason, count) pairs; ``humans`` each question's
    share of human learners right (None: no human answered it).
    """
    by_question: dict[str, list[dict]] = {}
    for row in rows:
        if row.get("questionId"):
            by_question.setdefault(row["questionId"], []).append(row)
    humans = humans or {}
    out: dict = {"strip": None, "failures": None, "tokens": None, "latency": None}
    if by_question:
        questions = list(by_question)
        samples = max(len(v) for v in by_question.values())
        labels = [str(by_question[q][0].get("localId") or q) for q in questions]
        shares = [sum(r["kind"] == "right" for r in by_question[q]) / len(by_question[q]) for q in questions]
        links = [f"question/{slug(q)}.html" for q in questions]
        if len(questions) < QUESTION_BARS:
            series = {"this run: share of its samples right": shares}
            if any(humans.get(q) is not None for q in questions):
                series["human learners: share right"] = [humans.get(q) for q in questions]
            out["strip"] = bars(f"Per question: right for this run ({samples} sample{'s' if samples > 1 else ''} "
                                "at most) and for the human learners", labels, series,
                                "question (a click opens it)", "share right", y_max=1.0,
                                band=max(8.0, 28.0 - len(questions) / 6), links=links)
        else:
            out["strip"] = strip(f"Share of right samples per question ({len(questions)} questions, up to {samples} "
                                 "samples each; darker: more right)", labels, shares,
                                 "question (in order; a click opens it)", links=links)
        out["strip"]["table"] = {"columns": ["question", "samples", "right", "share right", "humans right"],
                                 "rows": [[q, len(v), sum(r["kind"] == "right" for r in v),
                                           sum(r["kind"] == "right" for r in v) / len(v), humans.get(q)]
                                          for q, v in by_question.items()]}
    if failures:
        out["failures"] = hbars("Failed and invalid samples by kind", [reason for reason, _ in failures],
                                [n for _, n in failures], "samples")
    for key, column, label in (("tokens", "tokensOut", "output tokens"), ("latency", "latencyS", "latency (s)")):
        values = [r.get(column) for r in rows if r.get(column) is not None]
        if values:
            out[key] = histogram(f"{label.capitalize()} per sample ({len(values)} samples)", values, label)
    return out


def expected_observed(hasse: dict, dataset: str) -> dict | None:
    """BLIM's expected learners per drawn state (the fit's learners x the state's probability) against the human
    learners whose answer pattern is the state, a point per state; None when no drawn state has a probability.

    ``hasse`` is :func:`~kstp.explore.drawings.hasse`'s drawing (each node's ``data``: ``state``, ``learners``,
    ``expected``).
    """
    points = [(f"{{{', '.join(n['data']['state'].split())}}}", float(n["data"]["expected"]),
               float(n["data"]["learners"]), "state") for n in hasse["nodes"] if "expected" in n["data"]]
    if not points:
        return None
    top = max(max(p[1], p[2]) for p in points) or 1.0
    edge = ticks(top, integer=True)[-1]
    chart = scatter(f"BLIM expected against observed learners per state of {dataset}", points,
                    "expected by the BLIM fit (learners x state probability)",
                    "observed (answer pattern = the state)", x_range=(0.0, edge), y_range=(0.0, edge))
    chart["table"]["columns"] = ["state", "kind", "expected", "observed"]
    return chart
