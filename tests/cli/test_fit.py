"""`kstp fit blim`, `kstp fit prerequisites` and `kstp kst next-steps` through click's runner, on real data."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from kstp.cli.main import cli
from tests.cli.test_cli import kstp  # noqa: F401 (fixture)


@pytest.fixture
def probability(kstp, data_root):  # noqa: F811
    folder = data_root / "responses" / "probability_pks"
    assert kstp("ingest", "items", folder / "items.csv", "--dataset", "probability_pks", "--qmatrix",
                folder / "qmatrix.csv", "--skills", folder / "skills.csv").exit_code == 0
    assert kstp("ingest", "responses", folder / "responses_full.csv", "--dataset", "probability_pks").exit_code == 0
    assert kstp("derive", "question-prerequisites", "--dataset", "probability_pks", "--rule",
                "reflexive").exit_code == 0
    return kstp


def test_next_steps_without_fit_falls_back_to_nearest_states(probability):
    result = probability("kst", "next-steps", "--dataset", "probability_pks", "--learner", "l0003", "--json")
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout)["learners"][0]
    # l0003 answered b101-b108 correctly: a state of the space (skill inclusion), distance 0. Next: b109
    # {id, pb} and b110 {cp, id}, whose prerequisites (b101, b102, b104) are in; b111, b112 need b109.
    assert row["source"].startswith("nearest states") and row["distance"] == 0
    local = [q.split(":")[1] for q in row["answeredCorrectly"]]
    assert local == ["b101", "b102", "b103", "b104", "b105", "b106", "b107", "b108"]
    assert len(row["nearest"]) == 1 and [q.split(":")[1] for q in row["nearest"][0]["nextSteps"]] == ["b109", "b110"]
    assert row["nearest"][0]["nextStates"] == [["probability_pks:b109"], ["probability_pks:b110"]]


def test_next_steps_without_fit_name_the_covering_states_where_the_fringe_is_empty(kstp, data_root):  # noqa: F811
    """frcsub's Item06 and Item08 test skill 7 alone: under Eq. 1 (reflexive) each is the other's prerequisite,
    so no single question extends {Item09}, and the one covering state adds both (issue 43 §4: it said "next: -")."""
    folder = data_root / "responses" / "frcsub"
    kstp("ingest", "items", folder / "items.csv", "--dataset", "frcsub", "--qmatrix", folder / "qmatrix.csv")
    kstp("ingest", "responses", folder / "responses.csv", "--dataset", "frcsub")
    kstp("derive", "question-prerequisites", "--dataset", "frcsub", "--rule", "reflexive")
    result = kstp("kst", "next-steps", "--dataset", "frcsub", "--learner", "Subject007", "--json")
    assert result.exit_code == 0, result.output
    first = json.loads(result.stdout)["learners"][0]["nearest"][0]
    assert first["state"] == ["frcsub:Item09"] and first["nextSteps"] == []
    assert first["nextStates"] == [["frcsub:Item06", "frcsub:Item08"]]
    text = kstp("kst", "next-steps", "--dataset", "frcsub", "--learner", "Subject007").stdout
    assert "{frcsub:Item09}  next: -  next states add: {frcsub:Item06, frcsub:Item08}" in text


def test_next_steps_text_wraps_to_the_terminal(probability, monkeypatch):
    """The nearest-state line of l0003 (eight ids, then its next steps) fits 80 columns, continuations indented."""
    monkeypatch.setenv("COLUMNS", "80")
    result = probability("kst", "next-steps", "--dataset", "probability_pks", "--learner", "l0003")
    lines = result.stdout.splitlines()
    assert result.exit_code == 0 and len(lines) > 1 and max(map(len, lines)) <= 80
    assert all(line.startswith("    ") for line in lines[1:])
    assert " ".join(line.strip() for line in lines).endswith("next: probability_pks:b109, probability_pks:b110 "
                                                             "next states add: {probability_pks:b109}; "
                                                             "{probability_pks:b110}")


def test_fit_blim_writes_the_fit_and_next_steps_read_it(probability, tmp_path):
    result = probability("fit", "blim", "--dataset", "probability_pks", "--structure", "delineated", "--json",
                         "--out", tmp_path / "figs")
    assert result.exit_code == 0, result.output
    fit = json.loads(result.stdout)
    # pks::blim(delineate(sf1)$K, N.R, method = "ML") on the same 504 learners: G2 782.3027 on 465 df.
    assert (fit["states"], fit["learners"], fit["df"], fit["iterations"]) == (16, 504, 465, 462)
    assert fit["G2"] == pytest.approx(782.3027, abs=1e-4)
    assert sorted(p.rsplit("/", 1)[-1] for p in fit["figures"]) == ["blim_rates_probability_pks.png",
                                                                  "blim_residuals_probability_pks.png"]
    again = probability("fit", "blim", "--dataset", "probability_pks", "--structure", "delineated", "--json")
    assert json.loads(again.stdout)["runId"] == fit["runId"]  # same configuration, same run: a safe re-run
    steps = probability("kst", "next-steps", "--dataset", "probability_pks", "--learner", "probability_pks:l0003",
                        "--json")
    row = json.loads(steps.stdout)["learners"][0]
    assert row["source"] == fit["runId"] and fit["runId"].startswith("blim:probability_pks:delineated:ML:")
    assert 0.5 < row["posterior"] <= 1
    # The fit puts l0003 in the {cp, pb, un} state (b104 right by a lucky guess); in the delineated
    # structure the only way on from there is the id skill: five items at once, no single-item step.
    assert row["nextSteps"] == []
    assert [[q.split(":")[1] for q in s] for s in row["nextStates"]] == [["b104", "b109", "b110", "b111", "b112"]]
    every = json.loads(probability("kst", "next-steps", "--dataset", "probability_pks", "--json").stdout)
    assert len(every["learners"]) == 504 and every["fitted"]


@pytest.mark.parametrize(("args", "code", "text"), [
    (["--dataset", "nope"], 1, "unknown dataset 'nope'"),
    (["--dataset", "probability_pks", "--fix-guess", "b101=2"], 2, "ITEM=RATE"),
    (["--dataset", "probability_pks", "--fix-guess", "b999=0.1"], 1, "'probability_pks:b999' is not a question"),
    (["--dataset", "probability_pks", "--limit", "10"], 1, "more than 10 states"),
])
def test_fit_blim_refusals_write_nothing(probability, args, code, text):
    result = probability("fit", "blim", *args)
    assert result.exit_code == code and text in result.output
    params = probability("query", "blim_item_parameters", "-p", "dataset=probability_pks", "--format", "json")
    assert json.loads(params.stdout) == []


def test_fit_prerequisites_iita_against_eq1(probability):
    result = probability("fit", "prerequisites", "--dataset", "probability_pks", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["eq1"] == 29 and report["both"] + report["eq1Only"] == 29
    assert report["learned"] == report["both"] + report["learnedOnly"] == len(report["pairs"])
    stored = probability("query", "learned_prerequisites", "-p", "dataset=probability_pks", "-p", "rule=iita",
                         "--format", "json")
    assert len(json.loads(stored.stdout)) == report["learned"]
    eq1 = probability("query", "question_prerequisite_edges", "-p", "dataset=probability_pks", "--format", "json")
    assert len(json.loads(eq1.stdout)) == 29  # the Eq. 1 edges are untouched
    # the selection set as DAKS prints it: its 44 candidates, their diffs, the 37th selected (daks_reference.R)
    daks = json.loads((Path(__file__).resolve().parents[1] / "data" / "blim" / "daks_probability_pks.json")
                      .read_text())["probability_pks/iita/1"]
    assert [c["diff"] for c in report["candidates"]] == pytest.approx(daks["diff"], rel=1e-9)
    assert [c["index"] for c in report["candidates"] if c["selected"]] == [daks["selection"]] == [37]


def test_fit_blim_says_the_gof_test_is_undefined_without_degrees_of_freedom(kstp, data_root):  # noqa: F811
    """frcsub's space (reflexive Eq. 1, 372 states): 371 + 20 + 20 = 411 free parameters against
    its 367 distinct response patterns, so df = -44 (as pks reports it) and there is no p value."""
    folder = data_root / "responses" / "frcsub"
    assert kstp("ingest", "items", folder / "items.csv", "--dataset", "frcsub", "--qmatrix",
                folder / "qmatrix.csv").exit_code == 0
    assert kstp("ingest", "responses", folder / "responses.csv", "--dataset", "frcsub").exit_code == 0
    assert kstp("derive", "question-prerequisites", "--dataset", "frcsub", "--rule", "reflexive").exit_code == 0
    result = kstp("fit", "blim", "--dataset", "frcsub", "--no-write")
    assert result.exit_code == 0, result.output
    assert "p = nan" not in result.stdout and "G2(" not in result.stdout and "G2 = " in result.stdout
    assert ("the goodness-of-fit test is not defined: the structure has 411 free parameters, not fewer than the "
            "367 independent cells of the data") in " ".join(result.stderr.split())
    summary = json.loads(kstp("fit", "blim", "--dataset", "frcsub", "--no-write", "--json").stdout)
    assert (summary["nParameters"], summary["patterns"], summary["df"], summary["pValue"]) == (411, 367, -44, None)
    assert summary["gofUndefined"].startswith("the goodness-of-fit test is not defined")


def test_fit_prerequisites_ita_global_search_runs_and_its_space_limit_is_an_option(probability):
    """The --help example (global ITA search) finishes; a small --limit refuses naming the option."""
    result = probability("fit", "prerequisites", "--dataset", "probability_pks", "--rule", "ita", "--search", "global",
                         "--json", "--no-write")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["rule"] == "ita"
    refused = probability("fit", "prerequisites", "--dataset", "probability_pks", "--rule", "ita", "--search",
                          "global", "--limit", "10", "--no-write")
    assert refused.exit_code == 1
    assert "has a knowledge space of more than 10 states" in refused.stderr
    assert "pass a larger --limit" in refused.stderr


# ---- any structure (issue 34): a file, on the graph or with the answers in a file too ---------------
KST = Path(__file__).resolve().parents[1] / "data" / "kst"
PKS_STRUCTURES = json.loads((KST / "blim_structures.json").read_text())
PKS_DAKS = json.loads((KST / "daks_iita.json").read_text())
PKS_PROBABILITY = json.loads((Path(__file__).resolve().parents[1] / "data" / "blim" / "pks_probability_pks.json")
                             .read_text())


def run_kstp(*args):
    """kstp without a graph (``--responses`` opens none)."""
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_fit_blim_structure_file_on_a_dataset_equals_pks(probability, tmp_path):
    # pks's delineated structure of the probability data, as a named CSV (local ids): pks's G2 and P.K
    ref = PKS_PROBABILITY["probability_pks/delineated/ML"]
    items = [f"b{101 + j}" for j in range(12)]
    path = tmp_path / "delineated.csv"
    path.write_text(",".join(items) + "\n" + "\n".join(",".join(p) for p in ref["states"]) + "\n")
    result = probability("fit", "blim", "--dataset", "probability_pks", "--structure", path, "--json", "--out",
                         tmp_path / "out")
    assert result.exit_code == 0, result.output
    fit = json.loads(result.stdout)
    assert (fit["states"], fit["df"], fit["iterations"]) == (16, ref["df"], ref["iter"])
    assert fit["G2"] == pytest.approx(ref["G2"], abs=1e-4) and fit["structure"] == "file:delineated.csv"
    states = pd.read_csv(tmp_path / "out" / "blim_states_probability_pks.csv")
    assert list(states.columns) == [*items, "probability"]
    order = ["".join(map(str, row)) for row in states[items].to_numpy()]
    assert states["probability"].to_numpy() == pytest.approx(
        [ref["P_K"][ref["states"].index(p)] for p in order], abs=1e-4)
    steps = json.loads(probability("kst", "next-steps", "--dataset", "probability_pks", "--learner", "l0003",
                                   "--json").stdout)
    assert steps["learners"][0]["source"] == fit["runId"]  # next steps read the fitted file structure


def test_fit_blim_responses_file_needs_no_graph(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run_kstp("fit", "blim", "--responses", KST / "kstio" / "endm.dat", "--structure",
                      KST / "kstio" / "endm.kst", "--method", "MDML", "--json", "--out", "out")
    assert result.exit_code == 0, result.output
    fit, ref = json.loads(result.stdout), PKS_STRUCTURES["endm_K/MDML"]
    assert fit["G2"] == pytest.approx(ref["G2"], abs=1e-4) and fit["written"] is False
    assert [row["careless"] for row in fit["items"]] == pytest.approx(ref["beta"], abs=1e-4)
    # issue 48: the state probabilities in --json too (pks's P.K, state by state)
    found = {"".join("1" if q in s["state"] else "0" for q in "abcd"): s["probability"]
             for s in fit["stateProbabilities"]}
    assert found == pytest.approx(dict(zip(ref["states"], ref["P_K"], strict=True)), abs=1e-10)
    learners = pd.read_csv(tmp_path / "out" / "blim_learners_endm.csv", keep_default_na=False)
    assert len(learners) == 200 and set(learners.columns) == {"learnerId", "state", "posterior", "nextSteps"}
    assert not (tmp_path / ".kstp").exists()  # no graph was opened


def test_fit_blim_negative_df_says_why_the_deviance_residuals_are_zero(tmp_path):
    result = run_kstp("fit", "blim", "--responses", KST / "kstio" / "chess.dat", "--structure",
                      KST / "kstio" / "chess_dst3.kst", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    said = " ".join(result.stderr.split())
    assert "deviance residuals are all 0: with df = -171 (no degrees of freedom left) pks defines them as 0" in said
    assert (tmp_path / "blim_residuals_chess.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(("args", "text"), [
    (["--structure", "space"], "give --dataset (answers on the graph) or --responses FILE"),
    (["--responses", KST / "kstio" / "endm.dat"], "--structure space is built from a dataset on the graph"),
    (["--responses", KST / "kstio" / "endm.dat", "--structure", "nothing.kst"], "neither space nor delineated"),
])
def test_fit_blim_usage_errors(args, text):
    result = run_kstp("fit", "blim", *args)
    assert result.exit_code == 2 and text in " ".join(result.output.split())


def test_fit_prerequisites_on_a_response_file_prints_daks_selection_set():
    ref = PKS_DAKS["endm/1"]
    result = run_kstp("fit", "prerequisites", "--responses", KST / "kstio" / "endm.dat", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert [c["diff"] for c in report["candidates"]] == pytest.approx(ref["diff"], rel=1e-9)
    chosen = next(c for c in report["candidates"] if c["selected"])
    letters = "abcd"
    assert sorted(chosen["pairs"]) == sorted([letters[i - 1], letters[j - 1]] for i, j in ref["implications"])
    assert chosen["index"] == ref["selection"] and report["written"] is False
    text = run_kstp("fit", "prerequisites", "--responses", KST / "kstio" / "endm.dat")
    assert "the least diff wins (index 3)" in " ".join(text.stdout.split())


def test_evaluate_psr_no_write_computes_on_a_read_only_graph_and_writes_nothing(probability, graph_location):
    from kstp.graph.factory import open_store

    def written() -> int:
        with open_store(graph_location, read_only=True) as store:
            learners = store.nodes("Learner")
        return int(learners["psrMicro"].notna().sum()) if "psrMicro" in learners else 0

    dry = probability("evaluate", "psr", "--dataset", "probability_pks", "--no-write", "--bootstrap", "0", "--json")
    assert dry.exit_code == 0, dry.output
    assert written() == 0
    wet = probability("evaluate", "psr", "--dataset", "probability_pks", "--bootstrap", "0", "--json")
    assert wet.exit_code == 0, wet.output
    assert json.loads(dry.stdout) == json.loads(wet.stdout)  # the same figures, only not written
    [human] = json.loads(wet.stdout)
    assert written() == human["learnersWithPsr"] == 485  # of 504: 19 have no scored question


def test_fit_blim_bootstrap_shows_its_progress(tmp_path):
    result = run_kstp("fit", "blim", "--responses", KST / "kstio" / "endm.dat", "--structure",
                      KST / "kstio" / "endm.kst", "--bootstrap", "4", "--seed", "1", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["bootstrapSamples"] == 4
    assert re.search(r"^BLIM of endm\.dat, parametric bootstrap: 4/4 \(100%\), \d+\.\d s; [\d.,]+ refits/s$",
                     result.stderr, re.MULTILINE), result.stderr  # the rate: how long a larger one would take


@pytest.mark.parametrize(("rows", "rule", "code", "said"), [
    ("1\n0\n1\n", "iita", 1, "Error: IITA needs at least 2 items and 1 learner; got 1 item and 3 learners"),
    ("1\n", "iita", 1, "Error: IITA needs at least 2 items and 1 learner; got 1 item and 1 learner"),
    ("1\n0\n1\n", "ita", 0, ""),  # one item: ITA's relation is empty, a defined result
    ("00\n00\n", "iita", 1, "Error: no learner solved any item: IITA has no counterexample rate to estimate"),
    ("11\n11\n", "iita", 0, ""),  # everyone solved everything: no counterexample, a relation all the same
    ("10\n", "ita", 0, ""),  # one learner
])
def test_fit_prerequisites_on_degenerate_data_gives_a_result_or_one_line(tmp_path, rows, rule, code, said):
    """Issue 33 §4: a one-item dataset gave a traceback (argmin of an empty sequence)."""
    data = tmp_path / "d.dat"
    data.write_text(rows)
    result = run_kstp("fit", "prerequisites", "--responses", data, "--rule", rule)
    assert result.exit_code == code and "Traceback" not in result.output, result.output
    if said:
        assert result.stderr.strip().splitlines() == [said]
    else:
        assert "fromId" in result.stdout  # the learned relation's table, however short


@pytest.mark.parametrize("rule", ["iita", "ita"])
def test_fit_prerequisites_of_a_one_item_dataset_in_the_graph(kstp, tmp_path, rule):  # noqa: F811
    """The issue's case through the graph: ITA's empty relation is written (it was a pandas merge error),
    IITA refuses in one line; on each engine."""
    (tmp_path / "items.csv").write_text("id,text\nq1,one\n")
    (tmp_path / "answers.csv").write_text("learner,item,correct\nL1,q1,1\nL2,q1,0\n")
    assert kstp("ingest", "items", tmp_path / "items.csv", "--dataset", "one").exit_code == 0
    assert kstp("ingest", "responses", tmp_path / "answers.csv", "--dataset", "one").exit_code == 0
    result = kstp("fit", "prerequisites", "--dataset", "one", "--rule", rule, "--json")
    if rule == "ita":
        assert result.exit_code == 0, result.output
        assert (json.loads(result.stdout)["learned"], json.loads(result.stdout)["written"]) == (0, True)
    else:
        assert result.exit_code == 1
        assert result.stderr.strip().splitlines()[-1].startswith(
            "Error: IITA needs at least 2 items and 1 learner; got 1 item and 2 learners")


@pytest.mark.parametrize(("command", "file", "text", "said"), [
    # issue 48: before, blim blamed the structure file for the dropped item, prerequisites learned without it
    ("blim", "responses", "id,a,b,c,d\nl1,0,0,0,0\nl2,1,1,0,2\nl3,1,1,1,1\n",
     "r.csv:3: column 5 ('d') holds '2': an item column holds 0 or 1"),
    ("blim", "structure", "a,b,c,d\n0,0,0,0\n1,0,0,0\n0.5,1,0,0\n1,1,1,1\n",
     "r.csv:4: column 1 ('a') holds '0.5': an item column holds 0 or 1 (a column of state probabilities is named "
     "probability)"),
    ("prerequisites", "responses", "id,a,b,c,d\nl1,0,0,0,0\nl2,1,1,0,2\nl3,1,1,1,1\n",
     "r.csv:3: column 5 ('d') holds '2': an item column holds 0 or 1"),
    ("prerequisites", "responses", "a;b;c;d\n0;0;0;0\n1;1;1;1\n", "r.csv:1: cells separated by ';'"),
])
def test_fit_refuses_a_csv_cell_that_is_not_0_1_naming_file_line_and_column(tmp_path, command, file, text, said):
    path = tmp_path / "r.csv"
    path.write_text(text)
    args = ["--responses", path] if file == "responses" else ["--responses", KST / "kstio" / "endm.dat"]
    if command == "blim":
        args += ["--structure", path if file == "structure" else KST / "kstio" / "endm.kst"]
    result = run_kstp("fit", command, *args)
    assert result.exit_code == 1, result.output
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"Error: {tmp_path}/") and said in line, line


def test_fit_blim_max_iter_stops_the_em_and_says_so_as_pks_warns(tmp_path):
    """pks's blim(endm$K, endm$N.R, "ML", maxiter = 5) (tests/data/kst/blim_identify.json) warns
    'iteration maximum has been exceeded'; kstp gives its estimates and says it did not converge."""
    ref = json.loads((KST / "blim_identify.json").read_text())["endm_K_ML_maxiter5"]
    args = ["fit", "blim", "--responses", KST / "kstio" / "endm.dat", "--structure", KST / "kstio" / "endm.kst"]
    result = run_kstp(*args, "--max-iter", "5", "--json")
    assert result.exit_code == 0, result.output
    fit = json.loads(result.stdout)
    assert (fit["iterations"], fit["converged"], fit["maxIter"]) == (5, False, 5)
    assert [row["careless"] for row in fit["items"]] == pytest.approx(ref["beta"], abs=1e-12)
    assert fit["convergenceNote"].startswith("the EM did not converge: it stopped at the maximum of 5 iterations")
    text = run_kstp(*args, "--max-iter", "5")
    assert "5 iterations (not converged)" in text.stdout
    assert "warning: the EM did not converge" in " ".join(text.stderr.split())
    done = json.loads(run_kstp(*args, "--tol", "1e-4", "--json").stdout)
    full = json.loads(run_kstp(*args, "--json").stdout)
    assert done["converged"] and full["converged"] and done["iterations"] < full["iterations"]
    assert done["convergenceNote"] is None and full["runId"] != done["runId"]  # another stopping rule, another run
    assert run_kstp(*args, "--tol", "0").exit_code == 2


def test_fit_blim_names_the_rates_no_data_can_identify_and_blanks_their_standard_errors(tmp_path):
    """The hand-made structure of tests/kst/test_blim_identify.py: forward-graded in a, backward-graded in
    b and c, so eta_a, beta_b, beta_c trade off with the state probabilities (pks's blimit: rank 7 of 10)."""
    ref = json.loads((KST / "blim_identify.json").read_text())["hand"]
    structure = tmp_path / "hand.csv"
    structure.write_text("a,b,c\n0,0,0\n1,0,0\n1,1,0\n1,0,1\n1,1,1\n")
    counts = {"000": 30, "100": 40, "110": 35, "101": 25, "111": 50, "010": 8, "001": 7, "011": 5}
    responses = tmp_path / "answers.csv"
    responses.write_text("a,b,c\n" + "".join(f"{','.join(p)}\n" * n for p, n in counts.items()))
    args = ["fit", "blim", "--responses", responses, "--structure", structure]
    fit = json.loads(run_kstp(*args, "--json").stdout)
    found = fit["identifiability"]
    assert (found["rank"], found["parameters"], found["nullSpaceDimension"]) == (ref["rank"], ref["npar"], 3)
    assert [n for n in found["unidentified"] if not n.startswith("probability")] == ["careless b", "careless c",
                                                                                      "guess a"]
    items = {row["questionId"]: row for row in fit["items"]}
    assert [items[q]["carelessSe"] is None for q in "abc"] == [False, True, True]
    assert [items[q]["guessSe"] is None for q in "abc"] == [True, False, False]
    assert [items[q]["carelessIdentified"] for q in "abc"] == [True, False, False]
    text = run_kstp(*args)
    said = " ".join(text.stderr.split())
    assert "not identifiable: careless b, careless c, guess a and 4 state probabilities (Jacobian rank 7 of 10" in said
    assert "their standard errors are left blank" in said


def test_fit_blim_on_a_structure_that_identifies_everything_keeps_every_standard_error():
    """endm's K: pks's blimit finds rank 14 of 14 (tests/data/kst/blim_identify.json)."""
    ref = json.loads((KST / "blim_identify.json").read_text())["endm_K"]
    fit = json.loads(run_kstp("fit", "blim", "--responses", KST / "kstio" / "endm.dat", "--structure",
                              KST / "kstio" / "endm.kst", "--json").stdout)
    assert fit["identifiability"] == {"checked": True, "rank": ref["rank"], "parameters": ref["npar"],
                                      "nullSpaceDimension": 0, "unidentified": [], "note": None}
    assert [row["carelessSe"] is None for row in fit["items"]] == [False, False, False, True]
    assert all(row["guessSe"] > 0 for row in fit["items"])
    assert fit["items"][3]["careless"] < 2e-6  # beta_d at the boundary: no SE, and that is the reason given
    assert fit["boundaryNote"].startswith("no standard error for careless d: estimated at the boundary")


PKS_SLM = json.loads((KST / "blim_identify.json").read_text())["slm_DoignonFalmagne7"]


@pytest.mark.parametrize("method", ["ML", "MDML"])
def test_fit_slm_equals_pks_slm_without_a_graph(tmp_path, monkeypatch, method):
    """`fit slm` against pks 0.6-0's slm(DoignonFalmagne7$K, DoignonFalmagne7$N.R, method)
    (tests/data/kst/blim_identify.R)."""
    monkeypatch.chdir(tmp_path)
    result = run_kstp("fit", "slm", "--responses", KST / "kstio" / "DoignonFalmagne7.dat", "--structure",
                      KST / "kstio" / "DoignonFalmagne7.spc", "--method", method, "--json")
    assert result.exit_code == 0, result.output
    fit, ref = json.loads(result.stdout), PKS_SLM[method]
    assert (fit["iterations"], fit["df"], fit["parameters"], fit["converged"]) == (ref["iter"], ref["df"],
                                                                                   ref["npar"], True)
    for column, name in (("learning", "g"), ("careless", "beta"), ("guess", "eta")):
        assert [row[column] for row in fit["items"]] == pytest.approx(ref[name], abs=1e-10)
    found = {"".join("1" if q in s["state"] else "0" for q in "abcde"): s["probability"]
             for s in fit["stateProbabilities"]}
    assert found == pytest.approx(dict(zip(PKS_SLM["states"], ref["P_K"], strict=True)), abs=1e-10)
    assert fit["G2"] == pytest.approx(ref["G2"], abs=1e-8)
    assert not (tmp_path / ".kstp").exists()  # no graph was opened


def test_fit_slm_table_says_when_it_did_not_converge():
    result = run_kstp("fit", "slm", "--responses", KST / "kstio" / "DoignonFalmagne7.dat", "--structure",
                      KST / "kstio" / "DoignonFalmagne7.spc", "--max-iter", "5")
    assert result.exit_code == 0, result.output
    assert "5 iterations (not converged)" in result.stdout
    assert "warning: the EM stopped at --max-iter 5" in result.stderr


def test_fit_slm_refuses_a_structure_that_is_not_a_learning_space(tmp_path):
    """endm's K (pks) is not closed under union: pks's slm refuses it, and so does fit slm, naming the file."""
    result = run_kstp("fit", "slm", "--responses", KST / "kstio" / "endm.dat", "--structure",
                      KST / "kstio" / "endm.kst")
    assert result.exit_code == 1
    assert "endm.kst: the simple learning model needs a learning space" in result.stderr
    assert "not closed under union" in result.stderr


@pytest.mark.parametrize("method", ["ML", "MD"])
def test_fit_compare_equals_pks_anova_of_slm_and_blim(method):
    """`fit compare` against pks 0.6-0's anova(slm(K, N.R, method), blim(K, N.R, method)) on DoignonFalmagne7
    (tests/data/kst/surmise_validate.R)."""
    ref = json.loads((KST / "surmise_validate.json").read_text())[f"anova_slm_blim_{method}"]
    result = run_kstp("fit", "compare", "--responses", KST / "kstio" / "DoignonFalmagne7.dat", "--structure",
                      KST / "kstio" / "DoignonFalmagne7.spc", "--model", "slm", "--model", "blim", "--method", method,
                      "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["models"]
    assert [r["model"] for r in rows] == ["slm", "blim"] and [r["residDf"] for r in rows] == ref["resid_df"]
    assert [r["residDeviance"] for r in rows] == pytest.approx(ref["resid_dev"], abs=1e-6)
    assert (rows[1]["df"], rows[1]["deviance"], rows[1]["p"]) == pytest.approx(
        (ref["df"][1], ref["deviance"][1], ref["p"][1]), rel=1e-6)


def test_fit_compare_needs_two_models_and_a_learning_space_for_the_slm():
    args = ["fit", "compare", "--responses", KST / "kstio" / "endm.dat", "--structure", KST / "kstio" / "endm.kst"]
    one = run_kstp(*args, "--model", "blim")
    assert one.exit_code == 1 and "compare two or more models" in one.stderr
    slm = run_kstp(*args, "--model", "slm", "--model", "blim")
    assert slm.exit_code == 1 and "the simple learning model needs a learning space" in slm.stderr
    table = run_kstp(*args, "--model", "blim-equal", "--model", "blim")
    assert table.exit_code == 0 and "Analysis of deviance: endm.kst on endm.dat, ML" in table.stdout



@pytest.mark.parametrize(("models", "said"), [
    # each printed a table before: a negative drop in deviance, or a test of models that are not nested
    (["blim", "slm"], "slm does not contain blim: give slm before blim, most restricted first"),
    (["blim-careless-equal", "blim-guess-equal"], "blim-careless-equal and blim-guess-equal are not nested"),
    (["slm", "blim-equal", "blim"], "slm and blim-equal are not nested"),
    (["blim", "blim"], "model blim is given twice"),
])
def test_fit_compare_refuses_models_out_of_nesting_order(models, said):
    result = run_kstp("fit", "compare", "--responses", KST / "kstio" / "DoignonFalmagne7.dat", "--structure",
                      KST / "kstio" / "DoignonFalmagne7.spc", *[a for m in models for a in ("--model", m)], "--json")
    assert result.exit_code == 1 and result.stdout == ""
    assert said in result.stderr and "Traceback" not in result.stderr
    nested = run_kstp("fit", "compare", "--responses", KST / "kstio" / "DoignonFalmagne7.dat", "--structure",
                      KST / "kstio" / "DoignonFalmagne7.spc", "--model", "blim-equal", "--model",
                      "blim-careless-equal", "--model", "blim", "--json")
    assert nested.exit_code == 0
    assert [row["df"] for row in json.loads(nested.stdout)["models"]] == [None, 4, 4]


def test_fit_compare_table_keeps_a_small_p_readable():
    """MDML on DoignonFalmagne7: the SLM against the BLIM, p = 3.5e-08, was printed 0.0000."""
    result = run_kstp("fit", "compare", "--responses", KST / "kstio" / "DoignonFalmagne7.dat", "--structure",
                      KST / "kstio" / "DoignonFalmagne7.spc", "--model", "slm", "--model", "blim", "--method", "MDML")
    assert result.exit_code == 0, result.output
    assert re.search(r"│ blim  │ +18 │ +13 │ +79\.1919 │ +3 │ +37\.5471 │ 3\.52e-08 │", result.stdout)

def test_fit_prerequisites_z_test_of_the_selected_relation():
    """--z-test: DAKS's diff of the selected relation (tests/data/kst/surmise_validate.json, DAKS 2.1-3) with the
    delta method's Z (kstp.kst.iita_ztest; held to a Monte Carlo in tests/kst/test_iita_ztest.py)."""
    ref = json.loads((KST / "surmise_validate.json").read_text())["ztest_v1"]
    args = ["fit", "prerequisites", "--responses", KST / "kstio" / "DoignonFalmagne7.dat"]
    result = run_kstp(*args, "--z-test", "--json")
    assert result.exit_code == 0, result.output
    z = json.loads(result.stdout)["zTest"]
    assert z["diff"] == pytest.approx(ref["diff"], abs=1e-15) and z["conf"][0] < z["diff"] < z["conf"][1]
    assert "Z test of the selected relation's diff / N^2 = 0.0003476 against 0: Z = 3.558" in run_kstp(
        *args, "--z-test").stdout
    for extra, code, said in ((["--variant", "3"], 1, "variants 1 and 2"),
                              (["--rule", "ita"], 2, "--z-test goes with --rule iita")):
        refused = run_kstp(*args, *extra, "--z-test")
        assert refused.exit_code == code and said in refused.stderr
