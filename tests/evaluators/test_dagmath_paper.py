"""Paper 4's printed numbers that the data here allows, reproduced by kstp's functions.

Zhang, Kuzborskij, Lee, Leng, Liu 2025, "DAG-Math: Graph-Guided Mathematical Reasoning in
LLMs" (arXiv 2510.19842): Table 2's Std row from its model rows; the All rows of Tables 1, 3
and 4 from their Incorrect and Correct rows and Table 2's PASS@1; Appendix B's heptagon
trajectory (33 nodes, 8 of them unclosed) and its 4 correct trajectories of 32. The models'
samples themselves are not public, so no other cell can be recomputed here.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from kstp.errors import InputError
from kstp.evaluators import dagmath
from kstp.loaders import cot

MODELS = ("Gemini-2.5-F", "Gemini-2.5-F-L", "GPT-4.1", "GPT-4.1-M", "Qwen3-30B")
#: Table 2, per dataset: PASS@1, R-hat and the gap Delta of each model (%), then the printed Std cells.
TABLE2 = {
    "AIME 2025": ([52.4, 37.4, 26.5, 30.5, 43.1], [17.0, 15.9, 16.8, 20.9, 15.8], [35.4, 21.5, 9.7, 9.6, 27.3],
                  (10.3, 2.1)),
    "BRUMO 2025": ([63.4, 43.2, 33.3, 34.4, 46.8], [20.7, 17.8, 22.8, 24.6, 21.8], [42.7, 25.4, 10.5, 9.8, 25.0],
                   (12.2, 2.5)),
    "HMMT 2025": ([38.5, 28.8, 11.8, 14.3, 27.3], [5.7, 7.5, 6.5, 7.4, 5.6], [32.8, 21.3, 5.3, 6.9, 21.7],
                  (11.0, 0.9)),
}


@pytest.mark.parametrize("dataset", list(TABLE2))
def test_table2_std_row_paper4_table2_std_cells(dataset):
    """The Std cells are the sample standard deviation (ddof = 1) over the five models' rows;
    over problems, or with ddof = 0 (AIME: 9.2 and 1.9), they would not come out."""
    passes, rates, gaps, printed = TABLE2[dataset]
    assert [round(p - r, 1) for p, r in zip(passes, rates, strict=True)] == gaps  # Delta := PASS@1 - R-hat
    runs = pd.DataFrame({"model": MODELS, "dataset": dataset, "passAt1": passes, "perfectReasoningRate": rates,
                         "reasoningGap": gaps, "closenessAuc": float("nan")})
    table = dagmath.table2(runs)
    assert table["model"].tolist() == [*MODELS, "Std"]
    std = table.iloc[-1]
    assert (round(std["passAt1"], 1), round(std["perfectReasoningRate"], 1)) == printed


def test_table2_one_row_per_model_and_dataset():
    runs = pd.DataFrame({"model": ["m", "m"], "dataset": "d", **{f: [0.5, 0.4] for f in dagmath.FIGURES}})
    with pytest.raises(InputError, match="model 'm' has 2 runs on dataset 'd'"):
        dagmath.table2(runs)


#: Tables 1 (AIME 2025), 3 (BRUMO 2025) and 4 (HMMT 2025), rows All | Incorrect | Correct of the models
#: whose All row is the PASS@1-weighted mix of the other two (#nodes, #edges, density %, d_in max, d_out max).
CLASS_ROWS = {
    ("AIME 2025", "GPT-4.1"): ("17.8 21.4 16.2 2.6 3.0", "18.4 22.2 15.6 2.6 3.1", "15.9 19.3 17.5 2.7 2.9"),
    ("AIME 2025", "GPT-4.1-M"): ("22.8 31.3 14.2 3.2 4.0", "25.0 34.7 13.3 3.3 4.3", "17.9 23.6 16.6 3.0 3.4"),
    ("AIME 2025", "Qwen3-30B"): ("21.4 31.1 16.0 3.3 4.9", "23.4 34.3 14.9 3.4 5.5", "18.9 27.2 17.2 3.1 4.1"),
    ("BRUMO 2025", "GPT-4.1"): ("14.9 18.1 19.4 2.4 2.9", "15.9 19.6 18.4 2.5 3.0", "13.0 15.1 21.4 2.3 2.5"),
    ("BRUMO 2025", "GPT-4.1-M"): ("17.1 24.1 18.7 3.0 3.7", "18.6 27.2 17.7 3.1 4.1", "14.3 18.3 20.6 2.7 3.1"),
    ("BRUMO 2025", "Qwen3-30B"): ("18.4 27.7 19.8 3.4 4.7", "21.7 34.4 17.8 3.7 5.7", "14.7 20.1 22.1 3.1 3.6"),
    ("HMMT 2025", "GPT-4.1"): ("17.0 20.7 17.8 2.5 3.2", "16.9 20.8 17.8 2.5 3.1", "17.5 20.6 17.4 2.6 3.5"),
    ("HMMT 2025", "GPT-4.1-M"): ("21.1 30.2 16.0 3.0 4.2", "21.1 30.2 15.9 3.0 4.1", "21.1 30.5 16.6 3.0 4.4"),
    ("HMMT 2025", "Qwen3-30B"): ("22.8 34.6 16.1 3.6 5.6", "22.8 34.5 16.4 3.6 5.7", "22.8 35.0 15.2 3.7 5.5"),
}


@pytest.mark.parametrize(("dataset", "model"), list(CLASS_ROWS))
def test_statistics_by_class_all_row_paper4_tables_1_3_4(dataset, model):
    """The class means are over trajectories (not over problems): 1000 trajectories, PASS@1 of them
    correct with the Correct row's values and the rest with the Incorrect row's, give the All row
    to within the rounding of the printed cells (each +-0.05, so the mix is within 0.1 + 0.05)."""
    everything, incorrect, correct = ([float(v) for v in row.split()] for row in CLASS_ROWS[(dataset, model)])
    hits = round(10 * TABLE2[dataset][0][MODELS.index(model)])  # PASS@1 in % of 1000 trajectories
    values = [correct] * hits + [incorrect] * (1000 - hits)
    metrics = pd.DataFrame(values, columns=list(dagmath.STATISTICS)).assign(
        cotValid=True, correct=[True] * hits + [False] * (1000 - hits), perfect=False)
    table = dagmath.statistics_by_class(metrics)
    assert table.loc["All", "trajectories"] == 1000
    assert table.loc["All", list(dagmath.STATISTICS)].tolist() == pytest.approx(everything, abs=0.15)


def test_appendix_b_heptagon_has_eight_unclosed_nodes_paper4_appendix_b(store):
    """Appendix B: a correct Gemini-2.5-Flash trajectory of 33 nodes whose nodes 1, 6, 8, 13, 16,
    18, 26 and 30 have no child; the parents in the fixture are reconstructed from the node list."""
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "dagmath" / "heptagon.json"
    cot.write_cot_set(store, cot.read_cot_files([fixture], "aime25", "gemini"))
    run = cot.ingest_run_id("gemini", "aime25")
    m = dagmath.score_run(store, run).iloc[0]
    assert (m["nodes"], m["correct"], m["closed"], m["perfect"]) == (33, True, False, False)
    assert (m["closedSteps"], m["closedShare"]) == (24, 24 / 32)
    steps = store.frame("cot_step_closeness", {"runId": run})
    assert sorted(int(s) for s in steps.loc[~steps["closed"].astype(bool), "stepId"]) == [1, 6, 8, 13, 16, 18, 26,
                                                                                          30]


def test_pass_at_1_of_four_correct_in_32_paper4_appendix_b():
    """Appendix B: 4 correct trajectories of 32 on the heptagon problem, PASS@1 = 4/32; none of them
    perfect (as the three it describes), R-hat 0 and the gap 4/32."""
    metrics = pd.DataFrame({"questionId": "heptagon", "correct": [True] * 4 + [False] * 28, "perfect": False,
                            "closedShare": 0.75, "cotValid": True, "failure": None})
    figures = dagmath.aggregate(metrics)
    assert (figures["passAt1"], figures["perfectReasoningRate"], figures["reasoningGap"]) == (0.125, 0.0, 0.125)
    assert figures["closenessAuc"] == 0.125 * 0.75
