"""The explorer benchmark's check of the PSR page's scatter (benchmarks/explore.py), on pages made here."""

from __future__ import annotations

import pytest

from benchmarks.explore import _compare_pictures
from kstp.explore.app import environment
from kstp.explore.charts import scatter

CSV_KEY, PAGE_KEY = "PSR per-learner CSV (the scatter's points)", "PSR distribution (reads every answer)"
#: Two humans with a PSR, one without (not drawn), and a model.
POINTS = [("h1", 0.5, 0.25, "human"), ("h2", 0.75, 1.0, "human"), ("h3", 0.5, None, "human"),
          ("m", 0.6, 0.4, "model")]


@pytest.mark.parametrize("limit", [3000, 2], ids=["points", "cells"])
def test_benchmark_scatter_check_counts_humans_drawn_as_points_or_cells(limit):
    """--quick's scatter (under 3,000 points) draws each human as a circle; the full one counts them in cells:
    either way the check finds the CSV's 2 placed humans and reports nothing."""
    chart = scatter("t", POINTS, "accuracy", "PSR micro", limit=limit)
    assert chart["dense"] is (limit == 2)
    page = environment().from_string('{% from "_macros.html" import chart %}{{ chart(c, "", "psr-scatter") }}'
                                     '<div id="psr-questions"></div><div id="psr-distribution"></div>').render(
        c=chart, root="", static=False)
    csv = "learnerId,kind,accuracy,psrMicro\nh1,human,0.5,0.25\nh2,human,0.75,1.0\nh3,human,0.5,\nm,model,0.6,0.4\n"
    outputs = {CSV_KEY: [{"learner": "human learners", "learners": 3}]}
    assert _compare_pictures({CSV_KEY: csv, PAGE_KEY: page}, outputs) == []
