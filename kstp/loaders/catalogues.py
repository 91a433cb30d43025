"""Task catalogues of the next-step benchmark: tasks, direct prerequisites, provenance.

A catalogue is a small learning domain: tasks with an id and a one-line description,
the *direct* prerequisite pairs ``[p, q]`` (p must be mastered immediately before q),
its provenance, and its state coverage (``exhaustive``: every knowledge state; or
``sample``: ``size`` draws with ``seed``, each state weighted by how often it was
drawn). Its knowledge space is the quasi-ordinal space of the pairs
(:class:`kstp.kst.spaces.KnowledgeSpace`); each state's outer fringe is the
reference answer of the benchmark.

Files are YAML or JSON (JSON is read as YAML, so errors carry line numbers)::

    id: cm_8f
    name: Grade 8 Functions (Coherence Map)
    provenance: {source: ..., command: ...}
    coverage: exhaustive            # or {sample: 200, seed: 1}
    tasks:
      - {id: 8.F.A.1, description: Understand that a function is a rule ...}
    prerequisites:
      - [8.F.A.1, 8.F.A.2]

Validation refuses, with the file and line: unknown task ids, repeated tasks,
descriptions or pairs, empty descriptions, cycles (named) and pairs implied by
others (a catalogue states the cover relation only). Catalogues are also built from
the graph: a sub-curriculum of concepts chosen by code prefix or cluster, or chosen
items of a dataset with derived question prerequisites; in both the prerequisites
are the restriction of the full transitive relation to the chosen tasks, reduced to
its direct pairs. The catalogues shipped in ``kstp/catalogues`` are built this way
by ``python tools/build_catalogues.py``.

References
----------
Steiner, Hochweber 2026, "Benchmarking LLM Next-Step Recommendations with Knowledge
Space Theory", §2 (domains, admissible states, outer fringes).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from kstp.errors import InputError, UnknownIdError
from kstp.graph.store import GraphStore
from kstp.kst.spaces import KnowledgeSpace
from kstp.loaders.common import (
    LoadReport,
    check_acyclic,
    check_namespace,
    read_text,
    require_file,
    scoped,
    unknown_id,
    yaml_error,
)

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["Task", "Coverage", "Catalogue", "make_catalogue", "read_catalogue", "write_catalogue_file",
           "shipped_catalogues", "resolve_catalogue", "concepts_catalogue", "items_catalogue",
           "write_catalogue", "stored_catalogue", "CATALOGUE_RULE"]

#: ``rule`` of the ``PREREQUISITE_OF`` edges a catalogue writes between its tasks.
CATALOGUE_RULE = "catalogue"
_SHIPPED = "kstp.catalogues"


@dataclass(frozen=True)
class Task:
    """One task: its id (unique in the catalogue) and a one-line description."""

    id: str
    description: str


@dataclass(frozen=True)
class Coverage:
    """Which states the benchmark asks about.

    ``exhaustive``: every knowledge state, each of weight 1. ``sample``: ``size``
    approximately uniform draws (:meth:`KnowledgeSpace.sample` with ``seed``); a state
    drawn k times has weight k, so weighted means are means over draws.
    """

    kind: str = "exhaustive"
    size: int | None = None
    seed: int | None = None

    def as_spec(self) -> str | dict:
        return self.kind if self.kind == "exhaustive" else {"sample": self.size, "seed": self.seed}


@dataclass(frozen=True)
class Catalogue:
    """A validated task catalogue (build it with :func:`make_catalogue` or :func:`read_catalogue`).

    Examples
    --------
    >>> c = make_catalogue("toy", "Toy", [("a", "count"), ("b", "add"), ("c", "carry")], [("a", "b"), ("b", "c")])
    >>> [(sorted(s), w) for s, w in c.states()]
    [([], 1), (['a'], 1), (['a', 'b'], 1), (['a', 'b', 'c'], 1)]
    >>> c.space().outer_fringe({"a"})
    ['b']
    """

    id: str
    name: str
    tasks: tuple[Task, ...]
    prerequisites: tuple[tuple[str, str], ...]
    provenance: dict = field(default_factory=dict)
    coverage: Coverage = Coverage()

    @property
    def task_ids(self) -> tuple[str, ...]:
        return tuple(t.id for t in self.tasks)

    def space(self) -> KnowledgeSpace:
        """The knowledge space of the tasks under the prerequisite pairs."""
        return KnowledgeSpace.build(self.task_ids, self.prerequisites)

    def states(self, limit: int = 4096) -> list[tuple[frozenset[str], int]]:
        """The benchmark's states with their weights, in a fixed order (smallest first).

        Raises
        ------
        TooManyStatesError
            When an exhaustive coverage has more than ``limit`` states (use a sample).
        """
        space = self.space()
        if self.coverage.kind == "exhaustive":
            return [(s, 1) for s in space.states(limit)]
        draws = Counter(space.sample(self.coverage.size, self.coverage.seed))
        return sorted(draws.items(), key=lambda sw: (len(sw[0]), sorted(sw[0])))

    def admissible_states(self, limit: int = 4096) -> list[frozenset[str]]:
        """Every knowledge state of the space, smallest first, whatever the coverage.

        What condition P3 lists: a sampled coverage chooses which states are asked
        about, not which states the model is shown (paper 2, §3).

        Raises
        ------
        TooManyStatesError
            When the space has more than ``limit`` states (too many to list in a prompt).

        Examples
        --------
        >>> c = make_catalogue("v", "V", [("a", "x"), ("b", "y")], [], coverage=Coverage("sample", 1, 0))
        >>> len(c.states()), [sorted(s) for s in c.admissible_states()]
        (1, [[], ['a'], ['b'], ['a', 'b']])
        """
        return self.space().states(limit)

    def digest(self) -> str:
        """SHA-256 of what defines the benchmark: id, tasks, pairs and coverage (not provenance)."""
        spec = {"id": self.id, "tasks": [[t.id, t.description] for t in self.tasks],
                "prerequisites": sorted(map(list, self.prerequisites)), "coverage": self.coverage.as_spec()}
        return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()

    def as_dict(self) -> dict:
        """The file form (see the module docstring)."""
        return {"id": self.id, "name": self.name, "provenance": self.provenance,
                "coverage": self.coverage.as_spec(),
                "tasks": [{"id": t.id, "description": t.description} for t in self.tasks],
                "prerequisites": [list(p) for p in self.prerequisites]}


def _where(source: str, line: int | None) -> str:
    return f"{source}:{line}" if line else source


def _implied_by(graph: nx.DiGraph, p: str, q: str) -> list[str] | None:
    """A path p -> ... -> q of length >= 2 in ``graph``, if there is one."""
    import networkx as nx
    for middle in graph.successors(p):
        if middle != q and nx.has_path(graph, middle, q):
            return [p, *nx.shortest_path(graph, middle, q)]
    return None


def make_catalogue(catalogue_id: str, name: str, tasks, prerequisites, provenance: dict | None = None,
                   coverage: Coverage | None = None, source: str = "catalogue",
                   task_lines: list[int] | None = None, pair_lines: list[int] | None = None) -> Catalogue:
    """Validate tasks and direct prerequisite pairs into a :class:`Catalogue`.

    Parameters
    ----------
    tasks : sequence of (str, str)
        ``(id, description)``; whitespace in descriptions is collapsed to single spaces.
    prerequisites : sequence of (str, str)
        Direct pairs (p, q): p is a direct prerequisite of q.
    source, task_lines, pair_lines
        Where the values were read, for error messages (``source:line``).

    Raises
    ------
    InputError
        On an empty or repeated task id or description, a repeated pair, a pair
        implied by others (it names the path), a bad coverage.
    UnknownIdError
        When a pair names a task that is not in the catalogue.
    CycleError
        When the pairs contain a cycle or a self-loop (named, with lines).

    Examples
    --------
    >>> tasks = [("a", "x"), ("b", "y"), ("c", "z")]
    >>> make_catalogue("t", "T", tasks, [("a", "b"), ("b", "c"), ("a", "c")])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    kstp.errors.InputError: pair [a, c] at catalogue is implied by a -> b -> c; list direct ...
    """
    import networkx as nx
    check_namespace(catalogue_id, "catalogue")
    tasks = [(str(i).strip(), " ".join(str(d or "").split())) for i, d in tasks]
    prerequisites = [(str(p).strip(), str(q).strip()) for p, q in prerequisites]
    task_lines = task_lines or [None] * len(tasks)
    pair_lines = pair_lines or [None] * len(prerequisites)
    seen: dict[str, str] = {}
    described: dict[str, str] = {}
    for (tid, desc), line in zip(tasks, task_lines, strict=True):
        where = _where(source, line)
        if not tid or ":" in tid:
            raise InputError(f"{where}: task id {tid!r} must be non-empty and without ':'")
        if tid in seen:
            raise InputError(f"{where}: task {tid!r} repeats ({seen[tid]})")
        if not desc:
            raise InputError(f"{where}: task {tid!r} has no description; every task needs one")
        if desc in described:
            raise InputError(f"{where}: task {tid!r} has the same description as {described[desc]!r}; "
                             "tasks must be distinguishable by their descriptions")
        seen[tid], described[desc] = where, tid
    if not tasks:
        raise InputError(f"{source}: the catalogue has no tasks")
    edges = []
    for (p, q), line in zip(prerequisites, pair_lines, strict=True):
        where = _where(source, line)
        for end in (p, q):
            if end not in seen:
                raise unknown_id("task", end, where, "it is not among the catalogue's tasks")
        if (p, q) in {e[:2] for e in edges}:
            raise InputError(f"{where}: pair [{p}, {q}] repeats")
        edges.append((p, q, f"line {line}" if line else f"pair [{p}, {q}]"))
    check_acyclic(edges, source)
    graph = nx.DiGraph([e[:2] for e in edges])
    for (p, q), line in zip(prerequisites, pair_lines, strict=True):
        path = _implied_by(graph, p, q)
        if path:
            raise InputError(f"pair [{p}, {q}] at {_where(source, line)} is implied by {' -> '.join(path)}; "
                             "list direct prerequisites only (remove it)")
    coverage = coverage or Coverage()
    if coverage.kind not in ("exhaustive", "sample") or (
            coverage.kind == "sample" and not (isinstance(coverage.size, int) and coverage.size > 0
                                               and isinstance(coverage.seed, int))):
        raise InputError(f"{source}: coverage must be 'exhaustive' or {{sample: N, seed: S}} with N >= 1, "
                         f"found {coverage.as_spec()!r}")
    return Catalogue(catalogue_id, name, tuple(Task(i, d) for i, d in tasks), tuple(prerequisites),
                     dict(provenance or {}), coverage)


# ---- files -----------------------------------------------------------------------------
def _mapping_items(node) -> dict:
    import yaml
    return {k.value: v for k, v in node.value} if isinstance(node, yaml.MappingNode) else {}


def _coverage(value, where: str) -> Coverage:
    if value is None or value == "exhaustive":
        return Coverage()
    if isinstance(value, dict) and set(value) == {"sample", "seed"}:
        return Coverage("sample", value["sample"], value["seed"])
    raise InputError(f"{where}: coverage must be 'exhaustive' or {{sample: N, seed: S}}, found {value!r}")


def read_catalogue(path: str | Path) -> Catalogue:
    """Read and validate a catalogue file (YAML or JSON).

    Raises
    ------
    InputError
        When the file is not a mapping with ``id``, ``tasks`` and ``prerequisites``,
        a task is not ``{id, description}``, a pair is not two ids, or as
        :func:`make_catalogue` (each message cites ``path:line``).
    UnknownIdError, CycleError
        As :func:`make_catalogue`, with the line of the offending pair.
    """
    import yaml
    path = require_file(path)
    text = read_text(path)
    try:
        root = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise yaml_error(path, exc) from None
    if not isinstance(data, dict):
        raise InputError(f"{path}:1: a catalogue is a mapping with id, name, tasks, prerequisites, provenance")
    for key in ("id", "tasks", "prerequisites"):
        if key not in data:
            raise InputError(f"{path}:1: missing key {key!r}")
    nodes = _mapping_items(root)
    task_nodes = nodes["tasks"].value if isinstance(nodes["tasks"], yaml.SequenceNode) else []
    pair_nodes = nodes["prerequisites"].value if isinstance(nodes["prerequisites"], yaml.SequenceNode) else []
    if not isinstance(data["tasks"], list) or not isinstance(data["prerequisites"] or [], list):
        raise InputError(f"{path}:{nodes['tasks'].start_mark.line + 1}: tasks and prerequisites must be lists")
    tasks, task_lines = [], []
    for item, node in zip(data["tasks"], task_nodes, strict=True):
        line = node.start_mark.line + 1
        if not isinstance(item, dict) or "id" not in item:
            raise InputError(f"{path}:{line}: a task is a mapping with id and description")
        tasks.append((item["id"], item.get("description")))
        task_lines.append(line)
    pairs, pair_lines = [], []
    for item, node in zip(data["prerequisites"] or [], pair_nodes, strict=True):
        line = node.start_mark.line + 1
        if not isinstance(item, list) or len(item) != 2:
            raise InputError(f"{path}:{line}: a prerequisite is a pair [prerequisite, task], found {item!r}")
        pairs.append(tuple(item))
        pair_lines.append(line)
    coverage = _coverage(data.get("coverage"), f"{path}:{nodes['coverage'].start_mark.line + 1}"
                         if "coverage" in nodes else str(path))
    return make_catalogue(str(data["id"]), str(data.get("name") or data["id"]), tasks, pairs,
                          data.get("provenance") or {}, coverage, str(path), task_lines, pair_lines)


def write_catalogue_file(catalogue: Catalogue, path: str | Path, header: str = "") -> Path:
    """Write ``catalogue`` as YAML (``header`` lines become comments at the top)."""
    import yaml
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    comments = "".join(f"# {line}\n" for line in header.splitlines())
    data = catalogue.as_dict()
    pairs = data.pop("prerequisites")
    body = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    body += "prerequisites:" + ("".join(f"\n- {yaml.safe_dump(p, default_flow_style=True).strip()}" for p in pairs)
                                or " []") + "\n"
    path.write_text(comments + body, encoding="utf-8")
    return path


def shipped_catalogues() -> dict[str, Path]:
    """The catalogues shipped with kstp, by id (file stem)."""
    folder = resources.files(_SHIPPED)
    return {Path(p.name).stem: Path(str(p)) for p in sorted(folder.iterdir(), key=lambda p: p.name)
            if p.name.endswith(".yaml")}


def resolve_catalogue(name: str) -> Catalogue:
    """A shipped catalogue by id, or a catalogue file by path.

    Raises
    ------
    UnknownIdError
        When ``name`` is neither a file nor a shipped id (the message lists them).
    """
    if Path(name).is_file():
        return read_catalogue(name)
    shipped = shipped_catalogues()
    if name not in shipped:
        raise UnknownIdError(f"no catalogue file or shipped catalogue {name!r}; shipped: {', '.join(shipped)}")
    return read_catalogue(shipped[name])


# ---- from the graph --------------------------------------------------------------------
def _cover(chosen: list[str], closure: pd.DataFrame, where: str) -> list[tuple[str, str]]:
    """The direct pairs of the closure restricted to ``chosen`` (its transitive reduction)."""
    import networkx as nx
    keep = set(chosen)
    graph = nx.DiGraph()
    graph.add_nodes_from(chosen)
    graph.add_edges_from((a, b) for a, b in zip(closure["fromId"], closure["toId"], strict=True)
                         if a in keep and b in keep and a != b)
    check_acyclic([(a, b, f"{a} -> {b}") for a, b in graph.edges()], where)
    reduced = nx.transitive_reduction(graph)
    order = {t: k for k, t in enumerate(chosen)}
    return sorted(reduced.edges(), key=lambda e: (order[e[0]], order[e[1]]))


def concepts_catalogue(store: GraphStore, framework: str, catalogue_id: str, name: str,
                       code_prefix: str | None = None, cluster: str | None = None,
                       provenance: dict | None = None) -> Catalogue:
    """A sub-curriculum as a catalogue: the concepts of ``framework`` by code prefix or cluster.

    Tasks are the chosen concepts (id: their code, description: their description);
    the pairs are the transitive concept prerequisites among them, through concepts
    outside the choice too, reduced to direct pairs.

    Raises
    ------
    InputError
        When neither or both of ``code_prefix`` and ``cluster`` are given.
    UnknownIdError
        When nothing is chosen (the framework is not in the graph, or no code matches).
    """
    if (code_prefix is None) == (cluster is None):
        raise InputError("choose concepts by a code prefix or by a cluster id (one of them)")
    concepts = store.frame("concept_descriptions", {"framework": framework})
    if code_prefix is not None:
        chosen = concepts[concepts["code"].fillna("").str.startswith(code_prefix)]
        what = f"code prefix {code_prefix!r}"
    else:
        chosen = concepts[concepts["clusterId"] == cluster]
        what = f"cluster {cluster!r}"
    if chosen.empty:
        raise UnknownIdError(f"no concept of framework {framework!r} matches {what} "
                             "(ingest the standards first, or check the prefix / cluster id)")
    chosen = chosen.sort_values("code")
    by_concept = dict(zip(chosen["conceptId"], chosen["code"], strict=True))
    closure = store.frame("concept_closure", {"framework": framework})
    closure = closure[closure["fromId"].isin(by_concept) & closure["toId"].isin(by_concept)]
    closure = pd.DataFrame({"fromId": closure["fromId"].map(by_concept), "toId": closure["toId"].map(by_concept)})
    codes = chosen["code"].tolist()
    pairs = _cover(codes, closure, f"framework {framework!r}")
    return make_catalogue(catalogue_id, name, list(zip(codes, chosen["description"], strict=True)), pairs,
                          {"framework": framework, "selection": what, **(provenance or {})})


def items_catalogue(store: GraphStore, dataset: str, catalogue_id: str, name: str, items: list[str] | None = None,
                    description_template: str = "{text}", provenance: dict | None = None) -> Catalogue:
    """Items of a dataset as a catalogue, with their derived question prerequisites.

    Parameters
    ----------
    items : list of str, optional
        Local ids of the chosen items (default: all, in position order).
    description_template : str
        A task's description from the item's ``{text}`` and ``{id}``.

    Raises
    ------
    UnknownIdError
        When the dataset is not in the graph or an item is not in it.
    CycleError
        When chosen items are mutual prerequisites (equally informative, e.g. the
        same skills under the reflexive rule); keep one of them.
    """
    questions = store.frame("dataset_questions", {"dataset": dataset})
    if questions.empty:
        raise UnknownIdError(f"unknown dataset {dataset!r}; ingest its items first")
    local = dict(zip(questions["localId"], questions["text"], strict=True))
    items = list(items) if items else questions["localId"].tolist()
    for item in items:
        if item not in local:
            raise unknown_id("item", item, f"dataset {dataset!r}", "it is not one of its questions")
    edges = store.frame("question_prerequisite_edges", {"dataset": dataset})
    prefix = len(dataset) + 1
    closure = pd.DataFrame({"fromId": edges["fromId"].str[prefix:], "toId": edges["toId"].str[prefix:]})
    pairs = _cover(items, closure, f"dataset {dataset!r} (equally informative items: keep one of them)")
    rules = sorted(set(edges["rule"].dropna()))
    tasks = [(i, description_template.format(text=local[i] or "", id=i)) for i in items]
    return make_catalogue(catalogue_id, name, tasks, pairs,
                          {"dataset": dataset, "items": ", ".join(items),
                           "prerequisites": f"derived question prerequisites (rule {', '.join(rules) or 'none'})",
                           **(provenance or {})})


def write_catalogue(store: GraphStore, catalogue: Catalogue) -> LoadReport:
    """Write a catalogue as a Dataset of Questions with ``PREREQUISITE_OF {rule: catalogue}`` edges.

    The stored relation is the transitive closure of the pairs (as for every
    question prerequisite relation in the graph); :func:`stored_catalogue` reduces it
    back. Idempotent; edges the catalogue no longer has are removed.

    Raises
    ------
    InputError
        When a dataset with this id holds other questions or derived prerequisites
        (a catalogue never overwrites a real dataset).
    """
    import networkx as nx
    stored = store.frame("question_prerequisite_edges", {"dataset": catalogue.id}).rename(
        columns={"fromId": "from_id", "toId": "to_id"})
    foreign = set(store.frame("dataset_questions", {"dataset": catalogue.id})["localId"]) - set(catalogue.task_ids)
    if foreign or (stored["rule"] != CATALOGUE_RULE).any():
        raise InputError(f"dataset {catalogue.id!r} in the graph is not this catalogue (it has other questions or "
                         "derived prerequisites); give the catalogue another id")
    report = LoadReport(catalogue.id)
    source = json.dumps(catalogue.provenance, sort_keys=True, ensure_ascii=False)
    report.add("Dataset", store.write_nodes("Dataset", pd.DataFrame(
        [{"id": catalogue.id, "name": catalogue.name, "source": source}])))
    ids = [scoped(catalogue.id, t.id) for t in catalogue.tasks]
    report.add("Question", store.write_nodes("Question", pd.DataFrame({
        "id": ids, "dataset": catalogue.id, "localId": list(catalogue.task_ids),
        "text": [t.description for t in catalogue.tasks], "position": range(1, len(ids) + 1)})))
    report.add("IN_DATASET", store.write_relationships("IN_DATASET", "Question", "Dataset", pd.DataFrame(
        {"from_id": ids, "to_id": catalogue.id})))
    closure = nx.transitive_closure_dag(nx.DiGraph(list(catalogue.prerequisites)))
    edges = pd.DataFrame([(scoped(catalogue.id, a), scoped(catalogue.id, b)) for a, b in sorted(closure.edges())],
                         columns=["from_id", "to_id"]).assign(rule=CATALOGUE_RULE, source="catalogue")
    store.delete_stale("PREREQUISITE_OF", "Question", "Question", stored, edges)
    report.add("PREREQUISITE_OF", store.write_relationships("PREREQUISITE_OF", "Question", "Question", edges))
    return report


def stored_catalogue(store: GraphStore, catalogue_id: str, coverage: Coverage) -> Catalogue:
    """The catalogue ``catalogue_id`` as :func:`write_catalogue` stored it.

    Raises
    ------
    UnknownIdError
        When no such catalogue is in the graph.
    """
    questions = store.frame("dataset_questions", {"dataset": catalogue_id})
    if questions.empty:
        raise UnknownIdError(f"catalogue {catalogue_id!r} is not in the graph")
    edges = store.frame("question_prerequisite_edges", {"dataset": catalogue_id})
    prefix = len(catalogue_id) + 1
    closure = pd.DataFrame({"fromId": edges["fromId"].str[prefix:], "toId": edges["toId"].str[prefix:]})
    tasks = questions["localId"].tolist()
    return make_catalogue(catalogue_id, catalogue_id, list(zip(tasks, questions["text"], strict=True)),
                          _cover(tasks, closure, f"catalogue {catalogue_id!r}"), coverage=coverage)
