"""PSR by hand on the toy learners, and against the authors' loop and Cypher on real data."""

from __future__ import annotations

import json
import math
import random
import re

import pandas as pd
import pytest

from kstp.evaluators import psr
from kstp.graph.structures import derive_question_prerequisites
from tests import reference as ref
from tests.cli.test_cli import kstp, toy_files  # noqa: F401 (fixtures)


@pytest.fixture
def scored(toy):
    derive_question_prerequisites(toy, "toy", "strict")
    return toy, psr.evaluate_dataset(toy, "toy", min_prerequisites=3)


def test_psr_hand_computed_per_learner(scored):
    """L1: q2 1/1, q5 2/3 (q4 unattempted) -> micro 3/4, macro 5/6.
    L2: q2 0/1, q4 0/1, q6 2/3 (q1 wrong, q3/q5 unattempted) -> micro 2/5, macro 2/9.
    L3: q1 has no prerequisite -> no PSR; q8 has no concept: no PSR, but accuracy counts it (the release's
    eval_acc counts every answered question): q1 right, q8 wrong -> 1/2."""
    _, result = scored
    rows = result.learners
    assert rows.loc["toy:L1", ["psrMicro", "psrMacro", "accuracy"]].tolist() == pytest.approx([3 / 4, 5 / 6, 3 / 4])
    assert rows.loc["toy:L2", ["psrMicro", "psrMacro", "accuracy"]].tolist() == pytest.approx([2 / 5, 2 / 9, 4 / 5])
    assert rows.loc["toy:L1", "questionsScored"] == 2 and rows.loc["toy:L2", "pairs"] == 5
    assert math.isnan(rows.loc["toy:L3", "psrMicro"])
    assert rows.loc["toy:L3", ["answered", "accuracy"]].tolist() == [2, 0.5]
    assert result.summary()[0]["accuracyQuestions"] == "answered"


def test_psr_paper_denominator_hand_computed(toy):
    """Eq. 2 divides by |Pre(q)|: Pre(q5) = {q1..q4}, Pre(q6) = {q1..q5}.
    L1: q2 1/1, q5 2/4 -> micro 3/5, macro 3/4. L2: q2 0/1, q4 0/1, q6 2/5 -> micro 2/7, macro 2/15.
    Threshold 3: L1/q5 = .5 and L2/q6 = .4 (an exact edge), both in [.4,.6)."""
    derive_question_prerequisites(toy, "toy", "strict")
    result = psr.evaluate_dataset(toy, "toy", min_prerequisites=3, denominator="paper")
    rows = result.learners
    assert rows.loc["toy:L1", ["psrMicro", "psrMacro", "pairs"]].tolist() == pytest.approx([3 / 5, 3 / 4, 5])
    assert rows.loc["toy:L2", ["psrMicro", "psrMacro", "pairs"]].tolist() == pytest.approx([2 / 7, 2 / 15, 7])
    [summary] = result.summary()
    assert summary["denominator"] == "paper" and summary["pairsInDistribution"] == 2
    assert [summary[f"psr {b}"] for b in psr.BUCKETS] == [0, 0, 1, 0, 0, 0]


def test_psr_denominators_differ_on_unattempted_prerequisites():
    """c needs a and b; the learner answered only c, correctly: the release scores nothing, Eq. 2 gives 0/2."""
    answers = pd.DataFrame({"learnerId": ["m", "m", "n"], "questionId": ["c", "x", "a"], "correct": [True, True, True]})
    pre = pd.DataFrame({"fromId": ["a", "b"], "toId": ["c", "c"]})
    pairs = psr.score_pairs(answers, pre)
    assert pairs.values.tolist() == [["m", "c", 2, 0, 0]]
    release, paper = psr.aggregate(answers, pairs), psr.aggregate(answers, pairs, "paper")
    assert math.isnan(release.loc["m", "psrMicro"]) and release.loc["m", "questionsScored"] == 0
    assert paper.loc["m", ["psrMicro", "psrMacro", "questionsScored", "pairs"]].tolist() == [0, 0, 1, 2]
    assert psr.distribution(pairs, 1).isna().all() and psr.distribution(pairs, 1, "paper").tolist()[0] == 1.0
    with pytest.raises(ValueError, match="unknown PSR denominator 'pape'; choose from release, paper"):
        psr.aggregate(answers, pairs, "pape")


@pytest.mark.parametrize("unannotated", [True, False])
def test_psr_accuracy_answered_or_annotated_hand_computed(toy, unannotated):
    """Only L3 answered the unannotated q8 (wrong), beside q1 (right). Accuracy over every answered question
    (the release's eval_acc): L3 1/2, mean over L1 3/4, L2 4/5, L3 1/2 = 41/60; over the annotated ones
    (Appendix B): L3 1/1, mean (3/4 + 4/5 + 1) / 3 = 51/60. PSR is the same either way, and whether PSR
    leaves unannotated questions out does not change accuracy."""
    derive_question_prerequisites(toy, "toy", "strict")
    answered = psr.evaluate_dataset(toy, "toy", exclude_unannotated=unannotated, write_back=False)
    annotated = psr.evaluate_dataset(toy, "toy", exclude_unannotated=unannotated, write_back=False,
                                     accuracy="annotated")
    assert answered.learners.loc["toy:L3", ["answered", "correct"]].tolist() == [2, 1]
    assert annotated.learners.loc["toy:L3", ["answered", "correct"]].tolist() == [1, 1]
    [row], [other] = answered.summary(), annotated.summary()
    assert (row["accuracy"], other["accuracy"]) == (pytest.approx(41 / 60), pytest.approx(51 / 60))
    assert (row["accuracyQuestions"], other["accuracyQuestions"]) == ("answered", "annotated")
    assert (row["psrMicro"], row["psrMacro"]) == (other["psrMicro"], other["psrMacro"])
    with pytest.raises(ValueError, match="unknown accuracy 'all'; choose from answered, annotated"):
        psr.evaluate_dataset(toy, "toy", accuracy="all")


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("denominator", psr.DENOMINATORS)
def test_psr_equals_reference_on_generated_logs(seed, denominator):
    """Random DAG-shaped prerequisites over 150 questions (more than two 64-bit words) and 60 learners."""
    rng = random.Random(seed)
    questions = [f"q{i:03d}" for i in range(150)]
    edges = {(questions[a], questions[b]) for a in range(150) for b in range(a + 1, 150) if rng.random() < 0.1}
    answers = {f"l{i}": {q: rng.random() < 0.6 for q in rng.sample(questions, rng.randint(1, 150))}
               for i in range(60)}
    frame = pd.DataFrame([(learner, q, ok) for learner, r in answers.items() for q, ok in r.items()],
                         columns=["learnerId", "questionId", "correct"])
    pairs = psr.score_pairs(frame, pd.DataFrame(sorted(edges), columns=["fromId", "toId"]))
    got = psr.aggregate(frame, pairs, denominator)
    want = (ref.psr if denominator == "release" else ref.psr_paper)(answers, edges)
    assert set(got.dropna(subset=["psrMicro"]).index) == set(want)
    for learner, (micro, macro, scored, total) in want.items():
        assert got.loc[learner, ["psrMicro", "psrMacro"]].tolist() == pytest.approx([micro, macro], abs=1e-12)
        assert got.loc[learner, ["questionsScored", "pairs"]].tolist() == [scored, total]
    buckets = ref.psr_buckets if denominator == "release" else ref.psr_paper_buckets
    for threshold in (1, 3, 5):
        counts = buckets(answers, edges, threshold)
        shares = psr.distribution(pairs, threshold, denominator)
        assert shares.tolist() == pytest.approx([counts.get(k, 0) / sum(counts.values()) for k in range(6)])
        assert got[[f"pairs {b}" for b in psr.BUCKETS]].sum().tolist() == [buckets(answers, edges, 5).get(k, 0)
                                                                             for k in range(6)]


def test_psr_written_back_on_learners(scored):
    store, _ = scored
    got = store._execute("MATCH (l:Learner) RETURN l.id AS id, l.psrMicro AS micro, l.nAnswered AS n ORDER BY id", {})
    assert got["n"].tolist() == [4, 5, 2]  # L3: q8 has no concept, but accuracy counts it (the release)
    assert got["micro"].iloc[:2].tolist() == pytest.approx([0.75, 0.4])
    assert math.isnan(got["micro"].iloc[2])


def test_distribution_threshold_one_by_hand():
    pairs = pd.DataFrame({"observed": [1, 3, 1, 1, 3], "satisfied": [1, 2, 0, 0, 2]})
    assert psr.distribution(pairs, 1).tolist() == [0.4, 0.0, 0.0, 0.4, 0.0, 0.2]


def test_distribution_bucket_edges_are_exact():
    """3/5 = 0.6 belongs to [.6,.8): float division would put 0.6 - epsilon below it."""
    pairs = pd.DataFrame({"observed": [5, 5, 10, 5], "satisfied": [3, 1, 2, 4]})
    assert psr.distribution(pairs, 5).tolist() == [0.0, 0.5, 0.0, 0.25, 0.25, 0.0]


def test_no_prerequisites_gives_no_psr():
    answers = pd.DataFrame({"learnerId": ["l"], "questionId": ["a"], "correct": [True]})
    pairs = psr.score_pairs(answers, pd.DataFrame(columns=["fromId", "toId"]))
    learners = psr.aggregate(answers, pairs)
    assert learners.loc["l", "accuracy"] == 1.0 and math.isnan(learners.loc["l", "psrMicro"])
    assert psr.distribution(pairs).isna().all()


@pytest.mark.parametrize("dataset, responses_file", [("probability_pks", "responses_full.csv"),
                                                     ("frcsub", "responses.csv")])
def test_psr_real_learners_equal_authors_loop_and_cypher(store, data_root, dataset, responses_file):
    from kstp.loaders import items, responses

    folder = data_root / "responses" / dataset
    items.write_items(store, items.read_items_csv(folder / "items.csv", dataset, folder / "qmatrix.csv"))
    known = set(store.frame("dataset_questions", {"dataset": dataset})["localId"])
    responses.write_answers(store, dataset, responses.read_wide(folder / responses_file, known), responses_file)
    derive_question_prerequisites(store, dataset, "reflexive")
    result = psr.evaluate_dataset(store, dataset)
    answers = store.frame("answers", {"dataset": dataset})
    by_learner: dict[str, dict[str, bool]] = {}
    for learner, question, correct in answers.itertuples(index=False):
        by_learner.setdefault(learner, {})[question] = bool(correct)
    edges = set(map(tuple, store.frame("question_prerequisite_edges", {"dataset": dataset})[["fromId", "toId"]].values))
    want = ref.psr(by_learner, edges)
    got = result.learners.dropna(subset=["psrMicro"])
    assert set(got.index) == set(want)
    for learner, (micro, macro, scored, pairs) in want.items():
        assert got.loc[learner, "psrMicro"] == pytest.approx(micro, abs=1e-12)
        assert got.loc[learner, "psrMacro"] == pytest.approx(macro, abs=1e-12)
        assert (got.loc[learner, "questionsScored"], got.loc[learner, "pairs"]) == (scored, pairs)
    cypher = store.frame("psr_by_learner", {"dataset": dataset}).set_index("learnerId")
    assert (cypher["psrMicro"] - got["psrMicro"]).abs().max() < 1e-12
    # The mean correct rates the data's provenance gives: .745 and .534.
    assert round(result.summary()[0]["accuracy"], 3) == {"probability_pks": 0.745, "frcsub": 0.534}[dataset]
    # The README's figures for Eq. 1's rules (paper 1 table): reflexive on these skill maps, and strict, which
    # derives no pair where skills have no prerequisite edges, so that no learner has a PSR
    row = result.summary()[0]
    assert (len(edges), row["learnersWithPsr"], round(row["psrMicro"], 3), round(row["psrMacro"], 3)) == {
        "probability_pks": (29, 485, 0.852, 0.854), "frcsub": (101, 513, 0.721, 0.728)}[dataset]
    assert derive_question_prerequisites(store, dataset, "strict").edges == 0
    assert psr.evaluate_dataset(store, dataset, write_back=False).learners["psrMicro"].notna().sum() == 0


def test_repeated_answer_last_one_wins_in_direct_use():
    answers = pd.DataFrame({"learnerId": "l", "questionId": ["a", "c", "a"], "correct": [True, True, False]})
    pre = pd.DataFrame({"fromId": ["a"], "toId": ["c"]})
    pairs = psr.score_pairs(answers, pre)
    assert pairs[["observed", "satisfied"]].values.tolist() == [[1, 0]]
    assert psr.aggregate(answers, pairs).loc["l", ["answered", "correct"]].tolist() == [2, 1]


@pytest.mark.parametrize("packed", [True, False])
@pytest.mark.parametrize("batch", [1, 2])
def test_psr_learner_batches_give_the_same_result(scored, batch, packed, monkeypatch):
    """Reading the answers one or two learners at a time changes nothing (ranges cover every
    learner once), packed into one integer per answer or, where node keys would not fit, not."""
    store, whole = scored
    monkeypatch.setattr(psr, "_packable", lambda learner_keys, question_keys: packed)
    parts = psr.evaluate_dataset(store, "toy", min_prerequisites=3, write_back=False, batch=batch).learners
    pd.testing.assert_frame_equal(parts.sort_index(), whole.learners.sort_index())


def test_node_keys_past_the_packing_are_read_unpacked():
    """answer_codes_in_range packs learner key * 2^33 + question key * 2 + correct into an int64."""
    questions = pd.Index([0, 2**32 - 1])
    assert psr._packable(pd.Series([0, 2**30 - 1]), questions)
    assert psr._packable(pd.Series([], dtype="int64"), questions)
    assert not psr._packable(pd.Series([2**30]), questions)
    assert not psr._packable(pd.Series([0]), pd.Index([2**32]))
    assert not psr._packable(pd.Series([-1]), questions)
    assert not psr._packable(pd.Series(["toy:L1"]), questions)


VT_CONCEPTS = "id,code,description\nA,A,count\nB,B,add\nC,C,multiply\n"
VT_EDGES = "from_id,to_id\nA,B\nB,C\n"
# q3 is not verified: the verified subset is q1, q2, q4 with the pairs q1->q2, q1->q4, q2->q4
VT_ITEMS = ['{"id": "q1", "text": "1?", "answer": "1", "concepts": ["A"], "verified": true}',
            '{"id": "q2", "text": "2?", "answer": "2", "concepts": ["B"], "verified": true}',
            '{"id": "q3", "text": "3?", "answer": "3", "concepts": ["C"]}',
            '{"id": "q4", "text": "4?", "answer": "4", "concepts": ["C"], "verified": true}']
VT_ANSWERS = "learner,q1,q2,q3,q4\nL1,1,1,0,1\nL2,0,1,1,0\n"


@pytest.fixture
def verified(store, tmp_path):
    from kstp.loaders import items, responses
    from kstp.loaders.standards import load_standards

    (tmp_path / "c.csv").write_text(VT_CONCEPTS)
    (tmp_path / "e.csv").write_text(VT_EDGES)
    (tmp_path / "vt.jsonl").write_text("\n".join(VT_ITEMS) + "\n")
    (tmp_path / "a.csv").write_text(VT_ANSWERS)
    load_standards(store, tmp_path / "c.csv", tmp_path / "e.csv", "vt")
    items.write_items(store, items.read_items_jsonl(tmp_path / "vt.jsonl", "vt", "vt", {"A", "B", "C"}))
    responses.write_answers(store, "vt", responses.read_wide(tmp_path / "a.csv", {"q1", "q2", "q3", "q4"}), "a")
    derive_question_prerequisites(store, "vt", "strict")
    return store


def test_psr_verified_subset_hand_computed(verified):
    """Paper 1 Table 3's shape on a toy. Full (Pre(q2) = {q1}, Pre(q3) = Pre(q4) = {q1, q2}):
    L1 q2 1/1, q4 2/2 -> micro 1, macro 1, acc 3/4; L2 q2 0/1, q3 1/2 -> micro 1/3, macro 1/4, acc 1/2.
    Verified (q3's links unchecked: no pair has it): L1 q2 1/1, q4 2/2; L2 q2 0/1, q3 without
    prerequisites. Accuracy stays the full set's, as Table 3's Acc column repeats Table 2's.
    PSR = 1 share: full 2 of 4 pairs, verified 2 of 3."""
    [full] = psr.evaluate_dataset(verified, "vt", min_prerequisites=1).summary()
    [subset] = psr.evaluate_dataset(verified, "vt", min_prerequisites=1, subset="verified").summary()
    figures = ["accuracy", "psrMicro", "psrMacro", "psr 1.0"]
    assert [full[f] for f in figures] == pytest.approx([5 / 8, 2 / 3, 5 / 8, 1 / 2])
    assert [subset[f] for f in figures] == pytest.approx([5 / 8, 1 / 2, 1 / 2, 2 / 3])
    assert [subset[f"psr {b}"] for b in psr.BUCKETS] == pytest.approx([1 / 3, 0, 0, 0, 0, 2 / 3])
    assert (full["subset"], subset["subset"], subset["pairsInDistribution"]) == ("full", "verified", 3)
    # §5.1's prerequisites per target: full 1 + 2 + 1 + 2 over 4 scored questions, verified 1 + 2 + 1 over 3
    assert (full["prerequisitesPerTarget"], subset["prerequisitesPerTarget"]) == pytest.approx((6 / 4, 4 / 3))


def test_psr_verified_subset_needs_verified_links(toy):
    from kstp.errors import UnknownIdError

    with pytest.raises(UnknownIdError, match="dataset 'toy' has no verified concept link"):
        psr.evaluate_dataset(toy, "toy", subset="verified")
    with pytest.raises(ValueError, match="unknown question subset 'checked'; choose from full, verified"):
        psr.evaluate_dataset(toy, "toy", subset="checked")


def test_cli_psr_subset_verified_prints_table3_shape(graph_location, tmp_path):
    """`kstp evaluate psr --subset verified` on the toy of the test above: the same figures, and the
    summary keeps the full row beside the verified one."""
    from click.testing import CliRunner

    from kstp.cli.main import cli

    def kstp(*args):  # noqa: F811 (this test's own runner)
        return CliRunner().invoke(cli, ["--graph", graph_location, *map(str, args)])

    (tmp_path / "c.csv").write_text(VT_CONCEPTS)
    (tmp_path / "e.csv").write_text(VT_EDGES)
    (tmp_path / "vt.jsonl").write_text("\n".join(VT_ITEMS) + "\n")
    (tmp_path / "a.csv").write_text(VT_ANSWERS)
    assert kstp("ingest", "standards", tmp_path / "c.csv", "--edges", tmp_path / "e.csv", "--framework",
                "vt").exit_code == 0
    assert kstp("ingest", "items", tmp_path / "vt.jsonl", "--dataset", "vt", "--framework", "vt").exit_code == 0
    assert kstp("ingest", "responses", tmp_path / "a.csv", "--dataset", "vt").exit_code == 0
    assert kstp("derive", "question-prerequisites", "--dataset", "vt").exit_code == 0
    out = tmp_path / "out"
    assert kstp("evaluate", "psr", "--dataset", "vt", "--min-prerequisites", "1", "--out", out).exit_code == 0
    result = kstp("evaluate", "psr", "--dataset", "vt", "--min-prerequisites", "1", "--subset", "verified",
                  "--out", out, "--json")
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)
    assert [row[f] for f in ("subset", "accuracy", "psrMicro", "psrMacro", "psr 1.0")] == \
        pytest.approx(["verified", 5 / 8, 1 / 2, 1 / 2, 2 / 3])
    summary = json.loads((out / "psr_summary.json").read_text())
    assert [r["subset"] for r in summary] == ["full", "verified"]
    assert [r["psr 1.0"] for r in summary] == pytest.approx([1 / 2, 2 / 3])
    table = kstp("evaluate", "psr", "--dataset", "vt", "--subset", "verified", "--out", out)
    assert "Table 3 shape; verified subset" in table.stdout


# ---- uncertainty (issue 34): per question, bootstrap intervals, ability groups ------------------------
def test_psr_per_question_hand_computed(scored):
    """Human learners who answered each target correctly (release denominator): q2: L1 1/1, L2 0/1;
    q4: L2 0/1; q5: L1 2/3; q6: L2 2/3. Most broken first: q4 (0), q2 (1/2), then q5, q6 (2/3) by id."""
    _, result = scored
    table = psr.question_table(result)
    assert table["questionId"].tolist() == ["toy:q4", "toy:q2", "toy:q5", "toy:q6"]
    assert table["learners"].tolist() == [1, 2, 1, 1]
    assert table["psrMacro"].tolist() == pytest.approx([0, 1 / 2, 2 / 3, 2 / 3])
    assert table["psrMicro"].tolist() == pytest.approx([0, 1 / 2, 2 / 3, 2 / 3])
    assert table["broken"].tolist() == pytest.approx([1, 1 / 2, 1, 1])
    assert table["prerequisitesPerLearner"].tolist() == pytest.approx([1, 1, 3, 3])


def _exact_quantiles(values: list[float], levels: tuple[float, ...]) -> list[float]:
    """Quantiles of the mean over all n^n equally likely resamples of ``values`` (brute force)."""
    from itertools import product

    means = sorted(sum(values[i] for i in draw) / len(values) for draw in product(range(len(values)),
                                                                                  repeat=len(values)))
    return [means[min(int(level * len(means)), len(means) - 1)] for level in levels]


def test_bootstrap_interval_matches_the_exact_bootstrap_distribution():
    # five learners: the 5^5 = 3,125 resamples enumerated; the Monte Carlo interval of 20,000 draws must
    # fall between the exact 2 % and 3 % (97 % and 98 %) quantiles
    values = [0.2, 0.5, 0.55, 0.9, 1.0]
    learners = pd.DataFrame({"accuracy": values, "psrMicro": values, "psrMacro": values})
    ci = psr.bootstrap(learners, 20_000, seed=3)
    low = _exact_quantiles(values, (0.02, 0.03))
    high = _exact_quantiles(values, (0.97, 0.98))
    for figure in ("accuracy", "psrMicro", "psrMacro"):
        assert low[0] <= ci[f"{figure}Low"] <= low[1] and high[0] <= ci[f"{figure}High"] <= high[1]
    assert (ci["bootstrapSamples"], ci["ciLevel"]) == (20_000, 0.95)
    # a learner without a PSR counts in accuracy only; one learner has no spread over learners
    single = psr.bootstrap(learners.iloc[:1], 100)
    assert single["psrMicroLow"] is None and single["accuracyHigh"] is None
    with pytest.raises(ValueError, match="at least 2 samples"):
        psr.bootstrap(learners, 1)


def test_a_long_bootstrap_tells_its_progress_a_short_one_stays_quiet(monkeypatch):
    """Issue 43: --bootstrap 10000000 ran 253 s without a line. progress(done) about once a second (here at
    once: every 1,024 resamples) and at the end; the default 1,000 resamples, under a second, never."""
    from kstp.evaluators import psr_intervals

    values = [0.2, 0.5, 0.9]
    learners = pd.DataFrame({"accuracy": values, "psrMicro": values, "psrMacro": values})
    quiet: list[int] = []
    plain = psr.bootstrap(learners, 1000, seed=2, progress=quiet.append)
    assert quiet == []
    monkeypatch.setattr(psr_intervals, "PROGRESS_EVERY_S", 0.0)
    told: list[int] = []
    ci = psr.bootstrap(learners, 5000, seed=2, progress=told.append)
    assert told == [1024, 2048, 3072, 4096, 5000]
    assert ci == psr.bootstrap(learners, 5000, seed=2)  # telling changes no draw
    assert plain == psr.bootstrap(learners, 1000, seed=2)
    # summarize counts over the rows that resample: the humans' (3 learners), not the model's (one learner)
    frame = learners.assign(kind=["human", "human", "model"], answered=1, correct=1, questionsScored=1, pairs=1,
                            **{c: 0 for c in psr._COUNTS})
    frame.index = pd.Index(["l1", "l2", "model:m"], name="learnerId")
    calls: list[tuple[int, int]] = []
    psr.summarize(psr.PsrResult("d", frame, 5), bootstrap_samples=2048, progress=lambda d, t: calls.append((d, t)))
    assert calls == [(1024, 2048), (2048, 2048), (2048, 2048)]


def test_cli_psr_bootstrap_progress_line_has_a_rate(kstp, toy_files, monkeypatch):  # noqa: F811
    from kstp.evaluators import psr_intervals
    from tests.cli.test_cli import ingest_toy

    ingest_toy(kstp, toy_files)
    assert kstp("derive", "question-prerequisites", "--dataset", "toy").exit_code == 0
    monkeypatch.setattr(psr_intervals, "PROGRESS_EVERY_S", 0.0)
    result = kstp("evaluate", "psr", "--dataset", "toy", "--bootstrap", "20480", "--json")
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("bootstrap of toy: ")]
    assert lines[-1].startswith("bootstrap of toy: 20,480/20,480 (100%), ")
    assert all(re.search(r", \d+\.\d s; [\d,]+ resamples/s$", line) for line in lines) and len(lines) >= 5
    assert json.loads(result.stdout)[0]["bootstrapSamples"] == 20480
    quiet = kstp("evaluate", "psr", "--dataset", "toy", "--bootstrap", "0", "--json")
    assert "bootstrap of" not in quiet.stderr


def test_ability_group_rows_hand_computed():
    # ten human learners with accuracies .1 ... 1.0: ranks 0-2 low, 3-5 medium, 6-8 high, the top one in none
    accuracy = [(i + 1) / 10 for i in range(10)]
    learners = pd.DataFrame({"answered": 10, "correct": [int(10 * a) for a in accuracy], "accuracy": accuracy,
                             "psrMicro": [a / 2 for a in accuracy], "psrMacro": accuracy, "questionsScored": 1,
                             "pairs": 2, **{c: 0 for c in psr._COUNTS}, "kind": "human"},
                            index=pd.Index([f"l{i}" for i in range(10)], name="learnerId"))
    rows = psr.summarize(psr.PsrResult("d", learners, 5), groups=True)
    assert [(r["learner"], r["group"], r["learners"]) for r in rows] == [
        ("human learners", None, 10), ("human learners: low", "low", 3), ("human learners: medium", "medium", 3),
        ("human learners: high", "high", 3)]
    assert [r["accuracy"] for r in rows] == pytest.approx([0.55, 0.2, 0.5, 0.8])
    assert [r["psrMicro"] for r in rows] == pytest.approx([0.275, 0.1, 0.25, 0.4])


def test_cli_psr_intervals_groups_and_per_question(kstp, toy_files, tmp_path):  # noqa: F811
    from tests.cli.test_cli import ingest_toy

    ingest_toy(kstp, toy_files)
    assert kstp("derive", "question-prerequisites", "--dataset", "toy").exit_code == 0
    result = kstp("evaluate", "psr", "--dataset", "toy", "--min-prerequisites", "3", "--groups", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [r["learner"] for r in rows] == ["human learners", "human learners: low", "human learners: medium",
                                           "human learners: high"]
    human = rows[0]
    # L1 (micro 3/4) and L2 (2/5) have a PSR, L3 none: every resample's mean lies between them
    assert 2 / 5 <= human["psrMicroLow"] <= human["psrMicro"] <= human["psrMicroHigh"] <= 3 / 4
    assert human["bootstrapSamples"] == 1000
    # accuracy over every answered question by default (the release's eval_acc): L3 answered the unannotated
    # q8 wrong, so it ranks lowest (1/2 < L1 3/4 < L2 4/5); over the annotated ones it ranks highest (1/1)
    assert [r["accuracy"] for r in rows] == pytest.approx([41 / 60, 1 / 2, 3 / 4, 4 / 5])
    annotated = kstp("evaluate", "psr", "--dataset", "toy", "--min-prerequisites", "3", "--groups", "--accuracy",
                     "annotated", "--bootstrap", "0", "--json")
    assert annotated.exit_code == 0, annotated.output
    other = json.loads(annotated.stdout)
    assert [r["accuracy"] for r in other] == pytest.approx([51 / 60, 3 / 4, 4 / 5, 1])
    assert {r["accuracyQuestions"] for r in rows} == {"answered"} and other[0]["accuracyQuestions"] == "annotated"
    printed = kstp("evaluate", "psr", "--dataset", "toy", "--accuracy", "annotated", "--bootstrap", "0")
    assert "accuracy: over the annotated questions (Appendix B)" in printed.stderr
    assert kstp("evaluate", "psr", "--dataset", "toy", "--accuracy", "all").exit_code == 2
    questions = kstp("evaluate", "psr", "--dataset", "toy", "--per-question", "--out", tmp_path / "o", "--json")
    table = json.loads(questions.stdout)
    assert [r["questionId"] for r in table] == ["toy:q4", "toy:q2", "toy:q5", "toy:q6"]
    assert (tmp_path / "o" / "psr_questions_toy.csv").read_text().splitlines()[1].startswith("toy,toy:q4,1,")


def test_cli_psr_per_question_fits_80_columns_in_one_table(kstp, toy_files, monkeypatch):  # noqa: F811
    """Issue 43: at 80 columns the seven columns did not fit with every number whole, and the table was
    turned into a card per question. The dataset column goes where each id names its dataset, and the last
    header wraps at its words: one table, every id and number whole, the values the JSON has."""
    from tests.cli.test_cli import ingest_toy

    ingest_toy(kstp, toy_files)
    assert kstp("derive", "question-prerequisites", "--dataset", "toy").exit_code == 0
    monkeypatch.setenv("COLUMNS", "80")
    printed = kstp("evaluate", "psr", "--dataset", "toy", "--per-question", "--no-write", "--bootstrap", "0")
    assert printed.exit_code == 0, printed.output
    lines = printed.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80 and "(1/" not in printed.stdout  # one table, not cards
    rows = [[cell.strip() for cell in line.strip("│").split("│")] for line in lines if line.startswith("│")]
    data = json.loads(kstp("evaluate", "psr", "--dataset", "toy", "--per-question", "--no-write", "--bootstrap",
                           "0", "--json").stdout)
    assert rows == [[r["questionId"], str(r["learners"]), f"{r['psrMicro']:.3f}", f"{r['psrMacro']:.3f}",
                     f"{r['broken']:.3f}", f"{r['prerequisitesPerLearner']:.3f}"] for r in data]
    assert [r[0] for r in rows] == ["toy:q4", "toy:q2", "toy:q5", "toy:q6"] and rows[0][1:] == [
        "1", "0.000", "0.000", "1.000", "1.000"]
    header = " ".join(line for line in lines if line.startswith("┃"))
    assert all(word in header for word in ("questionId", "psrMacro", "prereqs per", "learner"))
    assert set(data[0]) >= {"dataset", "prerequisitesPerLearner"}  # JSON keeps every column by its name


def test_cli_psr_accuracy_annotated_on_a_dataset_without_concepts_says_why(kstp, tmp_path):  # noqa: F811
    """A new user's case: learners answered, but no question has a concept, so --accuracy annotated has nothing
    to count; the line says that (not "no learner answers ... ingest responses first"), and answered counts."""
    (tmp_path / "items.jsonl").write_text('{"id": "q1", "text": "1 + 1?", "answer": "2"}\n'
                                          '{"id": "q2", "text": "2 + 2?", "answer": "4"}\n')
    (tmp_path / "answers.csv").write_text("learner,item,correct\nL1,q1,1\nL1,q2,0\nL2,q1,1\nL2,q2,1\n")
    assert kstp("ingest", "items", tmp_path / "items.jsonl", "--dataset", "nc").exit_code == 0
    assert kstp("ingest", "responses", tmp_path / "answers.csv", "--dataset", "nc").exit_code == 0
    refused = kstp("evaluate", "psr", "--dataset", "nc", "--accuracy", "annotated")
    assert refused.exit_code == 1
    assert refused.stderr.strip().splitlines()[-1] == (
        "Error: nc: no learner answered an annotated question (one with a concept: --accuracy annotated counts only "
        "those; --accuracy answered counts every answered one)")
    answered = kstp("evaluate", "psr", "--dataset", "nc", "--json")
    assert json.loads(answered.stdout)[0]["accuracy"] == pytest.approx(3 / 4)


# ---- where the figures are kept (issue 42): a model answers several datasets ----------------------------
def _model_on_two_datasets(toy, folder):
    """The toy and a copy of it (toy2), Eq. 1 (strict) on both; model:m answers toy as L1 did (run-toy) and toy2
    as L2 did (run-toy2)."""
    from kstp.loaders import items
    from tests.conftest import TOY_ITEMS

    (folder / "toy2.jsonl").write_text(TOY_ITEMS)
    items.write_items(toy, items.read_items_jsonl(folder / "toy2.jsonl", "toy2", "toy",
                                                  items.framework_concepts(toy, "toy")))
    for dataset in ("toy", "toy2"):
        derive_question_prerequisites(toy, dataset, "strict")
    toy.write_nodes("Learner", pd.DataFrame([{"id": "model:m", "kind": "model", "localId": "m",
                                              "psrMicro": 0.123}]))  # left by an older kstp: no dataset's
    toy.write_nodes("Run", pd.DataFrame([{"id": f"run-{d}", "evaluator": "answers", "model": "m", "dataset": d}
                                         for d in ("toy", "toy2")]))
    answers = {"toy": {"q1": True, "q2": True, "q3": False, "q5": True},
               "toy2": {"q1": False, "q2": True, "q4": True, "q6": True, "q7": True}}
    toy.write_relationships("ANSWERED", "Learner", "Question", pd.DataFrame(
        [{"from_id": "model:m", "to_id": f"{d}:{q}", "correct": ok, "runId": f"run-{d}"}
         for d, given in answers.items() for q, ok in given.items()]))
    return toy


def test_psr_of_a_model_is_kept_per_dataset_on_its_runs(toy, tmp_path):
    """By hand (test_psr_hand_computed_per_learner): on toy the model answered as L1 (micro 3/4, macro 5/6,
    accuracy 3/4 of 4), on toy2 as L2 (2/5, 2/9, 4/5 of 5). Evaluating toy2 after toy leaves toy's figures on
    toy's run, the model's node keeps none, and each dataset's learner figures show that dataset's."""
    store = _model_on_two_datasets(toy, tmp_path)
    for dataset in ("toy", "toy2"):
        psr.evaluate_dataset(store, dataset)
    runs = store.nodes("Run", ["run-toy", "run-toy2"]).set_index("id")
    assert runs.loc["run-toy", ["psrMicro", "psrMacro", "psrAnswers"]].tolist() == pytest.approx([3 / 4, 5 / 6, 4])
    assert runs.loc["run-toy2", ["psrMicro", "psrMacro", "psrAnswers"]].tolist() == pytest.approx([2 / 5, 2 / 9, 5])
    assert store.nodes("Learner", ["model:m"])[["accuracy", "psrMicro", "psrMacro"]].isna().all(axis=None)
    for dataset, want in (("toy", [3 / 4, 3 / 4, 5 / 6, 4]), ("toy2", [4 / 5, 2 / 5, 2 / 9, 5])):
        figures = store.frame("dataset_learner_figures", {"dataset": dataset}).set_index("learnerId")
        assert figures.loc["model:m", ["accuracy", "psrMicro", "psrMacro", "nAnswered"]].tolist() == \
            pytest.approx(want), dataset
        assert figures.loc["model:m", "runId"] == f"run-{dataset}" and figures["runId"].drop("model:m").isna().all()
    humans = store.frame("dataset_learner_figures", {"dataset": "toy"}).set_index("learnerId")
    assert humans.loc["toy:L1", "psrMicro"] == pytest.approx(3 / 4) and "toy2:L1" not in humans.index


def test_psr_of_a_model_answered_by_two_runs_is_no_runs(toy, tmp_path):
    """A later run answered q1 again: the model's answers on toy are two runs', so neither run holds the PSR
    computed over them, and the dataset's figures show none (accuracy and answers still counted: 3/4 of 4)."""
    store = _model_on_two_datasets(toy, tmp_path)
    store.write_nodes("Run", pd.DataFrame([{"id": "run-toy-again", "evaluator": "answers", "model": "m",
                                            "dataset": "toy"}]))
    store.write_relationships("ANSWERED", "Learner", "Question", pd.DataFrame(
        [{"from_id": "model:m", "to_id": "toy:q1", "correct": True, "runId": "run-toy-again"}]))
    written = psr.write_back_figures(store, "toy", psr.evaluate_dataset(store, "toy", write_back=False).learners)
    assert written == {"learners": 3, "runs": 0, "unplaced": 1}
    assert store.nodes("Run", ["run-toy", "run-toy-again"])["psrMicro"].isna().all()
    figures = store.frame("dataset_learner_figures", {"dataset": "toy"}).set_index("learnerId")
    assert figures.loc["model:m", ["accuracy", "nAnswered"]].tolist() == [3 / 4, 4]
    assert pd.isna(figures.loc["model:m", "runId"])
    assert pd.isna(figures.loc["model:m", "psrMicro"]) and pd.isna(figures.loc["model:m", "psrMacro"])


def test_stored_run_psr_of_a_resumed_run_is_not_shown(toy, tmp_path):
    """The run answered one more question after kstp evaluate psr: the PSR on the run counted 4 answers, the
    dataset has 5 of the model's now, so its figures show none until PSR is evaluated again."""
    store = _model_on_two_datasets(toy, tmp_path)
    psr.evaluate_dataset(store, "toy")
    store.write_relationships("ANSWERED", "Learner", "Question", pd.DataFrame(
        [{"from_id": "model:m", "to_id": "toy:q4", "correct": False, "runId": "run-toy"}]))
    figures = store.frame("dataset_learner_figures", {"dataset": "toy"}).set_index("learnerId")
    assert pd.isna(figures.loc["model:m", "psrMicro"]) and figures.loc["model:m", "nAnswered"] == 5
    psr.evaluate_dataset(store, "toy")
    figures = store.frame("dataset_learner_figures", {"dataset": "toy"}).set_index("learnerId")
    assert figures.loc["model:m", "psrMicro"] == pytest.approx(3 / 5)  # q5: q1, q2 of q1..q4 now; q2 1/1
