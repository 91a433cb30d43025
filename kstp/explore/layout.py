"""Layered drawings of directed acyclic graphs, computed on the server and sent as SVG.

Prerequisite neighbourhoods, question prerequisite relations, Hasse diagrams of knowledge
spaces and chain-of-thought DAGs are all drawn the same way (Sugiyama, Tagawa, Toda 1981):
each node on a layer (given, such as a concept's depth or a state's number of notions, or
else its longest path from a source), an edge that spans several layers routed through
one dummy point per layer it crosses, the order within each layer improved by barycentre
sweeps (each node moved to the mean position of its neighbours on the layer before, then
after), and nodes spaced evenly, each layer centred. Assumes an acyclic graph; a cycle is
refused. Drawing on the server keeps the browser's JavaScript small, gives the static
export the same pictures, and costs a few milliseconds for a few hundred nodes.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

from kstp.errors import CycleError

__all__ = ["Drawing", "layered", "crossings"]

#: Horizontal distance between neighbouring nodes of a layer, and between layers (SVG units).
X_STEP, Y_STEP = 110, 80
#: Least room between the boxes of neighbouring nodes, and between the boxes of neighbouring layers.
GAP, Y_GAP = 10, 48
#: Barycentre sweeps (each one down, then up).
SWEEPS = 6
#: Above this many layer-to-layer edge segments the sweeps run without counting crossings (the last order is kept).
COUNT_EDGES = 1500


@dataclass
class Drawing:
    """A layered drawing: node centres, node boxes and edge polylines in SVG units.

    Attributes
    ----------
    nodes : dict of str to (float, float)
        The centre of each node.
    edges : list of (str, str, list of (float, float))
        Each edge ``(from, to, points)``, the points from the first node's centre through
        the dummy points to the second's.
    layers : dict of str to int
        The layer of each node (0 at the top).
    width, height : float
        The size of the picture, margins included.
    sizes : dict of str to (float, float)
        Each node's box ``(width, height)``, centred on the node; a node not in it is a point.
    round : bool
        Whether nodes are ellipses inscribed in their boxes (circles for square boxes), not rectangles.
    """

    nodes: dict[str, tuple[float, float]] = field(default_factory=dict)
    edges: list[tuple[str, str, list[tuple[float, float]]]] = field(default_factory=list)
    layers: dict[str, int] = field(default_factory=dict)
    width: float = 0.0
    height: float = 0.0
    sizes: dict[str, tuple[float, float]] = field(default_factory=dict)
    round: bool = False

    def path(self, source: str, target: str, points: list[tuple[float, float]]) -> str:
        """The SVG path of the edge ``source -> target`` through ``points``, straight through each dummy
        point, starting on the source's border and ending on the target's (where an arrowhead's tip goes).

        >>> Drawing(sizes={"a": (100, 32), "b": (100, 32)}).path("a", "b", [(0, 0), (0, 80)])
        'M0,16 L0,64'
        >>> Drawing(sizes={"a": (100, 32), "b": (100, 32)}).path("a", "b", [(0, 0), (300, 60)])
        'M50,10 L250,50'
        >>> Drawing().path("a", "b", [(0, 0), (10, 20.5)])
        'M0,0 L10,20.5'
        """
        points = list(points)
        if len(points) >= 2:
            points[0] = self._clip(points[0], points[1], self.sizes.get(source))
            points[-1] = self._clip(points[-1], points[-2], self.sizes.get(target))
        return " ".join(f"{'M' if i == 0 else 'L'}{x:g},{y:g}" for i, (x, y) in enumerate(points))

    def border(self, node: str, toward: tuple[float, float]) -> tuple[float, float]:
        """Where the line from ``node``'s centre to ``toward`` leaves its box (rounded to 0.01 unit).

        >>> Drawing({"a": (0, 0)}, sizes={"a": (100, 32)}).border("a", (100, 100))
        (16.0, 16.0)
        >>> Drawing({"a": (0, 0)}, sizes={"a": (18, 18)}, round=True).border("a", (30, 40))
        (5.4, 7.2)
        """
        return self._clip(self.nodes[node], toward, self.sizes.get(node))

    def _clip(self, centre: tuple[float, float], toward: tuple[float, float],
              size: tuple[float, float] | None) -> tuple[float, float]:
        (x, y), (tx, ty) = centre, toward
        width, height = size or (0.0, 0.0)
        dx, dy = tx - x, ty - y
        if (dx == 0 and dy == 0) or not width or not height:
            return (x, y)
        half_w, half_h = width / 2, height / 2
        if self.round:  # on the ellipse (x/a)^2 + (y/b)^2 = 1
            share = 1 / math.hypot(dx / half_w, dy / half_h)
        else:  # the first side the ray meets
            share = min(half_w / abs(dx) if dx else math.inf, half_h / abs(dy) if dy else math.inf)
        share = min(share, 1.0)  # a point inside the box: the edge ends there
        return (round(x + dx * share, 2), round(y + dy * share, 2))


def _longest_path_layers(nodes: list[str], edges: list[tuple[str, str]]) -> dict[str, int]:
    parents: dict[str, list[str]] = defaultdict(list)
    children: dict[str, list[str]] = defaultdict(list)
    for a, b in edges:
        parents[b].append(a)
        children[a].append(b)
    waiting = {n: len(parents[n]) for n in nodes}
    ready = sorted(n for n in nodes if waiting[n] == 0)
    layer: dict[str, int] = {}
    while ready:
        node = ready.pop()
        layer[node] = max((layer[p] + 1 for p in parents[node]), default=0)
        for child in children[node]:
            waiting[child] -= 1
            if waiting[child] == 0:
                ready.append(child)
    if len(layer) < len(nodes):
        stuck = sorted(n for n in nodes if n not in layer)
        raise CycleError(f"cannot draw a cycle as layers: {', '.join(stuck[:5])} lie on one", stuck[:5])
    return layer


def crossings(order: list[list[str]], edges: list[tuple[str, str]]) -> int:
    """How many pairs of edges between neighbouring layers cross, for layers in ``order``.

    >>> crossings([["a", "b"], ["c", "d"]], [("a", "d"), ("b", "c")])
    1
    >>> crossings([["a", "b"], ["c", "d"]], [("a", "c"), ("b", "d")])
    0
    """
    place = {n: (k, i) for k, layer in enumerate(order) for i, n in enumerate(layer)}
    by_gap: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for a, b in edges:
        (ka, ia), (kb, ib) = place[a], place[b]
        if kb == ka + 1:
            by_gap[ka].append((ia, ib))
    total = 0
    for pairs in by_gap.values():
        for x, (a1, b1) in enumerate(pairs):
            for a2, b2 in pairs[x + 1:]:
                total += (a1 - a2) * (b1 - b2) < 0
    return total


def layered(nodes: list[str], edges: list[tuple[str, str]], layers: dict[str, int] | None = None,
            x_step: float = X_STEP, y_step: float = Y_STEP,
            sizes: dict[str, tuple[float, float]] | None = None) -> Drawing:
    """Lay out a DAG in layers, top to bottom along its edges.

    Parameters
    ----------
    nodes : list of str
        Node ids; their order is the starting order within a layer.
    edges : list of (str, str)
        Directed edges (from above to below); both ends must be in ``nodes``.
    layers : dict of str to int, optional
        A layer per node, each edge going to a higher one (a concept's depth, a state's
        size); by default the longest path from a source. Layers no node is on are left
        out (depths 0, 3, 7 are drawn as three neighbouring layers).
    x_step, y_step : float
        Distance between neighbouring nodes of a layer, and between layers, at the least.
    sizes : dict of str to (float, float), optional
        A box ``(width, height)`` per node (a label's); a node whose box and :data:`GAP` are
        wider than ``x_step`` takes that much room, a layer whose tallest box and
        :data:`Y_GAP` are taller than ``y_step`` that much. Kept on the drawing, where
        :meth:`Drawing.path` ends edges on the boxes' borders.

    Returns
    -------
    Drawing

    Raises
    ------
    CycleError
        When ``layers`` is not given and the edges hold a cycle.
    ValueError
        When a given layer puts an edge's head at or above its tail, or an edge names a node
        not in ``nodes``.

    Examples
    --------
    A diamond: a before b and c, both before d.

    >>> drawing = layered(["a", "b", "c", "d"], [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
    >>> drawing.layers
    {'a': 0, 'b': 1, 'c': 1, 'd': 2}
    >>> drawing.nodes["b"][1] == drawing.nodes["c"][1] and drawing.nodes["a"][0] == drawing.nodes["d"][0]
    True
    """
    nodes = list(dict.fromkeys(nodes))
    edges = list(dict.fromkeys((a, b) for a, b in edges if a != b))
    known = set(nodes)
    stray = [f"{a} -> {b}" for a, b in edges if a not in known or b not in known]
    if stray:
        raise ValueError(f"edge {stray[0]} names a node that is not drawn")
    layer = dict(layers) if layers is not None else _longest_path_layers(nodes, edges)
    rank = {value: k for k, value in enumerate(sorted(set(layer[n] for n in nodes)))}
    layer = {n: rank[layer[n]] for n in nodes}
    for a, b in edges:
        if layer[b] <= layer[a]:
            raise ValueError(f"edge {a} -> {b} does not go down a layer ({layer[a]} -> {layer[b]})")
    # Long edges become chains through one dummy node per layer they cross.
    chains: dict[tuple[str, str], list[str]] = {}
    short: list[tuple[str, str]] = []
    all_layer = dict(layer)
    for a, b in edges:
        chain = [a]
        for k in range(layer[a] + 1, layer[b]):
            dummy = f"\x00{a}\x00{b}\x00{k}"
            all_layer[dummy] = k
            chain.append(dummy)
        chain.append(b)
        chains[(a, b)] = chain
        short += list(zip(chain, chain[1:], strict=False))
    depth = max(all_layer.values(), default=-1) + 1
    order: list[list[str]] = [[] for _ in range(depth)]
    start = {n: i for i, n in enumerate(nodes)}
    for node in sorted(all_layer, key=lambda n: (start.get(n, len(start)), n)):
        order[all_layer[node]].append(node)
    up: dict[str, list[str]] = defaultdict(list)
    down: dict[str, list[str]] = defaultdict(list)
    for a, b in short:
        down[a].append(b)
        up[b].append(a)
    counted = len(short) <= COUNT_EDGES  # counting crossings is quadratic in the edges between two layers
    best, fewest = [list(level) for level in order], crossings(order, short) if counted else 0
    for _ in range(SWEEPS):
        for k in range(1, depth):
            _sort_by_barycentre(order, k, up, order[k - 1])
        for k in range(depth - 2, -1, -1):
            _sort_by_barycentre(order, k, down, order[k + 1])
        now = crossings(order, short) if counted else -1
        if now < fewest or not counted:
            best, fewest = [list(level) for level in order], now
    # Each node takes a slot of x_step, or its box and GAP where that is wider; a layer takes y_step, or its
    # tallest box and Y_GAP: boxes sized to their labels never overlap, and edges run between layers.
    sizes = dict(sizes or {})
    slots = [[max(x_step, sizes[n][0] + GAP) if n in sizes else x_step for n in level] for level in best]
    rows = [max([y_step, *(sizes[n][1] + Y_GAP for n in level if n in sizes)]) for level in best]
    widest = max([x_step, *(sum(level) for level in slots)])
    place: dict[str, tuple[float, float]] = {}
    top = 0.0
    for level, widths, row in zip(best, slots, rows, strict=True):
        left = (widest - sum(widths)) / 2
        for node, slot in zip(level, widths, strict=True):
            place[node] = (left + slot / 2, top + row / 2)
            left += slot
        top += row
    drawing = Drawing({n: place[n] for n in nodes}, layers={n: layer[n] for n in nodes},
                      width=widest, height=max(top, y_step), sizes={n: sizes[n] for n in nodes if n in sizes})
    drawing.edges = [(a, b, [place[n] for n in chains[(a, b)]]) for a, b in edges]
    return drawing


def _sort_by_barycentre(order: list[list[str]], k: int, neighbours: dict[str, list[str]], fixed: list[str]) -> None:
    """Reorder layer ``k`` by the mean position of each node's neighbours in ``fixed`` (stable; a node
    without any keeps its place)."""
    position = {n: i for i, n in enumerate(fixed)}
    keys = {}
    for i, node in enumerate(order[k]):
        seen = [position[n] for n in neighbours[node] if n in position]
        keys[node] = sum(seen) / len(seen) if seen else float(i)
    order[k].sort(key=lambda n: keys[n])
