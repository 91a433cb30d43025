"""The kstp command line through click's runner: outputs, exit codes, bad input."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from kstp.cli.main import cli
from tests.conftest import write_toy_files


@pytest.fixture
def kstp(graph_location):
    """Run kstp on the test's graph (each engine in turn)."""
    graph = graph_location

    def run(*args, input=None):
        return CliRunner().invoke(cli, ["--graph", graph, *map(str, args)], input=input)

    return run


@pytest.fixture
def toy_files(tmp_path):
    return write_toy_files(tmp_path)


def ingest_toy(kstp, files):
    result = kstp("ingest", "standards", files["concepts"], "--edges", files["edges"], "--framework", "toy")
    assert result.exit_code == 0
    assert kstp("ingest", "items", files["items"], "--dataset", "toy", "--framework", "toy").exit_code == 0
    assert kstp("ingest", "responses", files["answers"], "--dataset", "toy").exit_code == 0


def test_full_flow_with_json_outputs(kstp, toy_files, tmp_path):
    result = kstp("ingest", "standards", toy_files["concepts"], "--edges", toy_files["edges"], "--framework", "toy",
                  "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["written"]["PREREQUISITE_OF"] == {"created": 5, "updated": 0, "unchanged": 0}
    assert kstp("ingest", "items", toy_files["items"], "--dataset", "toy", "--framework", "toy").exit_code == 0
    result = kstp("ingest", "responses", toy_files["answers"], "--dataset", "toy", "--json")
    assert json.loads(result.stdout)["written"]["ANSWERED"]["created"] == 11
    result = kstp("derive", "question-prerequisites", "--dataset", "toy", "--json")
    # concept level (A -> B, A -> C, B -> D, C -> D, D -> E): prerequisite concepts of q1..q7 are
    # 0, 1 (A), 1 (A), 1 (A, for B and C), 3 (A B C), 4 (A B C D), 0 -> 10/7; of A..F 0 1 1 3 4 0 -> 9/6
    assert json.loads(result.stdout) == [{"dataset": "toy", "rule": "strict", "questions": 8,
                                          "questionsWithConcepts": 7, "edges": 12, "meanPerQuestion": 1.5,
                                          "prerequisiteConceptsPerQuestion": pytest.approx(10 / 7),
                                          "prerequisiteConceptsPerConcept": 1.5}]
    switched = kstp("derive", "question-prerequisites", "--rule", "reflexive")
    assert "toy: 12 edges derived with the strict rule replaced by the reflexive rule's " in switched.stderr
    kept = kstp("derive", "question-prerequisites", "--json")  # no rule given: each dataset keeps its own
    assert "replaced" not in kept.stderr and json.loads(kept.stdout)[0]["rule"] == "reflexive"
    assert "replaced" in kstp("derive", "question-prerequisites", "--rule", "strict").stderr
    result = kstp("evaluate", "psr", "--out", tmp_path / "out", "--min-prerequisites", "3", "--json")
    assert result.exit_code == 0, result.output
    [summary] = json.loads(result.stdout)
    assert summary["psrMicro"] == pytest.approx(0.575) and summary["learnersWithPsr"] == 2
    assert {p.name for p in (tmp_path / "out").iterdir()} == {
        "psr_summary.csv", "psr_summary.json", "psr_distribution.png", "psr_learners_toy.csv"}
    assert json.loads((tmp_path / "out/psr_summary.json").read_text())[0]["psrMacro"] == pytest.approx(19 / 36)
    stats = json.loads(kstp("db", "stats", "--json").stdout)
    assert stats["nodes"]["Question"] == 8 and stats["relationships"]["ANSWERED"] == 11
    assert stats["datasets"][0]["questionPrerequisites"] == 12
    assert stats["frameworks"][0]["prerequisitesPerConcept"] == pytest.approx(5 / 6)


def test_reingest_reports_unchanged(kstp, toy_files):
    ingest_toy(kstp, toy_files)
    again = json.loads(kstp("ingest", "responses", toy_files["answers"], "--dataset", "toy", "--json").stdout)
    assert again["written"]["ANSWERED"] == {"created": 0, "updated": 0, "unchanged": 11}


def test_query_by_name_with_typed_params(kstp, toy_files):
    ingest_toy(kstp, toy_files)
    kstp("derive", "question-prerequisites", "--dataset", "toy")
    result = kstp("query", "outer_fringe", "-p", "dataset=toy", "-p", "questionIds=toy:q1,toy:q2", "--format", "json")
    assert result.exit_code == 0, result.output
    assert [r["questionId"] for r in json.loads(result.stdout)] == ["toy:q3", "toy:q4", "toy:q7", "toy:q8"]
    local = kstp("query", "outer_fringe", "-p", "dataset=toy", "-p", "questionIds=q1,q2", "--format", "json")
    assert local.exit_code == 0 and json.loads(local.stdout) == json.loads(result.stdout)  # prefixed as kst does
    result = kstp("query", "concept_ancestors", "-p", "conceptId=toy:D", "--format", "csv")
    assert result.stdout.splitlines() == ["conceptId,code", "toy:A,A", "toy:B,B", "toy:C,C"]
    listing = json.loads(kstp("query", "--list", "--format", "json").stdout)
    assert {"name": "psr_by_learner", "area": "kst"}.items() <= next(
        q for q in listing if q["name"] == "psr_by_learner").items()


@pytest.mark.parametrize("args, code, message", [
    (["query", "outer_fringes"], 2, "Unknown query 'outer_fringes'. Did you mean: outer_fringe"),
    (["query", "psr_distribution", "-p", "dataset=toy", "-p", "minPrerequisites=five"], 2,
     "$minPrerequisites must be integer, got 'five'"),
    (["query", "knowledge_state", "-p", "dataset=toy"], 2, "missing parameter $learnerId (string)"),
    (["derive", "question-prerequisites", "--dataset", "nope"], 1, "unknown dataset 'nope'"),
])
def test_errors_exit_with_message(kstp, args, code, message):
    result = kstp(*args)
    assert result.exit_code == code
    assert message in result.stderr and "Traceback" not in result.output


def test_cycle_is_refused_and_graph_unchanged(kstp, toy_files):
    toy_files["edges"].write_text(toy_files["edges"].read_text() + "E,A\n")
    result = kstp("ingest", "standards", toy_files["concepts"], "--edges", toy_files["edges"], "--framework", "toy")
    assert result.exit_code == 1
    assert "prerequisite cycle" in result.stderr and "toy_edges.csv (line" in result.stderr
    assert json.loads(kstp("db", "stats", "--json").stdout)["nodes"] == {}


def test_unknown_item_in_responses_names_file_and_line(kstp, toy_files):
    ingest_toy(kstp, toy_files)
    toy_files["answers"].write_text("learner,item,correct\nL9,q1,1\nL9,q42,0\n")
    result = kstp("ingest", "responses", toy_files["answers"], "--dataset", "toy")
    assert result.exit_code == 1
    assert "unknown item 'q42' at" in result.stderr and "toy_answers.csv:3" in result.stderr
    stats = json.loads(kstp("db", "stats", "--json").stdout)
    assert stats["nodes"]["Learner"] == 3 and stats["relationships"]["ANSWERED"] == 11


def test_responses_before_items_and_usage_errors(kstp, toy_files):
    result = kstp("ingest", "responses", toy_files["answers"], "--dataset", "toy")
    assert result.exit_code == 1 and "has no questions in the graph; ingest its items first" in result.stderr
    assert kstp("ingest", "responses", toy_files["answers"]).exit_code == 2
    assert kstp("ingest", "items", toy_files["items"], "--dataset", "d", "--format", "concept-map").exit_code == 2


def test_reset_asks_then_empties(kstp, toy_files):
    ingest_toy(kstp, toy_files)
    assert kstp("db", "reset", input="n\n").exit_code == 1
    assert json.loads(kstp("db", "stats", "--json").stdout)["nodes"]["Concept"] == 6
    assert kstp("db", "reset", "--yes").exit_code == 0
    assert json.loads(kstp("db", "stats", "--json").stdout)["nodes"] == {}


def test_help_explains_every_command():
    runner = CliRunner()
    for args in (["--help"], ["ingest", "items", "--help"], ["evaluate", "psr", "--help"], ["demo", "--help"]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 0 and "Example" in result.output


def test_demo_on_real_data(data_root, tmp_path, neo4j_server, monkeypatch):
    """The README's main job: real curriculum, real students, Table-2-shaped output. Run on
    both engines in one test because it compares them: `kstp --graph neo4j://... demo`
    prints exactly what the embedded demo prints, and its PSR files agree to 1e-12. A second
    embedded demo is a no-op (the graph files stay byte-identical); on Neo4j, with no files to
    fingerprint, it runs again and changes nothing."""
    import pandas as pd

    from tests.conftest import connect_neo4j

    runs = {}
    for engine, graph in (("ladybug", f"ladybug:{tmp_path / 'graph'}"), ("neo4j", neo4j_server.location)):
        if engine == "neo4j":
            with connect_neo4j(neo4j_server) as emptied:
                emptied.reset()
            monkeypatch.setenv("NEO4J_USER", neo4j_server.user)
            monkeypatch.setenv("NEO4J_PASSWORD", neo4j_server.password)

        def kstp(*args, graph=graph):
            return CliRunner().invoke(cli, ["--graph", graph, *map(str, args)])

        out = tmp_path / f"results-{engine}"
        result = kstp("demo", "--data", data_root, "--out", out)
        assert result.exit_code == 0, result.output
        assert re.search(r"^\[9/9\] Eq. 1 on frcsub \(reflexive\): done in \d+\.\d s$", result.stderr, re.MULTILINE)
        summary = {r["dataset"]: r for r in json.loads((out / "psr_summary.json").read_text())}
        assert (summary["probability_pks"]["learners"], summary["frcsub"]["learners"]) == (504, 536)
        assert round(summary["frcsub"]["accuracy"], 3) == 0.534
        stats = json.loads(kstp("db", "stats", "--json").stdout)
        xes = next(d for d in stats["datasets"] if d["datasetId"] == "xes3g5m")
        assert xes["questionPrerequisites"] == 1_234_207
        files = sorted(p for p in tmp_path.iterdir() if p.name.startswith("graph"))
        before = {p.name: p.read_bytes() for p in files}
        again = kstp("demo", "--data", data_root, "--out", out, "--json")  # its tables as one document
        assert again.exit_code == 0 and json.loads((out / "psr_summary.json").read_text())[0] == \
            summary["probability_pks"]
        document = json.loads(again.stdout)
        assert document["psr"] == json.loads((out / "psr_summary.json").read_text())
        if engine == "neo4j":  # no files to fingerprint: it ran again, so it has every table
            assert document["unchanged"] is False and document["curriculum"][0]["concepts"] == 480
            assert {d["datasetId"]: d["questions"] for d in document["datasets"]}["frcsub"] == 20
        if engine == "ladybug":
            assert document["unchanged"] is True  # the graph stayed closed
            assert "nothing changed since the last demo" in again.stderr
            assert {p.name: p.read_bytes() for p in files} == before  # no write reached the graph
            (data := tmp_path / "data").mkdir()  # another data folder: the demo runs again
            for folder in ("standards", "llm_kst", "responses"):
                (data / folder).symlink_to((data_root / folder).resolve())  # KSTP_DATA may be relative
            third = kstp("demo", "--data", data, "--out", out)
            assert third.exit_code == 0 and "nothing changed" not in third.stderr and "[9/9]" in third.stderr
        runs[engine] = (result.stdout, out)
    assert runs["neo4j"][0] == runs["ladybug"][0]
    names = sorted(p.name for p in runs["ladybug"][1].glob("*.csv"))
    assert names == sorted(p.name for p in runs["neo4j"][1].glob("*.csv")) and len(names) >= 3
    for name in names:
        want, got = (pd.read_csv(runs[e][1] / name) for e in ("ladybug", "neo4j"))
        pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=0, atol=1e-12)


def test_demo_without_data_says_what_to_set(kstp, tmp_path):
    result = kstp("demo", "--data", tmp_path / "nowhere")
    assert result.exit_code == 1 and "set KSTP_DATA" in result.stderr


def test_grade_shows_extraction_and_reason():
    runner = CliRunner()
    result = runner.invoke(cli, ["grade", "--gold", "9500", "--json", r"so \boxed{\$9{,}500}"])
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"kind": "number", "extracted": "9500", "method": "boxed", "correct": True,
                                         "reason": "correct", "trace": None, "reading": "number 9500"}
    result = runner.invoke(cli, ["grade", "--gold", "D", "That is drastic."])
    assert result.stdout.splitlines() == ["extracted: (none)", "type:      choice", "gold:      option letter D",
                                          "verdict:   incorrect (no answer found)"]
    result = runner.invoke(cli, ["grade", "--gold", "7", "-"], input="The answer is 7.\n")
    assert "correct (correct)" in result.stdout
    assert runner.invoke(cli, ["grade", "--gold", "abc", "--type", "number", "1"]).exit_code == 2


def test_evaluate_answers_with_local_model(kstp, data_root, tmp_path):
    folder = data_root / "responses/frcsub"
    kstp("ingest", "items", folder / "items.csv", "--dataset", "frcsub", "--qmatrix", folder / "qmatrix.csv")
    args = ["evaluate", "answers", "--dataset", "frcsub", "--model", "smollm2", "--backend", "local", "--limit", "2",
            "--gen-kwargs", "max_tokens=16", "--output-path", tmp_path / "out", "--log-samples", "--json"]
    result = kstp(*args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["questions"], summary["samples"], summary["generatedNow"]) == (2, 2, 2)
    logged = (tmp_path / "out" / (summary["runId"].replace(":", "_") + ".samples.jsonl")).read_text().splitlines()
    assert [json.loads(line)["questionId"] for line in logged] == ["frcsub:Item01", "frcsub:Item02"]
    assert json.loads(kstp(*args).stdout)["generatedNow"] == 0
    changed = kstp(*args[:-6], "--gen-kwargs", "max_tokens=8")
    assert changed.exit_code == 1 and "pass --new-run" in changed.stderr
    assert kstp(*args[:-6], "--gen-kwargs", "max_tokens=8", "--new-run").exit_code == 0


@pytest.mark.parametrize("extra, message", [
    (["--gen-kwargs", "temp=0.2"], "unknown key 'temp'"),
    (["--gen-kwargs", "temperature"], "'temperature' must read key=value"),
    (["--gen-kwargs", "context=abc"], "invalid sampling: context must be a whole number >= 2, not 'abc'"),
    (["--gen-kwargs", "max_tokens=1e3"], "invalid sampling: max_tokens must be a whole number >= 1, not 1000.0"),
    (["--backend", "local", "--base-url", "http://x"], "--base-url goes with --backend openai"),
])
def test_evaluate_answers_usage_errors(kstp, extra, message):
    result = kstp("evaluate", "answers", "--dataset", "d", "--model", "m", *extra)
    assert result.exit_code == 2 and message in result.stderr


def test_kst_fringe_and_check_validate_the_set(kstp, toy_files):
    ingest_toy(kstp, toy_files)
    kstp("derive", "question-prerequisites", "--dataset", "toy")
    result = kstp("kst", "fringe", "--dataset", "toy", "--state", "q1,toy:q2", "--json")
    assert json.loads(result.stdout) == {"dataset": "toy", "state": ["toy:q1", "toy:q2"], "fringe": "standard",
                                         "innerFringe": ["toy:q2"], "outerFringe": ["toy:q3", "toy:q4", "toy:q7",
                                                                                    "toy:q8"]}
    refused = kstp("kst", "fringe", "--dataset", "toy", "--state", "q5")
    assert refused.exit_code == 1 and "toy:q5 lacks toy:q1, toy:q2, toy:q3, toy:q4" in refused.stderr
    unknown = kstp("kst", "fringe", "--dataset", "toy", "--state", "zzz")
    assert unknown.exit_code == 1 and "'toy:zzz' not a question of dataset 'toy'" in unknown.stderr


def test_kst_check_exits_1_on_a_non_state_and_names_what_breaks_closure(kstp, toy_files):
    ingest_toy(kstp, toy_files)
    kstp("derive", "question-prerequisites", "--dataset", "toy")
    check = kstp("kst", "check", "--dataset", "toy", "--state", "q2,q5")
    assert check.exit_code == 1
    assert check.stdout.splitlines() == ["not a knowledge state:", "  toy:q2 lacks toy:q1",
                                         "  toy:q5 lacks toy:q1, toy:q3, toy:q4"]
    verdict = kstp("kst", "check", "--dataset", "toy", "--state", "q2", "--json")
    assert verdict.exit_code == 1
    assert json.loads(verdict.stdout) == {"isState": False, "missingPrerequisites": {"toy:q2": ["toy:q1"]}}
    state = kstp("kst", "check", "--dataset", "toy", "--state", "q1,q2", "--json")
    assert state.exit_code == 0 and json.loads(state.stdout) == {"isState": True, "missingPrerequisites": {}}


@pytest.mark.parametrize("args", [["fringe", "--state", "q5"], ["check", "--state", "q5"], ["space"]])
def test_kst_before_derive_says_every_question_is_free(kstp, toy_files, args):
    ingest_toy(kstp, toy_files)
    result = kstp("kst", args[0], "--dataset", "toy", *args[1:])
    assert result.exit_code == 0, result.output
    assert ("note: no question of dataset toy has a prerequisite, so every question is free and every set is a "
            "knowledge state; derive them first: kstp derive question-prerequisites --dataset toy") in result.stderr
    kstp("derive", "question-prerequisites", "--dataset", "toy")
    assert "note:" not in kstp("kst", "fringe", "--dataset", "toy", "--state", "q1").stderr


@pytest.mark.parametrize("args", [
    ["query", "nosuchquery"], ["query", "knowledge_state", "-p", "dataset"],
    ["query", "psr_distribution", "-p", "dataset=x", "-p", "minPrerequisites=abc"],
    ["query", "outer_fringe", "-p", "dataset=x", "-p", "bogus=1"],
])
def test_query_usage_errors_exit_2(kstp, args):
    assert kstp(*args).exit_code == 2


def test_graph_location_errors(tmp_path):
    runner = CliRunner()
    bad = runner.invoke(cli, ["--graph", "garbage", "db", "stats"])
    assert bad.exit_code == 2 and "graph location 'garbage'" in bad.stderr
    folder = runner.invoke(cli, ["--graph", f"ladybug:{tmp_path}", "db", "stats"])
    assert folder.exit_code == 1 and "is a folder" in folder.stderr


def test_list_param_values_become_strings(kstp, toy_files):
    ingest_toy(kstp, toy_files)
    numbers = kstp("query", "state_violations", "-p", "dataset=toy", "-p", "questionIds=[1,2]", "--format", "json")
    assert numbers.exit_code == 2 and "dataset toy has no question 1, 2" in numbers.stderr  # read as ids, not ints
    result = kstp("query", "state_violations", "-p", "dataset=toy", "-p", 'questionIds=["q1","q2"]', "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_psr_bootstrap_of_one_resample_is_a_usage_error(kstp):
    result = kstp("evaluate", "psr", "--dataset", "toy", "--bootstrap", "1")
    assert result.exit_code == 2 and "give 0 (no intervals) or at least 2 resamples, not 1" in result.stderr


def test_psr_before_derive_says_what_to_do(kstp, toy_files, tmp_path):
    ingest_toy(kstp, toy_files)
    result = kstp("evaluate", "psr", "--dataset", "toy", "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    assert "derive question prerequisites first" in result.stderr


def test_learners_without_correct_answers(kstp, toy_files, tmp_path):
    ingest_toy(kstp, toy_files)
    kstp("derive", "question-prerequisites", "--dataset", "toy")
    toy_files["answers"].write_text("learner,item,correct\nZ1,q1,0\nZ2,q2,0\n")
    kstp("ingest", "responses", toy_files["answers"], "--dataset", "toy")
    result = kstp("evaluate", "psr", "--dataset", "toy", "--out", tmp_path / "o", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)[0]["learners"] == 5


@pytest.mark.parametrize("dataset", ["a:b", "", " x", "math/grade1", "a\\b", ".."])
def test_dataset_ids_with_separator_are_refused(kstp, toy_files, dataset):
    ingest_toy(kstp, toy_files)
    result = kstp("ingest", "items", toy_files["items"], "--dataset", dataset, "--framework", "toy")
    assert result.exit_code == 1 and "must be non-empty, without ':'" in result.stderr


def test_header_only_and_wrong_delimiter_responses(kstp, toy_files):
    ingest_toy(kstp, toy_files)
    toy_files["answers"].write_text("learner,q1,q2\n")
    result = kstp("ingest", "responses", toy_files["answers"], "--dataset", "toy", "--format", "wide")
    assert result.exit_code == 1 and "toy_answers.csv: a header and no rows: nothing to ingest" in result.stderr
    toy_files["answers"].write_text("learner;q1;q2\nL1;1;0\n")
    result = kstp("ingest", "responses", toy_files["answers"], "--dataset", "toy")
    assert result.exit_code == 1 and "kstp reads comma-separated files" in result.stderr


def test_kst_space_count_enumerate_sample_store(kstp, toy_files):
    ingest_toy(kstp, toy_files)
    kstp("derive", "question-prerequisites", "--dataset", "toy")
    assert json.loads(kstp("kst", "space", "--dataset", "toy", "--json").stdout) == {
        "dataset": "toy", "items": 8, "classes": 8, "states": 44}
    listed = json.loads(kstp("kst", "space", "--dataset", "toy", "--enumerate", "--json").stdout)
    assert len(listed["states"]) == 44 and listed["states"][0] == {
        "state": [], "size": 0, "innerFringe": [], "outerFringe": ["toy:q1", "toy:q7", "toy:q8"]}
    refused = kstp("kst", "space", "--dataset", "toy", "--enumerate", "--limit", "10")
    assert refused.exit_code == 1 and "has 44 states, more than the limit of 10; draw a sample" in refused.stderr
    drawn = json.loads(kstp("kst", "space", "--dataset", "toy", "--sample", "5", "--seed", "2", "--store",
                            "--json").stdout)
    assert len(drawn["states"]) == 5 and 1 <= drawn["stored"] <= 5
    again = json.loads(kstp("kst", "space", "--dataset", "toy", "--sample", "5", "--seed", "2", "--json").stdout)
    assert again["states"] == drawn["states"]


def test_kst_space_too_large_is_refused_before_it_is_built_and_sampling_works(kstp, toy_files, tmp_path):
    # 300 questions without concepts: no prerequisites, 2^300 states; listing or counting them by
    # enumeration would never end, so a prompt refusal shows nothing was enumerated
    ingest_toy(kstp, toy_files)
    big = tmp_path / "big.jsonl"
    big.write_text("\n".join(json.dumps({"id": f"b{k:03d}", "text": "t", "answer": "1"}) for k in range(300)))
    assert kstp("ingest", "items", big, "--dataset", "big", "--framework", "toy").exit_code == 0
    assert kstp("derive", "question-prerequisites", "--dataset", "big").exit_code == 0
    for args in ([], ["--enumerate"], ["--enumerate", "--limit", "1000000"]):
        refused = kstp("kst", "space", "--dataset", "big", *args)
        assert refused.exit_code == 1, refused.output
        assert "at least 2^300 = 2.04e+90 states (300 questions without prerequisites)" in refused.stderr
        assert "draw a sample instead (kstp kst space --sample N)" in refused.stderr
    drawn = json.loads(kstp("kst", "space", "--dataset", "big", "--sample", "2", "--json").stdout)
    assert len(drawn["states"]) == 2 and all(row["innerFringe"] == row["state"] for row in drawn["states"])


def test_kst_fringe_readings_on_equally_informative_questions(kstp, data_root):
    # probability under the reflexive rule: b105 and b106 need the same skills (cp, pb), as b101 (pb)
    # and b102 (cp) together; neither can be added alone, the notions reading adds the pair
    folder = data_root / "responses" / "probability_pks"
    ingested = kstp("ingest", "items", folder / "items.csv", "--dataset", "p", "--qmatrix", folder / "qmatrix.csv")
    assert ingested.exit_code == 0
    assert kstp("derive", "question-prerequisites", "--dataset", "p", "--rule", "reflexive").exit_code == 0
    standard = json.loads(kstp("kst", "fringe", "--dataset", "p", "--state", "b101,b102", "--json").stdout)
    notions = json.loads(kstp("kst", "fringe", "--dataset", "p", "--state", "b101,b102", "--fringe", "notions",
                              "--json").stdout)
    assert standard["fringe"] == "standard" and notions["fringe"] == "notions"
    assert set(notions["outerFringe"]) - set(standard["outerFringe"]) == {"p:b105", "p:b106"}
    listed = json.loads(kstp("kst", "space", "--dataset", "p", "--enumerate", "--json").stdout)
    assert len(listed["states"]) == 58 and not any("p:b105" in r["outerFringe"] for r in listed["states"])
    bad = kstp("kst", "fringe", "--dataset", "p", "--fringe", "classes")
    assert bad.exit_code == 2 and "'classes' is not one of 'standard', 'notions'" in bad.stderr


def test_psr_out_keeps_earlier_datasets_rows(kstp, toy_files, tmp_path):
    """A summary written for another dataset stays; the evaluated dataset's rows are replaced, not repeated."""
    ingest_toy(kstp, toy_files)
    kstp("derive", "question-prerequisites", "--dataset", "toy")
    out = tmp_path / "o"
    out.mkdir()
    earlier = {"dataset": "frcsub", "learner": "human learners", "learners": 536, "psrMicro": 0.721}
    (out / "psr_summary.json").write_text(json.dumps([earlier, {"dataset": "toy", "learner": "stale"}]))
    for _ in range(2):
        result = kstp("evaluate", "psr", "--dataset", "toy", "--out", out, "--min-prerequisites", "3")
        assert result.exit_code == 0, result.output
    rows = json.loads((out / "psr_summary.json").read_text())
    assert [(r["dataset"], r["learner"]) for r in rows] == [("frcsub", "human learners"), ("toy", "human learners")]
    assert rows[0]["psrMicro"] == 0.721 and rows[1]["psrMicro"] == pytest.approx(0.575)
    assert "distribution over pairs with >= 3 attempted prerequisites" in result.stdout.replace("\n", " ")
    csv_rows = (out / "psr_summary.csv").read_text().splitlines()
    assert len(csv_rows) == 3 and csv_rows[1].startswith("frcsub,human learners")
    paper = kstp("evaluate", "psr", "--dataset", "toy", "--out", out, "--denominator", "paper", "--json")
    assert json.loads(paper.stdout)[0]["denominator"] == "paper"
    assert json.loads(paper.stdout)[0]["psrMicro"] == pytest.approx((3 / 5 + 2 / 7) / 2)


@pytest.mark.parametrize(("args", "text"), [
    (["evaluate", "koc", "--dataset", "d", "--no-groups", "--groups", "a,b,c"], "--no-groups and --groups"),
    (["evaluate", "koc", "--dataset", "d", "--no-groups", "--cuts", "0,0.5,1"], "--no-groups and --cuts"),
    (["evaluate", "koc", "--dataset", "d", "--no-groups", "--threshold", "0.6"], "--no-groups and --threshold"),
    (["kst", "fringe", "--dataset", "d", "--learner", "d:L1", "--state", "q1"], "--learner and --state"),
    (["kst", "space", "--dataset", "d", "--sample", "3", "--enumerate"], "--sample and --enumerate"),
    (["kst", "space", "--dataset", "d", "--sample", "3", "--count"], "--sample and --count"),
    (["kst", "space", "--dataset", "d", "--store"], "--store goes with --enumerate or --sample"),
    (["fit", "prerequisites", "--dataset", "d", "--threshold", "3"],
     "--threshold goes with --rule ita, not --rule iita"),
    (["fit", "prerequisites", "--dataset", "d", "--search", "global"], "--search goes with --rule ita"),
    (["fit", "prerequisites", "--dataset", "d", "--rule", "ita", "--variant", "2"],
     "--variant goes with --rule iita, not --rule ita"),
    (["fit", "prerequisites", "--dataset", "d", "--rule", "ita", "--threshold", "3", "--search", "global"],
     "--threshold and --search"),
    (["evaluate", "answers", "--dataset", "d", "--model", "m", "--log-samples"],
     "--log-samples goes with --output-path"),
    (["evaluate", "nextstep", "--catalogue", "cm_8f", "--backend", "fringe-oracle", "--log-samples"],
     "--log-samples goes with --output-path"),
])
def test_contradicting_options_are_usage_errors(tmp_path, args, text):
    """Refused before the graph is opened: nothing is created at the --graph path."""
    result = CliRunner().invoke(cli, ["--graph", f"ladybug:{tmp_path / 'graph'}", *args])
    assert result.exit_code == 2, result.output
    assert f"{text}" in result.stderr and "Traceback" not in result.output
    assert not (tmp_path / "graph").exists()


def test_evaluators_write_files_only_where_out_names_a_folder(kstp, toy_files, tmp_path, monkeypatch):
    """The one rule of every file-writing command: without --out it prints and writes no file."""
    ingest_toy(kstp, toy_files)
    kstp("derive", "question-prerequisites", "--dataset", "toy")
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    for args in (["evaluate", "psr", "--dataset", "toy"], ["evaluate", "koc", "--dataset", "toy", "--cuts", "0,0.5,1",
                                                           "--groups", "low,high"]):
        result = kstp(*args, "--json")
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout) and "wrote" not in result.stderr
        assert list(here.iterdir()) == []
    assert kstp("evaluate", "psr", "--dataset", "toy", "--out", "o").exit_code == 0
    assert sorted(p.name for p in (here / "o").iterdir()) == ["psr_distribution.png", "psr_learners_toy.csv",
                                                              "psr_summary.csv", "psr_summary.json"]


def test_wide_matrix_without_some_questions_names_them_and_strict_refuses(kstp, toy_files):
    ingest_toy(kstp, toy_files)
    toy_files["answers"].write_text("learner,q1,q2,q4\nW1,1,0,1\n")
    result = kstp("ingest", "responses", toy_files["answers"], "--dataset", "toy", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["notes"]["questions of the dataset without a column"] == [
        "q3", "q5", "q6", "q7", "q8"]
    toy_files["answers"].write_text("learner,q1,q2,q4\nW2,1,0,1\n")
    refused = kstp("ingest", "responses", toy_files["answers"], "--dataset", "toy", "--strict")
    assert refused.exit_code == 1
    assert ("toy_answers.csv:1: no column for 5 of the dataset's 8 questions: q3, q5, q6, q7, q8; add their "
            "columns, or ingest without --strict") in refused.stderr
    learners = json.loads(kstp("query", "dataset_learners", "-p", "dataset=toy", "--format", "json").stdout)
    assert "toy:W2" not in {row["learnerId"] for row in learners}  # refused whole: nothing written
    long = kstp("ingest", "responses", toy_files["answers"], "--dataset", "toy", "--strict", "--format", "long")
    assert long.exit_code == 2 and "--strict goes with a wide matrix" in long.stderr


@pytest.mark.parametrize(("args", "content"), [
    (["ingest", "standards", "FILE"], "id,code,description\n"),
    (["ingest", "items", "FILE", "--dataset", "h"], "id,text,answer\n"),
    (["ingest", "items", "FILE", "--dataset", "h"], "\n\n"),  # items JSONL with no line
    (["ingest", "standards", "FILE"], '{"domains": {}, "clusters": {}, "standards": {}}'),  # a Coherence Map
    (["ingest", "responses", "FILE", "--dataset", "toy", "--format", "long"], "learner,item,correct\n"),
])
def test_a_file_with_nothing_to_ingest_is_refused_and_nothing_is_written(kstp, toy_files, tmp_path, args, content):
    ingest_toy(kstp, toy_files)
    before = json.loads(kstp("db", "stats", "--json").stdout)
    path = tmp_path / ("empty.jsonl" if content == "\n\n" else "empty.json" if content.startswith("{") else "empty.csv")
    path.write_text(content)
    result = kstp(*[str(path) if a == "FILE" else a for a in args])
    assert result.exit_code == 1
    assert f"{path}: " in result.stderr and "nothing to ingest" in result.stderr
    assert json.loads(kstp("db", "stats", "--json").stdout) == before


def test_an_output_folder_that_cannot_be_made_is_one_line(kstp, toy_files):
    """--out under a folder that refuses new entries (/proc): one line naming it, exit 1, no traceback."""
    ingest_toy(kstp, toy_files)
    result = kstp("evaluate", "psr", "--out", "/proc/kstp-forbidden")
    assert result.exit_code == 1 and result.stderr.strip().splitlines()[-1].startswith(
        "Error: /proc/kstp-forbidden: "), result.output
    assert "Traceback" not in result.output


def test_an_unknown_model_arg_and_an_out_of_range_seed_are_refused(kstp, toy_files):
    ingest_toy(kstp, toy_files)
    args = ("evaluate", "answers", "--dataset", "toy", "--model", "m", "--base-url", "http://127.0.0.1:9/v1")
    unknown = kstp(*args, "--model-args", "foo=bar")
    assert unknown.exit_code == 1 and "the openai backend takes no option 'foo' (--model-args); it takes: " \
        "base_url" in unknown.stderr, unknown.output
    huge = kstp(*args, "--seed", "99999999999999999999999")
    assert huge.exit_code == 2 and "--seed" in huge.stderr
