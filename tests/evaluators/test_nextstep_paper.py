"""Paper 2's printed figures, reproduced by :func:`kstp.evaluators.nextstep.aggregate`.

Steiner, Hochweber 2026, "Benchmarking LLM Next-Step Recommendations with Knowledge
Space Theory" (arXiv 2611.13667). The SaTiM domains and the 2,400 responses are not
public, but the paper prints enough counts to rebuild a scored design that agrees with
every one of them: each cell of Table 4 is k of 100 responses (50 equally weighted
states x 2 orders), each Figure 2 cell k of 12 x states, Figure 3's cells k of 18. The
model x domain counts below are one completion of those printed margins (Table 4 rows,
Figure 2 and §4.5.2 columns, Figure 3's Graph-to-Equation P1 column); cells the paper
leaves open were filled to fit its stated ranges. Within a cell the terminal state comes
first and right answers fill (state, order) slots in order. The report must then print
the paper's numbers: Table 3's exact column and the overall 79.7%, Table 4 with its
ranks, the §4.5.2 domain figures, Figure 2's cells, Figure 3's 17/18, the contrasts,
the 192 terminal responses and 85.25% agreement over 1,200 pairs.
"""

import pandas as pd
import pytest

from kstp.evaluators import nextstep as ns
from kstp.loaders.catalogues import make_catalogue

MODELS = ["Claude Fable 5", "Claude Sonnet 5", "GPT-5.6 Sol", "GPT-5.6 Terra", "Gemini 3.1 Pro Preview",
          "Gemini 3.7 Flash"]
#: Table 1: domain -> states (one terminal state each).
STATES = {"Linear Modelling": 23, "Slope": 11, "Graph to Equation": 9, "Equation to Graph": 7}
#: Right answers per condition, model (rows, MODELS order) and domain (columns, STATES order); of 2 x states.
RIGHT = {"P0": [[36, 10, 16, 14], [26, 8, 13, 13], [27, 8, 14, 13], [25, 7, 13, 12], [21, 6, 12, 12],
                [26, 9, 14, 13]],
         "P1": [[33, 6, 17, 14], [27, 5, 16, 13], [25, 5, 17, 14], [29, 5, 15, 14], [29, 5, 15, 14],
                [23, 8, 14, 14]],
         "P2": [[45, 22, 17, 14], [35, 21, 17, 12], [46, 22, 18, 14], [43, 21, 17, 14], [46, 22, 18, 14],
                [46, 22, 18, 14]],
         "P3": [[46, 22, 18, 14], [44, 22, 16, 14], [46, 22, 18, 14], [40, 21, 18, 14], [46, 22, 18, 14],
                [46, 22, 18, 14]]}
#: §4.5.2: 85.25% of the 1,200 pairs agree, so 177 differ.
DISAGREEING = 177


def _design() -> pd.DataFrame:
    rows = []
    for condition, table in RIGHT.items():
        for model, counts in zip(MODELS, table, strict=True):
            for (domain, states), right in zip(STATES.items(), counts, strict=True):
                for slot in range(2 * states):
                    state, order = divmod(slot, 2)
                    rows.append({"model": model, "catalogue": domain, "stateId": f"{domain}:{state}", "weight": 1,
                                 "fringeSize": 0 if state == 0 else 1, "condition": condition,
                                 "presentation": order, "right": slot < right})
    frame = pd.DataFrame(rows)
    # agreement: a right/wrong pair always differs; the first wrong/wrong pairs differ too, until 177 do
    split = frame.groupby(["model", "catalogue", "stateId", "condition"])["right"].transform("sum") == 1
    wrong_pairs = frame[~frame["right"] & ~split & (frame["presentation"] == 1)].index
    differ = set(wrong_pairs[:DISAGREEING - int(split.sum()) // 2])
    frame["predicted"] = [frozenset({"t"}) if r.right else frozenset({"v" if i in differ else "w"})
                          for i, r in frame.iterrows()]
    score = frame["right"].astype(float)
    return frame.drop(columns="right").assign(validity="valid", invalidKind=None, exact=score, precision=score,
                                              recall=score, f1=score, jaccard=score, symDiff=1 - score)


@pytest.fixture(scope="module")
def report():
    return ns.aggregate(_design(), resamples=200, flips=200)


def test_paper2_table3_exact_column_and_the_overall_797(report):
    table = report.conditions.set_index("condition")
    assert table["responses"].tolist() == [600, 600, 600, 600, 2400]
    assert table["states"].tolist() == [50, 50, 50, 50, 50]
    # 368, 377, 578, 589 of 600; overall 1912 / 2400
    assert (100 * table["exact"]).round(1).tolist() == [61.3, 62.8, 96.3, 98.2, 79.7]


def test_paper2_section451_adjacent_contrasts_of_exact_set_accuracy(report):
    contrasts = report.contrasts[report.contrasts["metric"] == "exact"].set_index("contrast")
    # P1-P0 1.5, P2-P1 33.5, P3-P2 1.8 percentage points, paired over the 50 states
    assert (100 * contrasts["difference"]).round(1).to_dict() == {"P1-P0": 1.5, "P2-P1": 33.5, "P3-P2": 1.8}
    assert set(contrasts["states"]) == {50}


def test_paper2_table4_cells_and_ranks(report):
    table = report.models.set_index("model").loc[MODELS]
    assert (100 * table[["P0", "P1", "P2", "P3"]]).round().astype(int).values.tolist() == [
        [76, 70, 98, 100], [60, 61, 85, 96], [62, 61, 100, 100], [57, 63, 95, 93], [51, 63, 100, 100],
        [62, 59, 100, 100]]
    # ties share a rank and the next is skipped
    assert table[["rank P0", "rank P1", "rank P2", "rank P3"]].values.tolist() == [
        [1, 1, 4, 1], [4, 4, 6, 5], [2, 4, 1, 1], [5, 2, 5, 6], [6, 2, 1, 1], [2, 6, 1, 1]]
    # §4.5.2: model means over the four conditions range from 75.5% to 86.0%
    assert (100 * table["mean"]).round(1).agg(["min", "max"]).tolist() == [75.5, 86.0]


def test_paper2_section452_domain_figures_and_figure2_cells(report):
    domains = (100 * report.domains.set_index("catalogue")).round(1)
    assert domains["all"].to_dict() == {"Equation to Graph": 97.0, "Graph to Equation": 89.6,
                                        "Linear Modelling": 77.5, "Slope": 65.0}
    assert domains.loc["Slope", ["P0", "P1", "P2", "P3"]].tolist() == [36.4, 25.8, 98.5, 99.2]
    assert domains.loc["Linear Modelling", ["P0", "P1", "P2", "P3"]].tolist() == [58.3, 60.1, 94.6, 97.1]
    # "In P2, domain-specific exact accuracy ranged from 94.6% to 98.5%; in P3, from 97.1% to 100%"
    assert domains["P2"].agg(["min", "max"]).tolist() == [94.6, 98.5]
    assert domains["P3"].agg(["min", "max"]).tolist() == [97.1, 100.0]


def test_paper2_figure3_graph_to_equation_p1_per_model(report):
    cell = report.model_domains.query("catalogue == 'Graph to Equation' and condition == 'P1'").set_index("model")
    assert cell.loc[MODELS, "correct"].tolist() == [17, 16, 17, 15, 15, 14]
    assert set(cell["responses"]) == {18} and set(cell["states"]) == {9}
    assert round(100 * cell.loc["GPT-5.6 Sol", "exact"], 1) == 94.4
    # §4.5.2, P1: Claude Fable 5 leads Linear Modelling at 71.7%, Gemini 3.7 Flash leads Slope at 36.4%
    p1 = report.model_domains.query("condition == 'P1'").set_index(["catalogue", "model"])["exact"]
    assert (p1.loc["Linear Modelling"].idxmax(), round(100 * p1.loc["Linear Modelling"].max(), 1)) == (
        "Claude Fable 5", 71.7)
    assert (p1.loc["Slope"].idxmax(), round(100 * p1.loc["Slope"].max(), 1)) == ("Gemini 3.7 Flash", 36.4)


def test_paper2_section451_terminal_states_and_section452_agreement(report):
    terminal = report.by_fringe[report.by_fringe["fringeSize"] == 0]
    # 4 terminal states x 4 conditions x 6 models x 2 orders = 192 responses, all right
    assert terminal["states"].sum() * 6 * 2 == 192 and set(terminal["exact"]) == {1.0}
    overall = report.agreement.query("model == 'all' and condition == 'all'").iloc[0]
    assert (overall["pairs"], round(100 * overall["exact agreement"], 2)) == (1200, 85.25)


#: Stand-ins with Table 1's shape (the SaTiM relations are not public): components and direct pairs.
STAND_INS = {"Linear Modelling": (7, [(0, 1), (0, 3), (0, 5), (1, 6), (2, 5), (3, 4), (5, 6)]),
             "Slope": (7, [(0, 2), (1, 4), (2, 3), (3, 4), (4, 5), (5, 6)]),
             "Graph to Equation": (5, [(0, 2), (1, 3), (1, 4), (2, 3), (2, 4)]),
             # 0 -> 3, 1 -> 2 -> 3: {}, {0}, {1}, {0,1}, {1,2}, {0,1,2}, {0,1,2,3}
             "Equation to Graph": (4, [(0, 3), (1, 2), (2, 3)])}


def test_paper2_table1_shape_and_equation6_on_stand_in_domains():
    catalogues = [make_catalogue(name.replace(" ", "_").lower(), name, [(f"t{i}", f"task {i}") for i in range(n)],
                                 [(f"t{a}", f"t{b}") for a, b in pairs]) for name, (n, pairs) in STAND_INS.items()]
    rows = [(len(c.tasks), len(c.states()), sum(not c.space().outer_fringe(s) for s, _ in c.states()))
            for c in catalogues]
    # Table 1: components, states, terminal states; totals 23, 50, 4
    assert rows == [(7, 23, 1), (7, 11, 1), (5, 9, 1), (4, 7, 1)]
    assert [sum(column) for column in zip(*rows, strict=True)] == [23, 50, 4]
    # Eq. 6: 50 states x 4 conditions x 2 orders = 400 calls per model; x 6 models = 2,400
    cells = [ns.design(catalogues, ns.CONDITIONS, 2, model) for model in MODELS]
    assert [len(c) for c in cells] == [400] * 6 and sum(map(len, cells)) == 2400
