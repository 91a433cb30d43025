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

from collections import defaultdict
from dataclasses import dataclass, field

from kstp.errors import CycleError

__all__ = ["Drawing", "layered", "crossings"]

#: Horizontal distance between neighbouring nodes of a layer, and between layers (SVG units).
X_STEP, Y_STEP = 110, 80
#: Barycentre sweeps (each one down, then up).
SWEEPS = 6
#: Above this many layer-to-layer edge segments the sweeps run without counting crossings (the last order is kept).
COUNT_EDGES = 1500


@dataclass
class Drawing:
    """A layered drawing: node centres and edge polylines in SVG units.

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
    """

    nodes: dict[str, tuple[float, float]] = field(default_factory=dict)
    edges: list[tuple[str, str, list[tuple[float, float]]]] = field(default_factory=list)
    layers: dict[str, int] = field(default_factory=dict)
    width: float = 0.0
    height: float = 0.0

    def path(self, points: list[tuple[float, float]], gap: float = 0.0) -> str:
        """The SVG path of an edge's points, straight through each dummy point, its two ends moved
        ``gap`` units (vertically) towards each other so they meet a node's border, not its centre.

        >>> Drawing().path([(0, 0), (10, 20.5)])
        'M0,0 L10,20.5'
        >>> Drawing().path([(0, 0), (0, 80)], gap=16)
        'M0,16 L0,64'
        """
        points = list(points)
        if gap and len(points) >= 2:
            points[0] = _towards(points[0], points[1], gap)
            points[-1] = _towards(points[-1], points[-2], gap)
        return " ".join(f"{'M' if i == 0 else 'L'}{x:g},{y:g}" for i, (x, y) in enumerate(points))


def _towards(point: tuple[float, float], other: tuple[float, float], gap: float) -> tuple[float, float]:
    """``point`` moved along the line to ``other`` until its height changed by ``gap`` (or halfway)."""
    (x, y), (ox, oy) = point, other
    if oy == y:
        return point
    share = min(gap / abs(oy - y), 0.5)
    return (round(x + (ox - x) * share, 1), round(y + (oy - y) * share, 1))


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
            x_step: float = X_STEP, y_step: float = Y_STEP) -> Drawing:
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
        Distance between neighbouring nodes of a layer, and between layers.

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
    widest = max((len(level) for level in best), default=0)
    place: dict[str, tuple[float, float]] = {}
    for k, level in enumerate(best):
        offset = (widest - len(level)) * x_step / 2
        for i, node in enumerate(level):
            place[node] = (x_step / 2 + offset + i * x_step, y_step / 2 + k * y_step)
    drawing = Drawing({n: place[n] for n in nodes}, layers={n: layer[n] for n in nodes},
                      width=max(widest, 1) * x_step, height=max(depth, 1) * y_step)
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
