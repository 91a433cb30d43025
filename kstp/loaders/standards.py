"""Curricula: concepts with prerequisite edges -> Framework, Domain, Cluster, Concept.

Two inputs: the Achieve the Core Coherence Map in the LLM-KST ``nys_concepts.json``
layout (``domains``, ``clusters``, ``standards`` with ``rev_edges``/``edges``/
``nd_edges``), and a plain CSV pair (concepts: ``id, code, description[, grade,
cluster]``; edges: ``from_id, to_id`` with from the prerequisite of to). Prerequisite
edges are direct edges as published; closure is computed by queries, not stored.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pandas as pd

from kstp.errors import InputError
from kstp.graph.store import GraphStore
from kstp.loaders.common import (
    LoadReport,
    check_acyclic,
    check_namespace,
    collapse_edges,
    read_csv,
    read_text,
    require_columns,
    require_file,
    scoped,
    unknown_id,
)

__all__ = ["Curriculum", "read_coherence_map", "read_concepts_csv", "write_curriculum", "load_standards",
           "check_acyclic_with_graph"]

_TAG_RE = re.compile(r"<[^>]+>")


def _text(fragment: str | None) -> str | None:
    """HTML fragment -> plain text (tags dropped, entities decoded, spaces collapsed)."""
    if not fragment:
        return None
    return " ".join(html.unescape(_TAG_RE.sub(" ", fragment)).split()) or None


class Curriculum:
    """A validated curriculum ready to write: tables of nodes and relationships."""

    def __init__(self, framework: str, name: str, source: str):
        self.framework = check_namespace(framework, "framework")
        self.frameworks = pd.DataFrame([{"id": framework, "name": name, "source": source}])
        self.domains = pd.DataFrame(columns=["id", "code", "name", "grade"])
        self.clusters = pd.DataFrame(columns=["id", "code", "name"])
        self.concepts = pd.DataFrame(columns=["id", "framework", "localId", "code", "description", "grade"])
        self.part_of: list[tuple[str, str, pd.DataFrame]] = []
        self.prerequisites = pd.DataFrame(columns=["from_id", "to_id", "source"])
        self.related = pd.DataFrame(columns=["from_id", "to_id", "source"])
        self.notes: dict[str, int] = {}


def _edge_frame(edges, framework: str, source: str) -> pd.DataFrame:
    return pd.DataFrame({"from_id": [scoped(framework, a) for a, _, _ in edges],
                         "to_id": [scoped(framework, b) for _, b, _ in edges],
                         "source": source}, columns=["from_id", "to_id", "source"])


def _related(pairs: list[tuple[str, str, str]], framework: str, source: str) -> tuple[pd.DataFrame, int]:
    """Non-directed pairs stored once, smaller id first; returns them and duplicates dropped."""
    ordered = [(min(a, b), max(a, b), w) for a, b, w in pairs if a != b]
    kept, dropped = collapse_edges(ordered)
    return _edge_frame(kept, framework, source), dropped


def read_coherence_map(path: str | Path, framework: str = "ccss",
                       name: str = "Common Core Coherence Map") -> Curriculum:
    """Read and validate a Coherence Map JSON (LLM-KST ``nys_concepts.json`` layout).

    Parameters
    ----------
    path : path
        JSON with ``domains``, ``clusters`` and ``standards`` objects keyed by id; a
        standard carries ``code``, ``desc``, ``ccmathcluster_id``, ``rev_edges`` (ids of
        its direct prerequisites) and ``nd_edges`` (related, non-directed).
    framework : str
        Framework id; concept ids become ``<framework>:<standard id>``.

    Returns
    -------
    Curriculum
        On the shipped file: 63 domains, 148 clusters, 480 concepts, 757 prerequisite
        edges, 142 related pairs (paper 1, Table 1).

    Raises
    ------
    InputError
        On a missing key, an unreadable file, or no standards (nothing to ingest).
    UnknownIdError
        When a standard names a cluster, or an edge a standard, that is not in the
        file. A cluster whose domain is missing is kept under the framework and
        counted in the notes.
    CycleError
        On a prerequisite cycle or self-loop (the message names the cycle).
    """
    path = require_file(path)
    try:
        data = json.loads(read_text(path))
        domains, clusters, standards = data["domains"], data["clusters"], data["standards"]
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    except (KeyError, TypeError):
        raise InputError(f"{path}: not a Coherence Map JSON; expected an object with domains, clusters and "
                         "standards (or give a concepts CSV with --edges)") from None
    if not standards:
        raise InputError(f"{path}: no standards: nothing to ingest")
    out = Curriculum(framework, name, str(path.name))
    out.domains = pd.DataFrame([{"id": scoped(framework, d["id"]), "code": d.get("ordinal"), "name": d.get("name"),
                                 "grade": d.get("grade")} for d in domains.values()])
    # The published map has clusters whose domain is not in the file (6 HS "+" clusters
    # under domains 120 and 121, none with standards): kept, attached to the framework.
    rows = []
    for c in clusters.values():
        domain = domains.get(c["ccmathdomain_id"])
        rows.append({"id": scoped(framework, c["id"]), "code": c.get("ordinal"), "name": _text(c.get("name")),
                     "domain": scoped(framework, c["ccmathdomain_id"]) if domain else None,
                     "grade": domain.get("grade") if domain else None})
    cluster_rows = pd.DataFrame(rows)
    orphans = cluster_rows[cluster_rows["domain"].isna()]
    out.clusters = cluster_rows[["id", "code", "name"]]
    grade_of = dict(zip(cluster_rows["id"], cluster_rows["grade"], strict=True))
    concepts, prereqs, related = [], [], []
    for key, s in standards.items():
        sid = str(s.get("id", key))
        cluster = s.get("ccmathcluster_id")
        if cluster not in clusters:
            raise unknown_id("cluster", cluster, f"{path}: standards[{sid!r}].ccmathcluster_id")
        concepts.append({"id": scoped(framework, sid), "framework": framework, "localId": sid,
                         "code": s.get("code"), "description": _text(s.get("desc")),
                         "grade": grade_of[scoped(framework, cluster)],
                         "exampleProblem": _text(s.get("example_problem")),
                         "cluster": scoped(framework, cluster)})
        prereqs += [(str(p), sid, f"standards[{sid!r}].rev_edges") for p in s.get("rev_edges", [])]
        related += [(sid, str(r), f"standards[{sid!r}].nd_edges") for r in s.get("nd_edges", [])]
    for a, b, where in prereqs + related:
        for end in (a, b):
            if end not in standards:
                raise unknown_id("standard", end, f"{path}: {where}")
    prereqs, duplicates = collapse_edges(prereqs)
    check_acyclic(prereqs, str(path))
    concept_rows = pd.DataFrame(concepts)
    out.concepts = concept_rows.drop(columns=["cluster"])
    out.part_of = [
        ("Domain", "Framework", pd.DataFrame({"from_id": out.domains["id"], "to_id": framework})),
        ("Cluster", "Domain", cluster_rows.dropna(subset=["domain"])
         .rename(columns={"id": "from_id", "domain": "to_id"})[["from_id", "to_id"]]),
        ("Cluster", "Framework", pd.DataFrame({"from_id": orphans["id"], "to_id": framework})),
        ("Concept", "Cluster",
         concept_rows.rename(columns={"id": "from_id", "cluster": "to_id"})[["from_id", "to_id"]]),
    ]
    out.prerequisites = _edge_frame(prereqs, framework, "coherence-map")
    out.related, _ = _related(related, framework, "coherence-map")
    out.notes = {"duplicate prerequisite edges collapsed": duplicates,
                 "clusters whose domain is missing (attached to the framework)": len(orphans)}
    return out


def read_concepts_csv(concepts_path: str | Path, edges_path: str | Path | None,
                      framework: str | None = None) -> Curriculum:
    """Read and validate a concepts CSV and an optional prerequisite-edges CSV.

    Parameters
    ----------
    concepts_path : path
        Columns ``id``, ``code``, ``description``; optional ``grade`` and ``cluster``
        (a cluster name, becomes a Cluster node of the framework).
    edges_path : path or None
        Columns ``from_id``, ``to_id``: from is the prerequisite of to.
    framework : str, optional
        Framework id (default: the concepts file's stem).

    Raises
    ------
    InputError
        On a missing column, an empty or repeated concept id (with its line).
    UnknownIdError
        When an edge names a concept that is not in the concepts file (file and line).
    CycleError
        On a prerequisite cycle or self-loop, naming the cycle and the edge lines.
    """
    concepts_path = Path(concepts_path)
    framework = framework or concepts_path.stem
    columns, rows = read_csv(concepts_path)
    require_columns(concepts_path, columns, ["id", "code", "description"])
    out = Curriculum(framework, framework, concepts_path.name)
    seen: dict[str, int] = {}
    concepts, clusters, members = [], {}, []
    for row in rows:
        cid = row.values["id"]
        if not cid:
            raise InputError(f"{concepts_path}:{row.line}: empty concept id")
        if cid in seen:
            raise InputError(f"{concepts_path}:{row.line}: concept id {cid!r} repeats line {seen[cid]}")
        seen[cid] = row.line
        concepts.append({"id": scoped(framework, cid), "framework": framework, "localId": cid,
                         "code": row.values["code"] or None, "description": row.values["description"] or None,
                         "grade": row.values.get("grade") or None})
        if row.values.get("cluster"):
            cluster_id = scoped(framework, row.values["cluster"])
            clusters[cluster_id] = row.values["cluster"]
            members.append((scoped(framework, cid), cluster_id))
    out.concepts = pd.DataFrame(concepts, columns=list(out.concepts.columns))
    out.clusters = pd.DataFrame([{"id": k, "code": None, "name": v} for k, v in clusters.items()],
                                columns=["id", "code", "name"])
    clustered = {m for m, _ in members}
    out.part_of = [
        ("Cluster", "Framework", pd.DataFrame({"from_id": list(clusters), "to_id": framework})),
        ("Concept", "Cluster", pd.DataFrame(members, columns=["from_id", "to_id"])),
        ("Concept", "Framework", pd.DataFrame({"from_id": [c["id"] for c in concepts if c["id"] not in clustered],
                                               "to_id": framework})),
    ]
    edges = []
    if edges_path is not None:
        edges_path = Path(edges_path)
        ecolumns, erows = read_csv(edges_path)
        require_columns(edges_path, ecolumns, ["from_id", "to_id"])
        for row in erows:
            a, b = row.values["from_id"], row.values["to_id"]
            for column, end in (("from_id", a), ("to_id", b)):
                if not end:
                    raise InputError(f"{edges_path}:{row.line}: blank {column}; every edge needs both concept ids")
                if end not in seen:
                    raise unknown_id("concept", end, f"{edges_path}:{row.line}",
                                     f"it is not an id in {concepts_path.name}")
            edges.append((a, b, f"line {row.line}"))
    edges, duplicates = collapse_edges(edges)
    check_acyclic(edges, str(edges_path))
    out.prerequisites = _edge_frame(edges, framework, edges_path.name if edges_path else None)
    out.notes = {"duplicate prerequisite edges collapsed": duplicates}
    return out


def write_curriculum(store: GraphStore, curriculum: Curriculum) -> LoadReport:
    """Write a validated curriculum; idempotent (a second run reports everything unchanged)."""
    report = LoadReport(curriculum.framework, notes=dict(curriculum.notes))
    for label, frame in (("Framework", curriculum.frameworks), ("Domain", curriculum.domains),
                         ("Cluster", curriculum.clusters), ("Concept", curriculum.concepts)):
        report.add(label, store.write_nodes(label, frame))
    for from_label, to_label, frame in curriculum.part_of:
        report.add("PART_OF", store.write_relationships("PART_OF", from_label, to_label, frame))
    report.add("PREREQUISITE_OF", store.write_relationships("PREREQUISITE_OF", "Concept", "Concept",
                                                            curriculum.prerequisites))
    report.add("RELATED_TO", store.write_relationships("RELATED_TO", "Concept", "Concept", curriculum.related))
    return report


def load_standards(store: GraphStore, path: str | Path, edges: str | Path | None = None,
                   framework: str | None = None) -> LoadReport:
    """Read, validate and write a curriculum: Coherence Map JSON, or concepts CSV (+ edges CSV).

    Raises
    ------
    InputError, UnknownIdError, CycleError
        As :func:`read_coherence_map` / :func:`read_concepts_csv`; nothing is written then.
    """
    path = require_file(path)
    if path.suffix.lower() == ".json":
        if edges is not None:
            raise InputError(f"{path}: --edges is for a concepts CSV; the JSON carries its own edges")
        curriculum = read_coherence_map(path, framework or "ccss")
    else:
        curriculum = read_concepts_csv(path, edges, framework)
    check_acyclic_with_graph(store, curriculum, str(edges or path))
    return write_curriculum(store, curriculum)


def check_acyclic_with_graph(store: GraphStore, curriculum: Curriculum, source: str) -> None:
    """Refuse new prerequisite edges that close a cycle with edges already in the graph.

    Raises
    ------
    CycleError
        Naming the cycle; edges already stored are marked "in the graph".
    """
    stored = store.frame("concept_prerequisites", {"framework": curriculum.framework})
    if stored.empty or curriculum.prerequisites.empty:
        return
    local = len(curriculum.framework) + 1
    edges = [(a[local:], b[local:], "in the graph") for a, b in zip(stored["fromId"], stored["toId"], strict=True)]
    edges += [(a[local:], b[local:], source) for a, b in
              zip(curriculum.prerequisites["from_id"], curriculum.prerequisites["to_id"], strict=True)]
    check_acyclic(collapse_edges(edges)[0], f"{source} together with the graph")
