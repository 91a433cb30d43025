"""`kstp kst analyse` on structure files (no graph) and on a dataset's space (each engine).

Expected values: R's pks, kst and kstMatrix on pks's example structures
(tests/data/kst/kst_reference.json, see PROVENANCE.md there), and for the dataset, brute
force from the definitions over the states ``kst space --enumerate`` lists.
"""

from __future__ import annotations

import io
import json
from itertools import combinations
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from kstp.cli.main import cli
from kstp.loaders.kstio import read_kst_file
from tests.cli.test_cli import ingest_toy, kstp, toy_files  # noqa: F401 (fixtures)

KST = Path(__file__).resolve().parents[1] / "data" / "kst"
R = json.loads((KST / "kst_reference.json").read_text())


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_analyse_a_structure_file_equals_r():
    result = run("kst", "analyse", "--structure", KST / "kstio" / "endm.kst", "--json")
    assert result.exit_code == 0, result.output
    s, ref = json.loads(result.stdout), R["endm_K"]
    assert (s["states"], s["isStructure"], s["isSpace"], s["base"]) == (7, True, ref["is_space"], None)
    forward = [q for q, ok in zip(ref["items"], ref["forward_graded"], strict=True) if ok]  # pks
    assert s["forwardGraded"] == forward and s["learningPaths"] == ref["learning_paths_kstMatrix"]
    assert s["atoms"] == sum(len(a) if isinstance(a, list) else 1 for a in ref["atoms"].values())  # kst katoms


def test_analyse_tables_equal_r():
    base = run("kst", "analyse", "--structure", KST / "kstio" / "DoignonFalmagne7.spc", "--show", "base",
               "--format", "csv")
    assert base.exit_code == 0, base.output
    read = pd.read_csv(io.StringIO(base.stdout))  # one table, its parts named in the column `table`
    assert list(read.columns) == ["table", "source", "show", "state", "size"]
    assert read["table"].tolist() == ["summary"] + ["rows"] * (len(read) - 1)
    rows = json.loads(run("kst", "analyse", "--structure", KST / "kstio" / "DoignonFalmagne7.spc", "--show", "base",
                          "--json").stdout)["rows"]
    patterns = sorted("".join(str(int(q in r["state"])) for q in "abcde") for r in rows)
    assert patterns == sorted(R["DoignonFalmagne7"]["base"])  # kst kbase
    paths = json.loads(run("kst", "analyse", "--structure", KST / "kstio" / "DoignonFalmagne7.spc", "--show",
                           "paths", "--from", "a", "--to", "a,b,c,d,e", "--json").stdout)
    assert paths["count"] == len(R["DoignonFalmagne7_gradations_a_to_Q"]) == 3  # kstMatrix kmgradations
    assert [r["steps"] for r in paths["rows"]][0] == [["b"], ["c"], ["d"], ["e"]]
    relation = json.loads(run("kst", "analyse", "--structure", KST / "kstio" / "DoignonFalmagne7.spr", "--show",
                              "relation", "--json").stdout)["rows"]
    expected = [(p, q) for i, p in enumerate("abcde") for j, q in enumerate("abcde")
                if i != j and R["DoignonFalmagne7"]["relation"][i][j]]  # kst as.relation
    assert [(r["prerequisite"], r["item"]) for r in relation] == expected
    text = run("kst", "analyse", "--structure", KST / "kstio" / "DoignonFalmagne7.spc", "--show", "paths",
               "--paths", "2")
    assert text.stdout.startswith("6 learning paths from {} to {a, b, c, d, e} in DoignonFalmagne7.spc: space "
                                  "(srbt); the first 2:")


@pytest.mark.parametrize(("args", "code", "text"), [
    (["--structure", KST / "kstio" / "endm.kst", "--dataset", "toy"], 2, "contradict each other"),
    ([], 2, "give --dataset"),
    (["--structure", KST / "kstio" / "endm.kst", "--from", "a"], 2, "--from and --to go with --show paths"),
    (["--structure", KST / "kstio" / "endm.kst", "--show", "paths", "--from", "a"], 1, "{a} is not a state"),
    (["--structure", KST / "kstio" / "endm.kst", "--show", "base"], 1, "not a knowledge space"),
    # issue 48: a data file's rows were analysed as states (kstIO's read_kstructure refuses the file)
    (["--structure", KST / "kstio" / "endm.dat"], 1, "endm.dat holds response patterns (its #SRBT line says data), "
                                                     "not states"),
])
def test_analyse_refusals(args, code, text):
    result = run("kst", "analyse", *args)
    assert result.exit_code == code and text in " ".join(result.output.split())


def test_simulate_a_structure_file_is_seeded_and_fit_recovers_its_rates(tmp_path):
    """endm's K (pks), every state equally likely, beta = eta = 0.1 (pks's endm example rates): a fit of
    20,000 drawn learners lands within 0.03 of 0.1 (the spread of repeated draws: under 0.01)."""
    args = ["kst", "simulate", "--structure", KST / "kstio" / "endm.kst", "--learners", "20000", "--seed", "9",
            "--careless", "0.1", "--guess", "0.1"]
    assert run(*args, "--to", tmp_path / "a.dat").exit_code == 0
    assert run(*args, "--to", tmp_path / "b.dat").exit_code == 0
    assert (tmp_path / "a.dat").read_bytes() == (tmp_path / "b.dat").read_bytes()  # the same seed, the same data
    fit = json.loads(run("fit", "blim", "--responses", tmp_path / "a.dat", "--structure", KST / "kstio" / "endm.kst",
                         "--json").stdout)
    rates = [r[k] for r in fit["items"] for k in ("careless", "guess")]
    assert max(abs(r - 0.1) for r in rates) < 0.03 and fit["learners"] == 20000
    summary = json.loads(run(*args[:-4], "--json").stdout)
    assert summary["source"].endswith("all states equally likely") and summary["careless"] == [0.1] * 4


def _brute(states: list[frozenset[str]], domain: list[str]) -> dict:
    present = set(states)
    covers = {(a, b) for a in states for b in states if a < b and not any(a < m < b for m in states)}

    def chains(state):
        return 1 if state == frozenset(domain) else sum(chains(b) for a, b in covers if a == state)

    base = {s for s in states if s and frozenset().union(*(t for t in states if t < s)) != s}
    return {"isSpace": all(a | b in present for a, b in combinations(states, 2)),
            "base": len(base), "learningPaths": chains(frozenset()),
            "forwardGraded": [q for q in domain if all(s | {q} in present for s in states)]}


def test_analyse_a_dataset_space_equals_brute_force(kstp, toy_files):  # noqa: F811
    ingest_toy(kstp, toy_files)
    assert kstp("derive", "question-prerequisites", "--dataset", "toy").exit_code == 0
    listed = json.loads(kstp("kst", "space", "--dataset", "toy", "--enumerate", "--json").stdout)
    domain = [f"toy:q{i}" for i in range(1, 9)]
    states = [frozenset(r["state"]) for r in listed["states"]]
    result = kstp("kst", "analyse", "--dataset", "toy", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["states"] == len(states) and summary["isQuasiOrdinal"] and summary["isWellGraded"]
    assert {k: summary[k] for k in ("isSpace", "base", "learningPaths", "forwardGraded")} == _brute(states, domain)
    steps = json.loads(kstp("kst", "analyse", "--dataset", "toy", "--show", "paths", "--from", "q1",
                            "--to", "q1,q2,q3", "--json").stdout)
    assert steps["count"] == 2 and [r["steps"] for r in steps["rows"]] == [[["toy:q2"], ["toy:q3"]],
                                                                           [["toy:q3"], ["toy:q2"]]]


def test_a_family_without_the_empty_set_is_neither_a_structure_nor_a_space_and_says_why(tmp_path):
    """{a}, {a, b, c}: closed under union, yet no space (a space is a structure); the blanks are explained."""
    path = tmp_path / "family.csv"
    path.write_text("a,b,c\n1,0,0\n1,1,1\n")
    result = run("kst", "analyse", "--structure", path, "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["isStructure"], summary["isSpace"], summary["base"], summary["learningPaths"]) == (
        False, False, None, None)
    assert summary["notes"] == ["not a knowledge structure (the empty set or Q is missing): no base, "
                                "no learning paths"]


@pytest.mark.parametrize(("text", "said"), [
    # issue 48: the first read as a 2-item structure with exit 0, the others blamed a repeated state
    ("a,b,c\n0,0,0\n1,0,0\n1,1,0.5\n", "k.csv:4: column 3 ('c') holds '0.5'"),
    ("a,b,c\n0,0,0\n1,0,0\n1,1,0\n1,1,2\n", "k.csv:5: column 3 ('c') holds '2'"),
    ("a,b,c\n2,0,0\n1,0,0\n1,1,1\n", "k.csv:2: column 1 ('a') holds '2'"),
    ("a;b;c\n0;0;0\n1;1;1\n", "k.csv:1: cells separated by ';'"),
])
def test_analyse_refuses_a_cell_that_is_not_0_1_naming_line_and_column(tmp_path, text, said):
    path = tmp_path / "k.csv"
    path.write_text(text)
    result = run("kst", "analyse", "--structure", path)
    assert result.exit_code == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"Error: {path.parent}/") and said in line, line


def test_analyse_and_fit_blim_name_the_columns_of_a_file_without_header_alike(tmp_path):
    """Issue 48: one rule for unnamed columns, kstIO's letters, in kst analyse and fit blim; the fit of
    endm's K written as a CSV without header equals pks's (tests/data/kst/blim_structures.json)."""
    states = read_kst_file(KST / "kstio" / "endm.kst").matrix
    path = tmp_path / "endm.csv"
    path.write_text("".join(",".join(map(str, row)) + "\n" for row in states))
    analysed = json.loads(run("kst", "analyse", "--structure", path, "--show", "atoms", "--json").stdout)
    assert sorted({r["item"] for r in analysed["rows"]}) == ["a", "b", "c", "d"]
    result = run("fit", "blim", "--responses", KST / "kstio" / "endm.dat", "--structure", path, "--json")
    assert result.exit_code == 0, result.output
    fit = json.loads(result.stdout)
    assert [row["questionId"] for row in fit["items"]] == ["a", "b", "c", "d"]
    assert fit["G2"] == pytest.approx(json.loads((KST / "blim_structures.json").read_text())["endm_K/ML"]["G2"],
                                      abs=1e-6)
    assert "unnamed columns taken as a ... d in order" in fit["structureSource"]


def test_validate_files_equals_kst_kvalidate():
    """`kst validate` against kst 0.5-4's kvalidate and kstMatrix's kmvalidate on DoignonFalmagne7
    (tests/data/kst/surmise_validate.R)."""
    ref = json.loads((KST / "surmise_validate.json").read_text())["validate_DoignonFalmagne7"]
    result = CliRunner().invoke(cli, ["kst", "validate", "--responses", str(KST / "kstio" / "DoignonFalmagne7.dat"),
                                      "--structure", str(KST / "kstio" / "DoignonFalmagne7.spc"), "--json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert (found["gamma"], found["VC"], found["DI"], found["DA"]) == pytest.approx(
        (ref["gamma"], ref["vc"], ref["di"], ref["da"]), abs=1e-12)
    assert found["distances"] == [ref["km_dist"][str(d)] for d in range(6)] and found["learners"] == 1000
    # the keys fit blim and fit slm name their structure by: "structure" held the note before
    assert (found["responses"], found["structure"], found["structureSource"]) == (
        "DoignonFalmagne7.dat", "DoignonFalmagne7.spc",
        "DoignonFalmagne7.spc: 9 states (space, srbt); unnamed columns taken as a ... e in order")
    text = CliRunner().invoke(cli, ["kst", "validate", "--responses", str(KST / "kstio" / "DoignonFalmagne7.dat"),
                                    "--structure", str(KST / "kstio" / "DoignonFalmagne7.spc")])
    assert "0.7239" in text.stdout and "distance to the nearest state: 0: 760, 1: 226, 2: 14" in text.stdout
    alone = CliRunner().invoke(cli, ["kst", "validate", "--responses", str(KST / "kstio" / "DoignonFalmagne7.dat")])
    assert alone.exit_code == 1 and "needs a structure file" in alone.stderr


def test_validate_says_why_da_is_not_defined_when_every_pattern_is_a_state(tmp_path):
    """A power set (here of 1 item) leaves dpot = 0: DA was NaN, a blank cell with no word in the table and
    null in --json with no note (and a NaN in Python's Validation.as_dict)."""
    structure, responses = tmp_path / "k.kst", tmp_path / "r.dat"
    structure.write_text("#SRBT v2.0 structure ASCII\n1\n2\n0\n1\n")
    responses.write_text("#SRBT v2.0 data ASCII\n1\n3\n0\n1\n1\n")
    args = ["kst", "validate", "--responses", str(responses), "--structure", str(structure)]
    found = json.loads(CliRunner().invoke(cli, [*args, "--json"]).stdout)
    assert (found["DI"], found["DA"], found["dpot"]) == (0.0, None, 0.0)
    assert found["daNote"] == ("DA is not defined: every one of the 2^items patterns is a state, so DA = DI / dpot "
                               "divides by dpot = 0")
    text = CliRunner().invoke(cli, args)
    assert text.exit_code == 0 and "│ -     │ -  │ 0.0000 │ -  │        3 │      2 │" in text.stdout
    assert "DA is not defined" in text.stderr


@pytest.mark.parametrize(("show", "what"), [("surmisefunction", "clause"), ("atoms", "atom")])
def test_analyse_says_which_item_no_state_holds(tmp_path, show, what):
    """{}, {a} on items a, b: b has no clause; the table left it out without a word."""
    path = tmp_path / "k.csv"
    path.write_text("a,b\n0,0\n1,0\n")
    args = ["kst", "analyse", "--structure", str(path), "--show", show]
    found = json.loads(CliRunner().invoke(cli, [*args, "--json"]).stdout)
    assert [row["item"] for row in found["rows"]] == ["a"]
    note = f"no state holds b: it has no {what} (not a knowledge structure: Q is missing)"
    assert found["notes"] == [note]
    text = CliRunner().invoke(cli, args)
    assert text.exit_code == 0 and f"note: {note}" in text.stderr
