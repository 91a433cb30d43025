"""Paper 1, NB2: scaffolding gain, i.e. what in-context exemplars add to a model's knowledge state.

For each target question q the model answers with k = 3 worked exemplars chosen by
one of five strategies:

- ``none``: no exemplar (the baseline knowledge state K);
- ``random``: k questions drawn at random among those of the same item type
  (``Question.answerType``);
- ``same-skill``: k drawn among the questions that share at least one concept with q;
- ``similarity``: the k questions nearest to q by cosine similarity of sentence
  embeddings (stored as ``Question.embedding``, model configurable, BGE-M3 by default),
  ties by question id; on Neo4j through its vector index
  (:func:`~kstp.graph.vector_search.nearest_questions`), with the same lists;
- ``prerequisite``: k drawn from Pre(q), q's question prerequisites by Eq. 1: every
  stored ``PREREQUISITE_OF`` pair into q, the full relation (transitive through the
  concept closure), not only its covering pairs (derive them first).

All strategies are evaluated on one common subset Q: the targets for which both the
prerequisite and the same-skill selection find at least k exemplars. An exemplar is
never the target, and never a question without a concept: paper 1 (Appendix B)
leaves those out of every computation, so they are neither targets nor exemplars.
Each exemplar shows its problem (options included, for multiple choice), its
solution where the dataset has one, and its answer in ``\\boxed{}``; then comes the
target in the prompt of the answer evaluation (:mod:`kstp.evaluators.answers`).
Two prompt sets (``prompt``, part of the run's template hash): ``kstp`` (default, what
earlier runs used) and ``paper``, Prompt 3 of Appendix A (``prompts/paper1_scaffolding.yaml``;
its target, and the prompt without exemplars, is Prompt 1). The ``paper`` set lays a
multiple-choice item out as Prompt 3 does: the problem, then ``Options: (A) ... (B) ...``
in an exemplar and ``Answer Choices: (A) ... (B) ...`` after the target (the release's
``Answer Choices`` line of its Prompt 1 too), the options read from the ``A. ...`` lines
of the question's text (:func:`kstp.loaders.items.option_lines`, the JSONL ``options``
field). When no exemplar shown has a solution (``ScaffoldingResult.exemplar_solutions``
is 0), the prompts carry no ``Solution:`` line at all, unlike the paper's; the CLI says so.
Selection is seeded per (seed, strategy, question), so a target's exemplars do not
depend on which other targets are asked.

The scaffolding gain of strategy s (Eq. 5) is

    ``SG(s) = (|K+_s| - |K|) / |Q|``,

K+_s the targets answered correctly (primary sample) with strategy s, K those answered
correctly without context; higher is better, and it is negative when exemplars hurt.
§5.2 prints it in percentage points (Qwen2.5-7B's SG = -0.56 is -0.56 points, not -56 %),
so the tables (:func:`aggregate`) report ``scaffoldingGainPoints`` = 100 x SG; the
column's name carries the unit so that no reader takes points for a fraction.

Every completion is stored as a Response with its ``strategy`` and the ids of its
``exemplars`` before it is graded; a completion is keyed by (model, prompt, sampling,
sample, strategy), so two strategies that happen to build the same prompt keep
separate Responses. Scaffolded answers are not the model's ANSWERED edges: those
belong to the answer evaluation without context.

Figure 3 (:func:`figure3`) draws, per model, the accuracy under each exemplar strategy
as bars and the no-context accuracy as a line across them.

References
----------
Cui, Do, Sachan 2026, "Do LLMs Exhibit Coherent Knowledge Structures in Mathematical
Reasoning?", §3.3.1 Eq. 5, §4, §5.2, Figure 3 and Appendix B (arXiv 2609.05245).
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import pandas as pd

from kstp.errors import ConfigError, UnknownIdError
from kstp.evaluators.answers import DEFAULT_PROMPT, check_prompt, grade_reply
from kstp.evaluators.answers import PROMPTS as ANSWER_PROMPTS
from kstp.evaluators.prompts import choices_of
from kstp.evaluators.prompts import load as load_prompt
from kstp.graph.store import GraphStore
from kstp.graph.vector_search import nearest_questions
from kstp.inference.backend import (
    Backend,
    Message,
    RejectedRequestError,
    Sampling,
    cache_key,
    endpoint_of,
    prompt_hash,
)
from kstp.inference.embeddings import EmbeddingModel
from kstp.inference.grading import GRADER_VERSION, option_count, option_texts
from kstp.inference.runs import (
    Generation,
    Grading,
    RunSpec,
    finish_run,
    generate_and_store,
    model_learner_id,
    open_run,
)

__all__ = ["NAME", "VERSION", "STRATEGIES", "HIGHER_IS_BETTER", "K", "PROMPTS", "template_hash", "Exemplar",
           "ScaffoldingPrompt", "build_prompt", "common_subset",
           "select_exemplars", "scaffolding_gain", "aggregate", "figure3", "embed_questions", "ScaffoldingResult",
           "evaluate"]

NAME = "scaffolding"
VERSION = "1.1"
#: The five exemplar strategies, baseline first (the order of the table and Figure 3).
STRATEGIES = ("none", "random", "same-skill", "similarity", "prerequisite")
HIGHER_IS_BETTER = {"accuracy": True, "scaffoldingGainPoints": True}
#: Exemplars per prompt (paper 1 §4).
K = 3
EXEMPLAR_TEMPLATE = "Example {number}:\nProblem:\n{text}\n{solution}Answer: \\boxed{{{answer}}}"
INTRO = "Here are worked examples of related problems.\n\n"
OUTRO = "\n\nNow solve the following problem.\n"
_PAPER = load_prompt("paper1_scaffolding")


class ScaffoldingPrompt(NamedTuple):
    """The texts of one prompt set; ``options``, ``choices`` and ``option`` (the paper's MCQ lines) or none.

    ``options`` ({options}) follows a multiple-choice exemplar's problem, ``choices``
    ({options}) the target's, each option written ``option`` ({letter}, {text}) and
    joined by a space. Without them the options stay lines of the problem's text.
    """

    system: str
    user: str
    exemplar: str
    intro: str
    outro: str
    options: str | None = None
    choices: str | None = None
    option: str | None = None


#: The prompt sets by name.
PROMPTS = {"kstp": ScaffoldingPrompt(*ANSWER_PROMPTS["kstp"], EXEMPLAR_TEMPLATE, INTRO, OUTRO),
           "paper": ScaffoldingPrompt(*(_PAPER[k] for k in ScaffoldingPrompt._fields))}


def template_hash(prompt: str = DEFAULT_PROMPT) -> str:
    """Hash of a prompt set's texts, stored on the Run so a template change is a new configuration."""
    check_prompt(prompt)
    return hashlib.sha256("\x00".join(t for t in PROMPTS[prompt] if t is not None).encode()).hexdigest()


def _laid_out(text: str, templates: ScaffoldingPrompt, line: str | None) -> tuple[str, str]:
    """``(problem, option line)`` of a question under a prompt set: the option line ``line`` filled in
    (empty for an open question), or the whole text and nothing where the set has no option layout
    (:func:`~kstp.evaluators.prompts.choices_of` reads the options)."""
    if line is None or templates.option is None:
        return text, ""
    problem, options = choices_of(text)
    if not options:
        return text, ""
    shown = " ".join(templates.option.format(letter=letter, text=option) for letter, option in options)
    return problem, line.format(options=shown)



@dataclass(frozen=True)
class Exemplar:
    """What an in-context exemplar shows: its problem, solution (optional) and answer."""

    question_id: str
    text: str
    answer: str
    solution: str | None = None


def build_prompt(text: str, exemplars: Sequence[Exemplar] = (), prompt: str = DEFAULT_PROMPT) -> list[Message]:
    """The chat for one target: worked exemplars (if any), then the target problem.

    Without exemplars it is the prompt of the answer evaluation with the same prompt set
    (``paper``: Prompt 1; with exemplars Prompt 3), except that the ``paper`` set lays a
    multiple-choice target out with Prompt 3's ``Answer Choices:`` line, as the
    release's Prompt 1 does, where the answer evaluation keeps the ``A. ...`` lines.

    Raises
    ------
    ConfigError
        On an unknown prompt set.

    Examples
    --------
    >>> chat = build_prompt("2 + 5?", [Exemplar("d:q1", "1 + 1?", "2", "One and one make two.")])
    >>> print(chat[1]["content"])
    Here are worked examples of related problems.
    <BLANKLINE>
    Example 1:
    Problem:
    1 + 1?
    Solution: One and one make two.
    Answer: \\boxed{2}
    <BLANKLINE>
    Now solve the following problem.
    Problem:
    2 + 5?
    """
    check_prompt(prompt)
    templates = PROMPTS[prompt]
    problem, choices = _laid_out(text, templates, templates.choices)
    target = templates.user.format(text=problem) + choices
    if exemplars:
        blocks = []
        for i, e in enumerate(exemplars, 1):
            shown, options = _laid_out(e.text, templates, templates.options)
            blocks.append(templates.exemplar.format(number=i, text=shown, options=options, answer=e.answer,
                                                    solution=f"Solution: {e.solution}\n" if e.solution else ""))
        target = templates.intro + "\n\n".join(blocks) + templates.outro + target
    return [{"role": "system", "content": templates.system}, {"role": "user", "content": target}]


def _same_skill(concepts: Mapping[str, set[str]], pool: Sequence[str]) -> dict[str, list[str]]:
    """For each question of ``pool``, the other pool questions sharing a concept with it (pool order)."""
    order = {q: i for i, q in enumerate(pool)}
    by_concept: dict[str, set[str]] = defaultdict(set)
    for q in pool:
        for c in concepts.get(q, ()):
            by_concept[c].add(q)
    return {q: sorted(set().union(*(by_concept[c] for c in concepts.get(q, ()))) - {q}, key=order.__getitem__)
            for q in pool}


def _prerequisites(edges: Sequence[tuple[str, str]], pool: Sequence[str]) -> dict[str, list[str]]:
    """Pre(q) within ``pool`` for each pool question, in pool order."""
    order = {q: i for i, q in enumerate(pool)}
    pre: dict[str, set[str]] = {q: set() for q in pool}
    for p, q in edges:
        if p in order and q in order and p != q:
            pre[q].add(p)
    return {q: sorted(ps, key=order.__getitem__) for q, ps in pre.items()}


def common_subset(pool: Sequence[str], concepts: Mapping[str, set[str]], edges: Sequence[tuple[str, str]],
                  k: int = K) -> list[str]:
    """The targets on which every strategy is evaluated.

    Parameters
    ----------
    pool : sequence of str
        Question ids that can be targets and exemplars (with text and a gold answer).
    concepts : mapping of str to set of str
        Each question's concepts (``ASSESSES``).
    edges : sequence of (str, str)
        Question prerequisite pairs ``(p, q)``: p is a prerequisite of q.
    k : int
        Exemplars per prompt.

    Returns
    -------
    list of str
        The pool questions (pool order) with at least ``k`` prerequisites and at least
        ``k`` same-skill questions in the pool, the target itself not counted.

    Examples
    --------
    >>> concepts = {"a": {"x"}, "b": {"x"}, "c": {"x", "y"}, "d": {"y"}}
    >>> edges = [("a", "c"), ("b", "c"), ("d", "c"), ("a", "d")]
    >>> common_subset(["a", "b", "c", "d"], concepts, edges, k=2)
    ['c']
    """
    same, pre = _same_skill(concepts, pool), _prerequisites(edges, pool)
    return [q for q in pool if len(same[q]) >= k and len(pre[q]) >= k]


def _rng(seed: int, strategy: str, question: str) -> random.Random:
    return random.Random(f"{seed}:{strategy}:{question}")


def select_exemplars(strategy: str, target: str, candidates: Sequence[str], k: int = K,
                     seed: int = 42) -> list[str]:
    """Pick the exemplars of ``target`` from its strategy's candidates.

    Parameters
    ----------
    strategy : str
        One of :data:`STRATEGIES`.
    candidates : sequence of str
        The strategy's candidates for this target, target excluded: same item type
        (``random``), shared concept (``same-skill``), Pre(q) (``prerequisite``), or the
        pool ordered by decreasing similarity (``similarity``, of which the first ``k``
        are taken). Ignored for ``none``.
    seed : int
        Seeds a generator per (seed, strategy, target).

    Returns
    -------
    list of str
        ``min(k, len(candidates))`` ids, in the order they are shown.

    Raises
    ------
    ConfigError
        On an unknown strategy.

    Examples
    --------
    >>> select_exemplars("similarity", "q", ["b", "a", "c", "d"], k=3)
    ['b', 'a', 'c']
    >>> select_exemplars("none", "q", ["a", "b"])
    []
    >>> pool = ["a", "b", "c", "d"]
    >>> select_exemplars("random", "q", pool, seed=1) == select_exemplars("random", "q", pool, seed=1)
    True
    """
    if strategy not in STRATEGIES:
        raise ConfigError(f"unknown exemplar strategy {strategy!r}; use one of {', '.join(STRATEGIES)}")
    if strategy == "none":
        return []
    if strategy == "similarity":
        return list(candidates[:k])
    return _rng(seed, strategy, target).sample(list(candidates), min(k, len(candidates)))


def scaffolding_gain(correct: Mapping[str, set[str]], questions: Sequence[str]) -> dict[str, float]:
    """Eq. 5: ``SG(s) = (|K+_s| - |K|) / |Q|`` for every strategy s but ``none``.

    Parameters
    ----------
    correct : mapping of str to set of str
        Per strategy, the targets answered correctly (must include ``none``: K).
    questions : sequence of str
        The common subset Q.

    Returns
    -------
    dict of str to float
        SG per strategy as Eq. 5 writes it, a fraction in [-1, 1]; NaN for an empty Q.
        §5.2 prints 100 times this, in percentage points (:func:`aggregate`).

    Raises
    ------
    ConfigError
        When ``correct`` has no ``none`` entry.

    Examples
    --------
    >>> q = ["q1", "q2", "q3", "q4"]
    >>> scaffolding_gain({"none": {"q1"}, "prerequisite": {"q1", "q2", "q3"}, "random": set()}, q)
    {'prerequisite': 0.5, 'random': -0.25}
    """
    if "none" not in correct:
        raise ConfigError("scaffolding gain needs the no-context strategy 'none' as its baseline")
    members = set(questions)
    base = len(correct["none"] & members)
    return {s: (len(k & members) - base) / len(members) if members else float("nan")
            for s, k in correct.items() if s != "none"}


def aggregate(responses: pd.DataFrame) -> pd.DataFrame:
    """Per strategy: questions, correct answers (primary samples), accuracy and SG.

    Parameters
    ----------
    responses : pandas.DataFrame
        Columns ``questionId``, ``strategy``, ``sampleIndex``, ``correct`` (one row per
        sample; a failed sample counts as incorrect).

    Returns
    -------
    pandas.DataFrame
        Indexed by strategy in :data:`STRATEGIES` order (those present), columns
        ``questions``, ``correct``, ``accuracy`` (a fraction), ``scaffoldingGainPoints``
        (SG in percentage points, 100 x Eq. 5, as §5.2 prints it; NaN for ``none``),
        ``accuracyStderr`` (the sample sd of the 0/1 verdicts over the square root of the
        number of targets; a fraction) and ``scaffoldingGainPointsStderr`` (the same of the
        paired differences from ``none``, question by question, in points). Q is the set
        of targets answered under every strategy present.

    Examples
    --------
    Four targets; without context q1 is right, with prerequisites q1 q2 q3: SG = 2/4 of
    the targets, +50 points.

    >>> rows = [("q1", "none", 0, True), ("q2", "none", 0, False), ("q3", "none", 0, False),
    ...         ("q4", "none", 0, False), ("q1", "prerequisite", 0, True), ("q2", "prerequisite", 0, True),
    ...         ("q3", "prerequisite", 0, True), ("q4", "prerequisite", 0, False)]
    >>> table = aggregate(pd.DataFrame(rows, columns=["questionId", "strategy", "sampleIndex", "correct"]))
    >>> table.loc["prerequisite", ["accuracy", "scaffoldingGainPoints"]].tolist()
    [0.75, 50.0]
    """
    from kstp.inference.statistics import mean_stderr

    primary = responses[responses["sampleIndex"] == 0]
    present = [s for s in STRATEGIES if s in set(primary["strategy"])]
    asked = [set(primary.loc[primary["strategy"] == s, "questionId"]) for s in present]
    questions = sorted(set.intersection(*asked)) if asked else []
    right = primary[primary["correct"].fillna(False).astype(bool) & primary["questionId"].isin(questions)]
    correct = {s: set(right.loc[right["strategy"] == s, "questionId"]) for s in present}
    gain = scaffolding_gain(correct, questions) if "none" in correct else {}
    n = len(questions)
    verdicts = {s: [float(q in correct[s]) for q in questions] for s in present}
    base = verdicts.get("none")
    return pd.DataFrame({"questions": n, "correct": [len(correct[s]) for s in present],
                         "accuracy": [len(correct[s]) / n if n else float("nan") for s in present],
                         "scaffoldingGainPoints": [100 * gain.get(s, float("nan")) for s in present],
                         "accuracyStderr": [mean_stderr(verdicts[s]) for s in present],
                         "scaffoldingGainPointsStderr": [
                             100 * mean_stderr([a - b for a, b in zip(verdicts[s], base, strict=True)])
                             if base is not None and s != "none" else float("nan") for s in present]},
                        index=pd.Index(present, name="strategy"))


def figure3(tables: Mapping[str, pd.DataFrame]) -> tuple[pd.DataFrame, pd.Series]:
    """The data of Figure 3: accuracy per model and exemplar strategy, and the no-context line.

    Parameters
    ----------
    tables : mapping of str to pandas.DataFrame
        Per model, its :func:`aggregate` table.

    Returns
    -------
    bars : pandas.DataFrame
        Models (rows, in the given order) x strategies other than ``none`` (columns, in
        :data:`STRATEGIES` order, those present): accuracy in [0, 1].
    baseline : pandas.Series
        Per model, the accuracy without context (``none``; NaN when not run).

    Examples
    --------
    >>> t = pd.DataFrame({"accuracy": [0.25, 0.5, 0.75]}, index=["none", "random", "prerequisite"])
    >>> bars, line = figure3({"m": t})
    >>> bars.loc["m"].to_dict(), line.to_dict()
    ({'random': 0.5, 'prerequisite': 0.75}, {'m': 0.25})
    """
    accuracy = pd.DataFrame({model: table["accuracy"] for model, table in tables.items()}).T
    present = [s for s in STRATEGIES[1:] if s in accuracy.columns]
    baseline = accuracy["none"] if "none" in accuracy.columns else pd.Series(np.nan, index=accuracy.index)
    return accuracy[present].astype(float), baseline.astype(float).rename("none")


def embed_questions(store: GraphStore, dataset: str, model: EmbeddingModel) -> pd.DataFrame:
    """Embed the dataset's questions that lack a ``model`` vector; store them on the Question nodes.

    Returns
    -------
    pandas.DataFrame
        The dataset's questions with text (``exemplar_pool`` rows), every ``embedding``
        now from ``model``.
    """
    pool = store.frame("exemplar_pool", {"dataset": dataset})
    pool = pool[pool["text"].notna()].reset_index(drop=True)
    missing = pool["embeddingModel"] != model.name
    if missing.any():
        vectors = model.encode(pool.loc[missing, "text"].tolist())
        rows = pd.DataFrame({"id": pool.loc[missing, "questionId"], "embedding": list(map(list, vectors)),
                             "embeddingModel": model.name})
        store.write_nodes("Question", rows)
        pool.loc[missing, "embedding"] = pd.Series(list(map(list, vectors)), index=pool.index[missing])
        pool.loc[missing, "embeddingModel"] = model.name
    return pool


@dataclass
class ScaffoldingResult:
    """Outcome of one scaffolding run."""

    run_id: str
    resumed: bool
    questions: list[str]
    requested: int
    generated: int
    responses: pd.DataFrame
    pending: int = 0
    last_failure: str | None = None
    rates: dict = field(default_factory=dict)
    #: Per strategy with exemplars: (exemplars shown over the targets, how many of them with a solution).
    exemplar_slots: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def exemplar_solutions(self) -> float:
        """The share of the exemplars shown (over every strategy and target) that show a solution;
        NaN when none was shown. 0 means no prompt has a ``Solution:`` line (Prompt 3 prints one)."""
        shown = sum(n for n, _ in self.exemplar_slots.values())
        return sum(k for _, k in self.exemplar_slots.values()) / shown if shown else float("nan")

    def table(self) -> pd.DataFrame:
        """The per-strategy table (:func:`aggregate`), with ``exemplarsWithSolution``: the share of the
        strategy's exemplars shown with a solution (NaN for ``none``)."""
        table = aggregate(self.responses)
        table["exemplarsWithSolution"] = [k / n if n else float("nan") for n, k in
                                          (self.exemplar_slots.get(s, (0, 0)) for s in table.index)]
        return table


def _candidates(store: GraphStore, pool: pd.DataFrame, targets: list[str], concepts, edges, strategies,
                model: EmbeddingModel | None, k: int) -> dict[str, dict[str, list[str]]]:
    """For each strategy and target, the candidates :func:`select_exemplars` draws from."""
    ids = pool["questionId"].tolist()
    out: dict[str, dict[str, list[str]]] = {"none": dict.fromkeys(targets, [])}
    types = dict(zip(ids, pool["answerType"].fillna(""), strict=True))
    by_type: dict[str, list[str]] = defaultdict(list)
    for q in ids:
        by_type[types[q]].append(q)
    out["random"] = {q: [p for p in by_type[types[q]] if p != q] for q in targets}
    same = _same_skill(concepts, ids)
    out["same-skill"] = {q: same[q] for q in targets}
    pre = _prerequisites(edges, ids)
    out["prerequisite"] = {q: pre[q] for q in targets}
    if "similarity" in strategies:
        if model is None:
            raise ConfigError("the similarity strategy needs an embedding model (--embedding-model)")
        matrix = np.vstack(pool["embedding"].map(lambda v: np.asarray(v, float)).tolist())
        out["similarity"] = nearest_questions(store, ids, matrix, targets, k)
    return {s: out[s] for s in strategies}


def evaluate(store: GraphStore, backend: Backend, dataset: str, sampling: Sampling,
             embedding_model: EmbeddingModel | None = None, strategies: Sequence[str] = STRATEGIES, k: int = K,
             seed: int = 42, limit: int | None = None, new_run: bool = False,
             progress: Callable[..., None] | None = None, window: int | None = None,
             prompt: str = DEFAULT_PROMPT) -> ScaffoldingResult:
    """Run (or resume) the scaffolding evaluation of ``backend``'s model on ``dataset``.

    Parameters
    ----------
    embedding_model : EmbeddingModel, optional
        Needed for the ``similarity`` strategy; questions without a vector of this
        model are embedded first and their vectors stored.
    strategies : sequence of str
        A subset of :data:`STRATEGIES`; must contain ``none`` (the baseline of SG).
    k : int
        Exemplars per prompt (>= 1).
    seed : int
        Seed of the exemplar selection (sampling has its own).
    limit : int, optional
        Only the first ``limit`` questions of the common subset (by position): a run
        asked for more before resumes and reports only these.
    new_run : bool
        Allow a configuration that differs from the latest run's.
    progress : callable, optional
        ``progress(done, total, note=...)`` as completions arrive (``note`` where it takes one).
    window : int, optional
        Requests in flight (default: the backend's ``window``).
    prompt : str
        The prompt set, a key of :data:`PROMPTS` (``paper``: paper 1's Prompts 1 and 3).

    Returns
    -------
    ScaffoldingResult
        The responses of the questions asked now; ``pending`` counts requests that
        got no reply (not stored: the run is ``incomplete`` and the next run asks them).

    Raises
    ------
    ConfigError
        On an unknown strategy or prompt set, no ``none``, k < 1, or ``similarity``
        without a model.
    UnknownIdError
        When no question of the dataset has k prerequisites and k same-skill questions
        (derive question prerequisites first).
    ConfigChangedError
        When the configuration changed and ``new_run`` is false.
    RejectedRequestError
        When the server rejects a request as wrong (the run's status is ``failed``).
    """
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown or "none" not in strategies or k < 1:
        raise ConfigError(f"strategies {list(strategies)} with k = {k}: need k >= 1, 'none' among them and only "
                          f"{', '.join(STRATEGIES)}")
    check_prompt(prompt)
    strategies = [s for s in STRATEGIES if s in strategies]
    if "similarity" in strategies and embedding_model is not None:
        pool = embed_questions(store, dataset, embedding_model)
    else:
        pool = store.frame("exemplar_pool", {"dataset": dataset})
    concepts: dict[str, set[str]] = {}
    for q, c in store.frame("question_concepts", {"dataset": dataset}).itertuples(index=False):
        concepts.setdefault(q, set()).add(c)
    # Appendix B: a question without a concept is neither a target nor an exemplar
    pool = pool[pool["text"].notna() & pool["answer"].notna() & pool["questionId"].isin(set(concepts))] \
        .reset_index(drop=True)
    edges = list(store.frame("question_prerequisite_edges", {"dataset": dataset}, categorical=True)[["fromId", "toId"]]
                 .itertuples(index=False, name=None))
    targets = common_subset(pool["questionId"].tolist(), concepts, edges, k)
    if limit is not None:
        targets = targets[:limit]
    if not targets:
        raise UnknownIdError(f"no question of dataset {dataset!r} has {k} prerequisites and {k} same-skill "
                             "questions with text and answer; derive question prerequisites first "
                             "(kstp derive question-prerequisites)")
    candidates = _candidates(store, pool, targets, concepts, edges, strategies, embedding_model, k)
    spec = RunSpec.of(backend, NAME, VERSION, dataset, sampling, template_hash(prompt),
                   {"k": k, "selectionSeed": seed, "strategies": strategies,
                    "embeddingModel": embedding_model.name if "similarity" in strategies else None,
                    "questions": targets if limit is not None else "all"})
    run_id, resumed = open_run(store, spec, new_run)
    learner = model_learner_id(backend.model)
    store.write_nodes("Learner", pd.DataFrame([{"id": learner, "kind": "model", "localId": backend.model}]))
    info = pool.set_index("questionId")
    shown = {q: Exemplar(q, info.at[q, "text"], info.at[q, "answer"],
                         None if pd.isna(info.at[q, "solution"]) or not str(info.at[q, "solution"]).strip()
                         else info.at[q, "solution"]) for q in info.index}
    # the options' texts (a boxed option text is its letter), else their count: a letter past them is no answer
    choices = {q: option_texts(info.at[q, "text"]) or option_count(info.at[q, "text"]) for q in targets}
    requests = {}  # (question, strategy) -> (messages, exemplar ids)
    for s in strategies:
        for q in targets:
            chosen = select_exemplars(s, q, candidates[s][q], k, seed)
            requests[(q, s)] = (build_prompt(info.at[q, "text"], [shown[p] for p in chosen], prompt), chosen)
    # The strategy is part of the key: two strategies that show the same exemplars are two answers.
    keys = {((q, s), i): cache_key(backend.model, prompt_hash([{"role": "strategy", "content": s}, *messages]),
                                   sampling, i, endpoint_of(backend), template_hash(prompt))
            for (q, s), (messages, _) in requests.items() for i in range(sampling.n)}

    grading = Grading(grade_reply, {(q, s): (info.at[q, "answer"], choices[q]) for q, s in requests},
                      version=GRADER_VERSION)
    status, generation = "interrupted", Generation(len(keys), 0)
    try:
        generation = generate_and_store(
            store, backend, run_id, learner, {r: messages for r, (messages, _) in requests.items()}, sampling, grading,
            progress=progress, keys=keys, window=window,
            columns={(q, s): {"question": q, "strategy": s, "exemplars": shown_ids}
                     for (q, s), (_, shown_ids) in requests.items()})
        status = generation.status
    except RejectedRequestError:
        status = "failed"
        raise
    finally:
        responses = _responses(store, run_id)
        finish_run(store, run_id, status, requested=len(keys), completed=int(responses["error"].isna().sum()),
                   failed=int(responses["error"].notna().sum()), pending=generation.pending, **generation.rates())
    slots = {s: (sum(len(requests[(q, s)][1]) for q in targets),
                 sum(shown[p].solution is not None for q in targets for p in requests[(q, s)][1]))
             for s in strategies if s != "none"}
    return ScaffoldingResult(run_id, resumed, targets, len(keys), generation.stored,
                             responses[responses["questionId"].isin(targets)], generation.pending,
                             generation.last_failure, generation.rates(), slots)


def _responses(store: GraphStore, run_id: str) -> pd.DataFrame:
    """The run's responses with their strategy and exemplar ids."""
    return store.frame("scaffolding_responses", {"runId": run_id})
