"""Paper 1, §3.2: an LLM annotates questions with the curriculum concepts they assess.

Two stages per question, each answered as a JSON array of ids (temperature 0.2,
structured output by :attr:`Sampling.json_schema` where the backend has it):

1. **clusters**: the model sees every cluster of the framework (its name, with its
   domain and grade) and picks the clusters the question needs;
2. **concepts**: it sees the concepts (code and description) of the chosen clusters
   only and picks the concepts.

Prompt sets (``prompt``, part of the run's configuration hash):

- ``kstp`` (default): the problem alone; clusters listed as ``id: grade, domain:
  cluster``, concepts as ``id: code: description``.
- ``release``: what the authors' released annotation script (``src/eval/ann_skills.py``
  of pengcuix/LLM-KST) shows the model: the problem **and its solution** (where the
  dataset has one), clusters as ``id: name`` and concepts as ``id: description``; the
  release does not publish its instruction sentences, so those are kstp's.
- ``paper``: Prompt 2 of paper 1's Appendix A verbatim
  (``prompts/paper1_concept_extraction.yaml``), one template for both stages, no system
  message; the problem with its solution where the dataset has one; menus as in
  ``release`` (the paper names no menu format).

``kstp`` stays the default because it is what earlier runs used.

Ids outside the offered list are dropped and counted. A reply that is not a JSON
array is asked again (the next sample index, so seed + 1) up to ``retries`` times,
then the question is recorded as failed. An empty array is a valid answer: the
question assesses nothing offered (no clusters means no concepts, without a second
stage). Every reply is stored as a Response (``stage``, attempt = ``sampleIndex``)
before it is parsed, so a run resumes where it stopped. Requests go through
:func:`~kstp.inference.runs.generate_and_store`, as in every evaluation: one that got
no reply is not stored and leaves its question ``pending`` (no links written or
removed) for the next run; one the server rejects stops the run.

The result is written as ``(:Question)-[:ASSESSES {source: "llm:<model>", runId}]->
(:Concept)``. A run states the whole annotation of its questions by this model:
links of the same source that the run did not produce are removed. A link that
already exists from another source (a Q-matrix, gold data) is kept as it is and counted.

Evaluation (:func:`score_annotations`): the framework's own example problems (in the
Coherence Map, 326 standards have one) are annotated as questions of the dataset
``<framework>-examples``; each (problem, concept) pair is gold. A pair is
**correct** when the annotation contains the concept, **incorrect** when the
annotation is non-empty but misses it, **unannotated** when the annotation is empty
or failed; accuracy = correct / (correct + incorrect) (paper 1 Appendix B).

References
----------
Cui, Do, Sachan 2026, "Do LLMs Exhibit Coherent Knowledge Structures in Mathematical
Reasoning?", §3.2 and Appendix B (arXiv 2609.05245).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import pandas as pd

from kstp.errors import ConfigError, UnknownIdError
from kstp.evaluators.prompts import load as load_prompt
from kstp.graph.store import GraphStore
from kstp.inference.backend import Backend, Message, RejectedRequestError, Sampling, cache_key, endpoint_of, prompt_hash
from kstp.inference.runs import RunSpec, finish_run, generate_and_store, model_learner_id, open_run

__all__ = ["NAME", "VERSION", "HIGHER_IS_BETTER", "SAMPLING", "ID_LIST_SCHEMA", "PromptSet", "PROMPTS",
           "DEFAULT_PROMPT", "Parsed", "parse_ids", "cluster_prompt", "concept_prompt", "AnnotationResult", "annotate",
           "examples_dataset", "load_examples", "score_annotations"]

NAME = "annotation"
VERSION = "1.1"
HIGHER_IS_BETTER = {"accuracy": True, "correct": True, "incorrect": False, "unannotated": False}
#: The answer format of both stages: a JSON array of ids.
ID_LIST_SCHEMA = {"type": "array", "items": {"type": "string"}}
#: Paper 1 §4: GPT-4.1-mini at temperature 0.2, no top-p stated, so none is sent (None: the provider's
#: default; kstp sent 0.95 before, the answer evaluation's value); a short answer.
SAMPLING = Sampling(temperature=0.2, top_p=None, max_tokens=256, json_schema=ID_LIST_SCHEMA)
SYSTEM_PROMPT = ("You are an expert in mathematics education who maps problems to curriculum standards. "
                 "Answer only with a JSON array of ids.")
CLUSTER_TEMPLATE = ("Problem:\n{text}\n\nCurriculum clusters (id: grade, domain: cluster):\n{menu}\n\n"
                    "Which clusters does solving this problem require? Answer with a JSON array of their ids, "
                    "for example [\"{example}\"]; answer [] if none fits.")
CONCEPT_TEMPLATE = ("Problem:\n{text}\n\nCurriculum standards (id: code: description):\n{menu}\n\n"
                    "Which standards does solving this problem require? Answer with a JSON array of their ids, "
                    "for example [\"{example}\"]; answer [] if none fits.")
STAGES = ("clusters", "concepts")


@dataclass(frozen=True)
class PromptSet:
    """The texts of one annotation prompt set.

    ``cluster_line`` and ``concept_line`` format one menu line from a
    ``framework_outline`` row (its fields by name); ``solution`` says whether the
    problem's solution is shown after it.
    """

    system: str
    cluster: str
    concept: str
    cluster_line: str
    concept_line: str
    solution: bool

    @property
    def template_hash(self) -> str:
        """Hash of every text of the set, stored on the Run: a change is a new configuration."""
        return hashlib.sha256("\x00".join((self.system, self.cluster, self.concept, self.cluster_line,
                                           self.concept_line, str(self.solution))).encode()).hexdigest()


_PAPER = load_prompt("paper1_concept_extraction")
#: The prompt sets by name; see the module notes for their sources.
PROMPTS = {
    "kstp": PromptSet(SYSTEM_PROMPT, CLUSTER_TEMPLATE, CONCEPT_TEMPLATE,
                      "{clusterId}: grade {grade}, {domainName}: {clusterName}", "{conceptId}: {code}: {description}",
                      solution=False),
    "release": PromptSet(SYSTEM_PROMPT, CLUSTER_TEMPLATE.replace("(id: grade, domain: cluster)", "(id: name)"),
                         CONCEPT_TEMPLATE.replace("(id: code: description)", "(id: description)"),
                         "{clusterId}: {clusterName}", "{conceptId}: {description}", solution=True),
    "paper": PromptSet(_PAPER["system"], _PAPER["user"], _PAPER["user"], _PAPER["cluster_line"],
                       _PAPER["concept_line"], solution=True),
}
DEFAULT_PROMPT = "kstp"
_GRADES = ["K", *map(str, range(1, 9)), "HS"]
_FENCE_RE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


@dataclass(frozen=True)
class Parsed:
    """One reply read as an id list.

    Attributes
    ----------
    ids : tuple of str
        The offered ids it names, first mention order, no repeats.
    dropped : int
        Ids it names that were not offered (each occurrence counted).
    valid : bool
        Whether the reply is a JSON array of strings or integers.
    """

    ids: tuple[str, ...] = ()
    dropped: int = 0
    valid: bool = False


def parse_ids(text: str | None, offered: Sequence[str]) -> Parsed:
    """Read a reply as a JSON array of ids and keep the offered ones.

    A Markdown code fence around the array is allowed; integers are read as their
    decimal string.

    Examples
    --------
    >>> parse_ids('["c:2", "c:9", "c:2"]', ["c:1", "c:2"])
    Parsed(ids=('c:2',), dropped=1, valid=True)
    >>> parse_ids("[]", ["c:1"]).valid
    True
    >>> parse_ids("The answer is c:1", ["c:1"])
    Parsed(ids=(), dropped=0, valid=False)
    """
    if text is None:
        return Parsed()
    body = _FENCE_RE.sub(r"\1", text.strip())
    try:
        value = json.loads(body)
    except json.JSONDecodeError:
        return Parsed()
    if not isinstance(value, list) or not all(isinstance(v, str | int) and not isinstance(v, bool) for v in value):
        return Parsed()
    allowed = set(offered)
    named = [str(v).strip() for v in value]
    return Parsed(tuple(dict.fromkeys(v for v in named if v in allowed)), sum(v not in allowed for v in named), True)


_MISSING = {"grade": "?", "domainName": "no domain"}


def _chat(chosen: PromptSet, template: str, text: str, solution: str | None, menu: list[str],
          example: str) -> list[Message]:
    shown = f"{text}\n\nSolution:\n{solution}" if chosen.solution and solution else text
    content = template.format(text=shown, menu="\n".join(menu), example=example)
    # Prompt 2 of the paper has no system part: no empty system message is sent for it
    system = [{"role": "system", "content": chosen.system}] if chosen.system else []
    return [*system, {"role": "user", "content": content}]


def _line(template: str, row: pd.Series) -> str:
    return template.format(**{k: (v if isinstance(v, str) and v else _MISSING.get(k, "")) for k, v in row.items()})


def cluster_prompt(text: str, outline: pd.DataFrame, prompt: str = DEFAULT_PROMPT,
                   solution: str | None = None) -> tuple[list[Message], list[str]]:
    """Stage 1: the chat offering every cluster of ``outline``, and the offered ids.

    ``outline`` has the ``framework_outline`` columns; clusters are listed by grade
    (K, 1-8, HS, then others), then domain. ``prompt`` names a set of :data:`PROMPTS`;
    ``solution`` is shown after the problem when that set shows solutions.

    Examples
    --------
    >>> outline = pd.DataFrame({"clusterId": ["k1"], "clusterName": ["Add within 10"], "domainName": ["OA"],
    ...                         "grade": ["1"], "conceptId": ["c1"], "code": ["1.OA.1"], "description": ["add"]})
    >>> chat, offered = cluster_prompt("2 + 3?", outline, "release", "Count on.")
    >>> print(chat[1]["content"].split("\\n\\nWhich")[0])
    Problem:
    2 + 3?
    <BLANKLINE>
    Solution:
    Count on.
    <BLANKLINE>
    Curriculum clusters (id: name):
    k1: Add within 10
    >>> print(cluster_prompt("2 + 3?", outline, "kstp", "Count on.")[0][1]["content"].split("\\n\\nWhich")[0])
    Problem:
    2 + 3?
    <BLANKLINE>
    Curriculum clusters (id: grade, domain: cluster):
    k1: grade 1, OA: Add within 10
    """
    prompts = PROMPTS[prompt]
    clusters = outline.drop_duplicates("clusterId")
    rank = clusters["grade"].map(lambda g: _GRADES.index(g) if g in _GRADES else len(_GRADES))
    clusters = clusters.assign(rank=rank).sort_values(["rank", "domainName", "clusterId"], kind="stable")
    menu = [_line(prompts.cluster_line, r) for _, r in clusters.iterrows()]
    ids = clusters["clusterId"].tolist()
    return _chat(prompts, prompts.cluster, text, solution, menu, ids[0]), ids


def concept_prompt(text: str, outline: pd.DataFrame, clusters: Sequence[str], prompt: str = DEFAULT_PROMPT,
                   solution: str | None = None) -> tuple[list[Message], list[str]]:
    """Stage 2: the chat offering the concepts of the chosen ``clusters``, and the offered ids."""
    prompts = PROMPTS[prompt]
    concepts = outline[outline["clusterId"].isin(list(clusters))].drop_duplicates("conceptId")
    menu = [_line(prompts.concept_line, r) for _, r in concepts.iterrows()]
    ids = concepts["conceptId"].tolist()
    return _chat(prompts, prompts.concept, text, solution, menu, ids[0]), ids


@dataclass
class _Outcome:
    ids: tuple[str, ...] = ()
    dropped: int = 0
    attempts: int = 0
    valid: bool = False
    pending: bool = False  # a request got no reply: the next run asks it


@dataclass
class AnnotationResult:
    """Outcome of one annotation run.

    ``items`` has one row per question: ``questionId``, ``clusters``, ``concepts``
    (lists of ids), ``status`` (``annotated``, ``empty``, ``failed``, or ``pending``:
    a request got no reply), ``dropped`` (ids not offered, both stages), ``attempts``
    (replies asked for, both stages). ``pending`` counts the requests that got no
    reply, ``last_failure`` is the last one's error.
    """

    run_id: str
    resumed: bool
    generated: int
    items: pd.DataFrame
    links: dict[str, int] = field(default_factory=dict)
    pending: int = 0
    last_failure: str | None = None

    def summary(self) -> dict:
        counts = self.items["status"].value_counts()
        return {"runId": self.run_id, "resumed": self.resumed, "questions": len(self.items),
                "annotated": int(counts.get("annotated", 0)), "empty": int(counts.get("empty", 0)),
                "failed": int(counts.get("failed", 0)), "pending": int(counts.get("pending", 0)),
                "droppedIds": int(self.items["dropped"].sum()),
                "links": int(self.items["concepts"].map(len).sum()), "generatedNow": self.generated, **self.links}


def _ask(store: GraphStore, backend: Backend, run_id: str, learner: str, stage: str,
         requests: Mapping[str, tuple[list[Message], list[str]]], sampling: Sampling, attempts: int,
         template: str, progress: Callable[[int], None] | None) -> tuple[dict[str, _Outcome], int, int, str | None]:
    """Ask each request until a valid id list comes back or ``attempts`` replies were asked.

    Returns the outcome per question, the replies stored now, the requests left
    pending (no reply: the question is asked no further attempt) and the last
    transport failure.
    """
    outcome = {q: _Outcome() for q in requests}
    open_, generated, waiting, last_failure = list(requests), 0, 0, None
    for attempt in range(attempts):
        if not open_:
            break
        keys = {(q, attempt): cache_key(backend.model, prompt_hash(requests[q][0]), sampling, attempt,
                                        endpoint_of(backend), template) for q in open_}
        done = generate_and_store(store, backend, run_id, learner, {q: requests[q][0] for q in open_}, sampling,
                                  samples={q: [attempt] for q in open_}, keys=keys,
                                  columns={q: {"question": q, "stage": stage} for q in open_},
                                  progress=(lambda d, _, base=generated: progress(base + d)) if progress else None)
        generated, waiting = generated + done.stored, waiting + done.pending
        last_failure = done.last_failure or last_failure
        stored = store.frame("responses_by_id", {"ids": list(keys.values())}).set_index("responseId")
        verdicts = []
        for q in open_:
            if keys[(q, attempt)] not in stored.index:
                outcome[q] = replace(outcome[q], pending=True)
                continue
            row = stored.loc[keys[(q, attempt)]]
            parsed = parse_ids(None if pd.notna(row["error"]) else row["text"], requests[q][1])
            outcome[q] = _Outcome(parsed.ids, outcome[q].dropped + parsed.dropped, attempt + 1, parsed.valid)
            verdicts.append({"id": keys[(q, attempt)], "extracted": json.dumps(list(parsed.ids)) if parsed.valid
                             else None,
                             "verdict": "valid" if parsed.valid else row["error"] if pd.notna(row["error"])
                             else "invalid JSON (truncated)" if row["finishReason"] == "length" else "invalid JSON"})
        if verdicts:
            store.write_nodes("Response", pd.DataFrame(verdicts))
        open_ = [q for q in open_ if not outcome[q].valid and not outcome[q].pending]
    return outcome, generated, waiting, last_failure


def annotate(store: GraphStore, backend: Backend, dataset: str, framework: str, sampling: Sampling = SAMPLING,
             retries: int = 2, limit: int | None = None, new_run: bool = False,
             progress: Callable[[int], None] | None = None, prompt: str = DEFAULT_PROMPT) -> AnnotationResult:
    """Annotate the questions of ``dataset`` with concepts of ``framework`` (two stages).

    Parameters
    ----------
    sampling : Sampling
        Default: temperature 0.2, at most 256 tokens, the id-list JSON schema. ``n`` is
        ignored: one reply per attempt.
    retries : int
        Further attempts after a reply that is not a JSON array (>= 0).
    limit : int, optional
        Only the first ``limit`` questions (by position) that have text.
    progress : callable, optional
        ``progress(replies so far)``.
    prompt : str
        The prompt set, a key of :data:`PROMPTS` (see the module notes).

    Returns
    -------
    AnnotationResult

    Raises
    ------
    ConfigError
        On an unknown prompt set.
    UnknownIdError
        When the dataset has no question with text, or the framework no concept inside
        a cluster.
    ConfigChangedError
        When the configuration changed since the latest run and ``new_run`` is false.
    RejectedRequestError
        When the server rejects a request as wrong (the run's status is ``failed``).
    """
    if prompt not in PROMPTS:
        raise ConfigError(f"unknown annotation prompt set {prompt!r}; use one of {', '.join(PROMPTS)}")
    questions = store.frame("exemplar_pool", {"dataset": dataset})  # text and solution
    questions = questions[questions["text"].notna()]
    if limit is not None:
        questions = questions.head(limit)
    if questions.empty:
        raise UnknownIdError(f"dataset {dataset!r} has no question with text in the graph; ingest items first")
    outline = store.frame("framework_outline", {"framework": framework})
    if outline.empty:
        raise UnknownIdError(f"framework {framework!r} has no concept inside a cluster; ingest it first "
                             "(kstp ingest standards)")
    sampling = replace(sampling, n=1)
    spec = RunSpec.of(backend, NAME, VERSION, dataset, sampling, PROMPTS[prompt].template_hash,
                      {"framework": framework, "retries": retries, "prompt": prompt,
                    "questions": questions["questionId"].tolist() if limit is not None else "all"})
    run_id, resumed = open_run(store, spec, new_run)
    learner = model_learner_id(backend.model)
    store.write_nodes("Learner", pd.DataFrame([{"id": learner, "kind": "model", "localId": backend.model}]))
    texts = dict(zip(questions["questionId"], questions["text"], strict=True))
    solutions = {q: v for q, v in zip(questions["questionId"], questions["solution"], strict=True) if pd.notna(v)}
    status, generated, waiting, last_failure = "interrupted", 0, 0, None
    try:
        first, generated, waiting, last_failure = _ask(
            store, backend, run_id, learner, "clusters",
            {q: cluster_prompt(t, outline, prompt, solutions.get(q)) for q, t in texts.items()},
            sampling, retries + 1, PROMPTS[prompt].template_hash, progress)
        chosen = {q: o.ids for q, o in first.items() if o.valid and o.ids}
        second, more, later, failure = _ask(
            store, backend, run_id, learner, "concepts",
            {q: concept_prompt(texts[q], outline, ids, prompt, solutions.get(q)) for q, ids in chosen.items()},
            sampling, retries + 1, PROMPTS[prompt].template_hash,
            (lambda d: progress(generated + d)) if progress else None)
        generated, waiting, last_failure = generated + more, waiting + later, failure or last_failure
        rows = []
        for q in texts:
            one, two = first[q], second.get(q, _Outcome(valid=True))
            failed = not one.valid or not two.valid
            rows.append({"questionId": q, "clusters": list(one.ids), "concepts": [] if failed else list(two.ids),
                         "status": "pending" if one.pending or two.pending else "failed" if failed
                         else "annotated" if two.ids else "empty",
                         "dropped": one.dropped + two.dropped, "attempts": one.attempts + two.attempts})
        items = pd.DataFrame(rows)
        links = _write_links(store, dataset, run_id, f"llm:{backend.model}", items)
        status = "incomplete" if waiting else "finished"
    except RejectedRequestError:
        status = "failed"
        raise
    finally:
        ended = status in ("finished", "incomplete")
        finish_run(store, run_id, status, requested=len(texts), pending=waiting,
                   completed=int(items["status"].isin(("annotated", "empty")).sum()) if ended else None,
                   failed=int((items["status"] == "failed").sum()) if ended else None)
    return AnnotationResult(run_id, resumed, generated, items, links, waiting, last_failure)


def _write_links(store: GraphStore, dataset: str, run_id: str, source: str, items: pd.DataFrame) -> dict[str, int]:
    """Write the run's ASSESSES links; drop stale links of ``source``; keep other sources' links.

    Only questions the run annotated (or found empty) are touched: a failed or pending
    one keeps the links it has.
    """
    decided = items["status"].isin(("annotated", "empty"))
    pairs = items[decided].explode("concepts").dropna(subset=["concepts"])
    new = pd.DataFrame({"from_id": pairs["questionId"], "to_id": pairs["concepts"]})
    stored = store.frame("concept_links", {"dataset": dataset}).rename(
        columns={"questionId": "from_id", "conceptId": "to_id"})
    stored = stored[stored["from_id"].isin(items.loc[decided, "questionId"])]
    mine = stored["source"] == source
    other = stored.loc[~mine, ["from_id", "to_id"]]
    keep = new.merge(other, on=["from_id", "to_id"], how="left", indicator=True)["_merge"] == "left_only"
    removed = store.delete_stale("ASSESSES", "Question", "Concept", stored[mine], new)
    store.write_relationships("ASSESSES", "Question", "Concept",
                              new[keep.to_numpy()].assign(source=source, runId=run_id))
    return {"linksKeptFromOtherSources": int((~keep).sum()), "staleLinksRemoved": removed}


def examples_dataset(framework: str) -> str:
    """The dataset holding ``framework``'s example problems: ``<framework>-examples``."""
    return f"{framework}-examples"


def load_examples(store: GraphStore, framework: str) -> pd.DataFrame:
    """Write the framework's example problems as questions of :func:`examples_dataset`.

    One Question per concept with an example problem, local id the concept's local id,
    text the problem. Idempotent.

    Returns
    -------
    pandas.DataFrame
        Gold pairs: ``questionId``, ``conceptId``, ``code``.

    Raises
    ------
    UnknownIdError
        When no concept of the framework has an example problem.
    """
    examples = store.frame("concept_examples", {"framework": framework})
    if examples.empty:
        raise UnknownIdError(f"no concept of framework {framework!r} has an example problem")
    dataset = examples_dataset(framework)
    ids = [f"{dataset}:{local}" for local in examples["localId"]]
    store.write_nodes("Dataset", pd.DataFrame([{"id": dataset, "name": f"{framework} example problems",
                                                "source": framework}]))
    store.write_nodes("Question", pd.DataFrame({"id": ids, "dataset": dataset, "localId": examples["localId"],
                                                "text": examples["exampleProblem"],
                                                "position": range(1, len(ids) + 1)}))
    store.write_relationships("IN_DATASET", "Question", "Dataset", pd.DataFrame({"from_id": ids, "to_id": dataset}))
    return pd.DataFrame({"questionId": ids, "conceptId": examples["conceptId"], "code": examples["code"]})


def score_annotations(gold: pd.DataFrame, items: pd.DataFrame) -> dict:
    """Appendix B: correct, incorrect and unannotated gold pairs, accuracy without unannotated.

    Parameters
    ----------
    gold : pandas.DataFrame
        ``questionId``, ``conceptId``: the gold pairs (only questions in ``items`` count,
        and of those not the ``pending`` ones: the model has not answered them yet).
    items : pandas.DataFrame
        :attr:`AnnotationResult.items` (``questionId``, ``concepts``, ``status``).

    Returns
    -------
    dict
        ``pairs``, ``correct``, ``incorrect``, ``unannotated`` (empty or failed
        annotation), ``failed`` (part of unannotated), ``accuracy`` =
        correct / (correct + incorrect), NaN when both are 0, and ``accuracyStderr``, the
        cluster-robust standard error over the judged pairs with a question's pairs one
        cluster (:func:`~kstp.inference.statistics.clustered_stderr`).

    Examples
    --------
    >>> gold = pd.DataFrame({"questionId": ["e:1", "e:2", "e:3", "e:4"], "conceptId": ["c1", "c2", "c3", "c4"]})
    >>> items = pd.DataFrame({"questionId": ["e:1", "e:2", "e:3", "e:4"],
    ...                       "concepts": [["c1", "c9"], ["c1"], [], []],
    ...                       "status": ["annotated", "annotated", "empty", "failed"]})
    >>> score_annotations(gold, items)
    {'pairs': 4, 'correct': 1, 'incorrect': 1, 'unannotated': 2, 'failed': 1, 'accuracy': 0.5, 'accuracyStderr': 0.5}
    """
    from kstp.inference.statistics import clustered_stderr

    answered = items[items["status"] != "pending"]
    merged = gold.merge(answered[["questionId", "concepts", "status"]], on="questionId", how="inner")
    empty = merged["concepts"].map(len) == 0
    hit = [c in set(cs) for c, cs in zip(merged["conceptId"], merged["concepts"], strict=True)]
    correct = int((pd.Series(hit, index=merged.index, dtype=bool) & ~empty).sum())
    incorrect = int((~empty).sum()) - correct
    judged = correct + incorrect
    verdicts = pd.Series(hit, index=merged.index, dtype=float)[~empty]
    return {"pairs": len(merged), "correct": correct, "incorrect": incorrect, "unannotated": int(empty.sum()),
            "failed": int((merged["status"] == "failed").sum()),
            "accuracy": correct / judged if judged else float("nan"),
            "accuracyStderr": clustered_stderr(verdicts.to_numpy(), merged.loc[~empty, "questionId"].to_numpy())
            if judged else float("nan")}
