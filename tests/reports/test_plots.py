"""Bar charts (kstp.reports.plots): where the shared bar-group helper puts each bar, and
that every bar chart writes a PNG."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from kstp.reports import plots


def test_bar_groups_place_bar_k_of_every_group_side_by_side():
    ax = Figure().subplots()
    centres = plots._bar_groups(ax, ["g1", "g2"], [("a", np.array([1.0, 2.0]), None),
                                                   ("b", np.array([3.0, 4.0]), np.array([0.5, 0.5]))])
    bars = [(round(p.get_x() + p.get_width() / 2, 9), p.get_height(), round(p.get_width(), 9)) for p in ax.patches]
    assert centres.tolist() == [0, 1]
    assert bars == [(-0.2, 1.0, 0.4), (0.8, 2.0, 0.4), (0.2, 3.0, 0.4), (1.2, 4.0, 0.4)]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["g1", "g2"]
    assert ax.get_legend_handles_labels()[1] == ["a", "b"]


FRAME = pd.DataFrame({"low": [0.2, 0.4], "mid": [0.5, 0.6]}, index=["model A", "model B"])


@pytest.mark.parametrize("draw", [
    lambda path: plots.grouped_bars(FRAME, path, "t", "share"),
    lambda path: plots.bars_with_baseline(FRAME, pd.Series([0.3, np.nan], index=FRAME.index), path, "t", "acc"),
    lambda path: plots.interval_bars(FRAME.assign(lo=0.1, hi=0.9), {"mid": ("mid", "lo", "hi")}, path, "t"),
    lambda path: plots.error_rates(["i1", "i2"], [0.1, 0.2], [0.05, 0.0], path, "t", [0.01, np.nan], None),
])
def test_bar_charts_write_a_png(tmp_path, draw):
    path = draw(tmp_path / "sub" / "chart.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
