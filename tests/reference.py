"""Independent pure-Python (and networkx) references for every kstp query.

Written from the definitions, not from kstp's code, so that the parity tests compare
two implementations. Inputs are plain Python collections read from files or built by
the tests, never from the graph engine under test.
"""

from __future__ import annotations

from collections import defaultdict

import networkx as nx


def closure(edges: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """All (a, b) with a path a -> ... -> b of length >= 1."""
    graph = nx.DiGraph(list(edges))
    return {(a, b) for a in graph for b in nx.descendants(graph, a)}


def ancestors(edges, node) -> set[str]:
    graph = nx.DiGraph(list(edges))
    return nx.ancestors(graph, node) if node in graph else set()


def descendants(edges, node) -> set[str]:
    graph = nx.DiGraph(list(edges))
    return nx.descendants(graph, node) if node in graph else set()


def on_cycles(edges) -> set[str]:
    graph = nx.DiGraph(list(edges))
    return {n for comp in nx.strongly_connected_components(graph) for n in comp
            if len(comp) > 1 or graph.has_edge(n, n)}


def eq1(question_concepts: dict[str, set[str]], concept_edges, reflexive: bool) -> set[tuple[str, str]]:
    """Eq. 1 by a double loop over question pairs."""
    reach = closure(concept_edges)
    if reflexive:
        reach |= {(c, c) for cs in question_concepts.values() for c in cs}
    pairs = set()
    for qi, ci in question_concepts.items():
        if not ci:
            continue
        for qj, cj in question_concepts.items():
            if qi != qj and cj and all(any((a, b) in reach for b in cj) for a in ci):
                pairs.add((qi, qj))
    return pairs


def prerequisites_of(pairs) -> dict[str, set[str]]:
    pre = defaultdict(set)
    for a, b in pairs:
        pre[b].add(a)
    return pre


def violations(pairs, state: set[str]) -> set[tuple[str, str]]:
    pre = prerequisites_of(pairs)
    return {(item, p) for item in state for p in pre[item] if p not in state}


def inner_fringe(pairs, state: set[str]) -> set[str]:
    return {item for item in state if not violations(pairs, state - {item})}


def outer_fringe(pairs, state: set[str], domain: set[str]) -> set[str]:
    return {item for item in domain - state if not violations(pairs, state | {item})}


def psr(answers: dict[str, dict[str, bool]], pairs) -> dict[str, tuple[float, float, int, int]]:
    """Per learner (micro, macro, questions scored, pairs): the authors' dictionary loop."""
    pre = prerequisites_of(pairs)
    out = {}
    for learner, responses in answers.items():
        ratios, satisfied_total, observed_total = [], 0, 0
        for question, correct in responses.items():
            if not correct:
                continue
            observed = [p for p in pre[question] if p in responses]
            if not observed:
                continue
            satisfied = sum(responses[p] for p in observed)
            ratios.append(satisfied / len(observed))
            satisfied_total += satisfied
            observed_total += len(observed)
        if ratios:
            out[learner] = (satisfied_total / observed_total, sum(ratios) / len(ratios), len(ratios), observed_total)
    return out


def psr_buckets(answers, pairs, min_prerequisites: int) -> dict[int, int]:
    """Counts per bucket 0..5 of (learner, correct question) with >= min attempted prerequisites."""
    pre = prerequisites_of(pairs)
    counts: dict[int, int] = defaultdict(int)
    for responses in answers.values():
        for question, correct in responses.items():
            observed = [p for p in pre[question] if p in responses] if correct else []
            if correct and len(observed) >= min_prerequisites:
                share = sum(responses[p] for p in observed) / len(observed)
                counts[5 if share == 1 else int(share * 5 + 1e-9)] += 1
    return dict(counts)


def accuracy(answers) -> dict[str, tuple[int, int, float]]:
    return {learner: (len(r), sum(r.values()), sum(r.values()) / len(r)) for learner, r in answers.items()}


def concept_clusters(standards: dict, framework: str) -> set[tuple[str, str, str]]:
    """(concept id, code, cluster id) of every standard of a Coherence Map JSON."""
    return {(f"{framework}:{s.get('id', key)}", s["code"], f"{framework}:{s['ccmathcluster_id']}")
            for key, s in standards.items()}


def nextstep_attempts(rows) -> list[list]:
    """[id, cellKey, attempt, condition, verdict] of the attempts with a cellKey, by cellKey then attempt."""
    kept = sorted((r for r in rows.to_dict("records") if isinstance(r["cellKey"], str)),
                  key=lambda r: (r["cellKey"], r["attempt"]))
    return [[r["id"], r["cellKey"], r["attempt"], r["condition"], r["verdict"]] for r in kept]
