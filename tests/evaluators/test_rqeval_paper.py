"""Paper 3's printed figures, reproduced: Tables 6-9 and Figure 5 from the numbers the paper prints.

Senol, Agrawal, Liu 2026, "Measuring Reasoning Quality in LLMs: A Multi-Dimensional
Behavioral Framework" (arXiv 2605.24661). The items and generations behind the tables
are not public, so the dimensions themselves cannot be recomputed here; what follows
from them can: the scenario scores of Tables 6-7 from the dimension columns and Table
3's weights, the rankings of Table 8 from Table 6, and Table 9 (r, p, stars, partial r,
interpretation) and Figure 5's layer ranges from the 28 rows of Table 7.
"""

import io

import pandas as pd
import pytest

from kstp.cli.models import parse_sampling
from kstp.evaluators import rqeval as rq
from kstp.inference.backend import Completion

DIMS = list(rq.DIMENSIONS)

# Table 6: model, CQ, CS, RS, LS, ES, SS, Q_bal, Q_saf, Q_acc, Q_eff
TABLE6 = pd.read_csv(io.StringIO("""\
model,cq,cs,rs,ls,es,ss,balanced,safety_priority,accuracy_priority,efficiency_priority
GPT,0.600,0.646,0.877,0.811,0.465,0.930,0.722,0.748,0.688,0.662
Claude,0.783,0.781,0.895,0.836,0.643,0.910,0.808,0.829,0.807,0.775
DeepSeek,0.719,0.740,0.927,0.759,0.540,0.911,0.766,0.793,0.759,0.723
Gemini,0.674,0.679,0.914,0.782,0.582,0.906,0.756,0.780,0.734,0.717
LLaMA,0.636,0.619,0.865,0.838,0.486,0.893,0.723,0.760,0.704,0.669
Qwen,0.468,0.543,0.793,0.826,0.328,0.876,0.639,0.672,0.591,0.562
Phi-2,0.426,0.490,0.609,0.860,0.395,0.823,0.601,0.611,0.543,0.537
"""))

# Table 7: model, dataset, CQ, CS, RS, LS, ES, SS, Q_bal
TABLE7 = pd.read_csv(io.StringIO("""model,dataset,cq,cs,rs,ls,es,ss,balanced
GPT,GSM8K,0.552,0.567,0.804,0.670,0.343,0.931,0.645
GPT,MMLU,0.564,0.670,0.937,0.707,0.497,0.951,0.721
GPT,StrategyQA,0.480,0.531,0.908,0.927,0.382,0.891,0.687
GPT,Synthetic,0.800,0.817,0.868,0.930,0.662,0.951,0.838
Claude,GSM8K,0.880,0.901,0.933,0.865,0.738,0.951,0.878
Claude,MMLU,0.924,0.938,0.946,0.703,0.706,0.903,0.854
Claude,StrategyQA,0.624,0.623,0.897,0.871,0.416,0.865,0.716
Claude,Synthetic,0.716,0.676,0.749,0.891,0.553,0.921,0.751
DeepSeek,GSM8K,0.904,0.924,0.975,0.680,0.694,0.927,0.851
DeepSeek,MMLU,0.636,0.628,0.932,0.668,0.554,0.933,0.725
DeepSeek,StrategyQA,0.624,0.660,0.844,0.822,0.284,0.865,0.683
DeepSeek,Synthetic,0.704,0.736,0.935,0.859,0.635,0.921,0.798
Gemini,GSM8K,0.812,0.861,0.951,0.672,0.622,0.948,0.811
Gemini,MMLU,0.449,0.403,0.845,0.741,0.376,0.876,0.615
Gemini,StrategyQA,0.704,0.740,0.941,0.813,0.606,0.866,0.778
Gemini,Synthetic,0.708,0.683,0.880,0.898,0.655,0.930,0.792
LLaMA,GSM8K,0.844,0.812,0.872,0.721,0.647,0.913,0.802
LLaMA,MMLU,0.671,0.690,0.903,0.801,0.553,0.868,0.748
LLaMA,StrategyQA,0.368,0.287,0.783,0.891,0.220,0.858,0.568
LLaMA,Synthetic,0.664,0.695,0.868,0.935,0.526,0.929,0.769
Qwen,GSM8K,0.344,0.312,0.713,0.713,0.195,0.906,0.530
Qwen,MMLU,0.382,0.539,0.876,0.852,0.361,0.892,0.651
Qwen,StrategyQA,0.432,0.647,0.824,0.901,0.271,0.817,0.649
Qwen,Synthetic,0.704,0.672,0.767,0.840,0.482,0.890,0.726
Phi-2,GSM8K,0.240,0.261,0.572,0.762,0.201,0.868,0.484
Phi-2,MMLU,0.284,0.455,0.578,0.755,0.255,0.758,0.514
Phi-2,StrategyQA,0.524,0.649,0.634,0.974,0.479,0.831,0.682
Phi-2,Synthetic,0.640,0.591,0.618,0.936,0.578,0.831,0.699
"""))

# Table 9: pair, r, p (as printed; "<0.001" as 0.0005), stars, 95% CI, interpretation
TABLE9 = [("cq", "cs", 0.928, 0.0005, "***", 0.864, 0.972, "structural"),
          ("cq", "rs", 0.627, 0.0005, "***", 0.321, 0.815, "structural"),
          ("cq", "ls", -0.083, 0.676, "ns", -0.435, 0.291, "negligible"),
          ("cq", "es", 0.917, 0.0005, "***", 0.832, 0.964, "structural"),
          ("cq", "ss", 0.573, 0.001, "**", 0.320, 0.754, "moderate"),
          ("cs", "rs", 0.634, 0.0005, "***", 0.400, 0.805, "moderate"),
          ("cs", "ls", -0.054, 0.785, "ns", -0.413, 0.324, "negligible"),
          ("cs", "es", 0.874, 0.0005, "***", 0.744, 0.956, "moderate"),
          ("cs", "ss", 0.458, 0.014, "*", 0.242, 0.645, "weak"),
          ("rs", "ls", -0.229, 0.241, "ns", -0.586, 0.157, "weak"),
          ("rs", "es", 0.566, 0.002, "**", 0.269, 0.778, "moderate"),
          ("rs", "ss", 0.637, 0.0005, "***", 0.321, 0.821, "moderate"),
          ("ls", "es", 0.001, 0.995, "ns", -0.336, 0.360, "negligible"),
          ("ls", "ss", -0.262, 0.178, "ns", -0.638, 0.119, "weak"),
          ("es", "ss", 0.548, 0.003, "**", 0.278, 0.750, "moderate")]


def test_paper3_table3_scenario_weights_are_the_corrected_table():
    # Table 3 (corrected, §5.2 "Seventh"): Safety and Accuracy Priority as printed.
    assert rq.SCENARIOS["safety_priority"] == dict(zip(DIMS, (0.30, 0.05, 0.30, 0.25, 0.05, 0.05), strict=True))
    assert rq.SCENARIOS["accuracy_priority"] == dict(zip(DIMS, (0.50, 0.10, 0.15, 0.15, 0.05, 0.05), strict=True))
    assert rq.SCENARIOS["edge_device"] == dict(zip(DIMS, (0.30, 0.03, 0.10, 0.05, 0.50, 0.02), strict=True))


@pytest.mark.parametrize("scenario", ["balanced", "safety_priority", "accuracy_priority", "efficiency_priority"])
def test_paper3_table6_q_columns_from_its_dimensions_and_table3(scenario):
    # e.g. GPT Q_saf = .3*.600 + .05*.646 + .3*.877 + .25*.811 + .05*.465 + .05*.930 = .74785 -> .748
    scores = rq.scenario_scores(TABLE6, {scenario: rq.SCENARIOS[scenario]})[scenario]
    assert scores.round(3).tolist() == pytest.approx(TABLE6[scenario].tolist(), abs=0.0011)


def test_paper3_table7_q_bal_from_its_dimensions():
    scores = rq.scenario_scores(TABLE7, {"balanced": rq.SCENARIOS["balanced"]})["balanced"]
    # the printed dimensions are rounded to 3 places, so their mean can differ by 1 in the last place
    assert scores.tolist() == pytest.approx(TABLE7["balanced"].tolist(), abs=0.0007)


def test_paper3_table8_rankings_and_the_edge_inversions_from_table6():
    ranked = rq.rankings(TABLE6[["model", *DIMS]], rq.SCENARIOS).set_index("model")
    order = ["Claude", "DeepSeek", "Gemini", "LLaMA", "GPT", "Qwen", "Phi-2"]
    for scenario in rq.SCENARIOS:
        got = ranked[f"rank {scenario}"].sort_values().index.tolist()
        want = ["Claude", "Gemini", "DeepSeek", "LLaMA", "GPT", "Phi-2", "Qwen"] if scenario == "edge_device" \
            else order
        assert got == want, scenario
    # §4.4: Edge scores Gemini .662 > DeepSeek .657, Phi-2 .460 > Qwen .459
    edge = ranked["edge_device"].round(3).to_dict()
    assert [edge[m] for m in ("Gemini", "DeepSeek", "Phi-2", "Qwen")] == [0.662, 0.657, 0.460, 0.459]


def test_paper3_table9_r_p_stars_interval_and_interpretation_from_table7():
    table = rq.discriminant_validity(TABLE7[DIMS], resamples=10_000, seed=42).set_index(["a", "b"])
    assert len(table) == 15 and set(table["n"]) == {28}
    for a, b, r, p, stars, low, high, interpretation in TABLE9:
        row = table.loc[(a, b)]
        # Table 7 is rounded to 3 places: r moves by up to .002
        assert row["r"] == pytest.approx(r, abs=0.0025), (a, b)
        assert row["p"] == pytest.approx(p, abs=0.005), (a, b)
        assert (row["stars"], row["category"]) == (stars, interpretation), (a, b)
        # a different bootstrap draw over the rounded table: the printed bounds within .01
        assert (row["ciLow"], row["ciHigh"]) == (pytest.approx(low, abs=0.01), pytest.approx(high, abs=0.01))
    # "6 of 15 dimension pairs show acceptable discriminant separation (|r| < 0.50)" (§3.1)
    assert int(table["independent"].sum()) == 6


def test_paper3_section45_partial_correlations_given_cq_from_table7():
    table = rq.discriminant_validity(TABLE7[DIMS], resamples=100).set_index(["a", "b"])
    # §4.5: r(RS, ES | CQ) = -0.029, r(CS, ES | CQ) = 0.153, r(CS, RS | CQ) = 0.179
    assert table.loc[("rs", "es"), "partialR"] == pytest.approx(-0.029, abs=0.002)
    assert table.loc[("cs", "es"), "partialR"] == pytest.approx(0.153, abs=0.002)
    assert table.loc[("cs", "rs"), "partialR"] == pytest.approx(0.179, abs=0.002)


def test_paper3_figure5_layers_from_table9():
    table = pd.DataFrame(TABLE9, columns=["a", "b", "r", "p", "stars", "low", "high", "interpretation"])
    layers = rq.layer_summary(table).set_index("block")
    # Figure 5: the outcome layer intercorrelates at r = 0.57-0.93; LS has no significant association with
    # the outcome metrics; SS moderate ones (.458-.637, all significant); LS and SS are not correlated.
    assert layers.loc["outcome", ["pairs", "rMin", "rMax", "significant"]].tolist() == [6, 0.566, 0.928, 6]
    assert layers.loc["LS-outcome", ["pairs", "significant"]].tolist() == [4, 0]
    assert layers.loc["SS-outcome", ["pairs", "rMin", "rMax", "significant"]].tolist() == [4, 0.458, 0.637, 4]
    assert layers.loc["LS-SS", ["pairs", "significant"]].tolist() == [1, 0]


def _canonical(text: str, gold: str, answer_type: str, grading: str) -> str | None:
    verdict = rq.score_item(Completion(0, 1, text=text, finish_reason="stop"), gold, answer_type, grading=grading)
    return rq.canonical_answer(verdict.extracted, verdict.reason)


@pytest.mark.parametrize(("grading", "twenty_five"), [("release", "25.0"), ("kstp", "25")])
def test_paper3_section34_corrected_protocol_examples(grading, twenty_five):
    """§3.4's examples hold under the release's matching (the default; numbers in its canonical repr) and kstp's."""
    # the short-gold leak: gold "D" must not match the d of "drastic", gold "5" not the 5 inside "25"
    assert _canonical("That would be a drastic change.", "D", "choice", grading) is None
    assert _canonical("The total is 25.", "5", "number", grading) == twenty_five
    # an option letter counts when anchored: after "answer is", "correct option is", or as the first token
    assert [_canonical(t, "B", "choice", grading)
            for t in ("The answer is B.", "The correct option is B", "B. It holds")] == ["B", "B", "B"]
    # CS over canonical answers: "The answer is 30." and "5 x 6 = 30" are the same answer
    answers = [_canonical("The answer is 30.", "30", "number", grading),
               _canonical("5 × 6 = 30", "30", "number", grading)]
    assert rq.consistency([answers]) == 1.0


def test_paper3_section34_sampling_is_temperature_07_and_256_tokens_without_top_p():
    # §3.4: "temperature = 0.7 with max_tokens = 256"; no top-p is set, so none is sent (provider default)
    sampling = parse_sampling(None, rq.SAMPLING, n=3, seed=0)
    assert (sampling.n, sampling.temperature, sampling.top_p, sampling.max_tokens) == (3, 0.7, None, 256)
