"""The next-step benchmark (paper 2): scoring conventions, presentations, answer validation,
statistics against scipy/statsmodels, the fringe oracle at 100%, and a real local model."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats
from statsmodels.stats.multitest import multipletests

from kstp.cli.main import cli
from kstp.errors import ConfigError, KstpError
from kstp.evaluators import nextstep as ns
from kstp.inference.backend import Completion, RejectedRequestError, Sampling, get_backend
from kstp.inference.backends.openai_compat import OpenAIBackend
from kstp.inference.runs import ConfigChangedError
from kstp.loaders.catalogues import Coverage, make_catalogue, resolve_catalogue, shipped_catalogues
from tests.endpoint import FakeEndpoint

DIAMOND = make_catalogue("diamond", "Diamond", [("a", "count"), ("b", "add"), ("c", "subtract"), ("d", "multiply")],
                         [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])


# ---- scoring ---------------------------------------------------------------------------
@pytest.mark.parametrize("predicted, reference, expected", [
    (set(), set(), {"exact": 1.0, "precision": 1.0, "recall": 1.0, "f1": 1.0, "jaccard": 1.0, "symDiff": 0}),
    (set(), {"a"}, {"exact": 0.0, "precision": 0.0, "recall": 0.0, "f1": 0.0, "jaccard": 0.0, "symDiff": 1}),
    ({"a", "b"}, set(), {"exact": 0.0, "precision": 0.0, "recall": 1.0, "f1": 0.0, "jaccard": 0.0, "symDiff": 2}),
    ({"a", "b", "c"}, {"c", "d"}, {"exact": 0.0, "precision": 1 / 3, "recall": 0.5, "f1": 0.4, "jaccard": 0.25,
                                   "symDiff": 3}),
    ({"a"}, {"b"}, {"exact": 0.0, "precision": 0.0, "recall": 0.0, "f1": 0.0, "jaccard": 0.0, "symDiff": 2}),
    ({"c", "d"}, {"d", "c"}, {"exact": 1.0, "precision": 1.0, "recall": 1.0, "f1": 1.0, "jaccard": 1.0,
                              "symDiff": 0}),
])
def test_score_item_empty_set_conventions_and_a_partial_hit(predicted, reference, expected):
    assert ns.score_item(predicted, reference) == pytest.approx(expected)


def test_invalid_answer_is_the_worst_answer_in_every_measure():
    # Four tasks, fringe {b}: the worst prediction is the complement {a, c, d}, |P xor T| = 4 = |Q|.
    scores = ns.score_item(None, {"b"}, tasks=4)
    assert [scores[m] for m in ns.METRICS[:-1]] == [0.0] * 5 and scores["symDiff"] == 4
    assert ns.score_item({"a", "c", "d"}, {"b"})["symDiff"] == 4  # the same as the worst valid answer
    # An empty fringe: an invalid answer still differs on every task, unlike the (correct) empty answer.
    assert ns.score_item(None, set(), tasks=4)["symDiff"] == 4 and ns.score_item(set(), set())["symDiff"] == 0
    with pytest.raises(ConfigError, match="give the number of tasks"):
        ns.score_item(None, {"b"})


def test_p3_lists_every_admissible_state_when_the_coverage_is_sampled():
    # V: a and b independent, c needs both. Space: {}, {a}, {b}, {a, b}, {a, b, c}; a sample of 2 draws asks
    # about at most 2 of them, yet P3 shows all 5 (in the identity order positions are a=1, b=2, c=3).
    v = make_catalogue("v", "V", [("a", "add"), ("b", "borrow"), ("c", "carry")], [("a", "c"), ("b", "c")],
                       coverage=Coverage("sample", 2, 0))
    assert len(v.states()) <= 2
    text = ns.build_prompt(v, set(), "P3", ("a", "b", "c"))[1]["content"]
    assert "each respecting every prerequisite:\n{}; {1}; {2}; {1, 2}; {1, 2, 3}\n" in text


def test_sampling_presets_paper_and_deterministic():
    assert ns.SAMPLING["paper"] == {"temperature": None, "top_p": None, "max_tokens": 16_000}
    assert ns.SAMPLING["deterministic"] == {"temperature": 0.0, "top_p": 0.95, "max_tokens": 1024}
    from kstp.inference.backends.openai_compat import OpenAIBackend

    request = OpenAIBackend("m", "http://127.0.0.1:1/v1")._request([], Sampling(**ns.SAMPLING["paper"]))
    assert "temperature" not in request and "top_p" not in request and request["max_tokens"] == 16_000


def test_agreement_of_two_presentations():
    assert ns.agreement(set(), set()) == (1.0, 1.0)
    assert ns.agreement({"a", "b"}, {"b", "c"}) == (0.0, pytest.approx(1 / 3))


# ---- presentations and prompts --------------------------------------------------------------
def test_presentations_are_deterministic_distinct_permutations():
    first, second = ns.presentation(DIAMOND, 0), ns.presentation(DIAMOND, 1)
    assert sorted(first) == sorted(second) == ["a", "b", "c", "d"] and first != second
    assert ns.presentation(DIAMOND, 1) == second and ns.presentation(DIAMOND, 0) == first
    one = make_catalogue("one", "One", [("x", "only")], [])
    assert ns.presentation(one, 0) == ns.presentation(one, 1) == ("x",)  # a single task has one order


def _back(order, positions):
    return {order[int(k) - 1] for k in positions}


@pytest.mark.parametrize("order_index", [0, 1])
def test_prompts_round_trip_through_the_permutation(order_index):
    order = ns.presentation(DIAMOND, order_index)
    state = {"a", "c"}
    user = {c: ns.build_prompt(DIAMOND, state, c, order)[1]["content"] for c in ns.CONDITIONS}
    for text in user.values():
        listed = dict(line.split(". ", 1) for line in text.split("\n\n")[0].splitlines()[1:])
        assert {order[int(k) - 1]: d for k, d in listed.items()} == {t.id: t.description for t in DIAMOND.tasks}
        mastered = text.split("Tasks the learner has mastered: ")[1].split(".")[0].split(", ")
        assert _back(order, mastered) == state
    pairs = json.loads("[" + user["P2"].split("Pairs: ")[1].split("\n")[0] + "]")
    assert {(order[a - 1], order[b - 1]) for a, b in pairs} == set(DIAMOND.prerequisites)
    listing = user["P3"].split("each respecting every prerequisite:\n")[1].split("\n")[0]
    states = [_back(order, s.strip("{}").split(", ")) if s != "{}" else set() for s in listing.split("; ")]
    assert sorted(map(sorted, states)) == sorted(sorted(s) for s, _ in DIAMOND.states())
    assert "prerequisitePairs" in user["P1"] and "prerequisitePairs" not in user["P0"]
    assert "Pairs:" not in user["P0"] + user["P1"] + user["P3"]


def test_the_oracle_answer_maps_back_to_the_fringe_in_every_order():
    oracle = ns.FringeOracle(catalogues=[DIAMOND])
    for k, condition, (state, _) in itertools.product(range(2), ns.CONDITIONS, DIAMOND.states()):
        order = ns.presentation(DIAMOND, k)
        text = oracle.answer(ns.build_prompt(DIAMOND, state, condition, order))
        answer = ns.parse_answer(Completion(0, 0, text=text, finish_reason="stop"), 4, condition)
        assert answer.validity == "valid"
        assert {order[p - 1] for p in answer.positions} == set(DIAMOND.space().outer_fringe(state))
        if condition == "P1":
            assert {(order[a - 1], order[b - 1]) for a, b in answer.pairs} == set(DIAMOND.prerequisites)


# ---- answer validation -------------------------------------------------------------------------
def _text(**fields):
    data = {"recommendations": [{"position": 2, "justification": "ready"}], "noRecommendationReason": None}
    data.update(fields)
    return json.dumps(data)


@pytest.mark.parametrize("completion, condition, kind", [
    (Completion(0, 1, error="refused: HTTP 400 content policy"), "P0", "refusal"),
    (Completion(0, 1, text="I'm sorry, I can't help with that.", finish_reason="stop"), "P0", "refusal"),
    (Completion(0, 1, text=_text(), finish_reason="content_filter"), "P0", "refusal"),
    (Completion(0, 1, text="   ", finish_reason="stop"), "P0", "empty output"),
    (Completion(0, 1, text='{"recommendations": [{"position": 2', finish_reason="length"), "P0", "truncated"),
    (Completion(0, 1, text='{"recommendations": [2, }', finish_reason="stop"), "P0", "malformed JSON"),
    (Completion(0, 1, text="Here you go: " + _text(), finish_reason="stop"), "P0", "extra prose"),
    (Completion(0, 1, text="```json\n" + _text() + "\n```", finish_reason="stop"), "P0", "extra prose"),
    (Completion(0, 1, text=_text(recommendations=[{"position": 5, "justification": "x"}]), finish_reason="stop"),
     "P0", "position out of range"),
    (Completion(0, 1, text=_text(recommendations=[{"position": 0, "justification": "x"}]), finish_reason="stop"),
     "P0", "position out of range"),
    (Completion(0, 1, text=_text(recommendations=[{"position": 1}]), finish_reason="stop"), "P0",
     "missing justification"),
    (Completion(0, 1, text=_text(recommendations=[{"position": 1, "justification": "  "}]), finish_reason="stop"),
     "P0", "missing justification"),
    (Completion(0, 1, text=_text(recommendations=[{"position": "1", "justification": "x"}]), finish_reason="stop"),
     "P0", "schema violation"),
    (Completion(0, 1, text=_text(extra=1), finish_reason="stop"), "P0", "schema violation"),
    (Completion(0, 1, text="[1, 2]", finish_reason="stop"), "P0", "schema violation"),
    (Completion(0, 1, text=_text(), finish_reason="stop"), "P1", "schema violation"),  # P1 needs the pairs
    (Completion(0, 1, text=_text(prerequisitePairs=[[1, 1]]), finish_reason="stop"), "P1",
     "invalid prerequisite pair"),
    (Completion(0, 1, text=_text(prerequisitePairs=[[1, 7]]), finish_reason="stop"), "P1",
     "invalid prerequisite pair"),
    (Completion(0, 1, text=_text(prerequisitePairs=[[1]]), finish_reason="stop"), "P1",
     "invalid prerequisite pair"),
    (Completion(0, 1, text=_text(recommendations=[{"position": 2, "justification": "x"},
                                                  {"position": 2, "justification": "y"}]), finish_reason="stop"),
     "P0", "duplicate position"),
    (Completion(0, 1, text=_text(recommendations=[{"position": k % 4 + 1, "justification": "x"} for k in range(5)]),
                finish_reason="stop"), "P0", "duplicate position"),  # more entries than tasks
    (Completion(0, 1, text=_text(recommendations=[]), finish_reason="stop"), "P0",
     "no-recommendation reason mismatch"),
    (Completion(0, 1, text=_text(noRecommendationReason="done"), finish_reason="stop"), "P0",
     "no-recommendation reason mismatch"),
])
def test_each_invalid_answer_kind(completion, condition, kind):
    assert ns.parse_answer(completion, 4, condition) == ns.Answer("invalid", kind)


def test_valid_answers_and_technically_missing():
    empty = _text(recommendations=[], noRecommendationReason="everything is mastered")
    assert ns.parse_answer(Completion(0, 1, text=empty, finish_reason="stop"), 4, "P0") == \
        ns.Answer("valid", None, (), ())
    with_pairs = _text(prerequisitePairs=[[1, 2], [2, 4]])
    assert ns.parse_answer(Completion(0, 1, text=with_pairs, finish_reason="stop"), 4, "P1").pairs == ((1, 2), (2, 4))
    missing = ns.parse_answer(Completion(0, 1, error="transport: APIConnectionError"), 4, "P0")
    assert missing.validity == "missing" and missing.positions is None


# ---- statistics against scipy and statsmodels ------------------------------------------------
def scored_frame(exact_by_condition: dict[str, list[float]], models=("m",)) -> pd.DataFrame:
    """One valid cell per (model, state, condition, presentation 0) with the given exact scores."""
    rows = []
    for model in models:
        for condition, values in exact_by_condition.items():
            for k, value in enumerate(values):
                rows.append({"model": model, "catalogue": "c", "stateId": f"s{k}", "weight": 1, "size": 0,
                             "fringeSize": k % 2,
                             "condition": condition, "presentation": 0, "attempts": 1, "validity": "valid",
                             "invalidKind": None, "predicted": frozenset(), "exact": value, "precision": value,
                             "recall": value, "f1": value, "jaccard": value, "symDiff": 1 - value})
    return pd.DataFrame(rows)


EXACT = {"P0": [0, 0, 1, 0, 0, 1], "P1": [1, 0, 1, 1, 0, 1], "P2": [1, 1, 1, 1, 0, 1], "P3": [1, 1, 1, 1, 1, 1]}


def test_condition_table_bootstrap_equals_scipy_on_the_same_numbers():
    report = ns.aggregate(scored_frame(EXACT), seed=7, resamples=2000, flips=1000)
    table = report.conditions.set_index("condition")
    # The overall row: each state's mean over P0-P3, (.75, .5, 1, .75, .25, 1), then their mean = 17/24.
    assert table["exact"].tolist() == pytest.approx([2 / 6, 4 / 6, 5 / 6, 1.0, 17 / 24])
    assert table["states"].tolist() == [6] * 5 and table.loc["all", "responses"] == 24
    pooled = stats.bootstrap((np.array([0.75, 0.5, 1, 0.75, 0.25, 1]),), np.mean, n_resamples=2000,
                             method="percentile", confidence_level=0.95, rng=np.random.default_rng(7))
    assert (table.loc["all", "exact low"], table.loc["all", "exact high"]) == pytest.approx(
        (pooled.confidence_interval.low, pooled.confidence_interval.high))
    direct = stats.bootstrap((np.array(EXACT["P1"], float),), np.mean, n_resamples=2000, method="percentile",
                             confidence_level=0.95, rng=np.random.default_rng(7)).confidence_interval
    assert (table.loc["P1", "exact low"], table.loc["P1", "exact high"]) == pytest.approx((direct.low, direct.high))
    assert (table.loc["P3", "exact low"], table.loc["P3", "exact high"]) == (1.0, 1.0)  # no spread, no resampling
    # macro F1 (here equal to exact, cell by cell) gets the same interval from the same draws (Figure 1)
    assert table[["f1 low", "f1 high"]].values.tolist() == table[["exact low", "exact high"]].values.tolist()


def test_sign_flip_equals_exact_enumeration_and_holm_equals_statsmodels():
    report = ns.aggregate(scored_frame(EXACT), seed=1, resamples=500, flips=100_000)
    contrasts = report.contrasts[report.contrasts["metric"] == "exact"].set_index("contrast")
    assert contrasts.index.tolist() == ["P1-P0", "P2-P1", "P3-P2"]
    # P1-P0 differences: [1, 0, 0, 1, 0, 0]; all 2^6 sign flips: |mean| >= 1/3 for the 2 x 2 sign pairs
    # of the two nonzero ones where both keep one sign: 2 of 4 patterns (times the 16 of the zeros) -> p = 0.5.
    assert contrasts.loc["P1-P0", "difference"] == pytest.approx(2 / 6)
    assert contrasts.loc["P1-P0", "p"] == pytest.approx(0.5)
    for name, (a, b) in {"P1-P0": ("P0", "P1"), "P2-P1": ("P1", "P2"), "P3-P2": ("P2", "P3")}.items():
        diff = np.array(EXACT[b], float) - np.array(EXACT[a], float)
        flips = np.array(list(itertools.product([1, -1], repeat=len(diff))))
        exact_p = np.mean(np.abs((flips * diff).mean(axis=1)) >= abs(diff.mean()) - 1e-12)
        direct = stats.permutation_test((diff,), np.mean, permutation_type="samples", n_resamples=100_000,
                                        alternative="two-sided", rng=np.random.default_rng(1)).pvalue
        assert contrasts.loc[name, "p"] == pytest.approx(exact_p) == pytest.approx(direct)
    assert contrasts["pHolm"].tolist() == pytest.approx(multipletests(contrasts["p"], method="holm")[1])
    # By hand: p = (0.5, 1.0, 1.0) -> Holm: min(1, 3 x 0.5), then the running maximum -> all 1.
    assert contrasts["pHolm"].tolist() == pytest.approx([1.0, 1.0, 1.0])


def test_holm_by_hand_on_distinct_p_values():
    # Separated contrasts over 12 states: exact enumeration is 4,096 flips.
    exact = {"P0": [0] * 12, "P1": [1] * 6 + [0] * 6, "P2": [1] * 12, "P3": [1] * 12}
    contrasts = ns.aggregate(scored_frame(exact), seed=0, resamples=200, flips=100_000).contrasts
    contrasts = contrasts[contrasts["metric"] == "exact"]
    p = contrasts["p"].to_numpy()
    assert p[0] == pytest.approx(2 / 64) and p[1] == pytest.approx(2 / 64) and p[2] == 1.0
    assert contrasts["pHolm"].tolist() == pytest.approx([3 * 2 / 64, 3 * 2 / 64, 1.0])


def test_holm_equals_statsmodels_with_ties_and_nan_in_any_order(monkeypatch):
    import gc

    from kstp.evaluators.nextstep.statistics import holm

    # multipletests runs gc.collect() at every call (why kstp has its own holm): 0.6 s each in a test
    # worker's heap, three minutes for these cases. Collecting changes no value it returns.
    monkeypatch.setattr(gc, "collect", lambda *args: 0)
    # By hand: sorted 0.01 x 3, 0.03 x 2, 0.04 x 1 = 0.03, 0.06, 0.04; running maximum 0.03, 0.06, 0.06.
    assert holm([0.04, 0.01, 0.03]).tolist() == pytest.approx([0.06, 0.03, 0.06])
    assert holm([0.6, 0.5]).tolist() == [1.0, 1.0] and holm([]).tolist() == []
    rng = np.random.default_rng(7)
    for trial in range(300):
        p = rng.random(int(rng.integers(1, 10))) * (0.05, 1.0, 3.0)[trial % 3]
        p[int(rng.integers(len(p)))] = p[0]  # a tie
        if trial % 5 == 0:
            p[int(rng.integers(len(p)))] = np.nan
        assert holm(p) == pytest.approx(multipletests(p, method="holm")[1], nan_ok=True)


def test_a_subset_of_conditions_contrasts_neighbours_present():
    contrasts = ns.aggregate(scored_frame({"P2": EXACT["P2"], "P0": EXACT["P0"]}), resamples=200, flips=200).contrasts
    assert contrasts["contrast"].tolist() == ["P2-P0"] * 3 and contrasts["difference"].iloc[0] == pytest.approx(3 / 6)


def cells(rows) -> pd.DataFrame:
    """Scored cells from (model, catalogue, state, fringe size, condition, presentation, predicted, exact, recall,
    f1); precision and Jaccard copy exact, symDiff is 1 - exact."""
    return pd.DataFrame([{"model": m, "catalogue": c, "stateId": st, "weight": 1, "size": 0, "fringeSize": fs,
                          "condition": cond, "presentation": pr, "attempts": 1, "validity": "valid",
                          "invalidKind": None, "predicted": frozenset(pred), "exact": ex, "precision": ex,
                          "recall": rc, "f1": f1, "jaccard": ex, "symDiff": 1 - ex}
                         for m, c, st, fs, cond, pr, pred, ex, rc, f1 in rows])


def test_recall_and_f1_contrasts_by_hand():
    # s0: recall .5 -> 1, F1 .4 -> 1; s1: recall 0 -> .5, F1 0 -> 2/3. Differences: recall (.5, .5), F1 (.6, 2/3).
    # Sign flips of two positive differences: |mean| reaches the observed one for ++ and -- only: p = 2/4.
    frame = cells([("m", "c", "s0", 1, "P0", 0, "a", 0.0, 0.5, 0.4), ("m", "c", "s0", 1, "P1", 0, "a", 1.0, 1.0, 1.0),
                   ("m", "c", "s1", 2, "P0", 0, "", 0.0, 0.0, 0.0), ("m", "c", "s1", 2, "P1", 0, "a", 0.0, 0.5, 2 / 3)])
    contrasts = ns.aggregate(frame, resamples=200, flips=200).contrasts.set_index("metric")
    assert contrasts.loc["recall", "difference"] == pytest.approx(0.5)
    assert contrasts.loc["f1", "difference"] == pytest.approx((0.6 + 2 / 3) / 2)
    assert contrasts.loc["exact", "difference"] == pytest.approx(0.5)
    assert contrasts.loc["f1", ["p", "pHolm"]].tolist() == pytest.approx([0.5, 0.5])
    assert contrasts.loc["recall", ["p", "pHolm"]].tolist() == pytest.approx([0.5, 0.5])  # +- and -+ give 0


def test_pooled_agreement_domains_and_fringe_sizes_by_hand():
    frame = cells([
        # agreement: m1 P0 {a} = {a}; m2 P0 {a} vs {a, b} (Jaccard 1/2); m1 P1 {b} vs {c} (0)
        ("m1", "c", "s0", 1, "P0", 0, "a", 1.0, 1.0, 1.0), ("m1", "c", "s0", 1, "P0", 1, "a", 1.0, 1.0, 1.0),
        ("m2", "c", "s0", 1, "P0", 0, "a", 1.0, 1.0, 1.0), ("m2", "c", "s0", 1, "P0", 1, "ab", 1.0, 1.0, 1.0),
        ("m1", "c", "s0", 1, "P1", 0, "b", 1.0, 1.0, 1.0), ("m1", "c", "s0", 1, "P1", 1, "c", 1.0, 1.0, 1.0),
        # domain c, state s1 (fringe 2): P0 wrong, P1 right; domain d, state t0 (fringe 1): wrong in both
        ("m1", "c", "s1", 2, "P0", 0, "", 0.0, 0.0, 0.0), ("m1", "c", "s1", 2, "P1", 0, "ab", 1.0, 1.0, 1.0),
        ("m1", "d", "t0", 1, "P0", 0, "", 0.0, 0.0, 0.0), ("m1", "d", "t0", 1, "P1", 0, "", 0.0, 0.0, 0.0)])
    report = ns.aggregate(frame, resamples=200, flips=200)
    agreement = report.agreement.set_index(["model", "condition"])
    assert agreement.loc[("m2", "P0"), ["pairs", "exact agreement", "jaccard"]].tolist() == [1, 0.0, 0.5]
    assert agreement.loc[("all", "P0"), ["pairs", "exact agreement", "jaccard"]].tolist() == [2, 0.5, 0.75]
    assert agreement.loc[("all", "P1"), ["pairs", "exact agreement", "jaccard"]].tolist() == [1, 0.0, 0.0]
    assert agreement.loc[("all", "all"), "pairs"] == 3
    assert agreement.loc[("all", "all"), ["exact agreement", "jaccard"]].tolist() == pytest.approx([1 / 3, 0.5])
    # per domain, pooled over conditions: c = mean(s0 1, s1 (0 + 1)/2) = .75; d = 0
    summary = report.domain_summary.set_index("catalogue")
    assert summary["exact"].to_dict() == {"c": 0.75, "d": 0.0} and summary["states"].to_dict() == {"c": 2, "d": 1}
    assert report.domains.set_index("catalogue")["all"].to_dict() == {"c": 0.75, "d": 0.0}
    # by fringe size: P0 |T| = 1 -> s0, t0 = (1 + 0)/2; |T| = 2 -> s1 = 0; P1: (1 + 0)/2 and 1
    by = report.by_fringe.set_index(["condition", "fringeSize"])
    assert by["exact"].to_dict() == {("P0", 1): 0.5, ("P0", 2): 0.0, ("P1", 1): 0.5, ("P1", 2): 1.0}
    assert by["states"].to_dict() == {("P0", 1): 2, ("P0", 2): 1, ("P1", 1): 2, ("P1", 2): 1}


def test_model_ranks_share_ties_and_skip():
    frames = [scored_frame({"P0": [1, 1, 0, 0]}, ["tie1", "tie2"]), scored_frame({"P0": [0, 0, 0, 0]}, ["low"]),
              scored_frame({"P0": [1, 0, 0, 0]}, ["mid"])]
    models = ns.aggregate(pd.concat(frames), resamples=200, flips=200).models.set_index("model")
    assert models["P0"].to_dict() == {"low": 0.0, "mid": 0.25, "tie1": 0.5, "tie2": 0.5}
    assert models["rank P0"].to_dict() == {"low": 4, "mid": 3, "tie1": 1, "tie2": 1}


def test_model_ranks_tie_when_equal_accuracies_sum_in_another_order():
    # three presentations: a state mean of 2/3 on the last state or the fourth; both models are 14/15 right,
    # but the float sums 4 + 2/3 and 3 + 2/3 + 1 differ in the last bit; Table 4 ranks them together
    frames = [scored_frame({"P0": [1, 1, 1, 1, 2 / 3]}, ["a"]), scored_frame({"P0": [1, 1, 1, 2 / 3, 1]}, ["b"])]
    models = ns.aggregate(pd.concat(frames), resamples=200, flips=200).models.set_index("model")
    assert models["rank P0"].to_dict() == {"a": 1, "b": 1}


def test_states_weigh_equally_and_missing_cells_are_left_out():
    frame = scored_frame({"P0": [1, 0]})
    # A second presentation of state s0 and a technically missing cell on s1.
    extra = frame.iloc[[0, 1]].assign(presentation=1)
    extra.loc[extra.index[0], ["exact"]] = 0.0
    extra.loc[extra.index[1], ["validity"]] = "missing"
    extra.loc[extra.index[1], list(ns.METRICS)] = np.nan
    table = ns.aggregate(pd.concat([frame, extra]), resamples=200, flips=200).conditions.iloc[0]
    # s0: mean of 1 and 0 = 0.5; s1: 0 (its missing cell left out); states weigh equally -> 0.25.
    assert table["exact"] == pytest.approx(0.25)
    assert (table["responses"], table["missing"], table["invalid"]) == (3, 1, 0)


# ---- runs ----------------------------------------------------------------------------------
def test_fringe_oracle_scores_100_percent_on_every_shipped_catalogue(store):
    chosen = [resolve_catalogue(name) for name in shipped_catalogues()]
    oracle = get_backend("fringe-oracle", "fringe-oracle", catalogues=chosen)
    result = ns.evaluate(store, oracle, chosen, ns.CONDITIONS, 2, Sampling(temperature=0))
    states = sum(len(c.states()) for c in chosen)
    assert result.requested == states * 4 * 2 == len(result.scored)
    assert (result.scored["validity"] == "valid").all()
    assert result.scored[list(ns.METRICS[:-1])].eq(1.0).all().all() and (result.scored["symDiff"] == 0).all()
    stored = store.frame("nextstep_responses", {"runId": result.run_id})
    assert stored["correct"].all() and set(stored["verdict"]) == {"valid"}
    report = ns.aggregate(result.scored, resamples=500, flips=500)
    assert report.conditions["exact"].tolist() == [1.0] * 5 and report.agreement["exact agreement"].eq(1.0).all()


def test_design_is_crossed_and_shuffled_per_model():
    a, b = ns.design([DIAMOND], ["P0", "P2"], 2, "model-a"), ns.design([DIAMOND], ["P0", "P2"], 2, "model-b")
    key = ["stateId", "condition", "presentation"]
    assert len(a) == 6 * 2 * 2 and not a.duplicated(key).any()
    assert a[key].values.tolist() != b[key].values.tolist()
    assert sorted(map(tuple, a[key].values.tolist())) == sorted(map(tuple, b[key].values.tolist()))
    assert a[key].values.tolist() == ns.design([DIAMOND], ["P0", "P2"], 2, "model-a")[key].values.tolist()
    assert set(a["condition"].head(4)) == {"P0", "P2"}  # conditions interleave over collection time


class FlakyOracle(ns.FringeOracle):
    """The oracle behind a connection that drops every answer of its first call."""

    calls = 0

    def stream(self, requests, window, emit, stop):
        self.calls += 1  # per instance: each engine's run starts with a dropped call
        if self.calls > 1:
            return super().stream(requests, window, emit, stop)
        for request in requests:
            emit(request.key, Completion(request.sample_index, request.sampling.seed,
                                         error="transport: APIConnectionError"))


def test_transport_failures_are_missing_not_stored_and_asked_on_resume(store):
    tiny = make_catalogue("tiny", "Tiny", [("a", "add"), ("b", "carry")], [("a", "b")])
    flaky = FlakyOracle(catalogues=[tiny])
    first = ns.evaluate(store, flaky, [tiny], ["P0"], 1, Sampling(temperature=0), retries=0)
    assert (first.summary()["missing"], first.generated, first.last_failure) == (3, 0, "transport: APIConnectionError")
    assert first.scored.empty and store.frame("nextstep_responses", {"runId": first.run_id}).empty
    [run] = store.run("runs_of", {"evaluator": "nextstep", "model": flaky.model, "dataset": "tiny"})
    assert run["status"] == "incomplete"
    again = ns.evaluate(store, flaky, [tiny], ["P0"], 1, Sampling(temperature=0), retries=0)
    assert again.run_id == first.run_id and again.resumed and again.generated == 3
    assert (again.scored["validity"] == "valid").all() and (again.scored["attempts"] == 1).all()
    assert again.summary()["missing"] == 0
    assert ns.evaluate(store, flaky, [tiny], ["P0"], 1, Sampling(temperature=0)).generated == 0
    with pytest.raises(ConfigChangedError, match="conditions"):
        ns.evaluate(store, flaky, [tiny], ["P0", "P1"], 1, Sampling(temperature=0))


def test_retries_ask_a_cell_without_reply_again_in_the_same_run(store):
    tiny = make_catalogue("tiny", "Tiny", [("a", "add"), ("b", "carry")], [("a", "b")])
    result = ns.evaluate(store, FlakyOracle(catalogues=[tiny]), [tiny], ["P0"], 1, Sampling(temperature=0), retries=1)
    assert (result.generated, result.summary()["missing"], (result.scored["validity"] == "valid").all()) == \
        (3, 0, True)


def test_a_rejected_request_stops_the_run_and_stores_nothing(store):
    tiny = make_catalogue("tiny", "Tiny", [("a", "add"), ("b", "carry")], [("a", "b")])
    with FakeEndpoint([401]) as server:
        backend = OpenAIBackend("m", base_url=server.base_url, max_wait=0.05, concurrency=1)
        with pytest.raises(RejectedRequestError, match="HTTP 401: 'status 401'"):
            ns.evaluate(store, backend, [tiny], ["P0"], 1, Sampling(temperature=0))
        assert server.requests == 1
    [run] = store.run("runs_of", {"evaluator": "nextstep", "model": "m", "dataset": "tiny"})
    assert run["status"] == "failed" and store.frame("nextstep_responses", {"runId": run["runId"]}).empty


def test_rescore_refuses_a_catalogue_that_changed(store):
    tiny = make_catalogue("tiny", "Tiny", [("a", "add"), ("b", "carry")], [("a", "b")])
    result = ns.evaluate(store, ns.FringeOracle(catalogues=[tiny]), [tiny], ["P0"], 1, Sampling(temperature=0))
    from kstp.loaders.catalogues import write_catalogue

    write_catalogue(store, make_catalogue("tiny", "Tiny", [("a", "add"), ("b", "carry")], []))
    with pytest.raises(KstpError, match="catalogue 'tiny' in the graph differs"):
        ns.rescore(store, result.run_id)


def test_cli_evaluate_and_report_with_the_oracle(tmp_path, graph_location):
    graph = graph_location
    runner = CliRunner()
    result = runner.invoke(cli, ["--graph", graph, "evaluate", "nextstep", "--catalogue", "cm_8f", "--backend",
                                 "fringe-oracle", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["cells"], summary["valid"], summary["exactSetAccuracy"]) == (7 * 4 * 2, 56, 1.0)
    # every reply of the oracle is whole: none of the 56 cut at the paper preset's 16,000 tokens (§3)
    assert summary["truncation"] == {"replies": 56, "truncated": 0, "share": 0.0, "maxTokens": 16000}
    assert "0 of 56 replies (0.0%) were cut at max_tokens (16,000 tokens" in " ".join(result.stderr.split())
    out = tmp_path / "report"
    report = runner.invoke(cli, ["--graph", graph, "report", "nextstep", "--run", summary["runId"], "--out", str(out),
                                 "--resamples", "200", "--flips", "200", "--focus", "cm_8f:p1", "--json"])
    assert report.exit_code == 0, report.output
    tables = json.loads(report.stdout)
    assert [row["exact"] for row in tables["conditions"]] == [1.0] * 5
    assert [row["contrast"] for row in tables["contrasts"]] == ["P1-P0", "P2-P1", "P3-P2"] * 3
    assert [row["metric"] for row in tables["contrasts"]] == ["exact"] * 3 + ["recall"] * 3 + ["f1"] * 3
    assert tables["conditions"][-1]["condition"] == "all" and tables["domain_summary"][0]["f1"] == 1.0
    # Figure 3's cell: the oracle is right on all 7 states x 2 orders of cm_8f under P1
    assert [(r["model"], r["states"], r["responses"], r["correct"], r["exact"]) for r in tables["model_domains"]
            if r["condition"] == "P1"] == [("fringe-oracle", 7, 14, 14, 1.0)]
    for name in ("nextstep_domains.png", "nextstep_conditions.png", "nextstep_fringe.png", "nextstep_by_fringe.csv",
                 "nextstep_domain_summary.csv", "nextstep_model_domains.csv", "nextstep_focus.png"):
        assert (out / name).stat().st_size > 0
    unknown = runner.invoke(cli, ["--graph", graph, "report", "nextstep", "--run", summary["runId"], "--out", str(out),
                                  "--resamples", "200", "--flips", "200", "--focus", "cm_8f:P7"])
    assert unknown.exit_code == 1 and "--focus cm_8f:P7: no answers for catalogue 'cm_8f'" in unknown.output
    bad = runner.invoke(cli, ["--graph", graph, "evaluate", "nextstep", "--catalogue", "cm_8f", "--conditions", "P5",
                              "--backend", "fringe-oracle"])
    assert bad.exit_code == 2 and "P5" in bad.output
    missing = runner.invoke(cli, ["--graph", graph, "report", "nextstep", "--run", "nope"])
    assert missing.exit_code == 1 and "no run 'nope'" in missing.output


def test_end_to_end_with_the_local_model_under_the_json_schema(store):
    """The tiny model is weak; the pipeline must be exact: every cell stored, parsed, scored, re-scored."""
    tiny = make_catalogue("tiny", "Tiny", [("a", "Add two whole numbers"),
                                           ("b", "Add two fractions with unlike denominators")], [("a", "b")])
    backend = get_backend("local", "smollm2")
    try:
        result = ns.evaluate(store, backend, [tiny], ["P0", "P1"], 1, Sampling(temperature=0, max_tokens=32))
    finally:
        backend.close()
    stored = store.frame("nextstep_responses", {"runId": result.run_id})
    assert len(stored) == len(result.scored) == 3 * 2 * 1
    assert stored["text"].str.lstrip().str.startswith("{").all()  # the schema reached llama.cpp's grammar
    assert set(stored["verdict"]) <= {"valid", "invalid"}
    assert set(stored["invalidKind"].dropna()) <= set(ns.INVALID_KINDS)
    assert (stored.loc[stored["finishReason"] == "length", "invalidKind"] == "truncated").all()
    merged = stored.merge(result.scored, on=["stateId", "condition"])
    assert (merged["verdict"] == merged["validity"]).all()
    assert merged["correct"].astype(float).tolist() == merged["exact"].tolist()
    assert merged["precision_x"].astype(float).tolist() == pytest.approx(merged["precision_y"].tolist())
