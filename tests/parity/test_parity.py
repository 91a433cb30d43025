"""Parity: every registered query, run on Ladybug, equals an independent Python
reference (tests/reference.py) on the same data — generated graphs and real data."""

from __future__ import annotations

import functools
import json
import random
from pathlib import Path

import pandas as pd
import pytest

from kstp.graph.queries import ENGINES, registry
from kstp.graph.structures import derive_question_prerequisites
from tests import reference as ref

DATASET, FRAMEWORK = "gen", "gen"
#: Checked by test_parity_run_queries.
RUN_QUERIES = {"runs_of", "responses_by_id", "run_responses", "run_finish_reasons", "run_by_id", "nextstep_responses",
               "run_list", "run_members", "run_links", "run_outcomes", "primary_answers",
               "rqeval_items", "rqeval_responses", "rqeval_scores"}  # the last three: test_parity_rqeval_queries


def build(store, concept_edges, question_concepts, answers, extra_concepts=()):
    """Write a generated curriculum, questions and answers straight through the store."""
    concepts = sorted({c for e in concept_edges for c in e} | set(extra_concepts)
                      | {c for cs in question_concepts.values() for c in cs})
    store.write_nodes("Framework", pd.DataFrame([{"id": FRAMEWORK, "name": "generated"}]))
    store.write_nodes("Concept", pd.DataFrame({"id": concepts, "framework": FRAMEWORK, "code": concepts}))
    store.write_relationships("PART_OF", "Concept", "Framework",
                              pd.DataFrame({"from_id": concepts, "to_id": FRAMEWORK}))
    store.write_relationships("PREREQUISITE_OF", "Concept", "Concept",
                              pd.DataFrame(sorted(concept_edges), columns=["from_id", "to_id"]))
    store.write_nodes("Dataset", pd.DataFrame([{"id": DATASET, "name": DATASET}]))
    questions = sorted(question_concepts)
    store.write_nodes("Question", pd.DataFrame({"id": questions, "dataset": DATASET, "localId": questions,
                                                "position": range(len(questions))}))
    store.write_relationships("IN_DATASET", "Question", "Dataset",
                              pd.DataFrame({"from_id": questions, "to_id": DATASET}))
    links = [(q, c) for q, cs in question_concepts.items() for c in sorted(cs)]
    store.write_relationships("ASSESSES", "Question", "Concept", pd.DataFrame(links, columns=["from_id", "to_id"]))
    learners = sorted(answers)
    store.write_nodes("Learner", pd.DataFrame({"id": learners, "kind": "human", "dataset": DATASET}))
    rows = [(learner, q, ok) for learner, r in answers.items() for q, ok in r.items()]
    store.write_relationships("ANSWERED", "Learner", "Question",
                              pd.DataFrame(rows, columns=["from_id", "to_id", "correct"]))


def generated(seed: int, concepts: int = 30, questions: int = 40, learners: int = 25, chain: int = 0):
    """A random DAG over concepts (plus an optional long chain), a random Q-matrix, random answers."""
    rng = random.Random(seed)
    names = [f"c{i:02d}" for i in range(concepts)]
    edges = {(names[a], names[b]) for a in range(concepts) for b in range(a + 1, concepts) if rng.random() < 0.08}
    edges |= {(f"k{i:02d}", f"k{i + 1:02d}") for i in range(chain)}
    pool = names + [f"k{i:02d}" for i in range(chain + 1)] if chain else names
    qc = {f"q{i:02d}": set(rng.sample(pool, rng.choice([0, 1, 1, 1, 2, 3]))) for i in range(questions)}
    answers = {f"l{i:02d}": {q: rng.random() < 0.6 for q in rng.sample(sorted(qc), rng.randint(1, questions))}
               for i in range(learners)}
    return edges, qc, answers


def as_set(frame, *columns):
    return set(map(tuple, frame[list(columns)].itertuples(index=False))) if len(columns) > 1 else set(frame[columns[0]])


def check_all(store, edges, qc, answers, rule):
    """Run every registered query and compare with the reference; returns the names checked."""
    checked = set()

    def run(name, **params):
        checked.add(name)
        return store.frame(name, params)

    concepts = sorted({c for e in edges for c in e} | {c for cs in qc.values() for c in cs})
    assert as_set(run("concept_closure", framework=FRAMEWORK), "fromId", "toId") == ref.closure(edges)
    assert as_set(run("concept_prerequisites", framework=FRAMEWORK), "fromId", "toId") == set(edges)
    assert as_set(run("concept_cycles", framework=FRAMEWORK), "conceptId") == ref.on_cycles(edges)
    for concept in concepts[:: max(1, len(concepts) // 8)] + concepts[-1:]:
        assert as_set(run("concept_ancestors", conceptId=concept), "conceptId") == ref.ancestors(edges, concept)
        assert as_set(run("concept_descendants", conceptId=concept), "conceptId") == ref.descendants(edges, concept)
    assert set(run("framework_concepts", framework=FRAMEWORK)["conceptId"]) == set(concepts)
    assert run("frameworks")["frameworkId"].tolist() == [FRAMEWORK]
    described = run("concept_descriptions", framework=FRAMEWORK)
    assert as_set(described, "conceptId", "code") == {(c, c) for c in concepts}
    assert described["clusterId"].isna().all()  # generated concepts hang on the framework, not a cluster
    figures = run("curriculum_figures", framework=FRAMEWORK).iloc[0]
    assert (figures["concepts"], figures["prerequisiteEdges"], figures["domains"]) == (len(concepts), len(edges), 0)
    links = {(q, c) for q, cs in qc.items() for c in cs}
    assert as_set(run("question_concepts", dataset=DATASET), "questionId", "conceptId") == links
    used = {c for cs in qc.values() for c in cs}
    assert as_set(run("dataset_concept_closure", dataset=DATASET), "fromId", "toId") == {
        (a, b) for a, b in ref.closure(edges) if a in used}
    assert as_set(run("dataset_concept_ancestors", dataset=DATASET), "fromId", "toId") == {
        (a, b) for a, b in ref.closure(edges) if b in used}
    expected = ref.eq1(qc, edges, rule == "reflexive")
    assert as_set(run("question_prerequisites", dataset=DATASET, reflexive=rule == "reflexive"),
                  "fromId", "toId") == expected
    derive_question_prerequisites(store, DATASET, rule)
    stored = run("question_prerequisite_edges", dataset=DATASET)
    assert as_set(stored, "fromId", "toId") == expected
    assert set(stored["rule"]) <= {rule}
    domain = set(qc)
    assert set(run("dataset_questions", dataset=DATASET)["questionId"]) == domain
    bound = run("space_lower_bound", dataset=DATASET).iloc[0]
    assert tuple(int(bound[c]) for c in ("questions", "withoutPrerequisites", "neededByNone")) == \
        ref.space_lower_bound(expected, domain)
    rng = random.Random(len(expected))
    for learner in sorted(answers)[:5]:
        state = {q for q, ok in answers[learner].items() if ok}
        assert set(run("knowledge_state", dataset=DATASET, learnerId=learner)["questionId"]) == state
    for size in (0, 1, 3, len(domain) // 2, len(domain)):
        subset = set(rng.sample(sorted(domain), size))
        ids = sorted(subset)
        assert as_set(run("state_violations", dataset=DATASET, questionIds=ids), "questionId", "prerequisiteId") \
            == ref.violations(expected, subset)
        # Fringes are defined for states: close the subset downwards first.
        pre = ref.prerequisites_of(expected)
        state = subset | {p for item in subset for p in pre[item]}
        ids = sorted(state)
        assert set(run("inner_fringe", dataset=DATASET, questionIds=ids)["questionId"]) == \
            ref.inner_fringe(expected, state)
        assert set(run("outer_fringe", dataset=DATASET, questionIds=ids)["questionId"]) == \
            ref.outer_fringe(expected, state, domain)
        assert set(run("inner_fringe_notions", dataset=DATASET, questionIds=ids)["questionId"]) == \
            ref.inner_fringe_notions(expected, state)
        assert set(run("outer_fringe_notions", dataset=DATASET, questionIds=ids)["questionId"]) == \
            ref.outer_fringe_notions(expected, state, domain)
    assert as_set(run("dataset_learners", dataset=DATASET), "learnerId", "kind") == {
        (learner, "human") for learner, r in answers.items() if r}
    from kstp.graph.structures import store_states

    states = [frozenset(), frozenset(sorted(domain)[:2])]
    store_states(store, DATASET, states, "test")
    stored = run("stored_states", dataset=DATASET)
    assert set(stored["questionId"]) == set(sorted(domain)[:2]) and set(stored["size"]) == {2}
    rows = {(learner, q, ok) for learner, r in answers.items() for q, ok in r.items()}
    assert as_set(run("answers", dataset=DATASET), "learnerId", "questionId", "correct") == rows
    learners = sorted(answers)
    lo, hi = learners[len(learners) // 4], learners[3 * len(learners) // 4]
    # Node keys are the engine's: mapped back to ids through the two key queries, and distinct.
    roster = run("dataset_learners", dataset=DATASET)
    keyed = run("question_keys", dataset=DATASET)
    assert roster["learnerKey"].is_unique and keyed["questionKey"].is_unique
    assert set(keyed["questionId"]) == set(qc)
    learner_of = dict(zip(roster["learnerKey"], roster["learnerId"], strict=True))
    question_of = dict(zip(keyed["questionKey"], keyed["questionId"], strict=True))
    batch = run("answer_keys_in_range", dataset=DATASET, lo=lo, hi=hi)
    assert {(learner_of[k], question_of[q], bool(ok)) for k, q, ok in
            zip(batch["learnerKey"], batch["questionKey"], batch["correct"], strict=True)} \
        == {row for row in rows if lo <= row[0] <= hi}
    # The packed form: learner key * 2^33 + question key * 2 + correct.
    codes = run("answer_codes_in_range", dataset=DATASET, lo=lo, hi=hi)["answer"].tolist()
    assert {(learner_of[c >> 33], question_of[(c >> 1) & 0xFFFFFFFF], bool(c & 1)) for c in codes} \
        == {row for row in rows if lo <= row[0] <= hi} and len(codes) == len(batch)
    assert {(question_of[a], question_of[b]) for a, b in run("question_prerequisite_keys", dataset=DATASET).itertuples(
        index=False)} == expected
    accuracy = run("learner_accuracy", dataset=DATASET).set_index("learnerId")
    for learner, (answered, correct, acc) in ref.accuracy(answers).items():
        assert (accuracy.loc[learner, "answered"], accuracy.loc[learner, "correct"]) == (answered, correct)
        assert accuracy.loc[learner, "accuracy"] == pytest.approx(acc)
    cypher = run("psr_by_learner", dataset=DATASET).set_index("learnerId")
    want = ref.psr(answers, expected)
    assert set(cypher.index) == set(want)
    for learner, (micro, macro, scored, pairs) in want.items():
        row = cypher.loc[learner]
        assert (row["psrMicro"], row["psrMacro"]) == (pytest.approx(micro), pytest.approx(macro))
        assert (row["questionsScored"], row["pairs"]) == (scored, pairs)
    for threshold in (1, 2, 5):
        buckets = run("psr_distribution", dataset=DATASET, minPrerequisites=threshold)
        got = dict(zip(buckets["bucket"], buckets["pairs"], strict=True))
        assert got == ref.psr_buckets(answers, expected, threshold)
    nodes = dict(zip(*run("node_counts").to_dict("list").values(), strict=True))
    assert nodes["Concept"] == len(concepts) and nodes["Question"] == len(qc) and nodes["Learner"] == len(answers)
    assert run("question_count")["questions"].tolist() == [len(qc)]
    rels = dict(zip(*run("relationship_counts").to_dict("list").values(), strict=True))
    assert rels["ANSWERED"] == len(rows) and rels["ASSESSES"] == len(links)
    assert rels["PREREQUISITE_OF"] == len(edges) + len(expected)
    ds = run("datasets").iloc[0]
    assert (ds["questions"], ds["questionsWithConcepts"], ds["assesses"], ds["answers"]) == (
        len(qc), sum(1 for cs in qc.values() if cs), len(links), len(rows))
    assert ds["learners"] == len(answers)
    assert ds["questionPrerequisites"] == len(expected)  # kstp db stats counts it in the engine
    states = {("KnowledgeState", k) for k in store.nodes("KnowledgeState")["id"]}  # the empty one has no CONTAINS
    assert as_set(run("dataset_members", dataset=DATASET), "label", "id") == states | \
        {("Question", q) for q in qc} | {("Learner", learner) for learner in answers}  # one dataset: all of it
    checked |= check_overlap_and_counterexamples(store, edges, qc, answers, expected)
    return checked


@pytest.mark.parametrize("seed, rule, chain", [(1, "strict", 0), (2, "reflexive", 0), (3, "strict", 45),
                                               (4, "reflexive", 45)])
def test_parity_generated_graphs(store, seed, rule, chain):
    edges, qc, answers = generated(seed, chain=chain)
    build(store, edges, qc, answers)
    checked = check_all(store, edges, qc, answers, rule)
    portable = {name for name, query in registry().items() if query.engines == ENGINES}
    assert checked | RUN_QUERIES == portable, "a registered query has no parity check"


def test_learner_reads_keep_to_the_dataset(store):
    """The learner and answer reads of PSR with a second dataset and a model in the graph.

    A learner with a dataset (a human: the loaders name it inside its dataset) answers that
    dataset's questions alone; the forms that rely on it pass its answers unfiltered. A
    model has no dataset and answers both: only its answers into the dataset count. The
    second dataset's learners have ids inside the first's id ranges.
    """
    edges, qc, answers = generated(5, questions=12, learners=6)
    build(store, edges, qc, answers)
    store.write_nodes("Dataset", pd.DataFrame([{"id": "other"}]))
    store.write_nodes("Question", pd.DataFrame({"id": ["o1", "o2"], "dataset": "other"}))
    store.write_relationships("IN_DATASET", "Question", "Dataset", pd.DataFrame({"from_id": ["o1", "o2"],
                                                                                  "to_id": "other"}))
    store.write_nodes("Learner", pd.DataFrame({"id": ["l02x", "l04m"], "kind": ["human", "model"],
                                               "dataset": ["other", None]}))
    extra = [("l02x", "o1", True), ("l02x", "o2", False), ("l04m", "o1", False), ("l04m", "q03", True),
             ("l04m", "q07", False)]
    store.write_relationships("ANSWERED", "Learner", "Question", pd.DataFrame(extra, columns=["from_id", "to_id",
                                                                                             "correct"]))
    kinds = {learner: "human" for learner, r in answers.items() if r} | {"l04m": "model"}
    rows = {(learner, q, ok) for learner, r in answers.items() for q, ok in r.items()} | {
        row for row in extra if row[1].startswith("q")}
    for dataset, learners, answered in ((DATASET, kinds, rows), ("other", {"l02x": "human", "l04m": "model"},
                                                                   {row for row in extra if row[1].startswith("o")})):
        roster = store.frame("dataset_learners", {"dataset": dataset})
        assert dict(zip(roster["learnerId"], roster["kind"], strict=True)) == learners
        keys = store.frame("question_keys", {"dataset": dataset})
        learner_of = dict(zip(roster["learnerKey"], roster["learnerId"], strict=True))
        question_of = dict(zip(keys["questionKey"], keys["questionId"], strict=True))
        span = {"dataset": dataset, "lo": min(learners), "hi": max(learners)}
        batch = store.frame("answer_keys_in_range", span)
        assert {(learner_of[k], question_of[q], bool(ok)) for k, q, ok in
                zip(batch["learnerKey"], batch["questionKey"], batch["correct"], strict=True)} == answered
        codes = store.frame("answer_codes_in_range", span)["answer"].tolist()
        assert {(learner_of[c >> 33], question_of[(c >> 1) & 0xFFFFFFFF], bool(c & 1)) for c in codes} == answered
        assert len(codes) == len(batch) == len(answered)


def test_parity_closure_beyond_ladybug_default_depth(store):
    """A 45-edge chain: Ladybug's default depth (30) would silently drop the far ancestors."""
    edges = {(f"k{i:02d}", f"k{i + 1:02d}") for i in range(45)}
    build(store, edges, {"q": {"k45"}}, {})
    assert len(store.frame("concept_ancestors", {"conceptId": "k45"})) == 45
    assert len(store.frame("concept_closure", {"framework": FRAMEWORK})) == 46 * 45 // 2


def test_parity_cycles_found(store):
    """Cycles can only enter the graph by other means than ingest; the query still names them."""
    edges = {("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("e", "e"), ("d", "f")}
    build(store, edges, {}, {})
    assert set(store.frame("concept_cycles", {"framework": FRAMEWORK})["conceptId"]) == ref.on_cycles(edges) \
        == {"a", "b", "c", "e"}


def _real_skill_map(data_root, dataset, responses_file):
    folder = data_root / "responses" / dataset
    qm = pd.read_csv(folder / "qmatrix.csv", dtype=str)
    qc = {f"{dataset}:{r.item_id}": {f"{dataset}:{s}" for s in qm.columns[1:] if getattr(r, s) == "1"}
          for r in qm.itertuples()}
    wide = pd.read_csv(folder / responses_file, dtype=str)
    items = wide.columns[1:]
    answers = {f"{dataset}:{row[0]}": {f"{dataset}:{item}": row[k + 1] == "1" for k, item in enumerate(items)}
               for row in wide.itertuples(index=False)}
    return qc, answers


@pytest.mark.parametrize("dataset, responses_file", [("probability_pks", "responses_full.csv"),
                                                     ("frcsub", "responses.csv")])
def test_parity_real_skill_maps(store, data_root, dataset, responses_file):
    from kstp.loaders import items, responses

    folder = data_root / "responses" / dataset
    items.write_items(store, items.read_items_csv(folder / "items.csv", dataset, folder / "qmatrix.csv",
                                                  folder / "skills.csv"))
    known = set(store.frame("dataset_questions", {"dataset": dataset})["localId"])
    responses.write_answers(store, dataset, responses.read_wide(folder / responses_file, known), responses_file)
    qc, answers = _real_skill_map(data_root, dataset, responses_file)
    expected = ref.eq1(qc, set(), reflexive=True)
    derive_question_prerequisites(store, dataset, "reflexive")
    assert as_set(store.frame("question_prerequisite_edges", {"dataset": dataset}), "fromId", "toId") == expected
    cypher = store.frame("psr_by_learner", {"dataset": dataset}).set_index("learnerId")
    want = ref.psr(answers, expected)
    assert len(cypher) == len(want)
    for learner, (micro, macro, _, _) in want.items():
        assert cypher.loc[learner, "psrMicro"] == pytest.approx(micro)
        assert cypher.loc[learner, "psrMacro"] == pytest.approx(macro)
    buckets = store.frame("psr_distribution", {"dataset": dataset, "minPrerequisites": 5})
    assert dict(zip(buckets["bucket"], buckets["pairs"], strict=True)) == ref.psr_buckets(answers, expected, 5)


def test_parity_real_coherence_map_and_annotation(store, data_root):
    from kstp.loaders import items
    from kstp.loaders.standards import load_standards

    load_standards(store, data_root / "standards/nys_concepts.json")
    raw = json.loads((data_root / "standards/nys_concepts.json").read_text())
    edges = {(f"ccss:{p}", f"ccss:{sid}") for sid, s in raw["standards"].items() for p in s["rev_edges"]}
    assert as_set(store.frame("concept_closure", {"framework": "ccss"}), "fromId", "toId") == ref.closure(edges)
    described = store.frame("concept_descriptions", {"framework": "ccss"})
    assert as_set(described, "conceptId", "code", "clusterId") == ref.concept_clusters(raw["standards"], "ccss")
    assert described["description"].notna().sum() == sum(1 for s in raw["standards"].values() if s.get("desc"))
    assert store.frame("concept_cycles", {"framework": "ccss"}).empty
    items.write_items(store, items.read_concept_map(data_root / "llm_kst/xes_skills_nys.json", "xes", "ccss",
                                                    items.framework_concepts(store, "ccss")))
    report = derive_question_prerequisites(store, "xes", "strict")
    expected = _real_eq1(data_root)
    assert report.edges == len(expected) == 1_234_207
    # read as kstp reads it (a bulk read: on Neo4j one record of lists, 3 s, where 1.2 M records take 25 s)
    stored = store.frame("question_prerequisite_edges", {"dataset": "xes"}, categorical=True)
    assert as_set(stored, "fromId", "toId") == expected


@functools.cache
def _real_eq1(data_root: Path) -> frozenset[tuple[str, str]]:
    """Eq. 1 (strict) of the XES3G5M concept map on the Coherence Map by the reference's double loop: the same
    for both engines' cases, computed once (8 s)."""
    raw = json.loads((data_root / "standards/nys_concepts.json").read_text())
    edges = {(f"ccss:{p}", f"ccss:{sid}") for sid, s in raw["standards"].items() for p in s["rev_edges"]}
    mapping = json.loads((data_root / "llm_kst/xes_skills_nys.json").read_text())
    qc = {f"xes:{q}": {f"ccss:{c}" for c in cs} for q, cs in mapping.items()}
    return frozenset(ref.eq1(qc, edges, reflexive=False))


def test_parity_run_queries(store):
    """Runs and responses written through kstp.inference.runs read back as written."""
    from kstp.inference.backend import Sampling
    from kstp.inference.runs import RunSpec, open_run, pending, write_responses

    build(store, set(), {"q1": set(), "q2": set()}, {"m": {}})
    spec = RunSpec("answers", "1.0", "tiny", "local", DATASET, Sampling(n=2), "t" * 64)
    run_id, resumed = open_run(store, spec)
    assert not resumed
    rows = pd.DataFrame({"id": ["k1", "k2", "k3"], "question": ["q1", "q1", "q2"], "sampleIndex": [0, 1, 0],
                         "text": ["a", None, "c"], "error": [None, "transport: down", None],
                         "correct": [True, False, False]})
    write_responses(store, run_id, "m", rows)
    runs = store.frame("runs_of", {"evaluator": "answers", "model": "tiny", "dataset": DATASET})
    assert runs[["runId", "configHash", "status"]].values.tolist() == [[run_id, spec.config_hash(), "running"]]
    got = store.frame("run_responses", {"runId": run_id})
    assert got[["responseId", "questionId", "sampleIndex", "text"]].astype(object).where(got.notna(), None) \
        .values.tolist() == [["k1", "q1", 0, "a"], ["k2", "q1", 1, None], ["k3", "q2", 0, "c"]]
    store.write_nodes("Response", pd.DataFrame({"id": ["k1", "k3"], "finishReason": ["length", "stop"]}))
    reasons = store.frame("run_finish_reasons", {"runId": run_id})
    assert reasons.astype(object).where(reasons.notna(), None).values.tolist() == [["k1", "length", 1],
                                                                                   ["k2", None, 1], ["k3", "stop", 1]]
    by_id = store.frame("responses_by_id", {"ids": ["k1", "k2", "zz"]})
    assert set(by_id["responseId"]) == {"k1", "k2"}
    assert by_id.set_index("responseId").loc["k2", ["error", "sampleIndex"]].tolist() == ["transport: down", 1]
    started = store.frame("run_by_id", {"runId": run_id}).iloc[0]["startedAt"]
    primary = store.frame("primary_answers", {"learners": ["m", "nobody"], "evaluator": "answers"})
    assert primary.values.tolist() == [["m", "q1", run_id, started, True], ["m", "q2", run_id, started, False]]
    assert store.frame("primary_answers", {"learners": ["m"], "evaluator": "rqeval"}).empty
    assert pending(store, ["k1", "k2", "k3", "k4"]) == {"k2", "k4"}
    listed = store.frame("run_list", {"evaluator": "answers", "model": "", "dataset": DATASET})
    assert listed[["runId", "model", "status"]].values.tolist() == [[run_id, "tiny", "running"]]
    assert store.frame("run_list", {"evaluator": "", "model": "other", "dataset": ""}).empty
    store.write_nodes("Learner", pd.DataFrame([{"id": "m", "kind": "model"}]))
    store.write_nodes("CotStep", pd.DataFrame({"id": ["k1#1"]}))
    store.write_relationships("HAS_STEP", "Response", "CotStep", pd.DataFrame([{"from_id": "k1", "to_id": "k1#1"}]))
    store.write_relationships("ANSWERED", "Learner", "Question",
                              pd.DataFrame([{"from_id": "m", "to_id": "q1", "correct": True, "runId": run_id}]))
    store.write_nodes("Question", pd.DataFrame([{"id": "q2", "careless": 0.1, "blimRunId": run_id}]))
    members = store.frame("run_members", {"runId": run_id})
    assert sorted(members[["label", "id", "shared"]].values.tolist()) == [
        ["CotStep", "k1#1", False], ["Learner", "m", False], ["Response", "k1", False], ["Response", "k2", False],
        ["Response", "k3", False]]
    assert store.frame("run_links", {"runId": run_id}).values.tolist() == [["ANSWERED", "Learner", "Question", "m",
                                                                           "q1"]]
    assert store.frame("run_outcomes", {"runId": run_id}).values.tolist() == [["Question", "q2"]]


#: Paper 1's verified subset (Table 3) and Appendix C's scores, checked by
#: test_parity_verified_links_and_reasoning_scores.
RUN_QUERIES |= {"verified_question_concepts", "reasoning_scores"}


@pytest.mark.parametrize("seed", [1, 2])
def test_parity_verified_links_and_reasoning_scores(store, seed):
    """Random verified flags on a generated Q-matrix, random judge scores on a run's answers."""
    from kstp.inference.backend import Sampling
    from kstp.inference.runs import RunSpec, open_run, write_responses

    edges, qc, answers = generated(seed)
    build(store, edges, qc, answers)
    rng = random.Random(seed)
    flags = {(q, c): rng.random() < 0.5 for q, cs in qc.items() for c in sorted(cs)}
    store.write_relationships("ASSESSES", "Question", "Concept", pd.DataFrame(
        [{"from_id": q, "to_id": c, "verified": v} for (q, c), v in flags.items()]))
    got = store.frame("verified_question_concepts", {"dataset": DATASET})
    assert list(got[["questionId", "conceptId"]].itertuples(index=False, name=None)) == \
        sorted(link for link, verified in flags.items() if verified)

    run_id, _ = open_run(store, RunSpec("answers", "1.0", "pupil", "local", DATASET, Sampling(n=2), "t" * 64))
    questions = sorted(qc)[:12]
    rows = pd.DataFrame([{"id": f"{q}#{i}", "question": q, "sampleIndex": i, "text": "x"}
                         for q in questions for i in (0, 1)])
    store.write_nodes("Learner", pd.DataFrame([{"id": "pupil", "kind": "model"}]))
    write_responses(store, run_id, "pupil", rows)
    scores = {q: (rng.randint(1, 5), rng.randint(1, 5), rng.randint(1, 5)) for q in questions if rng.random() < 0.6}
    store.write_nodes("Response", pd.DataFrame(
        [{"id": f"{q}#0", "reasoningRelevance": r, "reasoningCoherence": c, "reasoningAccuracy": a,
          "reasoningRunId": "judge"} for q, (r, c, a) in scores.items()]))
    got = store.frame("reasoning_scores", {"runId": run_id})
    table = got.astype(object).where(got.notna(), None).values.tolist()
    assert table == [[f"{q}#0", q, *scores.get(q, (None, None, None)), "judge" if q in scores else None]
                     for q in questions]


def check_overlap_and_counterexamples(store, edges, qc, answers, question_edges):
    """KOC counts, group answers and counterexample counts against their references."""
    learners = sorted(answers)
    annotated = sorted(q for q, cs in qc.items() if cs)  # Appendix B: the questions KOC counts by default
    for questions in (annotated, sorted(qc)):
        got = store.frame("knowledge_overlap", {"dataset": DATASET, "learnerIds": learners, "questionIds": questions})
        assert {(r.learnerA, r.learnerB): (r.shared, r.sizeA, r.sizeB, r.overlap) for r in got.itertuples()} == \
            ref.knowledge_overlap(answers, learners, questions)
        members = learners[::3]
        got = store.frame("group_answers", {"dataset": DATASET, "learnerIds": members, "questionIds": questions})
        assert {r.questionId: (r.attempts, r.correct) for r in got.itertuples()} == \
            ref.group_answers(answers, members, questions)
    for members in (learners, learners[:3], learners[:1]):  # the common question set of GDS's KOC
        common = set.intersection(*(set(answers[m]) for m in members))
        assert set(store.frame("questions_answered_by_all", {"dataset": DATASET, "learnerIds": members})
                   ["questionId"]) == common
        counted = sorted(common) or annotated
        correct = {m: sum(1 for q in counted if answers[m].get(q)) for m in members}
        got = store.frame("correct_counts", {"learnerIds": members, "questionIds": counted})
        assert dict(zip(got["learnerId"], got["correct"].astype(int), strict=True)) == \
            {m: n for m, n in correct.items() if n}
    got = store.frame("question_prerequisite_counterexamples", {"dataset": DATASET})
    assert {(r.fromId, r.toId): (r.attemptedBoth, r.counterexamples) for r in got.itertuples()} == \
        ref.question_counterexamples(answers, question_edges)
    for mastery in (0.0, 0.5):
        got = store.frame("concept_prerequisite_counterexamples", {"dataset": DATASET, "mastery": mastery})
        assert {(r.fromId, r.toId): (r.attemptedBoth, r.counterexamples) for r in got.itertuples()} == \
            ref.concept_counterexamples(answers, qc, edges, mastery)
    return {"knowledge_overlap", "group_answers", "questions_answered_by_all", "correct_counts",
            "question_prerequisite_counterexamples", "concept_prerequisite_counterexamples"}


#: DAG-MATH trajectory queries, checked by test_parity_cot_queries.
COT_QUERIES = {"cot_step_closeness", "cot_closeness", "cot_statistics", "cot_responses", "cot_trajectories"}
RUN_QUERIES |= COT_QUERIES


def generated_trajectories(seed: int, count: int = 14) -> dict[str, list]:
    """Random trajectories: 1-9 steps with gapped increasing ids, each step depending on a
    random subset of earlier ones (often none, so unused steps are common)."""
    rng = random.Random(seed)
    out = {}
    for k in range(count):
        ids = sorted(rng.sample(range(1, 40), rng.randint(1, 9)))
        out[f"r{k:02d}"] = [(s, sorted(rng.sample(ids[:i], rng.randint(0, min(i, 3))))) for i, s in enumerate(ids)]
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_parity_cot_queries(store, seed):
    from kstp.inference.runs import write_responses
    from kstp.loaders.cot import Step, Trajectory, write_steps

    trajectories = generated_trajectories(seed)
    questions = {f"q{k % 4}" for k in range(len(trajectories))}
    build(store, set(), {q: set() for q in questions}, {"m": {}})
    store.write_nodes("Run", pd.DataFrame([{"id": "run", "evaluator": "dagmath", "model": "m", "dataset": DATASET}]))
    rids = sorted(trajectories) + ["bad"]
    rows = pd.DataFrame({"id": rids, "question": [f"q{k % 4}" for k in range(len(rids))],
                         "sampleIndex": [k // 4 for k in range(len(rids))],
                         "cotValid": [True] * len(trajectories) + [False],
                         "cotError": [None] * len(trajectories) + ["truncated"],
                         "correct": [k % 3 == 0 for k in range(len(rids))]})
    write_responses(store, "run", "m", rows)
    write_steps(store, {rid: Trajectory(tuple(Step(s, f"e{s}", tuple(p), f"n{s}") for s, p in steps))
                        for rid, steps in trajectories.items()})

    def run(name):
        return store.frame(name, {"runId": "run"})

    steps = run("cot_step_closeness")
    assert set(map(tuple, steps.astype(object).values.tolist())) == ref.cot_step_closeness(trajectories)

    def rounded(rows):
        return {rid: tuple(None if v is None or (isinstance(v, float) and pd.isna(v))
                           else round(v, 9) if isinstance(v, float) else v for v in r) for rid, r in rows.items()}

    closeness = run("cot_closeness").set_index("responseId").astype(object)
    assert rounded(dict(zip(closeness.index, map(tuple, closeness.values.tolist()), strict=True))) == \
        rounded(ref.cot_closeness(trajectories))
    statistics = run("cot_statistics").set_index("responseId").astype(object)
    assert rounded(dict(zip(statistics.index, map(tuple, statistics.values.tolist()), strict=True))) == \
        rounded(ref.cot_statistics(trajectories))
    responses = run("cot_responses")
    assert responses[["responseId", "questionId", "cotValid"]].values.tolist() == \
        rows.sort_values(["question", "sampleIndex"])[["id", "question", "cotValid"]].values.tolist()
    listed = run("cot_trajectories")
    pairs = {(r.responseId, r.stepId, None if pd.isna(r.parentStepId) else int(r.parentStepId))
             for r in listed.itertuples()}
    assert pairs == {(rid, s, p) for rid, st in trajectories.items() for s, ps in st for p in (ps or [None])}
    order = listed.drop_duplicates(["responseId", "position"])
    assert {rid: g["stepId"].tolist() for rid, g in order.groupby("responseId")} == \
        {rid: [s for s, _ in st] for rid, st in trajectories.items()}


def test_parity_rqeval_queries(store, tmp_path):
    """RQEval items (with variants, skipped slots, an item without text), responses and
    (model, dataset) scores read back as the reference computes them from the inputs."""
    from kstp.inference.backend import Sampling
    from kstp.inference.runs import RunSpec, open_run, write_responses
    from kstp.loaders.rqeval import read_rqeval, write_rqeval

    rng = random.Random(7)
    raw = [{"id": f"i{n}", "question": f"question {n}?", "answer": str(rng.randint(0, 9)),
            "perturbations": [rng.choice(["", f"variant {n}.{s}"]) for s in range(rng.randint(0, 3))]}
           for n in range(12)]
    path = tmp_path / "dataset_gen.json"
    path.write_text(json.dumps(raw))
    write_rqeval(store, read_rqeval(path))
    store.write_nodes("Question", pd.DataFrame([{"id": "gen:i3", "text": None}]))  # no text: left out
    questions = {f"gen:{r['id']}": (None if r["id"] == "i3" else r["question"], r["answer"], "number", n)
                 for n, r in enumerate(raw, 1)}
    variants = {f"gen:{r['id']}~p{s}": (f"gen:{r['id']}", t) for r in raw for s, t in enumerate(r["perturbations"], 1)
                if t}
    got = store.frame("rqeval_items", {"dataset": "gen"})
    assert [tuple(None if pd.isna(v) else v for v in row) for row in got.itertuples(index=False)] == \
        ref.rqeval_items(questions, variants)

    spec = RunSpec("rqeval", "1.0", "tiny", "local", "gen", Sampling(n=2), "t" * 64)
    run_id, _ = open_run(store, spec)
    store.write_nodes("Learner", pd.DataFrame([{"id": "model:tiny", "kind": "model", "localId": "tiny"}]))
    rows = pd.DataFrame({"id": ["r1", "r2", "r3"], "question": ["gen:i0", "gen:i0", "gen:i1"],
                         "sampleIndex": [0, 1, 0],
                         "text": ["a. b.", "c", None], "extracted": ["4", None, None], "correct": [True, False, False],
                         "tokensOut": [7, 3, None], "ls": [0.5, None, None], "stepPairs": [2, None, None],
                         "contradictions": [1, None, None], "nliBackend": ["llm:x", None, None],
                         "ss": [0.8, None, None]})
    write_responses(store, run_id, "model:tiny", rows)
    got = store.frame("rqeval_responses", {"runId": run_id})
    columns = ["responseId", "questionId", "sampleIndex", "text", "extracted", "correct", "tokensOut", "ls",
               "stepPairs", "contradictions", "nliBackend", "ss"]
    want = rows.rename(columns={"id": "responseId", "question": "questionId"})[columns]
    clean = [tuple(None if pd.isna(v) else v for v in row) for row in got[columns].itertuples(index=False)]
    assert clean == [tuple(None if pd.isna(v) else v for v in row) for row in want.itertuples(index=False)]

    scores = pd.DataFrame({"from_id": ["model:tiny"], "to_id": ["gen"], "evaluator": ["rqeval"],
                           "runId": [run_id], "items": [11], "cq": [0.5], "cs": [0.25], "rs": [0.0], "ls": [1.0],
                           "es": [0.3], "ss": [0.9]})
    store.write_relationships("SCORED_ON", "Learner", "Dataset", scores)
    got = store.frame("rqeval_scores", {"evaluator": "rqeval"})
    assert got.values.tolist() == [["tiny", "gen", run_id, 11, 0.5, 0.25, 0.0, 1.0, 0.3, 0.9]]
    assert store.frame("rqeval_scores", {"evaluator": "other"}).empty


def test_parity_nextstep_run_queries(store):
    """A nextstep run's record and its attempts read back as written (responses without a cellKey are not)."""
    from kstp.inference.backend import Sampling
    from kstp.inference.runs import RunSpec, open_run, write_responses

    store.write_nodes("Learner", pd.DataFrame([{"id": "model:m", "kind": "model"}]))
    spec = RunSpec("nextstep", "1.0", "m", "local", "cat", Sampling(), "t" * 64, {"orders": 2})
    run_id, _ = open_run(store, spec)
    rows = pd.DataFrame({"id": ["c2:0", "c1:1", "c1:0", "other"], "cellKey": ["c2", "c1", "c1", None],
                         "attempt": [0, 1, 0, None], "condition": ["P1", "P0", "P0", None],
                         "presentation": [1, 0, 0, None], "verdict": ["valid", "invalid", "missing", None],
                         "text": ["{}", "x", None, "y"], "precision": [0.5, 0.0, None, None]})
    write_responses(store, run_id, "model:m", rows)
    record = store.frame("run_by_id", {"runId": run_id}).iloc[0]
    assert (record["evaluator"], record["model"], record["dataset"]) == ("nextstep", "m", "cat")
    assert json.loads(record["config"]) == spec.config()
    assert store.frame("run_by_id", {"runId": "absent"}).empty
    got = store.frame("nextstep_responses", {"runId": run_id})
    assert got[["responseId", "cellKey", "attempt", "condition", "verdict"]].values.tolist() == \
        ref.nextstep_attempts(rows)


# ---- paper 1 NB2 and §3.2 queries ------------------------------------------------------------
#: Checked by the two tests below, not by check_all.
RUN_QUERIES.update({"exemplar_pool", "scaffolding_responses", "framework_outline", "concept_examples",
                    "concept_links", "evaluator_runs"})


def test_parity_scaffolding_and_annotation_queries(store):
    """Exemplar pool, scaffolding responses and concept links read back exactly what was written."""
    from kstp.inference.backend import Sampling
    from kstp.inference.runs import RunSpec, open_run, write_responses

    edges, qc, answers = generated(7, questions=12)
    build(store, edges, qc, answers)
    rng = random.Random(7)
    questions = sorted(qc)
    written = pd.DataFrame({"id": questions, "text": [f"text {q}" for q in questions],
                            "answer": [str(rng.randint(0, 9)) for _ in questions],
                            "answerType": [rng.choice(["number", "choice", None]) for _ in questions],
                            "solution": [rng.choice([None, f"because {q}"]) for q in questions],
                            "embedding": [[rng.random() for _ in range(4)] if i % 3 else None
                                          for i, _ in enumerate(questions)],
                            "embeddingModel": [("m" if i % 3 else None) for i, _ in enumerate(questions)]})
    store.write_nodes("Question", written)
    pool = store.frame("exemplar_pool", {"dataset": DATASET})
    assert pool["questionId"].tolist() == questions  # position order
    for column in ("text", "answer", "answerType", "solution", "embeddingModel"):
        assert [None if pd.isna(v) else v for v in pool[column]] == [None if pd.isna(v) else v
                                                                     for v in written[column]]
    assert [None if v is None else list(v) for v in pool["embedding"]] == written["embedding"].tolist()
    links = [(q, c) for q, cs in qc.items() for c in sorted(cs)]
    relabelled = pd.DataFrame(links[::2], columns=["from_id", "to_id"]).assign(source="llm:m", runId="r1")
    store.write_relationships("ASSESSES", "Question", "Concept", relabelled)
    got = store.frame("concept_links", {"dataset": DATASET})
    want = {(q, c, "llm:m" if k % 2 == 0 else None, "r1" if k % 2 == 0 else None) for k, (q, c) in enumerate(links)}
    assert {tuple(None if pd.isna(v) else v for v in row) for row in got.itertuples(index=False)} == want
    run_id, _ = open_run(store, RunSpec("scaffolding", "1.0", "tiny", "local", DATASET, Sampling(), "t" * 64))
    rows = pd.DataFrame({"id": ["k1", "k2", "k3"], "question": [questions[0], questions[0], questions[1]],
                         "sampleIndex": [0, 0, 0], "strategy": ["none", "prerequisite", "random"],
                         "exemplars": [[], questions[2:5], questions[5:8]], "correct": [True, False, None]})
    write_responses(store, run_id, "l00", rows)
    got = store.frame("scaffolding_responses", {"runId": run_id})
    assert got["responseId"].tolist() == ["k1", "k2", "k3"]  # question, then strategy order
    assert [list(e) for e in got["exemplars"]] == [[], questions[2:5], questions[5:8]]
    assert got["strategy"].tolist() == ["none", "prerequisite", "random"]
    other, _ = open_run(store, RunSpec("scaffolding", "1.0", "big", "openai", DATASET, Sampling(), "t" * 64))
    open_run(store, RunSpec("answers", "1.0", "big", "openai", DATASET, Sampling(), "t" * 64))
    runs = store.frame("evaluator_runs", {"evaluator": "scaffolding", "dataset": DATASET})
    assert runs[["runId", "model", "status"]].values.tolist() == [[other, "big", "running"],
                                                                  [run_id, "tiny", "running"]]


def test_parity_real_coherence_map_outline_and_examples(store, data_root):
    from kstp.loaders.standards import load_standards

    path = data_root / "standards/nys_concepts.json"
    load_standards(store, path)
    raw = json.loads(path.read_text())
    outline = store.frame("framework_outline", {"framework": "ccss"})
    assert as_set(outline, "clusterId", "clusterName", "domainName", "grade", "conceptId", "code") == \
        ref.framework_outline(raw, "ccss")
    assert len(outline) == 480 and outline["description"].notna().all()
    examples = store.frame("concept_examples", {"framework": "ccss"})
    assert as_set(examples, "conceptId", "code") == ref.concept_examples(raw, "ccss")
    assert len(examples) == 326


def test_parity_question_prerequisites_on_a_dense_lattice(store):
    """13 layers of 4 concepts, every concept linked to the whole next layer: 4^12 paths from
    top to bottom (the path-enumerating form took 20 GB on Ladybug), 52 * 52 closure pairs."""
    layers = [[f"c{layer:02d}_{k}" for k in range(4)] for layer in range(13)]
    edges = {(a, b) for upper, lower in zip(layers[:-1], layers[1:], strict=True) for a in upper for b in lower}
    qc = {f"q{c}": {c} for layer in layers for c in layer} | {"qmix": {"c00_0", "c05_1"}}
    build(store, edges, qc, {})
    for reflexive in (False, True):
        got = store.frame("question_prerequisites", {"dataset": DATASET, "reflexive": reflexive})
        assert as_set(got, "fromId", "toId") == ref.eq1(qc, edges, reflexive)
    # by hand: 16 pairs per pair of layers (78), qmix before layers 6-12 (28), after layers 0-4 (20);
    # reflexive adds qc05_1 <-> qmix
    assert len(ref.eq1(qc, edges, False)) == 16 * 78 + 28 + 20
    assert len(ref.eq1(qc, edges, True)) == 16 * 78 + 28 + 20 + 2


# ---- BLIM (issue 15) ---------------------------------------------------------------------------
#: Checked by test_parity_blim_queries, not by check_all.
RUN_QUERIES.update({"blim_states", "blim_learners", "blim_item_parameters", "learned_prerequisites"})


def test_parity_blim_queries(store):
    """A BLIM fit and an IITA relation read back as written; next steps are the item-level outer fringe."""
    from kstp.evaluators.blim import fit_dataset, next_steps, write_fit
    from kstp.evaluators.prerequisites import learn_prerequisites
    from kstp.graph.structures import state_id_of

    rng = random.Random(15)
    qc = {"q1": {"c1"}, "q2": {"c2"}, "q3": {"c1", "c2"}, "q4": {"c3"}}
    answers = {f"l{i:02d}": {q: rng.random() < 0.3 + 0.15 * int(q[1]) for q in qc} for i in range(24)}
    build(store, {("c1", "c2")}, qc, answers)
    derive_question_prerequisites(store, DATASET, "reflexive")
    report = fit_dataset(store, DATASET, "delineated", "ML")
    write_fit(store, report)
    fit = report.fit
    family = [{q for q, x in zip(fit.items, row, strict=True) if x} for row in fit.states]
    ids = [state_id_of(DATASET, s) for s in family]
    got = store.frame("blim_states", {"runId": report.run_id})
    want = {(sid, q) for sid, s in zip(ids, family, strict=True) for q in s} | {(ids[family.index(set())], None)}
    assert {(a, b if isinstance(b, str) else None) for a, b in zip(got["stateId"], got["questionId"],
                                                                    strict=True)} == want
    probability = dict(zip(got["stateId"], got["probability"], strict=False))
    assert [probability[s] for s in ids] == pytest.approx(fit.p_k.tolist())
    learners = store.frame("blim_learners", {"dataset": DATASET}).set_index("learnerId")
    assert list(learners.index) == report.data.learners
    assert learners["stateId"].tolist() == [ids[k] for k in report.learner_state]
    assert learners["posterior"].tolist() == pytest.approx(report.learner_posterior.tolist())
    items = store.frame("blim_item_parameters", {"dataset": DATASET})
    assert items["questionId"].tolist() == list(fit.items)
    assert items["careless"].tolist() == pytest.approx(fit.beta.tolist())
    assert items["guess"].tolist() == pytest.approx(fit.eta.tolist())
    steps = next_steps(store, DATASET)["learners"]
    for row, k in zip(steps, report.learner_state, strict=True):
        assert set(row["nextSteps"]) == ref.item_outer_fringe(family, family[k])
    learned = learn_prerequisites(store, DATASET, "iita")
    stored = store.frame("learned_prerequisites", {"dataset": DATASET, "rule": "iita"})
    assert as_set(stored, "fromId", "toId", "counterexamples", "inEq1") == as_set(
        learned.pairs, "fromId", "toId", "counterexamples", "inEq1")
    eq1 = ref.eq1(qc, {("c1", "c2")}, True)
    assert {(a, b) for a, b, ok in zip(stored["fromId"], stored["toId"], stored["inEq1"], strict=True) if ok} \
        == as_set(stored, "fromId", "toId") & eq1


#: The queries kstp explore added, checked by test_parity_explore_queries.
EXPLORE_QUERIES = {"learner_kinds", "concept_questions", "concepts_questions", "dataset_learner_figures",
                   "learner_answers", "learners_answers", "contradicted_prerequisites", "run_samples",
                   "response_detail", "response_steps", "question_answer_counts"}
RUN_QUERIES |= EXPLORE_QUERIES


@pytest.mark.parametrize("seed", [1, 2])
def test_parity_explore_queries(store, seed):
    """The explorer's queries on a generated graph with a model, its run, stored figures and a trajectory,
    against the rows written (tests/reference.py)."""
    from kstp.inference.runs import write_responses
    from kstp.loaders.cot import Step, Trajectory, write_steps

    edges, qc, answers = generated(seed)
    build(store, edges, qc, answers)
    rng = random.Random(seed)
    questions = sorted(qc)
    pairs = sorted(ref.eq1(qc, edges, False))
    flags = {pair: rng.random() < 0.3 for pair in pairs}
    figures = {pair: (rng.randint(1, 30), rng.randint(0, 9), rng.random(), rng.random() / 2, 0.5 + rng.random() / 2)
               for pair in pairs}
    store.write_relationships("PREREQUISITE_OF", "Question", "Question", pd.DataFrame(
        [{"from_id": a, "to_id": b, "rule": "strict", "contradicted": flags[(a, b)], "attemptedBoth": f[0],
          "counterexamples": f[1], "counterexampleRate": f[2], "counterexampleLow": f[3],
          "counterexampleHigh": f[4]} for (a, b), f in figures.items()]))
    stored = {learner: (rng.random(), rng.random() if rng.random() < 0.8 else None) for learner in sorted(answers)}
    store.write_nodes("Learner", pd.DataFrame([{"id": learner, "accuracy": acc, "psrMicro": micro,
                                                "nAnswered": len(answers[learner])}
                                               for learner, (acc, micro) in stored.items()]))
    store.write_nodes("Learner", pd.DataFrame([{"id": "model:m", "kind": "model", "localId": "m"},
                                               {"id": "g", "kind": "group", "dataset": DATASET}]))
    asked = questions[:6]
    store.write_relationships("ANSWERED", "Learner", "Question", pd.DataFrame(
        [{"from_id": "model:m", "to_id": q, "correct": i % 2 == 0, "runId": "run"} for i, q in enumerate(asked)]))
    store.write_nodes("Run", pd.DataFrame([{"id": "run", "evaluator": "answers", "model": "m", "dataset": DATASET}]))
    responses = pd.DataFrame([{"id": f"r{i}", "question": q, "sampleIndex": 0, "text": f"<b>{i}</b>",
                               "extracted": str(i), "correct": i % 2 == 0, "verdict": "correct" if i % 2 == 0 else
                               "wrong answer", "error": "timeout" if i == 5 else None, "latencyS": 0.25 * i}
                              for i, q in enumerate(asked)])
    write_responses(store, "run", "model:m", responses)
    store.write_nodes("Response", pd.DataFrame([{"id": "n0", "stateId": "s", "condition": "P0"}]))  # no question
    store.write_relationships("IN_RUN", "Response", "Run", pd.DataFrame([{"from_id": "n0", "to_id": "run"}]))
    write_steps(store, {"r0": Trajectory((Step(1, "given", (), "a = 1"), Step(2, "then", (1,), "b = 2"),
                                          Step(3, "so", (1, 2), "\\boxed{3}")))})

    kinds = store.frame("learner_kinds")
    assert dict(zip(kinds["kind"], kinds["learners"], strict=True)) == ref.count_by(
        ["human"] * len(answers) + ["model", "group"])
    concepts = sorted({c for cs in qc.values() for c in cs})[:6]
    for concept in concepts:
        got = store.frame("concept_questions", {"conceptId": concept})
        assert got[["questionId", "datasetId"]].values.tolist() == [[q, DATASET] for q in questions if concept in qc[q]]
    got = store.frame("concepts_questions", {"conceptIds": [*concepts[::-1], "no such concept"]})
    assert got[["conceptId", "questionId", "datasetId"]].values.tolist() == [
        [c, q, DATASET] for c in concepts for q in questions if c in qc[q]]
    got = store.frame("dataset_learner_figures", {"dataset": DATASET}).set_index("learnerId")
    assert sorted(got.index) == sorted([*answers, "g", "model:m"])
    for learner, (acc, micro) in stored.items():
        assert got.loc[learner, "accuracy"] == pytest.approx(acc)
        assert (pd.isna(got.loc[learner, "psrMicro"]) if micro is None else got.loc[learner, "psrMicro"] == micro)
    counted: dict[tuple[str, str], tuple[int, int]] = {}  # question_answer_counts: per question and kind
    for kind, given in [*(("human", a) for a in answers.values()), ("model", {q: i % 2 == 0 for i, q in
                                                                              enumerate(asked)})]:
        for q, ok in given.items():
            n, right = counted.get((q, kind), (0, 0))
            counted[(q, kind)] = (n + 1, right + ok)
    got = store.frame("question_answer_counts", {"dataset": DATASET})
    assert [(r.questionId, r.kind, r.answered, r.correct) for r in got.itertuples()] == [
        (*key, *counted[key]) for key in sorted(counted)]
    for learner in [*sorted(answers)[:4], "model:m"]:
        got = store.frame("learner_answers", {"learnerId": learner})
        given = answers.get(learner) or {q: i % 2 == 0 for i, q in enumerate(asked)}
        assert {(r.questionId, bool(r.correct)) for r in got.itertuples()} == set(given.items())
        assert got["questionId"].tolist() == sorted(given, key=questions.index)
        assert set(got["runId"].dropna()) == ({"run"} if learner == "model:m" else set())
    several = ["model:m", *sorted(answers)[1:5], "nobody", sorted(answers)[1]]  # an unknown id, a repeated one
    got = store.frame("learners_answers", {"learnerIds": several})
    assert got["learnerId"].tolist() == sorted(
        learner for learner in set(several) for _ in (answers.get(learner, {}) if learner != "model:m" else asked))
    for learner, rows in got.groupby("learnerId"):
        given = answers.get(learner) or {q: i % 2 == 0 for i, q in enumerate(asked)}
        assert rows["questionId"].tolist() == sorted(given, key=questions.index)
        assert [bool(c) for c in rows["correct"]] == [given[q] for q in rows["questionId"]]
        assert set(rows["runId"].dropna()) == ({"run"} if learner == "model:m" else set())
    got = store.frame("contradicted_prerequisites", {"dataset": DATASET})
    want = sorted(((a, b) for (a, b), flag in flags.items() if flag), key=lambda p: (-figures[p][3], p))
    assert list(zip(got["fromId"], got["toId"], strict=True)) == want
    assert got["counterexamples"].tolist() == [figures[p][1] for p in want]
    samples = store.frame("run_samples", {"runId": "run"})
    assert samples["responseId"].tolist() == ["n0", *(f"r{i}" for i in range(len(asked)))]
    assert samples["error"].tolist()[-1] == "timeout" and samples["extracted"].tolist()[2] == "1"
    assert samples["questionId"].isna().tolist() == [True, *[False] * len(asked)]
    assert samples["latencyS"].isna().tolist()[0] and samples["latencyS"].tolist()[1:] == [0.25 * i for i in
                                                                                           range(len(asked))]
    detail = store.frame("response_detail", {"responseId": "r3"})
    assert detail[["runId", "evaluator", "learnerId", "questionId"]].values.tolist() == [
        ["run", "answers", "model:m", asked[3]]]
    detail = store.frame("response_detail", {"responseId": "n0"})
    assert detail["runId"].tolist() == ["run"] and detail[["learnerId", "questionId"]].isna().all(axis=None)
    steps = store.frame("response_steps", {"responseId": "r0"})
    assert list(zip(steps["stepId"], steps["parentStepId"].astype(object).where(steps["parentStepId"].notna(), None),
                    strict=True)) == [(1, None), (2, 1), (3, 1), (3, 2)]
    assert store.frame("response_steps", {"responseId": "r1"}).empty


RUN_QUERIES.add("run_export")


def test_parity_run_export(store):
    """Every sample of a run with its question, gold and prompt, in question and sample order (a sample of no
    question first), against the rows written; a sample of another run is not among them."""
    from kstp.inference.runs import write_responses

    build(store, set(), {"q1": set(), "q2": set()}, {})
    store.write_nodes("Question", pd.DataFrame({"id": ["q1", "q2"], "text": ["one?", "two?"], "answer": ["1", "2"]}))
    store.write_nodes("Learner", pd.DataFrame([{"id": "model:m", "kind": "model"}]))
    store.write_nodes("Run", pd.DataFrame([{"id": run, "evaluator": "answers"} for run in ("run", "other")]))
    chat = json.dumps([{"role": "user", "content": "two?"}])
    rows = pd.DataFrame([
        {"id": "k3", "question": "q2", "sampleIndex": 1, "text": "2", "correct": True, "prompt": chat, "seed": 43,
         "tokensIn": 3, "tokensOut": 1, "latencyS": 0.25},
        {"id": "k1", "question": "q1", "sampleIndex": 0, "text": None, "error": "empty: no content",
         "correct": False, "seed": 42},
        {"id": "k2", "question": "q2", "sampleIndex": 0, "text": "3", "extracted": "3", "correct": False,
         "prompt": chat, "seed": 42}])
    write_responses(store, "run", "model:m", rows)
    write_responses(store, "other", "model:m", pd.DataFrame([{"id": "k9", "question": "q1", "sampleIndex": 0}]))
    store.write_nodes("Response", pd.DataFrame([{"id": "n0", "stateId": "s", "sampleIndex": 0}]))  # no question
    store.write_relationships("IN_RUN", "Response", "Run", pd.DataFrame([{"from_id": "n0", "to_id": "run"}]))
    got = store.frame("run_export", {"runId": "run"})
    got = got.astype(object).where(got.notna(), None)
    assert got["responseId"].tolist() == ["n0", "k1", "k2", "k3"]
    assert got[["questionId", "localId", "dataset", "question", "gold"]].values.tolist() == [
        [None] * 5, ["q1", "q1", DATASET, "one?", "1"], ["q2", "q2", DATASET, "two?", "2"],
        ["q2", "q2", DATASET, "two?", "2"]]
    assert got["prompt"].tolist() == [None, None, chat, chat] and got["error"].tolist()[1] == "empty: no content"
    assert got[["sampleIndex", "seed", "correct", "tokensOut", "latencyS"]].values.tolist()[3] == [1, 43, True, 1,
                                                                                                    0.25]


#: Adaptive assessments (issue 46), checked by test_parity_assessment_queries.
RUN_QUERIES |= {"assessment_run", "learner_assessments", "learners_assessments"}


def test_parity_assessment_queries(store):
    """Assessment runs of two learners (two started at the same second: the run id decides), a run of another
    evaluator: each query equals the Python reference of what was written."""
    rng = random.Random(46)
    runs = [{"id": f"assess:gen:l{i % 2}:{i:02d}", "evaluator": "assess", "learner": f"gen:l{i % 2}",
             "dataset": DATASET, "status": rng.choice(["finished", "running", "interrupted"]),
             "config": json.dumps({"n": i}), "assessment": json.dumps({"path": list(range(i))}), "asked": i,
             "predictedAccuracy": rng.random(), "startedAt": f"2026-12-0{1 + i % 3}T10:00:00", "finishedAt": None}
            for i in range(7)]
    runs.append({**runs[0], "id": "blim:gen:x", "evaluator": "blim"})
    store.write_nodes("Run", pd.DataFrame(runs).astype(object))
    assess = [r for r in runs if r["evaluator"] == "assess"]
    together = store.run("learners_assessments", {"learners": ["gen:l1", "gen:none", "gen:l0"]})
    for learner in ("gen:l0", "gen:l1", "gen:none"):
        got = store.run("learner_assessments", {"learner": learner})
        want = sorted(sorted((r for r in assess if r["learner"] == learner), key=lambda r: r["id"]),
                      key=lambda r: r["startedAt"], reverse=True)  # newest first, then by run id
        assert [(r["runId"], r["asked"], r["status"], r["assessment"], r["startedAt"]) for r in got] == \
            [(r["id"], r["asked"], r["status"], r["assessment"], r["startedAt"]) for r in want]
        assert [{k: v for k, v in r.items() if k != "learner"} for r in together if r["learner"] == learner] == got
    assert [r["learner"] for r in together] == sorted(r["learner"] for r in assess)  # by learner
    for r in runs:
        got = store.run("assessment_run", {"runId": r["id"]})
        if r["evaluator"] != "assess":
            assert got == []
            continue
        keys = ("learner", "dataset", "status", "config", "assessment", "asked", "startedAt")
        assert len(got) == 1 and {k: got[0][k] for k in keys} == {k: r[k] for k in keys}
        assert got[0]["predictedAccuracy"] == pytest.approx(r["predictedAccuracy"])
