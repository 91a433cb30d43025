"""The BLIM on the graph: what is read, what is refused (writing nothing), what is written."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kstp.errors import KstpError, UnknownIdError
from kstp.evaluators.blim import fit_dataset, fit_files, next_steps, response_data, write_fit
from kstp.evaluators.prerequisites import learn_prerequisites
from kstp.graph.structures import derive_question_prerequisites, state_id_of
from kstp.kst.blim import BlimError
from kstp.loaders.kstio import read_kst_file
from tests.parity.test_parity import DATASET, build

#: q1 {c1}, q2 {c2}, q3 {c1, c2}, with c1 -> c2. Learners a-d answer everything, e skips q3.
QC = {"q1": {"c1"}, "q2": {"c2"}, "q3": {"c1", "c2"}}
ANSWERS = {"a": {"q1": 1, "q2": 1, "q3": 1}, "b": {"q1": 1, "q2": 0, "q3": 0}, "c": {"q1": 0, "q2": 0, "q3": 0},
           "d": {"q1": 1, "q2": 1, "q3": 0}, "e": {"q1": 1, "q2": 1}}


def _graph(store, qc=QC, answers=ANSWERS):
    build(store, {("c1", "c2")}, qc, {k: {q: bool(v) for q, v in r.items()} for k, r in answers.items()})
    derive_question_prerequisites(store, DATASET, "reflexive")


def _nothing_written(store):
    assert store.frame("blim_item_parameters", {"dataset": DATASET}).empty
    assert store.frame("blim_learners", {"dataset": DATASET}).empty


def test_response_data_leaves_out_incomplete_learners(store):
    _graph(store)
    data = response_data(store, DATASET)
    assert data.items == ["q1", "q2", "q3"] and data.learners == ["a", "b", "c", "d"] and data.incomplete == 1
    assert data.matrix.tolist() == [[1, 1, 1], [1, 0, 0], [0, 0, 0], [1, 1, 0]]


def test_fit_refuses_an_item_nobody_answered_and_writes_nothing(store):
    _graph(store, {**QC, "q4": {"c2"}})
    with pytest.raises(KstpError, match="no learner of dataset 'gen' answered q4"):
        fit_dataset(store, DATASET)
    _nothing_written(store)


def test_fit_of_a_dataset_nobody_answered_says_so_in_a_short_line(store):
    _graph(store, answers={})  # the questions, and no answer at all
    with pytest.raises(KstpError) as refused:
        fit_dataset(store, DATASET)
    assert str(refused.value) == ("no learner answered the questions of dataset 'gen'; ingest responses first "
                                  "(kstp ingest responses)")  # not every question named (4,118 on XES3G5M)


def test_fit_refuses_a_delineation_that_is_not_a_knowledge_structure(store):
    # q4 needs no skill, so the delineation puts it in every state: the empty set is no state.
    _graph(store, {**QC, "q4": set()}, {k: {**r, "q4": 1} for k, r in ANSWERS.items()})
    with pytest.raises(BlimError, match=r"the empty set is not a state \(every state holds q4\)"):
        fit_dataset(store, DATASET, "delineated")
    _nothing_written(store)


def test_write_fit_puts_rates_states_and_assessments_on_the_graph(store):
    _graph(store)
    report = fit_dataset(store, DATASET, "space", "MD")
    # Eq. 1 (reflexive) with c1 -> c2: q1 before q2 and q3; q2 and q3 are mutual prerequisites (each
    # concept of one leads to a concept of the other). The space: {}, {q1}, {q1, q2, q3}.
    assert sorted(map(tuple, report.fit.states.tolist())) == [(0, 0, 0), (1, 0, 0), (1, 1, 1)]
    # MD: a at Q, b at {q1}, c at {}; d (1, 1, 0) is 1 from {q1} and from Q: half to each.
    assert report.fit.p_k.tolist() == pytest.approx([1 / 4, 1.5 / 4, 1.5 / 4])
    write_fit(store, report)
    full, empty = state_id_of(DATASET, ["q1", "q2", "q3"]), state_id_of(DATASET, [])
    learners = store.frame("blim_learners", {"dataset": DATASET}).set_index("learnerId")
    assert set(learners.index) == {"a", "b", "c", "d"}  # e answered two of three: not assessed
    assert (learners.loc["a", "stateId"], learners.loc["c", "stateId"]) == (full, empty)
    run = store.frame("run_by_id", {"runId": report.run_id}).iloc[0]
    assert run["evaluator"] == "blim" and run["dataset"] == DATASET
    write_fit(store, report)  # a re-run changes nothing
    assert len(store.frame("blim_states", {"runId": report.run_id})) == 1 + 1 + 3


def test_learn_prerequisites_keeps_eq1_edges(store):
    _graph(store)
    before = store.frame("question_prerequisite_edges", {"dataset": DATASET})
    report = learn_prerequisites(store, DATASET, "ita", threshold=0)
    after = store.frame("question_prerequisite_edges", {"dataset": DATASET})
    pd.testing.assert_frame_equal(before, after)
    # b[p, q] = 0 (nobody solved q without p): q1 before q2 and q3, q2 before q3.
    assert sorted(zip(report.pairs["fromId"], report.pairs["toId"], strict=True)) == [
        ("q1", "q2"), ("q1", "q3"), ("q2", "q3")]
    assert report.eq1_only == [("q3", "q2")]


def test_fit_with_bootstrap_reports_its_p_and_standard_errors(store):
    _graph(store)
    report = fit_dataset(store, DATASET, "space", "MD", bootstrap=6, seed=2)
    summary = report.summary()
    assert summary["standardErrors"] == "parametric bootstrap (6 samples)" and summary["bootstrapSamples"] == 6
    assert summary["bootstrapP"] in {k / 6 for k in range(7)}
    # states {}, {q1}, Q: forward-graded in q1, so its guess rate trades off with the state probabilities
    # (Heller 2017) and its bootstrap SE is left blank (issue 48); every other rate keeps its SE
    assert report.identified.unidentified == ["probability {}", "probability {q1}", "guess q1"]
    assert np.isnan(report.fit.eta_se[0]) and (report.fit.beta_se >= 0).all() and (report.fit.eta_se[1:] >= 0).all()
    with pytest.raises(BlimError, match="at least 2 samples"):
        fit_dataset(store, DATASET, "space", "MD", bootstrap=1)


# ---- a structure from a file (issue 34): pks's endm data, its structure not closed under union --------
KST = Path(__file__).resolve().parents[1] / "data" / "kst"
PKS_ENDM = json.loads((KST / "blim_structures.json").read_text())


def _endm_graph(store):
    """pks's endm responses (200 learners, items a-d) as dataset ``gen`` on the graph."""
    answers = read_kst_file(KST / "kstio" / "endm.dat").matrix
    build(store, set(), {q: set() for q in "abcd"},
          {f"l{i:03d}": {q: bool(v) for q, v in zip("abcd", row, strict=True)} for i, row in enumerate(answers)})


@pytest.mark.parametrize("method", ["ML", "MDML"])
def test_fit_a_structure_file_equals_pks(store, method):
    _endm_graph(store)
    report = fit_dataset(store, DATASET, KST / "kstio" / "endm.kst", method)
    ref = PKS_ENDM[f"endm_K/{method}"]
    fit = report.fit
    # the file names no item: its columns are the dataset's questions in order (a, b, c, d)
    assert ["".join(map(str, row)) for row in fit.states] == ref["states"]
    assert np.abs(fit.p_k - ref["P_K"]).max() < 1e-4 and np.abs(fit.beta - ref["beta"]).max() < 1e-4
    assert (fit.g2, fit.df, fit.iterations) == (pytest.approx(ref["G2"], abs=1e-4), ref["df"], ref["iter"])
    assert report.structure == "file:endm.kst" and report.run_id.startswith(f"blim:{DATASET}:file:{method}:")
    assert "unnamed columns taken as a ... d in order" in report.summary()["structureSource"]
    write_fit(store, report)
    steps = next_steps(store, DATASET, "l000")  # l000 answered nothing right: state {}
    row = steps["learners"][0]
    assert row["source"] == report.run_id and row["state"] == [] and row["nextSteps"] == []
    # no single item leads on from {} in endm's K; the states covering it: {a, c, d}, {b, c}, {b, d}
    assert sorted(row["nextStates"]) == [["a", "c", "d"], ["b", "c"], ["b", "d"]]


def test_fit_a_named_csv_structure_and_refusals(store, tmp_path):
    _endm_graph(store)
    # the same structure with named, shuffled columns, as pks's write.csv(K) gives it: equal fit
    named = tmp_path / "K.csv"
    named.write_text('"","d","c","b","a"\n' + "".join(
        f'"{p}",{p[3]},{p[2]},{p[1]},{p[0]}\n' for p in PKS_ENDM["endm_K/ML"]["states"]))
    report = fit_dataset(store, DATASET, named, "ML")
    assert report.fit.g2 == pytest.approx(PKS_ENDM["endm_K/ML"]["G2"], abs=1e-4)
    assert report.summary()["structureSource"].endswith("columns matched by name")
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b,c,z\n0,0,0,0\n1,1,1,1\n")
    with pytest.raises(UnknownIdError, match="bad.csv: column 'z' is not an item"):
        fit_dataset(store, DATASET, bad)
    bad.write_text("a,b,c,d\n1,0,0,0\n1,1,1,1\n")
    with pytest.raises(BlimError, match="bad.csv: not a knowledge structure: the empty set is not a state"):
        fit_dataset(store, DATASET, bad)
    short = tmp_path / "short.kst"
    short.write_text("000\n111\n")
    with pytest.raises(KstpError, match="short.kst has 3 item columns and names none; the data have 4 items"):
        fit_dataset(store, DATASET, short)
    _nothing_written(store)


def test_fit_files_needs_no_graph():
    report = fit_files(KST / "kstio" / "endm.kst", KST / "kstio" / "endm.dat", "MD")
    ref = PKS_ENDM["endm_K/MD"]
    assert np.abs(report.fit.p_k - ref["P_K"]).max() < 1e-4 and report.fit.discrepancy == pytest.approx(
        ref["discrepancy"], abs=1e-6)
    assert report.dataset == "endm" and report.data.learners[:2] == ["1", "2"]
    states = report.states_table()
    assert list(states.columns) == ["a", "b", "c", "d", "probability"]
    assert states["probability"].sum() == pytest.approx(1)
