"""Hasse diagrams and prerequisite graphs (kstp.reports.diagrams): DOT text, layered layout, files.

Expected values are hand-computed on small structures: the covering pairs of a diamond
({}, {a}, {b}, {a, b}) and of pks's endm structure, and the edge crossings of a layered
drawing counted pair by pair.
"""

from __future__ import annotations

import numpy as np

from kstp.reports import diagrams

DIAMOND = np.array([[0, 0], [1, 0], [0, 1], [1, 1]])


def test_hasse_dot_has_a_node_per_state_and_an_edge_per_covering_pair():
    text = diagrams.hasse_dot(DIAMOND, ["a", "b"], [0, 0, 1, 2], [1, 2, 3, 3], probabilities=[0.1, 0.2, 0.3, 0.4])
    assert text.splitlines()[:4] == ['digraph "hasse" {', "  rankdir=BT;", "  node [shape=box, fontsize=10];",
                                     '  s0 [label="{} p=0.1", width=1.249];']
    assert [line.strip() for line in text.splitlines() if "->" in line] == [
        's0 -> s1 [label="a"];', 's0 -> s2 [label="b"];', 's1 -> s3 [label="b"];', 's2 -> s3 [label="a"];']
    assert diagrams.graph_dot(['say "hi"'], []).splitlines()[3] == '  "say \\"hi\\"";'  # quotes escaped


def _crossings(rows: list[list[int]], edges: list[tuple[int, int]]) -> int:
    """Edges between the same two adjacent rows that cross: their ends are in opposite orders."""
    where = {n: (r, i) for r, row in enumerate(rows) for i, n in enumerate(row)}
    count = 0
    for k, (a, b) in enumerate(edges):
        for c, d in edges[k + 1:]:
            if where[a][0] == where[c][0] and where[b][0] == where[d][0] and \
                    (where[a][1] - where[c][1]) * (where[b][1] - where[d][1]) < 0:
                count += 1
    return count


def test_barycenter_rows_remove_the_crossings_of_two_chains():
    # two chains 0-2-4 and 1-3-5 given with the middle row swapped: drawn as given they cross twice
    layer = [0, 0, 1, 1, 2, 2]
    edges = [(0, 3), (1, 2), (3, 4), (2, 5)]
    assert _crossings([[0, 1], [2, 3], [4, 5]], edges) == 2
    assert _crossings(diagrams._ordered_layers(layer, edges), edges) == 0


def test_figures_are_written_and_large_ones_summarised(tmp_path):
    paths = diagrams.hasse_figure(DIAMOND, ["a", "b"], [0, 0, 1, 2], [1, 2, 3, 3], tmp_path / "d", "diamond")
    assert [p.name for p in paths] == ["d.svg", "d.png"] and paths[1].read_bytes()[:4] == b"\x89PNG"
    svg = paths[0].read_text()
    assert "{a, b}" in svg and "diamond" in svg  # labels kept as text
    antichain = np.array([[int(b) for b in f"{k:08b}"] for k in range(256)])
    summary = diagrams.draw_layers([""] * 256, antichain.sum(axis=1).tolist(), [], tmp_path / "big", "big", limit=200)
    assert "256 nodes, more than 200 to draw one by one" in summary[0].read_text()
    assert max(map(len, diagrams.state_label(list("abcdefghij")).split("\n"))) < 40
