"""DAG-MATH (paper 4): closeness, perfect reasoning, AUC and graph statistics on the
hand-made logarithmic-count trajectories; the §2.2 process on the two-chain DAG; the
generation pipeline end to end with the tiny local model; the CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path

import networkx as nx
import pytest
from click.testing import CliRunner

from kstp.cli.main import cli
from kstp.errors import InputError, UnknownIdError
from kstp.evaluators import dagmath
from kstp.evaluators import dagmath_process as process
from kstp.inference.backend import Completion, Sampling, get_backend
from kstp.inference.runs import ConfigChangedError
from kstp.loaders import cot
from tests.conftest import load_toy

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "dagmath" / "log_count.json"
GOLD_RUN = "cot:gold:logs"


@pytest.fixture
def gold(store):
    cot.write_cot_set(store, cot.read_cot_files([FIXTURE], "logs"))
    return store


def test_closeness_perfect_reasoning_and_statistics_by_hand(gold):
    m = dagmath.score_run(gold, GOLD_RUN).set_index("sampleIndex")
    # sample 0 perfect, 1 correct with v9 unused, 2 closed but wrong (tests/fixtures/dagmath/README.md)
    assert m["closed"].tolist() == [True, False, True]
    assert m["closedShare"].tolist() == [1.0, 0.9, 1.0]
    assert m["correct"].tolist() == [True, True, False]
    assert m["perfect"].tolist() == [True, False, False]
    assert m[["nodes", "edges", "maxInDegree", "maxOutDegree"]].values.tolist() == [
        [11, 16, 3, 4], [11, 15, 2, 4], [11, 16, 3, 4]]
    assert m["density"].tolist() == pytest.approx([32 / 110, 30 / 110, 32 / 110])
    steps = gold.frame("cot_step_closeness", {"runId": GOLD_RUN})
    unclosed = steps[~steps["closed"].astype(bool)]
    assert unclosed[["responseId", "stepId"]].values.tolist() == [[f"{GOLD_RUN}:log_count:1", 9]]


def test_run_figures_and_table_shapes_by_hand(gold):
    m = dagmath.score_run(gold, GOLD_RUN)
    figures = dagmath.aggregate(m)
    assert (figures["problems"], figures["trajectories"], figures["invalidFormat"]) == (1, 3, 0)
    assert figures["passAt1"] == pytest.approx(2 / 3)
    assert figures["perfectReasoningRate"] == pytest.approx(1 / 3)
    assert figures["reasoningGap"] == pytest.approx(1 / 3)
    assert figures["closenessAuc"] == pytest.approx((1.0 + 0.9 + 0.0) / 3)
    # 2 of 3 trajectories correct: pass@2 = 1 - C(1, 2) / C(3, 2) = 1; one problem, so no standard error
    assert (figures["passAt2"], figures["passAt3"]) == (1.0, 1.0) and math.isnan(figures["passAt1Stderr"])
    curve = dagmath.auc_curve(m)
    assert curve["rate"].iloc[0] == pytest.approx(2 / 3) and curve["rate"].iloc[-1] == pytest.approx(1 / 3)
    assert curve.set_index("threshold")["rate"].loc[0.9] == pytest.approx(2 / 3)  # closedShare 0.9 still counts
    assert curve.set_index("threshold")["rate"].loc[0.91] == pytest.approx(1 / 3)
    trapezoid = float(((curve["rate"][1:].to_numpy() + curve["rate"][:-1].to_numpy()) / 2 * 0.01).sum())
    assert trapezoid == pytest.approx(figures["closenessAuc"], abs=0.01)
    table = dagmath.statistics_by_class(m)
    assert table["trajectories"].to_dict() == {"All": 3, "Incorrect": 1, "Correct": 2, "Perfect": 1}
    assert table.loc["All", "edges"] == pytest.approx(47 / 3)
    assert table.loc["Correct", "edges"] == pytest.approx(15.5)
    assert table.loc["Correct", "density"] == pytest.approx(31 / 110)
    assert table.loc["Perfect", "maxInDegree"] == 3 and table.loc["Correct", "maxInDegree"] == 2.5
    by = dagmath.statistics_by_difficulty(m)
    assert by[["difficulty", "bin", "trajectories"]].values.tolist() == [[3, "(2, 3]", 3]]  # 2.5 is in (2, 3]
    run = gold.frame("runs_of", {"evaluator": "cot", "model": "gold", "dataset": "logs"})
    assert run["runId"].tolist() == [GOLD_RUN]


def test_figures_are_written_back(gold):
    dagmath.score_run(gold, GOLD_RUN)
    rows = gold._execute("MATCH (r:Response) RETURN r.sampleIndex AS s, r.closed AS closed, r.perfect AS perfect, "
                         "r.closedShare AS share, r.cotEdges AS edges ORDER BY s", {}, "test")
    assert rows.values.tolist() == [[0, True, True, 1.0, 16], [1, False, False, 0.9, 15], [2, True, False, 1.0, 16]]
    run = gold._execute("MATCH (r:Run) RETURN r.passAt1 AS p, r.perfectReasoningRate AS prr, "
                        "r.closenessAuc AS auc, r.invalidFormat AS invalid", {}, "test").iloc[0]
    assert (run["p"], run["prr"], run["auc"], run["invalid"]) == (pytest.approx(2 / 3), pytest.approx(1 / 3),
                                                                  pytest.approx(1.9 / 3), 0)
    step9 = gold._execute("MATCH (s:CotStep) WHERE s.stepId = 9 RETURN s.closed AS c, s.outDegree AS d "
                          "ORDER BY s.id", {}, "test")
    assert step9.values.tolist() == [[True, 1], [False, 0], [True, 1]]


def test_score_item_failures_are_recorded_with_their_reason():
    def reason(**kw):
        return dagmath.score_item(Completion(0, 1, **kw), "6").error

    assert reason(error="transport: APIConnectionError") == "transport: APIConnectionError"
    assert reason(text="", finish_reason="stop") == "empty output"
    assert reason(text='{"steps": [', finish_reason="length") == "truncated"
    assert reason(text="six", finish_reason="stop").startswith("invalid JSON")
    bad = dagmath.score_item(Completion(0, 1, text='{"steps": [{"step_id": 1, "thinking": "t", '
                                        '"direct_dependent_steps": [1], "text": "\\\\boxed{6}"}]}',
                                        finish_reason="stop"), "6")
    # PASS@1 is answer accuracy: the cyclic DAG still boxes the right answer
    assert (bad.error, bad.verdict.correct, bad.verdict.reason) == (
        "cycle 1 -> 1", True, "correct (invalid format: cycle 1 -> 1)")
    wrong = dagmath.score_item(Completion(0, 1, text='{"steps": [{"step_id": 1, "thinking": "t", '
                                          '"direct_dependent_steps": [1], "text": "\\\\boxed{7}"}]}',
                                          finish_reason="stop"), "6")
    assert (wrong.verdict.correct, wrong.verdict.reason) == (False, "wrong answer (invalid format: cycle 1 -> 1)")
    unboxed = dagmath.score_item(Completion(0, 1, text="the answer is 6", finish_reason="stop"), "6")
    # no boxed answer: nothing to grade
    assert unboxed.verdict.correct is False and unboxed.verdict.reason.startswith("invalid format: invalid JSON")
    cut = dagmath.score_item(Completion(0, 1, text='{"steps": [{"text": "\\\\boxed{6}"',
                                        finish_reason="length"), "6")
    assert (cut.error, cut.verdict.correct) == ("truncated", False)  # a cut reply never reached its answer


def test_statistics_by_difficulty_groups_in_bins_k_minus_one_to_k():
    """Figure 3: difficulties 1.0 | 1.5, 2.0 | 2.5 fall in bins (0, 1], (1, 2], (2, 3]; invalid and
    unrated trajectories are left out. Nodes by hand: bin 1: 4; bin 2: (6 + 10) / 2; bin 3: 3."""
    import pandas as pd

    m = pd.DataFrame({"difficulty": [1.0, 1.5, 2.0, 2.5, 2.5, None],
                      "cotValid": [True, True, True, True, False, True],
                      **{s: [4, 6, 10, 3, None, 7] for s in dagmath.STATISTICS}})
    by = dagmath.statistics_by_difficulty(m)
    assert by["bin"].tolist() == ["(0, 1]", "(1, 2]", "(2, 3]"]
    assert by["trajectories"].tolist() == [1, 2, 1]
    assert by["nodes"].tolist() == [4.0, 8.0, 3.0]


def test_evaluate_is_four_shot_by_default(store, tmp_path):
    """Five gold problems with a perfect one-step trajectory each: the default prompt shows
    the first four (problem id order), each as a user/assistant exchange."""
    gold_file = tmp_path / "gold.json"
    gold_file.write_text(json.dumps([
        {"problem_id": f"g{k}", "domain": ["Algebra"], "difficulty": 1.0, "problem_text": f"{k} + 0?",
         "sample_id": 0, "final_answer": str(k),
         "steps": [{"step_id": 1, "edge": "given", "direct_dependent_steps": None, "node": f"\\boxed{{{k}}}"}]}
        for k in range(1, 6)]))
    cot.write_cot_set(store, cot.read_cot_files([gold_file], "five"))
    load_toy(store, tmp_path)
    model = ScriptedModel(lambda problem, i: Completion(i, 42, text=_steps((1, None, "\\boxed{3}")),
                                                        finish_reason="stop"))
    result = dagmath.evaluate(store, model, "toy", Sampling(n=1), "cot:gold:five", limit=1)
    prompts, _ = model.calls[0]
    assert dagmath.SHOTS == 4 and len(result.shots) == 4
    assert [m["content"] for m in prompts[0][1::2]] == ["Problem:\n1 + 0?", "Problem:\n2 + 0?", "Problem:\n3 + 0?",
                                                         "Problem:\n4 + 0?", prompts[0][-1]["content"]]
    shots = next(p for p in cli.commands["evaluate"].commands["dagmath"].params if p.name == "shots")
    assert shots.default == 4


@pytest.mark.parametrize("length", [1, 2, 3, 5])
def test_toy_dag_exact_prr_is_half_to_the_length_minus_one(length):
    assert process.exact_prr(process.two_chain_dag(length), f"a{length}") == pytest.approx(0.5 ** (length - 1))


def test_toy_dag_simulated_prr_is_within_the_hoeffding_bound():
    epsilon, delta = 0.05, 0.01
    n = process.hoeffding_sample_size(epsilon, delta)
    assert n == math.ceil(math.log(2 / delta) / (2 * epsilon**2)) == 1060
    estimate = process.estimate_prr(process.two_chain_dag(4), "a4", n, seed=7)
    assert abs(estimate - 0.125) <= epsilon


def test_exact_prr_matches_enumeration_of_all_trajectories():
    """A diamond with a shortcut and two sinks, weighted: enumerate every trajectory by hand."""
    dag = nx.DiGraph([("s", "x"), ("s", "y"), ("x", "t"), ("y", "t"), ("s", "u")])
    weights = {"x": 2.0, "u": 0.5}
    total = 0.0

    def walk(path, p):
        nonlocal total
        options = process.available(dag, set(path))
        w = [weights.get(n, 1.0) for n in options]
        for node, weight in zip(options, w, strict=True):
            q = p * weight / sum(w)
            if dag.out_degree(node):
                walk(path + [node], q)
            elif process.is_perfect(dag, path + [node], "t"):
                total += q

    walk([], 1.0)
    # by hand: s, then {x (2), y (1), u (.5)}; both x and y must come before t, u never:
    # x, y, t: 2/3.5 * 1/1.5 * 1/1.5; y, x, t: 1/3.5 * 2/2.5 * 1/1.5
    assert total == pytest.approx(2 / 3.5 / 1.5 / 1.5 + 1 / 3.5 * 2 / 2.5 / 1.5)
    assert process.exact_prr(dag, "t", weights) == pytest.approx(total)


def test_process_refuses_bad_input():
    with pytest.raises(InputError, match="not a sink"):
        process.exact_prr(process.two_chain_dag(3), "a2")
    with pytest.raises(InputError, match="cycle"):
        process.exact_prr(nx.DiGraph([("a", "b"), ("b", "a"), ("b", "c")]), "c")
    with pytest.raises(InputError, match="epsilon"):
        process.hoeffding_sample_size(0.0)


def _steps(*steps) -> str:
    return json.dumps({"steps": [{"step_id": s, "thinking": "t", "direct_dependent_steps": d, "text": x}
                                 for s, d, x in steps]})


class ScriptedModel:
    """A backend that answers from a script (problem text, sample) -> completion: the evaluator
    under test sees exactly the replies whose metrics were counted by hand."""

    name, model = "scripted", "scripted"

    def __init__(self, script):
        self.script, self.calls = script, []

    def generate(self, prompts, sampling, samples=None, progress=None):
        self.calls.append((prompts, sampling))
        out = []
        for chat, wanted in zip(prompts, samples, strict=True):
            problem = chat[-1]["content"].removeprefix("Problem:\n")
            out.append([self.script(problem, i) for i in wanted])
        return out

    def close(self):
        pass


def test_generated_trajectories_are_stored_scored_and_resumed_exactly(gold, tmp_path):
    load_toy(gold, tmp_path)  # toy:q1 "count" (gold 3), toy:q2 "add" (gold 5)
    down = {"on": True}

    def script(problem, i):
        texts = {("count", 0): _steps((1, None, "three things"), (2, [1], "\\boxed{3}")),  # perfect
                 ("count", 1): _steps((1, None, "three"), (2, None, "unused"), (3, [1], "\\boxed{3}")),  # 1/2 closed
                 ("add", 0): _steps((1, [2], "a"), (2, [1], "\\boxed{5}")),  # a cycle
                 ("add", 1): _steps((1, None, "two and two"), (2, [1], "\\boxed{4}"))}  # closed, wrong
        if (problem, i) == ("add", 1) and down["on"]:
            return Completion(i, 42 + i, error="transport: ConnectionError")
        return Completion(i, 42 + i, text=texts[(problem, i)], finish_reason="stop")

    model = ScriptedModel(script)
    first = dagmath.evaluate(gold, model, "toy", Sampling(n=2), GOLD_RUN, shots=1, limit=2)
    prompts, sampling = model.calls[0]
    assert sampling.json_schema == dagmath.JSON_SCHEMA
    assert [m["role"] for m in prompts[0]] == ["system", "user", "assistant", "user"]
    assert json.loads(prompts[0][2]["content"])["steps"][10]["text"] == "The answer is \\boxed{300}."
    summary = first.summary()
    # per problem: q1 correct 2/2, perfect 1/2, area (1 + .5)/2; q2 the cycle boxes 5 (correct, never closed,
    # area 0); the transport failure is not the model's: not stored, not counted, asked again below
    assert (summary["passAt1"], summary["perfectReasoningRate"], summary["reasoningGap"]) == (1.0, 0.25, 0.75)
    assert summary["closenessAuc"] == pytest.approx((0.75 + 0.0) / 2)
    assert not any(k.endswith("Std") for k in summary)  # Table 2's Std row is over models, not problems
    assert (summary["invalidFormat"], summary["failures"]) == (1, {"cycle": 1})
    m = first.metrics.set_index(["questionId", "sampleIndex"])
    assert m.loc[("toy:q1", 1), ["closedShare", "closed", "correct"]].tolist() == [0.5, False, True]
    assert m.loc[("toy:q2", 0), "cotError"] == "cycle 1 -> 2 -> 1"
    assert m.loc[("toy:q2", 0), ["correct", "closed", "perfect"]].tolist() == [True, False, False]
    curve = dagmath.auc_curve(first.metrics)
    assert curve["rate"].iloc[0] == pytest.approx(summary["passAt1"])  # t = 0: the malformed correct one counts
    down["on"] = False
    again = dagmath.evaluate(gold, model, "toy", Sampling(n=2), GOLD_RUN, shots=1, limit=2)
    assert (again.run_id, again.generated) == (first.run_id, 1)  # only the transport failure is asked again
    summary = again.summary()
    assert (summary["passAt1"], summary["perfectReasoningRate"], summary["failures"]) == (0.75, 0.25, {"cycle": 1})
    m = again.metrics.set_index(["questionId", "sampleIndex"])
    assert m.loc[("toy:q2", 1), ["cotValid", "closed", "correct", "nodes", "edges"]].tolist() == \
        [True, True, False, 2, 1]
    run = gold._execute("MATCH (r:Run {id: $id}) RETURN r.passAt1 AS p, r.invalidFormat AS bad, r.status AS s",
                        {"id": first.run_id}, "test").iloc[0]
    assert (run["p"], run["bad"], run["s"]) == (0.75, 1, "finished")


def test_ingesting_a_scripted_runs_replies_gives_its_figures(store, tmp_path):
    """The replies a scripted evaluation stored, ingested as a DAG-MATH file, score the same.
    By hand, toy:q1 (gold 3): perfect | correct, 1 of 2 non-final steps closed | closed, wrong;
    toy:q2 (gold 5): a cycle boxing 5 | an unknown parent boxing 5 | no final box.
    PASS@1 (2/3 + 2/3) / 2; PRR (1/3 + 0) / 2; AUC ((1 + .5 + 0) / 3 + 0) / 2."""
    load_toy(store, tmp_path)
    texts = {("count", 0): _steps((1, None, "three things"), (2, [1], "\\boxed{3}")),
             ("count", 1): _steps((1, None, "three"), (2, None, "unused"), (3, [1], "\\boxed{3}")),
             ("count", 2): _steps((1, None, "two and one"), (2, [1], "\\boxed{4}")),
             ("add", 0): _steps((1, [2], "a"), (2, [1], "\\boxed{5}")),
             ("add", 1): _steps((1, None, "two and three"), (2, [7], "\\boxed{5}")),
             ("add", 2): _steps((1, None, "two and three"), (2, [1], "five"))}
    model = ScriptedModel(lambda problem, i: Completion(i, 42 + i, text=texts[(problem, i)], finish_reason="stop"))
    run = dagmath.evaluate(store, model, "toy", Sampling(n=3), shots=0, limit=2)
    stored = store.frame("run_responses", {"runId": run.run_id})
    problems = store.frame("dataset_questions", {"dataset": "toy"}).set_index("questionId")
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps([
        {"problem_id": problems.at[q, "localId"], "problem_text": problems.at[q, "text"],
         "final_answer": problems.at[q, "answer"], "sample_id": int(i), "steps": json.loads(text)["steps"]}
        for q, i, text in stored[["questionId", "sampleIndex", "text"]].values.tolist()]))
    cot.write_cot_set(store, cot.read_cot_files([replies], "replay", "scripted"))
    ingested = dagmath.score_run(store, cot.ingest_run_id("scripted", "replay"))
    generated, replayed = run.summary(), dagmath.aggregate(ingested)
    assert generated["passAt1"] == pytest.approx(2 / 3)
    assert generated["perfectReasoningRate"] == pytest.approx(1 / 6)
    assert generated["closenessAuc"] == pytest.approx(0.25)
    assert (generated["invalidFormat"], generated["failures"]) == (3, {"cycle": 1, "unknown parent": 1,
                                                                      "no final boxed answer": 1})
    for figure in ("passAt1", "perfectReasoningRate", "reasoningGap", "closenessAuc", "invalidFormat", "failures"):
        assert replayed[figure] == generated[figure], figure
    columns = ["sampleIndex", "correct", "verdict", "closedShare", "closed", "perfect", "cotError"]
    assert ingested[columns].fillna(-1).values.tolist() == run.metrics[columns].fillna(-1).values.tolist()


def test_generation_with_the_local_model_stores_and_counts_every_failure(gold, tmp_path):
    load_toy(gold, tmp_path)
    sampling = Sampling(n=2, max_tokens=48, seed=3)
    backend = get_backend("local", "smollm2")
    try:
        result = dagmath.evaluate(gold, backend, "toy", sampling, GOLD_RUN, shots=1, limit=2)
        again = dagmath.evaluate(gold, backend, "toy", sampling, GOLD_RUN, shots=1, limit=2)
        with pytest.raises(ConfigChangedError, match="max_tokens: 48 -> 40"):
            dagmath.evaluate(gold, backend, "toy", Sampling(n=2, max_tokens=40, seed=3), GOLD_RUN, shots=1, limit=2)
    finally:
        backend.close()
    m = result.metrics
    assert (result.requested, result.generated, len(m)) == (4, 4, 4)
    assert result.shots == [f"{GOLD_RUN}:log_count:0"]  # the perfect gold trajectory, never the imperfect one
    assert (again.generated, again.run_id) == (0, result.run_id)
    summary = result.summary()
    invalid = int((~m["cotValid"]).sum())
    assert summary["invalidFormat"] == invalid == sum(summary["failures"].values())
    assert m.loc[~m["cotValid"], "cotError"].notna().all()
    assert "other" not in summary["failures"]  # every reason is one of the named kinds
    bad = m[~m["cotValid"]]
    assert all(v.endswith(f"invalid format: {e}") or v == f"invalid format: {e}"
               for v, e in zip(bad["verdict"], bad["cotError"], strict=True))
    assert not bad[["closed", "perfect"]].to_numpy().any()  # a malformed DAG is never closed
    stored = gold.frame("run_responses", {"runId": result.run_id})
    assert len(stored) == 4 and stored["text"].notna().all()
    assert summary["passAt1"] == pytest.approx(m.groupby("questionId")["correct"].mean().mean())


def test_cli_ingest_report_and_unknown_run(tmp_path, graph_location):
    runner = CliRunner()
    graph = ["--graph", graph_location]
    done = runner.invoke(cli, [*graph, "ingest", "cot", str(FIXTURE), "--dataset", "logs", "--json"])
    assert done.exit_code == 0, done.output
    summary = json.loads(done.stdout)["summary"]
    assert (summary["passAt1"], summary["perfectReasoningRate"]) == (pytest.approx(2 / 3), pytest.approx(1 / 3))
    out = tmp_path / "out"
    shown = runner.invoke(cli, [*graph, "report", "dagmath", "--run", GOLD_RUN, "--out", str(out), "--json"])
    assert shown.exit_code == 0, shown.output
    report = json.loads(shown.stdout)
    (run,) = report["runs"]
    assert [r["class"] for r in run["table1"]] == ["All", "Incorrect", "Correct", "Perfect"]
    assert run["summary"]["closenessAuc"] == pytest.approx(1.9 / 3)
    # one model: its Table 2 row and a Std row that a single model cannot give
    assert [(r["dataset"], r["model"]) for r in report["table2"]] == [("logs", "gold"), ("logs", "Std")]
    assert report["table2"][0]["passAt1"] == pytest.approx(2 / 3) and report["table2"][1]["passAt1"] is None
    stem = "cot_gold_logs"
    assert {p.name for p in out.iterdir()} >= {f"{stem}.json", f"{stem}_auc.png", f"{stem}_statistics.png",
                                               f"{stem}_table1.csv", f"{stem}_auc.csv", f"{stem}_difficulty.png",
                                               "table2.csv"}
    heptagon = FIXTURE.with_name("heptagon.json")  # another model on the same dataset: PASS@1 1, R-hat 0
    assert runner.invoke(cli, [*graph, "ingest", "cot", str(heptagon), "--dataset", "logs", "--source", "gem"]) \
        .exit_code == 0
    both = runner.invoke(cli, [*graph, "report", "dagmath", "--run", GOLD_RUN, "--run", "cot:gem:logs", "--out",
                               str(out), "--json"])
    assert both.exit_code == 0, both.output
    table2 = {r["model"]: r for r in json.loads(both.stdout)["table2"]}
    assert list(table2) == ["gold", "gem", "Std"]
    # Std over the two models (ddof = 1): |a - b| / sqrt(2)
    assert table2["Std"]["passAt1"] == pytest.approx((1 - 2 / 3) / math.sqrt(2))
    assert table2["Std"]["perfectReasoningRate"] == pytest.approx((1 / 3) / math.sqrt(2))
    missing = runner.invoke(cli, [*graph, "report", "dagmath", "--run", "nope"])
    assert missing.exit_code == 1 and "run 'nope' has no trajectories" in missing.output


def test_no_gold_shots_is_a_domain_error(store, tmp_path):
    load_toy(store, tmp_path)
    with pytest.raises(UnknownIdError, match="pass --shots 0"):
        dagmath.evaluate(store, None, "toy", Sampling(), "cot:gold:none", shots=2)


def test_cli_unreachable_server_leaves_the_run_incomplete_and_exits_1(graph_location):
    """Exhausted transport retries are pending requests, never the model's answers (as for evaluate answers)."""
    runner = CliRunner()
    graph = ["--graph", graph_location]
    assert runner.invoke(cli, [*graph, "ingest", "cot", str(FIXTURE), "--dataset", "logs"]).exit_code == 0
    args = [*graph, "evaluate", "dagmath", "--dataset", "logs", "--model", "m", "--base-url",
            "http://127.0.0.1:9/v1", "--model-args", "retries=2,max_wait=0.05", "--samples", "2", "--shots", "0",
            "--json"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 1, result.output
    summary = json.loads(result.stdout)
    assert (summary["pending"], summary["generatedNow"], summary["trajectories"]) == (2, 0, 0)
    assert "2 requests got no reply after the retries" in " ".join(result.stderr.split())


def test_cli_report_writes_back_figures_that_went_stale(graph_location):
    """report dagmath writes the figures it recomputes onto the run, so the embedded graph opens for
    writing (it was a read-only command there and stopped at the first figure that had changed)."""
    import pandas as pd

    from kstp.graph.factory import open_store

    runner = CliRunner()
    graph = ["--graph", graph_location]
    assert runner.invoke(cli, [*graph, "ingest", "cot", str(FIXTURE), "--dataset", "logs"]).exit_code == 0
    with open_store(graph_location) as store:
        store.write_nodes("Run", pd.DataFrame([{"id": GOLD_RUN, "passAt1": 0.0}]))
    shown = runner.invoke(cli, [*graph, "report", "dagmath", "--run", GOLD_RUN, "--json"])
    assert shown.exit_code == 0, shown.output
    run = json.loads(runner.invoke(cli, [*graph, "runs", "show", GOLD_RUN, "--json"]).stdout)["run"]
    assert run["passAt1"] == pytest.approx(2 / 3)
