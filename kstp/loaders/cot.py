"""DAG-MATH chain-of-thought trajectories: format, validation, and import into the graph.

A trajectory is a list of steps; each step has an integer ``step_id``, a justification
(the *edge*), the ids of the steps it directly depends on (``null`` for a fact taken
from the problem statement) and one conclusion (the *node*); the last step states the
final answer in ``\\boxed{}``. Both published spellings are read:

- the gold benchmark: ``{step_id, edge, direct_dependent_steps, node}``, in files that
  hold a list of problem objects with ``problem_id``, ``domain``, ``difficulty``,
  ``problem_text``, ``sample_id``, ``final_answer`` and ``steps``;
- the generation schema: ``{"steps": [{step_id, thinking, direct_dependent_steps, text}]}``.

Validation gives one precise reason per trajectory, checked in this order: the shape
(steps, ids, texts), a duplicate step id, a parent id that does not exist, a cycle, a
parent that is not an earlier step (forward reference), no final boxed answer. An
invalid trajectory is stored with its reason (``Response.cotValid = false``,
``Response.cotError``) and counts as a failure; it is never dropped.

One rule scores every trajectory, ingested or generated (:func:`score_trajectory`):
PASS@1 is answer accuracy, so the ``\\boxed{}`` of the last step is graded whether or
not the DAG is valid; only closeness and perfect reasoning need a valid DAG.
A backspace or form feed before a letter in a step's text is read as the LaTeX command
whose single backslash JSON took for the escape ``\\b`` or ``\\f`` (``\\boxed``, ``\\frac``).

In the graph a valid trajectory is ``(:Response)-[:HAS_STEP]->(:CotStep)`` per step and
``(:CotStep)-[:SUPPORTS]->(:CotStep)`` from each parent to its child.

References
----------
Zhang, Kuzborskij, Lee, Leng, Liu 2025, "DAG-Math: Graph-Guided Mathematical Reasoning
in LLMs", §4 (the DAG-MATH format; arXiv 2510.19842).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from kstp.errors import InputError
from kstp.graph.store import GraphStore
from kstp.inference.grading import Verdict, extract_final, grade
from kstp.inference.runs import few_ids, write_responses
from kstp.loaders.common import LoadReport, check_namespace, read_text, scoped

__all__ = ["Step", "Trajectory", "InvalidTrajectoryError", "parse_trajectory", "parse_text", "TrajectoryScore",
           "score_trajectory", "trajectory_json", "CotRecord", "CotSet", "read_cot_files", "write_steps",
           "write_cot_set", "ingest_run_id", "GOLD"]

#: Default source name of ingested trajectories (``kstp ingest cot --source``).
GOLD = "gold"


class InvalidTrajectoryError(InputError):
    """A trajectory breaks the DAG-MATH format; the message is the stored reason."""


@dataclass(frozen=True)
class Step:
    """One step: its id, justification (edge), parent step ids (empty: a given fact), conclusion (node)."""

    step_id: int
    edge: str
    parents: tuple[int, ...]
    node: str


@dataclass(frozen=True)
class Trajectory:
    """A validated trajectory: steps in the order written; the last one is final."""

    steps: tuple[Step, ...]

    @property
    def final(self) -> Step:
        return self.steps[-1]

    def edges(self) -> list[tuple[int, int]]:
        """``(parent, child)`` step-id pairs, in step order."""
        return [(p, s.step_id) for s in self.steps for p in s.parents]


#: A backspace or form feed before a letter: LaTeX whose backslash JSON read as the escape
#: \b or \f (``"\boxed{5}"`` written with one backslash); no math text means those characters.
_EATEN_BACKSLASH = re.compile(r"([\b\f])(?=[A-Za-z])")


def _latex(text: str) -> str:
    r"""``text`` with the LaTeX commands that a JSON ``\b`` or ``\f`` escape ate given back.

    >>> _latex(json.loads('"\\boxed{\\frac{1}{2}}"'))
    '\\boxed{\\frac{1}{2}}'
    """
    return _EATEN_BACKSLASH.sub(lambda m: "\\" + {"\b": "b", "\f": "f"}[m.group(1)], text)


def _text(step: dict, keys: tuple[str, ...], where: str) -> str:
    for key in keys:
        if key in step:
            value = step[key]
            if not isinstance(value, str):
                raise InvalidTrajectoryError(f"{where}: {key!r} must be a string, found {type(value).__name__}")
            return _latex(value)
    raise InvalidTrajectoryError(f"{where}: missing {' or '.join(repr(k) for k in keys)}")


def _step(raw, k: int) -> Step:
    where = f"step {k + 1}"
    if not isinstance(raw, dict):
        raise InvalidTrajectoryError(f"{where}: expected an object, found {type(raw).__name__}")
    sid = raw.get("step_id")
    if isinstance(sid, bool) or not isinstance(sid, int):
        raise InvalidTrajectoryError(f"{where}: 'step_id' must be an integer, found {sid!r}")
    where = f"step {sid}"
    parents = raw.get("direct_dependent_steps")
    if parents is None:
        parents = []
    if not isinstance(parents, list) or any(isinstance(p, bool) or not isinstance(p, int) for p in parents):
        raise InvalidTrajectoryError(f"{where}: 'direct_dependent_steps' must be null or a list of step ids, "
                                     f"found {parents!r}")
    node = _text(raw, ("node", "text"), where)
    if not node.strip():
        raise InvalidTrajectoryError(f"{where}: empty conclusion")
    return Step(sid, _text(raw, ("edge", "thinking"), where), tuple(dict.fromkeys(parents)), node)


def parse_trajectory(data) -> Trajectory:
    """Validate a decoded trajectory (a list of steps, or an object with ``steps``).

    Parameters
    ----------
    data : list or dict
        Steps in either spelling: ``{step_id, edge, direct_dependent_steps, node}`` or
        ``{step_id, thinking, direct_dependent_steps, text}``; an empty parent list is
        read as ``null``.

    Returns
    -------
    Trajectory

    Raises
    ------
    InvalidTrajectoryError
        With the first reason, in this order: no steps or a malformed step, a duplicate
        step id, a parent id that does not exist, a cycle, a parent that is not an
        earlier step, no ``\\boxed{}`` answer in the last step.

    Examples
    --------
    >>> t = parse_trajectory([{"step_id": 1, "edge": "given", "direct_dependent_steps": None, "node": "x = 2"},
    ...                       {"step_id": 2, "edge": "square", "direct_dependent_steps": [1],
    ...                        "node": "x^2 = \\\\boxed{4}"}])
    >>> t.edges()
    [(1, 2)]
    >>> parse_trajectory([{"step_id": 1, "edge": "e", "direct_dependent_steps": [1], "node": "\\\\boxed{1}"}])
    Traceback (most recent call last):
    ...
    kstp.loaders.cot.InvalidTrajectoryError: cycle 1 -> 1
    """
    import networkx as nx
    steps_raw = data.get("steps") if isinstance(data, dict) else data
    if not isinstance(steps_raw, list) or not steps_raw:
        raise InvalidTrajectoryError("no steps: expected a non-empty list of steps (or an object with 'steps')")
    steps = [_step(raw, k) for k, raw in enumerate(steps_raw)]
    position: dict[int, int] = {}
    for k, step in enumerate(steps):
        if step.step_id in position:
            raise InvalidTrajectoryError(f"duplicate step id {step.step_id} (steps {position[step.step_id] + 1} "
                                         f"and {k + 1})")
        position[step.step_id] = k
    for step in steps:
        for parent in step.parents:
            if parent not in position:
                raise InvalidTrajectoryError(f"step {step.step_id} depends on step {parent}, which does not exist")
    graph = nx.DiGraph()
    graph.add_edges_from((p, s.step_id) for s in steps for p in s.parents)
    try:
        cycle = nx.find_cycle(graph)
    except nx.NetworkXNoCycle:
        cycle = None
    if cycle:
        ids = [u for u, _ in cycle]
        ids = ids[ids.index(min(ids)):] + ids[:ids.index(min(ids))]  # named from its smallest step id
        raise InvalidTrajectoryError("cycle " + " -> ".join(map(str, ids)) + f" -> {ids[0]}")
    for step in steps:
        for parent in step.parents:
            if position[parent] > position[step.step_id]:
                raise InvalidTrajectoryError(f"step {step.step_id} depends on step {parent}, which comes later "
                                             "(forward reference)")
    if extract_final(steps[-1].node)[1] != "boxed":
        raise InvalidTrajectoryError(f"no final boxed answer: the last step ({steps[-1].step_id}) has no \\boxed{{}}")
    return Trajectory(tuple(steps))


def parse_text(text: str | None) -> Trajectory:
    """Decode and validate a model's reply (JSON in the generation schema).

    A JSON object may be wrapped in prose or a code fence: the outermost ``{...}`` is read.

    Raises
    ------
    InvalidTrajectoryError
        ``empty output``, ``invalid JSON: ...`` or any reason of :func:`parse_trajectory`.
    """
    return parse_trajectory(_decode(text))


def _decode(text: str | None):
    """The JSON value of a model's reply: its outermost ``{...}`` (prose or a code fence around it is skipped)."""
    if text is None or not text.strip():
        raise InvalidTrajectoryError("empty output")
    start, end = text.find("{"), text.rfind("}")
    body = text[start:end + 1] if 0 <= start < end else text
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        raise InvalidTrajectoryError(f"invalid JSON: {exc.msg} at character {exc.pos}") from None


@dataclass(frozen=True)
class TrajectoryScore:
    """One trajectory checked: the valid DAG (``None`` when invalid), the reason it is invalid, the answer's grade.

    ``verdict`` is ``None`` only when there is no gold answer to grade against.
    """

    trajectory: Trajectory | None
    error: str | None
    verdict: Verdict | None

    @classmethod
    def unanswered(cls, why: str) -> TrajectoryScore:
        """An invalid trajectory that states no final answer: incorrect, its verdict the format failure."""
        return cls(None, why, Verdict("none", None, None, False, f"invalid format: {why}"))


def _last_conclusion(data) -> str | None:
    """The conclusion of the last step of decoded steps, read as far as their shape allows."""
    steps = data.get("steps") if isinstance(data, dict) else data
    last = steps[-1] if isinstance(steps, list) and steps else None
    if not isinstance(last, dict):
        return None
    value = next((last[key] for key in ("node", "text") if key in last), None)
    return _latex(value) if isinstance(value, str) else None


def score_trajectory(reply: str | list | dict | None, gold: str | None) -> TrajectoryScore:
    """Validate one trajectory and grade its final answer: the one rule of ``ingest cot`` and ``evaluate dagmath``.

    Parameters
    ----------
    reply : str, list, dict or None
        A model's reply (JSON text, decoded as in :func:`parse_text`) or decoded steps as
        a file holds them (as in :func:`parse_trajectory`).
    gold : str or None
        The problem's final answer; ``None``: validate only (the verdict is ``None``).

    Returns
    -------
    TrajectoryScore
        A valid trajectory is graded on its last step's conclusion. PASS@1 is answer
        accuracy (paper 4, §5), so an invalid one (a cycle, an unknown parent, ...) is
        graded on the last step's conclusion too, with the reason ``"<grade> (invalid
        format: <why>)"``, and is correct when that ``\\boxed{}`` holds the gold; a
        reply that is not JSON is graded on its last ``\\boxed{}``. No ``\\boxed{}``
        there: incorrect, with the reason ``"invalid format: <why>"``.

    Examples
    --------
    >>> cyclic = [{"step_id": 1, "edge": "e", "direct_dependent_steps": [1], "node": "\\\\boxed{6}"}]
    >>> s = score_trajectory(cyclic, "6")
    >>> s.trajectory, s.error, s.verdict.correct, s.verdict.reason
    (None, 'cycle 1 -> 1', True, 'correct (invalid format: cycle 1 -> 1)')
    >>> import json
    >>> score_trajectory(json.dumps({"steps": cyclic}), "6") == s  # the same steps as a model's reply
    True
    >>> score_trajectory("so it is 6", "6").verdict.reason
    'invalid format: invalid JSON: Expecting value at character 0'
    """
    data = reply
    answer = reply  # a reply that is not JSON: its last \boxed{} is its answer
    if reply is None or isinstance(reply, str):
        try:
            data = _decode(reply)
        except InvalidTrajectoryError as exc:
            return _score_invalid(str(exc), answer, gold)
    try:
        trajectory = parse_trajectory(data)
    except InvalidTrajectoryError as exc:
        return _score_invalid(str(exc), _last_conclusion(data), gold)
    return TrajectoryScore(trajectory, None, None if gold is None else grade(trajectory.final.node, gold))


def _score_invalid(why: str, answer: str | None, gold: str | None) -> TrajectoryScore:
    """An invalid trajectory graded on ``answer`` (the text holding its final ``\\boxed{}``, if any)."""
    if gold is None:
        return TrajectoryScore(None, why, None)
    if not answer or extract_final(answer)[1] != "boxed":
        return TrajectoryScore.unanswered(why)
    verdict = grade(answer, gold)
    return TrajectoryScore(None, why, replace(verdict, reason=f"{verdict.reason} (invalid format: {why})"))


def trajectory_json(trajectory: Trajectory) -> str:
    """The trajectory in the generation schema (what a few-shot example shows the model).

    >>> trajectory_json(Trajectory((Step(1, "given", (), "\\\\boxed{2}"),)))
    '{"steps": [{"step_id": 1, "thinking": "given", "direct_dependent_steps": null, "text": "\\\\\\\\boxed{2}"}]}'
    """
    return json.dumps({"steps": [{"step_id": s.step_id, "thinking": s.edge,
                                  "direct_dependent_steps": list(s.parents) or None, "text": s.node}
                                 for s in trajectory.steps]}, ensure_ascii=False)


def _step_rows(trajectories: dict[str, Trajectory]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """CotStep rows, HAS_STEP pairs and SUPPORTS pairs of ``trajectories`` (response id -> trajectory)."""
    steps, edges = [], []
    for rid, trajectory in trajectories.items():
        last = len(trajectory.steps) - 1
        steps += [{"id": f"{rid}:{s.step_id}", "response": rid, "stepId": s.step_id, "position": k, "node": s.node,
                   "edge": s.edge, "final": k == last} for k, s in enumerate(trajectory.steps)]
        edges += [(f"{rid}:{a}", f"{rid}:{b}") for a, b in trajectory.edges()]
    frame = pd.DataFrame(steps, columns=["id", "response", "stepId", "position", "node", "edge", "final"])
    return (frame.drop(columns=["response"]), pd.DataFrame({"from_id": frame["response"], "to_id": frame["id"]}),
            pd.DataFrame(edges, columns=["from_id", "to_id"]))


def write_steps(store: GraphStore, trajectories: dict[str, Trajectory]) -> LoadReport:
    """Write each valid trajectory's steps under its Response id (HAS_STEP, SUPPORTS); idempotent.

    A step's id is ``<response id>:<step id>``.
    """
    report = LoadReport("steps")
    steps, has_step, supports = _step_rows(trajectories)
    report.add("CotStep", store.write_nodes("CotStep", steps))
    report.add("HAS_STEP", store.write_relationships("HAS_STEP", "Response", "CotStep", has_step))
    report.add("SUPPORTS", store.write_relationships("SUPPORTS", "CotStep", "CotStep", supports))
    return report


def _remove_stale_steps(store: GraphStore, run_id: str, responses: set[str],
                        trajectories: dict[str, Trajectory]) -> int:
    """Unlink stored steps and edges of the ``responses`` of ``run_id`` that the new input no
    longer has; return how many.

    A re-ingested trajectory that changed (or became invalid) must not keep its old steps;
    trajectories of the run that this input does not mention are left alone.
    """
    stored = store.frame("cot_trajectories", {"runId": run_id})
    stored = stored[stored["responseId"].isin(responses)]
    if stored.empty:
        return 0
    _, has_step, supports = _step_rows(trajectories)
    ids = stored["responseId"] + ":" + stored["stepId"].astype(int).astype(str)
    old_has = pd.DataFrame({"from_id": stored["responseId"], "to_id": ids}).drop_duplicates()
    parents = stored["parentStepId"].notna()
    old_supports = pd.DataFrame({"from_id": stored.loc[parents, "responseId"] + ":"
                                 + stored.loc[parents, "parentStepId"].astype(int).astype(str),
                                 "to_id": ids[parents]})
    return (store.delete_stale("HAS_STEP", "Response", "CotStep", old_has, has_step)
            + store.delete_stale("SUPPORTS", "CotStep", "CotStep", old_supports, supports))


@dataclass
class CotRecord:
    """One trajectory of a file: where it was read, its problem and sample, and its :func:`score_trajectory`."""

    where: str
    problem: str
    sample: int
    raw: str
    score: TrajectoryScore

    @property
    def trajectory(self) -> Trajectory | None:
        return self.score.trajectory

    @property
    def error(self) -> str | None:
        return self.score.error


@dataclass
class CotSet:
    """Validated problems and trajectories of one or more files for one dataset."""

    dataset: str
    source: str
    questions: pd.DataFrame
    records: list[CotRecord] = field(default_factory=list)


def _problems(path: Path):
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not all(isinstance(p, dict) for p in data):
        found = type(data).__name__ if not isinstance(data, list) else \
            f"a list holding {type(next(p for p in data if not isinstance(p, dict))).__name__}"
        raise InputError(f"{path}: expected a problem object or a list of them, each with 'problem_id' and "
                         f"'steps'; found {found}")
    if not data:
        raise InputError(f"{path}: an empty list; expected problem objects, each with 'problem_id' and 'steps'")
    lacking = [k for k, p in enumerate(data, 1) if "steps" not in p]
    if lacking:
        raise InputError(f"{path}: problem {few_ids(lacking)} ({len(lacking)} of {len(data)}) without 'steps'; "
                         "each problem needs its list of steps")
    return data


def _difficulty(value, where: str) -> float | None:
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise InputError(f"{where}: 'difficulty' must be a number, found {value!r}") from None


def read_cot_files(paths: list[str | Path], dataset: str, source: str = GOLD) -> CotSet:
    """Read DAG-MATH JSON files (the gold benchmark's layout) for ``dataset``.

    Parameters
    ----------
    paths : list of path
        Each holds a problem object or a list of them: ``problem_id``, ``problem_text``,
        ``final_answer``, ``steps`` and optionally ``sample_id`` (default: the order of
        the problem's trajectories), ``domain`` (a string or a list), ``difficulty``.
    source : str
        Who wrote the trajectories (learner ``cot:<source>``; default ``gold``).

    Returns
    -------
    CotSet
        Problems as Question rows; one record per trajectory, scored by
        :func:`score_trajectory` against the problem's ``final_answer`` (invalid ones
        keep their reason).

    Raises
    ------
    InputError
        On unreadable JSON, an empty list, a value that is not a problem object or a
        list of them, a record without ``steps`` or without ``problem_id``, a problem whose text or final
        answer disagree between records, a repeated (problem, sample) pair.
    """
    check_namespace(dataset, "dataset")
    questions: dict[str, dict] = {}
    records: list[CotRecord] = []
    seen: dict[tuple[str, int], str] = {}
    counts: dict[str, int] = {}
    for path in map(Path, paths):
        for k, item in enumerate(_problems(path), 1):
            where = f"{path}: problem {k}"
            if item.get("problem_id") is None:
                raise InputError(f"{where}: missing 'problem_id'")
            pid = str(item["problem_id"])
            domain = item.get("domain")
            row = {"id": scoped(dataset, pid), "dataset": dataset, "localId": pid, "text": item.get("problem_text"),
                   "answer": None if item.get("final_answer") is None else str(item["final_answer"]),
                   "answerType": None, "difficulty": _difficulty(item.get("difficulty"), where),
                   "domain": "; ".join(map(str, domain)) if isinstance(domain, list) else domain}
            old = questions.setdefault(pid, row | {"position": len(questions) + 1})
            for key in ("text", "answer"):
                if old[key] != row[key]:
                    raise InputError(f"{where}: problem {pid!r} has another {key} than in an earlier record")
            sample = item.get("sample_id")
            sample = counts.get(pid, 0) if sample is None else sample
            counts[pid] = counts.get(pid, 0) + 1
            if isinstance(sample, bool) or not isinstance(sample, int):
                raise InputError(f"{where}: 'sample_id' must be an integer, found {sample!r}")
            if (pid, sample) in seen:
                raise InputError(f"{where}: problem {pid!r} sample {sample} repeats {seen[(pid, sample)]}")
            seen[(pid, sample)] = where
            records.append(CotRecord(where, pid, sample, json.dumps(item.get("steps"), ensure_ascii=False),
                                     score_trajectory(item.get("steps"), row["answer"])))
    frame = pd.DataFrame(list(questions.values()),
                         columns=["id", "dataset", "localId", "text", "answer", "answerType", "position",
                                  "difficulty", "domain"])
    frame["position"] = frame["position"].astype("Int64")
    return CotSet(dataset, source, frame, records)


def ingest_run_id(source: str, dataset: str) -> str:
    """The Run that holds the trajectories of ``source`` for ``dataset``.

    >>> ingest_run_id("gold", "omni")
    'cot:gold:omni'
    """
    return f"cot:{source}:{dataset}"


def write_cot_set(store: GraphStore, cot: CotSet) -> LoadReport:
    """Write problems, trajectories (as Responses of learner ``cot:<source>`` in run ``cot:<source>:<dataset>``),
    their steps and the final-answer grades; idempotent.

    Invalid trajectories are stored with ``cotValid = false`` and the reason in
    ``cotError``; their grade is :func:`score_trajectory`'s, as for generated ones (a
    right final ``\\boxed{}`` counts for PASS@1), and without a gold answer their
    ``verdict`` is the format failure.
    """
    report = LoadReport(cot.dataset, notes={"trajectories": len(cot.records),
                                            "invalid trajectories": sum(r.error is not None for r in cot.records)})
    report.add("Dataset", store.write_nodes("Dataset", pd.DataFrame(
        [{"id": cot.dataset, "name": cot.dataset, "source": f"cot:{cot.source}"}])))
    report.add("Question", store.write_nodes("Question", cot.questions))
    report.add("IN_DATASET", store.write_relationships("IN_DATASET", "Question", "Dataset", pd.DataFrame(
        {"from_id": cot.questions["id"], "to_id": cot.dataset})))
    run_id, learner = ingest_run_id(cot.source, cot.dataset), f"cot:{cot.source}"
    store.write_nodes("Run", pd.DataFrame([{"id": run_id, "evaluator": "cot", "model": cot.source,
                                            "dataset": cot.dataset, "status": "finished"}]))
    store.write_nodes("Learner", pd.DataFrame([{"id": learner, "kind": "gold" if cot.source == GOLD else "model",
                                                "localId": cot.source}]))
    rows = []
    for r in cot.records:
        verdict = r.score.verdict
        rows.append({"id": f"{run_id}:{r.problem}:{r.sample}", "question": scoped(cot.dataset, r.problem),
                     "model": cot.source, "sampleIndex": r.sample, "text": r.raw, "cotValid": r.error is None,
                     "cotError": r.error, "extracted": verdict.extracted if verdict else None,
                     "extractionMethod": verdict.method if verdict else None,
                     "correct": bool(verdict and verdict.correct),
                     "verdict": verdict.reason if verdict else (r.error and f"invalid format: {r.error}")})
    frame = pd.DataFrame(rows)
    report.add("Response", store.write_nodes("Response", frame.drop(columns=["question"])))
    write_responses(store, run_id, learner, frame)  # the nodes again (unchanged) and their links
    trajectories = {f"{run_id}:{r.problem}:{r.sample}": r.trajectory for r in cot.records if r.trajectory}
    removed = _remove_stale_steps(store, run_id, set(frame["id"]), trajectories)
    if removed:
        report.notes["stale step links removed"] = removed
    report.written.update(write_steps(store, trajectories).written)
    return report
