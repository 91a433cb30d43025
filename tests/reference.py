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


def equally_informative(pairs, item: str) -> set[str]:
    """The item and those it is a mutual prerequisite with (its class)."""
    return {item} | {p for p, q in pairs if q == item and (item, p) in pairs}


def inner_fringe(pairs, state: set[str]) -> set[str]:
    """Items q of the state with state - {q} still a state (Doignon & Falmagne, Def. 4.1.6)."""
    pairs = set(pairs)
    return {item for item in state if not violations(pairs, state - {item})}


def outer_fringe(pairs, state: set[str], domain: set[str]) -> set[str]:
    """Items q outside the state with state + {q} a state (Doignon & Falmagne, Def. 4.1.6)."""
    pairs = set(pairs)
    return {item for item in domain - state if not violations(pairs, state | {item})}


def inner_fringe_notions(pairs, state: set[str]) -> set[str]:
    """Items q of the state with state minus q's class of equally informative items a state."""
    pairs = set(pairs)
    return {item for item in state if not violations(pairs, state - equally_informative(pairs, item))}


def outer_fringe_notions(pairs, state: set[str], domain: set[str]) -> set[str]:
    """Items q outside the state with state plus q's class of equally informative items a state."""
    pairs = set(pairs)
    return {item for item in domain - state if not violations(pairs, state | equally_informative(pairs, item))}


def space_lower_bound(pairs, domain: set[str]) -> tuple[int, int, int]:
    """(questions, how many have no prerequisite, how many no question needs)."""
    return len(domain), len(domain - {b for _, b in pairs}), len(domain - {a for a, _ in pairs})


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


def psr_paper(answers: dict[str, dict[str, bool]], pairs) -> dict[str, tuple[float, float, int, int]]:
    """Per learner (micro, macro, questions scored, pairs) with Eq. 2's denominator |Pre(q)|:
    every prerequisite counts, attempted or not; a correct question with no prerequisite takes no part."""
    pre = prerequisites_of(pairs)
    out = {}
    for learner, responses in answers.items():
        ratios, satisfied_total, required_total = [], 0, 0
        for question, correct in responses.items():
            if not correct or not pre[question]:
                continue
            satisfied = sum(1 for p in pre[question] if responses.get(p))
            ratios.append(satisfied / len(pre[question]))
            satisfied_total += satisfied
            required_total += len(pre[question])
        if ratios:
            out[learner] = (satisfied_total / required_total, sum(ratios) / len(ratios), len(ratios), required_total)
    return out


def psr_paper_buckets(answers, pairs, min_prerequisites: int) -> dict[int, int]:
    """Counts per bucket 0..5 of (learner, correct question) with |Pre(q)| >= min, share over |Pre(q)|."""
    pre = prerequisites_of(pairs)
    counts: dict[int, int] = defaultdict(int)
    for responses in answers.values():
        for question, correct in responses.items():
            if correct and pre[question] and len(pre[question]) >= min_prerequisites:
                share = sum(1 for p in pre[question] if responses.get(p)) / len(pre[question])
                counts[5 if share == 1 else int(share * 5 + 1e-9)] += 1
    return dict(counts)


def accuracy(answers) -> dict[str, tuple[int, int, float]]:
    return {learner: (len(r), sum(r.values()), sum(r.values()) / len(r)) for learner, r in answers.items()}


def knowledge_overlap(answers, learners, questions=None) -> dict[tuple[str, str], tuple[int, int, int, int]]:
    """(a, b), a < b, sharing a question -> (shared, |K_a on shared|, |K_b on shared|, |K_a ∩ K_b|);
    only ``questions`` count when given."""
    out = {}
    for a in sorted(learners):
        for b in sorted(learners):
            if a < b and a in answers and b in answers:
                shared = set(answers[a]) & set(answers[b])
                if questions is not None:
                    shared &= set(questions)
                if shared:
                    ka = {q for q in shared if answers[a][q]}
                    kb = {q for q in shared if answers[b][q]}
                    out[(a, b)] = (len(shared), len(ka), len(kb), len(ka & kb))
    return out


def group_answers(answers, members, questions=None) -> dict[str, tuple[int, int]]:
    """Question (among ``questions`` when given) -> (members who answered it, members who answered it correctly)."""
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for member in members:
        for question, correct in answers.get(member, {}).items():
            if questions is not None and question not in questions:
                continue
            out[question][0] += 1
            out[question][1] += int(correct)
    return {q: tuple(v) for q, v in out.items()}


def question_counterexamples(answers, pairs) -> dict[tuple[str, str], tuple[int, int]]:
    """Edge p -> q -> (learners who answered both, those with q right and p wrong)."""
    out = {}
    for p, q in pairs:
        both = [r for r in answers.values() if p in r and q in r]
        out[(p, q)] = (len(both), sum(1 for r in both if r[q] and not r[p]))
    return out


def concept_counterexamples(answers, question_concepts, concept_edges, mastery) -> dict[tuple[str, str],
                                                                                        tuple[int, int]]:
    """Concept edge c -> d, both assessed -> (learners judged on both, masters of d but not c).

    A concept is judged by the questions assessing it and not the other end; mastered
    when the share answered correctly exceeds ``mastery``.
    """
    assessing = defaultdict(set)
    for question, concepts in question_concepts.items():
        for concept in concepts:
            assessing[concept].add(question)
    out = {}
    for c, d in concept_edges:
        if not assessing[c] or not assessing[d]:
            continue
        side_c, side_d = assessing[c] - assessing[d], assessing[d] - assessing[c]
        judged = countered = 0
        for responses in answers.values():
            rc = [responses[x] for x in side_c if x in responses]
            rd = [responses[y] for y in side_d if y in responses]
            if rc and rd:
                judged += 1
                countered += sum(rd) / len(rd) > mastery and not sum(rc) / len(rc) > mastery
        out[(c, d)] = (judged, countered)
    return out


# ---- DAG-MATH trajectories (paper 4): each is [(stepId, [parent stepIds]), ...] in writing order, last is final
def _cot_graph(steps) -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_nodes_from(s for s, _ in steps)
    graph.add_edges_from((p, s) for s, parents in steps for p in parents)
    return graph


def cot_step_closeness(trajectories: dict[str, list]) -> set[tuple]:
    """(responseId, stepId, final, outDegree, closed): closed = final or out-degree >= 1 (Definition 3.1)."""
    out = set()
    for rid, steps in trajectories.items():
        graph, final = _cot_graph(steps), steps[-1][0]
        out |= {(rid, s, s == final, graph.out_degree(s), s == final or graph.out_degree(s) >= 1) for s, _ in steps}
    return out


def cot_closeness(trajectories: dict[str, list]) -> dict[str, tuple]:
    """responseId -> (steps, nonFinalSteps, closedSteps, closedShare, closed)."""
    out = {}
    for rid, steps in trajectories.items():
        graph = _cot_graph(steps)
        inner = [s for s, _ in steps[:-1]]
        closed = sum(1 for s in inner if graph.out_degree(s) >= 1)
        out[rid] = (len(steps), len(inner), closed, closed / len(inner) if inner else 1.0, closed == len(inner))
    return out


def cot_statistics(trajectories: dict[str, list]) -> dict[str, tuple]:
    """responseId -> (nodes, edges, density 2E/(N(N-1)) or None, max in-degree, max out-degree)."""
    out = {}
    for rid, steps in trajectories.items():
        graph = _cot_graph(steps)
        n, e = graph.number_of_nodes(), graph.number_of_edges()
        out[rid] = (n, e, nx.density(graph) * 2 if n > 1 else None, max(d for _, d in graph.in_degree()),
                    max(d for _, d in graph.out_degree()))
    return out


def rqeval_items(questions: dict[str, tuple], variants: dict[str, tuple[str, str]]) -> list[tuple]:
    """Rows of rqeval_items: each question with text and answer, once per variant (or once with None).

    ``questions``: id -> (text, answer, answerType, position); ``variants``: id -> (original id, text).
    """
    rows = []
    for qid, (text, answer, kind, position) in questions.items():
        if text is None or answer is None:
            continue
        mine = sorted((vid, vtext) for vid, (orig, vtext) in variants.items() if orig == qid) or [(None, None)]
        rows += [(qid, text, answer, kind, vid, vtext, position) for vid, vtext in mine]
    return sorted(rows, key=lambda r: (r[6], r[0], r[4] or ""))


def concept_clusters(standards: dict, framework: str) -> set[tuple[str, str, str]]:
    """(concept id, code, cluster id) of every standard of a Coherence Map JSON."""
    return {(f"{framework}:{s.get('id', key)}", s["code"], f"{framework}:{s['ccmathcluster_id']}")
            for key, s in standards.items()}


def nextstep_attempts(rows) -> list[list]:
    """[id, cellKey, attempt, condition, verdict] of the attempts with a cellKey, by cellKey then attempt."""
    kept = sorted((r for r in rows.to_dict("records") if isinstance(r["cellKey"], str)),
                  key=lambda r: (r["cellKey"], r["attempt"]))
    return [[r["id"], r["cellKey"], r["attempt"], r["condition"], r["verdict"]] for r in kept]


# ---- paper 1 NB2 and §3.2: scaffolding exemplars, concept annotation ------------------------
def framework_outline(raw: dict, framework: str) -> set[tuple]:
    """(clusterId, clusterName, domainName, grade, conceptId, code) of every standard of a
    Coherence Map JSON whose cluster is in the file; the domain part None where the domain is not;
    cluster names as plain text (tags dropped, entities decoded)."""
    import html
    import re

    out = set()
    for sid, s in raw["standards"].items():
        cluster = raw["clusters"].get(str(s["ccmathcluster_id"]))
        if cluster is None:
            continue
        domain = raw["domains"].get(str(cluster["ccmathdomain_id"]))
        name = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", cluster.get("name") or "")).split()) or None
        out.add((f"{framework}:{cluster['id']}", name, domain.get("name") if domain else None,
                 domain.get("grade") if domain else None, f"{framework}:{s.get('id', sid)}", s.get("code")))
    return out


def concept_examples(raw: dict, framework: str) -> set[tuple[str, str]]:
    """(conceptId, code) of every standard whose example problem has text beyond HTML tags."""
    import re

    return {(f"{framework}:{s.get('id', sid)}", s.get("code")) for sid, s in raw["standards"].items()
            if re.sub(r"<[^>]+>|&nbsp;|\s", "", s.get("example_problem") or "")}


def item_outer_fringe(family: list[set[str]], state: set[str]) -> set[str]:
    """Items q outside ``state`` with state | {q} in ``family`` (Doignon & Falmagne 1999, Def. 4.1.6)."""
    members = {frozenset(s) for s in family}
    return {q for s in members for q in s - state if s == frozenset(state | {q})}


def iita_candidates(b) -> list[set[tuple[int, int]]]:
    """DAKS's ``ind_gen`` read literally, on Python sets: the inductively built chain of relations.

    ``b[i][j]`` counts counterexamples to "i is a prerequisite of j" (i unsolved, j solved).
    Pairs enter by rising counterexample count; a new pair (i, j) is dropped again while some
    h (not i, j) has (j, h) accepted but not (i, h), or (h, i) but not (h, j).
    """
    m = len(b)
    low = min(min(row) for row in b)
    accepted = {(i, j) for i in range(m) for j in range(m) if i != j and b[i][j] == low}
    chain = [set(accepted)]
    for level in sorted({v for row in b for v in row if v != 0}):
        added = {(i, j) for i in range(m) for j in range(m) if i != j and b[i][j] <= level} - accepted
        while True:
            before = set(added)
            for i, j in sorted(before):
                for h in range(m):
                    if h in (i, j):
                        continue
                    both = accepted | added
                    if ((j, h) in both and (i, h) not in both) or ((h, i) in both and (h, j) not in both):
                        added.discard((i, j))
            if added == before:
                break
        accepted = accepted | added
        chain.append(set(accepted))
    out: list[set[tuple[int, int]]] = []
    for relation in chain:
        if relation and relation not in out:
            out.append(relation)
    return out


def count_by(values) -> dict:
    """How many times each value occurs (a GROUP BY count)."""
    out: dict = {}
    for value in values:
        out[value] = out.get(value, 0) + 1
    return out
