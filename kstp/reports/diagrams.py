"""Hasse diagrams of knowledge structures and prerequisite graphs: SVG and PNG (matplotlib), and Graphviz DOT.

Both are layered drawings of a directed acyclic graph: a Hasse diagram puts each state
on the row of its size, with an edge to every state covering it labelled by the items
that edge adds (its outer-fringe items); a prerequisite graph puts each item (or class
of equally informative items) on the row of its level (the longest chain of
prerequisites below it), with the covering pairs of the relation as edges (its
transitive reduction). Nodes are placed by networkx's ``multipartite_layout`` after a
few barycenter sweeps order each row by the mean position of its neighbours, which
removes most crossings. State probabilities (a BLIM fit) set the nodes' areas.

A drawing with more than ``limit`` nodes is not drawn node by node: the figure then
shows how many nodes each row holds, with a note saying so, and the DOT text (which
Graphviz lays out at any size) still holds every node. No label is ever longer than
:data:`LABEL_ITEMS` items.

Input is plain arrays: nothing here computes a structure (the callers use
:mod:`kstp.kst.analysis`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["LABEL_ITEMS", "hasse_dot", "graph_dot", "draw_layers", "hasse_figure", "graph_figure", "state_label"]

#: Items shown in a node's label; a longer state reads "a, b, c, ... (+12)".
LABEL_ITEMS = 6
#: Nodes up to which each node is labelled, and up to which each edge is.
NODE_LABELS, EDGE_LABELS = 30, 80


def state_label(members: list[str], most: int = LABEL_ITEMS) -> str:
    """A state as ``{a, b}``: at most ``most`` items, then an ellipsis and how many more, ``(+k)``.

    >>> state_label([]), state_label(["a", "b"]), state_label(list("abcdefgh"), 3)
    ('{}', '{a, b}', '{a, b, c, ... (+5)}')
    """
    shown = ", ".join(members[:most])
    return "{" + shown + (f", ... (+{len(members) - most})" if len(members) > most else "") + "}"


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def hasse_dot(states: np.ndarray, items: list[str], lower, upper, probabilities=None, name: str = "hasse") -> str:
    """The Hasse diagram in Graphviz's DOT language: a node per state, an edge per covering pair.

    Parameters
    ----------
    states : ndarray of shape (states, items), 0/1
    items : list of str
    lower, upper : sequences of int
        The covering pairs, as rows of ``states`` (``upper`` covers ``lower``).
    probabilities : sequence of float, optional
        Per state; written into its label and its ``width``.
    name : str
        The graph's name.

    Returns
    -------
    str

    Examples
    --------
    >>> print(hasse_dot(np.array([[0, 0], [1, 0]]), ["a", "b"], [0], [1]), end="")
    digraph "hasse" {
      rankdir=BT;
      node [shape=box, fontsize=10];
      s0 [label="{}"];
      s1 [label="{a}"];
      s0 -> s1 [label="a"];
    }
    """
    names = np.asarray(items, dtype=object)
    lines = [f"digraph {_quoted(name)} {{", "  rankdir=BT;", "  node [shape=box, fontsize=10];"]
    for k, row in enumerate(np.asarray(states)):
        members = names[row > 0].tolist()
        label = state_label(members, len(members))  # whole: the DOT text is what names every state
        if probabilities is not None:
            p = float(probabilities[k])
            lines.append(f"  s{k} [label={_quoted(f'{label} p={p:.3g}')}, width={0.3 + 3 * np.sqrt(p):.3f}];")
        else:
            lines.append(f"  s{k} [label={_quoted(label)}];")
    states = np.asarray(states)
    for a, b in zip(lower, upper, strict=True):
        added = names[(states[b] > 0) & (states[a] == 0)].tolist()
        lines.append(f"  s{a} -> s{b} [label={_quoted(', '.join(added))}];")
    return "\n".join(lines + ["}"]) + "\n"


def graph_dot(nodes: list[str], edges: list[tuple[str, str]], name: str = "prerequisites") -> str:
    """A prerequisite graph in DOT: an edge p -> q when p is a prerequisite of q.

    >>> print(graph_dot(["a", "b"], [("a", "b")]), end="")
    digraph "prerequisites" {
      rankdir=BT;
      node [shape=box, fontsize=10];
      "a";
      "b";
      "a" -> "b";
    }
    """
    lines = [f"digraph {_quoted(name)} {{", "  rankdir=BT;", "  node [shape=box, fontsize=10];"]
    lines += [f"  {_quoted(n)};" for n in nodes]
    lines += [f"  {_quoted(a)} -> {_quoted(b)};" for a, b in edges]
    return "\n".join(lines + ["}"]) + "\n"


def _ordered_layers(layer: list[int], edges: list[tuple[int, int]], sweeps: int = 4) -> list[list[int]]:
    """Nodes per layer, each layer ordered by barycenters of its neighbours in the layers next to it."""
    rows: dict[int, list[int]] = {}
    for node, level in enumerate(layer):
        rows.setdefault(level, []).append(node)
    levels = sorted(rows)
    down: dict[int, list[int]] = {}
    up: dict[int, list[int]] = {}
    for a, b in edges:
        up.setdefault(a, []).append(b)
        down.setdefault(b, []).append(a)
    position = {n: float(i) for level in levels for i, n in enumerate(rows[level])}
    for sweep in range(sweeps):
        order = levels[1:] if sweep % 2 == 0 else levels[-2::-1]
        near = down if sweep % 2 == 0 else up
        for level in order:
            def key(n, near=near):
                around = [position[m] for m in near.get(n, []) if m in position]
                return (sum(around) / len(around)) if around else position[n]

            rows[level].sort(key=key)
            for i, n in enumerate(rows[level]):
                position[n] = float(i) * max(1.0, max(len(r) for r in rows.values()) / max(len(rows[level]), 1))
    return [rows[level] for level in levels]


def draw_layers(labels: list[str], layer: list[int], edges: list[tuple[int, int]], path_stem: str | Path,
                title: str, edge_labels: list[str] | None = None, sizes=None, limit: int = 200,
                row_name: str = "size") -> list[Path]:
    """Draw a layered DAG to ``<path_stem>.svg`` and ``.png``; above ``limit`` nodes, how many each row holds.

    Parameters
    ----------
    labels : list of str
        One per node (shown up to :data:`NODE_LABELS` nodes; a note says when they are left out).
    layer : list of int
        Each node's row (drawn bottom to top).
    edges : list of (int, int)
        Node indices, drawn lower row to upper row.
    path_stem : path
        The files are ``path_stem`` with ``.svg`` and ``.png`` (the folder is created).
    title : str
    edge_labels : list of str, optional
        One per edge, written at its middle (up to :data:`EDGE_LABELS` nodes).
    sizes : sequence of float, optional
        Per node, in [0, 1] (state probabilities): marker areas follow them.
    limit : int
        The most nodes drawn one by one.
    row_name : str
        What a row is, for the summary's axis ("size", "level").

    Returns
    -------
    list of pathlib.Path
        The SVG and the PNG.
    """
    import networkx as nx
    from matplotlib.figure import Figure

    stem = Path(path_stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    n = len(labels)
    if n > limit:
        counts = np.bincount(np.asarray(layer, dtype=np.int64))
        fig = Figure(figsize=(7, 4), dpi=120)
        ax = fig.subplots()
        ax.bar(np.arange(len(counts)), counts, color="#4c72b0")
        ax.set_xlabel(row_name)
        ax.set_ylabel("nodes")
        ax.set_title(f"{title}\n{n:,} nodes, more than {limit:,} to draw one by one: how many of each {row_name}",
                     fontsize=9)
        ax.spines[["top", "right"]].set_visible(False)
        return _save(fig, stem)
    rows = _ordered_layers(layer, edges)
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(edges)
    # the rows as a dict keep their order (an attribute would be sorted by node)
    pos = nx.multipartite_layout(graph, subset_key={layer[row[0]]: row for row in rows},
                                 align="horizontal") if n else {}
    widest = max((len(r) for r in rows), default=1)
    fig = Figure(figsize=(min(40, max(6, 1.6 * widest)), min(30, max(4, 1.0 * len(rows) + 1))), dpi=100)
    ax = fig.subplots()
    for k, (a, b) in enumerate(edges):
        (x0, y0), (x1, y1) = pos[a], pos[b]
        ax.plot([x0, x1], [y0, y1], color="#999999", linewidth=0.8, zorder=1)
        if edge_labels is not None and n <= EDGE_LABELS:
            ax.text((x0 + x1) / 2, (y0 + y1) / 2, edge_labels[k], fontsize=7, color="#b03030", ha="center",
                    va="center", zorder=3, bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none",
                                                 "alpha": 0.8})
    if n:
        xy = np.array([pos[k] for k in range(n)])
        area = 40 if sizes is None else 20 + 1500 * np.asarray(sizes, dtype=np.float64)
        ax.scatter(xy[:, 0], xy[:, 1], s=area, c="#4c72b0", edgecolors="black", linewidths=0.5, zorder=2)
        if n <= NODE_LABELS:
            for k, (x, y) in enumerate(xy):
                ax.text(x, y, labels[k], fontsize=7, ha="center", va="bottom", zorder=4,
                        transform=ax.transData)
    note = "" if n <= NODE_LABELS else (f" ({n} nodes: " + ("node labels" if n <= EDGE_LABELS else "labels")
                                        + " left out; the DOT file names them)")
    ax.set_title(title + note, fontsize=9)
    ax.set_axis_off()
    return _save(fig, stem)


def _save(fig, stem: Path) -> list[Path]:
    """Write the SVG (text kept as text: searchable, and smaller) and the PNG."""
    import matplotlib

    fig.tight_layout()
    paths = [stem.with_suffix(".svg"), stem.with_suffix(".png")]
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "kstp"}):
        for path in paths:
            fig.savefig(path, metadata={"Date": None} if path.suffix == ".svg" else None)
    return paths


def hasse_figure(states: np.ndarray, items: list[str], lower, upper, path_stem: str | Path, title: str,
                 probabilities=None, limit: int = 200) -> list[Path]:
    """The Hasse diagram of ``states`` as SVG and PNG (:func:`draw_layers`): rows by state size, edges labelled
    with the items they add, node areas by ``probabilities`` when given."""
    states = np.asarray(states)
    names = np.asarray(items, dtype=object)
    labels = [state_label(names[row > 0].tolist(), 4) for row in states]
    edge_labels = [", ".join(names[(states[b] > 0) & (states[a] == 0)].tolist()) for a, b in zip(lower, upper,
                                                                                                   strict=True)]
    sizes = None if probabilities is None else np.asarray(probabilities) / max(float(np.max(probabilities)), 1e-12)
    return draw_layers(labels, states.sum(axis=1).astype(int).tolist(), list(zip(map(int, lower), map(int, upper),
                                                                                  strict=True)),
                       path_stem, title, edge_labels, sizes, limit, "state size")


def graph_figure(nodes: list[str], edges: list[tuple[str, str]], path_stem: str | Path, title: str,
                 limit: int = 200) -> list[Path]:
    """A prerequisite graph (its covering pairs) as SVG and PNG, rows by level (longest chain below a node)."""
    index = {v: k for k, v in enumerate(nodes)}
    pairs = [(index[a], index[b]) for a, b in edges]
    below: dict[int, list[int]] = {}
    for a, b in pairs:
        below.setdefault(b, []).append(a)
    level = [-1] * len(nodes)

    def depth(v: int) -> int:  # the graph is acyclic: classes of mutual prerequisites are one node
        stack = [v]
        while stack:
            top = stack[-1]
            pending = [u for u in below.get(top, []) if level[u] < 0]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            level[top] = max((level[u] + 1 for u in below.get(top, [])), default=0)
        return level[v]

    for v in range(len(nodes)):
        if level[v] < 0:
            depth(v)
    return draw_layers(nodes, level, pairs, path_stem, title, None, None, limit, "level")
