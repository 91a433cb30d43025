"""The explorer's drawings: a dataset's question prerequisites, its Hasse diagram, a chain of thought,
each as what the ``graph`` template macro draws (no HTML here).

Layouts come from :func:`~kstp.explore.layout.layered`; this module turns a knowledge space or a
trajectory into nodes and edges, sizes each node's box to its label (wrapped, never cut), marks
nodes (a learner's verdicts, a step's closure) and gives each edge a path from its source's border
to its target's. Assumes spaces small enough to draw (the pages check :data:`HASSE_LIMIT` and
their own limits first).
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from kstp.explore.layout import Drawing, layered
from kstp.explore.values import as_rows as _rows
from kstp.explore.values import slug

__all__ = ["class_dag", "hasse", "cot", "svg", "label_sizes", "HASSE_LIMIT", "VERDICTS"]

#: Most states a Hasse diagram is drawn for.
HASSE_LIMIT = 400
#: Drawn labels: characters a line holds before it wraps, the width one takes and a line's height (11 px
#: text, SVG units); the smallest box; a Hasse diagram's dot radius.
LINE_CHARS, CHAR_W, LINE_H = 18, 7, 14
BOX = (100, 32)
DOT_R = 9
#: What a mark on a learner's structure says of a question (a mixed box's tooltip, a line each).
VERDICTS = {"correct": "answered right", "wrong": "answered wrong", "inner": "inner fringe (learnt last)",
            "outer": "outer fringe (ready to learn)", "": "not answered"}


def class_dag(space, names: dict[str, str], marks: dict[str, str] | None = None) -> dict:
    """The question prerequisite relation drawn as its transitive reduction on classes of equally
    informative questions (the space's cover relation), each on its level.

    Parameters
    ----------
    space : KnowledgeSpace
        The dataset's space (:func:`~kstp.graph.structures.dataset_space`).
    names : dict of str to str
        A question's label (its local id); a question not in it is labelled with its id.
    marks : dict of str to str, optional
        A learner's mark per question (``correct``, ``wrong``, ``inner``, ``outer``; none: not answered).

    Returns
    -------
    dict
        What :func:`svg` returns, a node per class. A class whose questions carry different
        marks (one answered right, one wrong) is marked ``mixed``, with ``parts`` (a mark per
        question, in its order: the box is filled in parts) and each one's verdict in its tooltip.

    Examples
    --------
    a and b are equally informative and both come before c; a was answered right, b wrong.

    >>> from kstp.kst.spaces import KnowledgeSpace
    >>> space = KnowledgeSpace.build(["t:a", "t:b", "t:c"], [("t:a", "t:b"), ("t:b", "t:a"), ("t:b", "t:c")])
    >>> drawn = class_dag(space, {"t:a": "a", "t:b": "b"}, {"t:a": "correct", "t:b": "wrong"})
    >>> [(n["lines"], n["mark"], n["parts"]) for n in drawn["nodes"]]
    [(['a = b'], 'mixed', ['correct', 'wrong']), (['t:c'], '', None)]
    >>> print(drawn["nodes"][0]["title"])
    t:a: answered right
    t:b: answered wrong
    >>> drawn["edges"][0]["d"]  # centres (55, 40) and (55, 120), boxes 32 high: bottom of one to top of the other
    'M55,56 L55,104'
    """
    nodes = [" = ".join(c) for c in space.classes]
    edges = [(nodes[b], nodes[k]) for k in range(len(nodes)) for b in _bits(space.cover[k])]
    labels = {n: {"code": " = ".join(names.get(q, q) for q in c)} for n, c in zip(nodes, space.classes, strict=True)}
    drawing = layered(nodes, edges, {n: space.level[k] for k, n in enumerate(nodes)},
                      sizes=label_sizes(nodes, labels))
    classes = {n: c for n, c in zip(nodes, space.classes, strict=True)}
    verdicts = {n: [(marks or {}).get(q, "") for q in classes[n]] for n in nodes}
    mark = {n: v[0] if len(set(v)) == 1 else "mixed" for n, v in verdicts.items()}
    parts = {n: v for n, v in verdicts.items() if mark[n] == "mixed"}

    def title(n: str) -> str:
        if marks is None:
            return ", ".join(classes[n])
        return "\n".join(f"{q}: {VERDICTS[m]}" for q, m in zip(classes[n], verdicts[n], strict=True))

    return svg(drawing, labels, None, marks=mark, title=title, parts=parts,
               anchors={n: f"q-{slug(classes[n][0])}" for n in nodes})


def _bits(mask: int) -> list[int]:
    out, k = [], 0
    while mask:
        if mask & 1:
            out.append(k)
        mask >>= 1
        k += 1
    return out


def hasse(space, dataset: str) -> dict:
    """The Hasse diagram of a knowledge space: states by number of notions, an edge where one notion is added;
    each state with its inner and outer fringe (``kstp kst space --enumerate``'s reading)."""
    masks, inner, outer = space.fringes("standard", HASSE_LIMIT)
    masks = [int(m) for m in masks]
    states = space.item_sets(masks)
    inner_sets, outer_sets = space.item_sets(inner), space.item_sets(outer)
    index = {m: i for i, m in enumerate(masks)}
    names = [f"s{i}" for i in range(len(masks))]
    edges = []
    for i, m in enumerate(masks):
        for k in range(len(space.classes)):
            bit = 1 << k
            if not m & bit and (space.below[k] & ~m) == 0 and (m | bit) in index:
                edges.append((names[i], names[index[m | bit]]))
    drawing = layered(names, edges, {n: bin(m).count("1") for n, m in zip(names, masks, strict=True)},
                      x_step=26, y_step=56, sizes={n: (2 * DOT_R, 2 * DOT_R) for n in names})
    drawing.round = True
    info = []
    for name, state, i_set, o_set in zip(names, states, inner_sets, outer_sets, strict=True):
        info.append({"node": name, "state": sorted(state), "inner": sorted(i_set), "outer": sorted(o_set)})
    by_node = {d["node"]: d for d in info}
    short = {q: q.split(":", 1)[-1] for q in space.items}

    def title(n: str) -> str:
        d = by_node[n]
        return (f"{{{', '.join(short[q] for q in d['state'])}}}\ninner fringe: "
                f"{', '.join(short[q] for q in d['inner']) or '-'}\nouter fringe: "
                f"{', '.join(short[q] for q in d['outer']) or '-'}")

    labels = {d["node"]: {"code": str(len(d["state"]))} for d in info}
    drawn = svg(drawing, labels, None, title=title, small=True,
                data={d["node"]: {"state": " ".join(short[q] for q in d["state"]),
                                  "inner": " ".join(short[q] for q in d["inner"]),
                                  "outer": " ".join(short[q] for q in d["outer"])} for d in info})
    return {**drawn, "states": len(masks)}


def cot(steps: pd.DataFrame) -> dict:
    """A trajectory's steps and its DAG, parents above children, unclosed steps marked (DAG-MATH, Def. 3.1)."""
    rows = _rows(steps)
    by_step: dict[int, dict] = {}
    for row in rows:
        step = by_step.setdefault(row["stepId"], {**{k: row[k] for k in ("stepId", "position", "node", "edge",
                                                                          "final", "closed")}, "parents": []})
        if row["parentStepId"] is not None:
            step["parents"].append(int(row["parentStepId"]))  # a column with nulls arrives as floats
    ordered = sorted(by_step.values(), key=lambda s: (s["position"], s["stepId"]))
    names = [str(s["stepId"]) for s in ordered]
    edges = [(str(p), str(s["stepId"])) for s in ordered for p in s["parents"] if p in by_step]
    labels = {str(s["stepId"]): {"code": f"step {s['stepId']}"} for s in ordered}
    drawing = layered(names, edges, sizes=label_sizes(names, labels))
    marks = {str(s["stepId"]): "final" if s["final"] else ("closed" if s["closed"] else "unclosed") for s in ordered}
    return {"steps": ordered, **svg(drawing, labels, None, marks=marks,
                                    title=lambda n: f"step {n}: {by_step[int(n)]['node'] or ''}")}


def _lines(label: str) -> list[str]:
    """A label's lines: words joined while a line holds :data:`LINE_CHARS`, a word never cut, an ``=``
    kept at the end of its line (``Item06 = Item08`` reads as one name per line where it wraps).

    >>> _lines("Item06 = Item08"), _lines("frcsub_Item06 = frcsub_Item08 = x")
    (['Item06 = Item08'], ['frcsub_Item06 =', 'frcsub_Item08 = x'])
    """
    words: list[str] = []
    for word in label.split(" "):
        if word == "=" and words:
            words[-1] += " ="
        else:
            words.append(word)
    lines: list[str] = []
    for word in words:
        if lines and len(lines[-1]) + 1 + len(word) <= LINE_CHARS:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def _box(lines: list[str]) -> tuple[float, float]:
    """The box that holds ``lines`` of a label: at least :data:`BOX`, wider for a long line, taller for each more.

    >>> _box(["Item06"]), _box(["Item06 = Item08"]), _box(["a =", "b"])
    ((100, 32), (121, 32), (100, 46))
    """
    return (max(BOX[0], max(map(len, lines), default=0) * CHAR_W + 16), BOX[1] + LINE_H * (len(lines) - 1))


def label_sizes(names: list[str], labels: dict[str, dict]) -> dict[str, tuple[float, float]]:
    """The box of each node, sized to its label (its ``code``, else its name)."""
    return {n: _box(_lines(labels.get(n, {}).get("code") or n)) for n in names}


def svg(drawing: Drawing, labels: dict[str, dict], kind: str | None, focus: str | None = None,
        marks: dict[str, str] | None = None, title: Callable[[str], str] | None = None, small: bool = False,
        anchors: dict[str, str] | None = None, data: dict[str, dict] | None = None,
        parts: dict[str, list[str]] | None = None) -> dict:
    """A drawing as what the ``graph`` template macro draws.

    Parameters
    ----------
    drawing : Drawing
        The layout, node boxes included (:func:`label_sizes`).
    labels : dict of str to dict
        Per node its ``code``, the label drawn (else the node's name).
    kind : str or None
        The page kind a node links to (``concept``: ``concept/<slug>.html``), or none.
    focus, marks, title, small, anchors, data, parts
        The node drawn as the page's own; a CSS class per node; its tooltip; dots, not boxes; an
        in-page anchor per node; ``data-`` attributes per node; a mixed node's marks, one per part.

    Returns
    -------
    dict
        ``nodes`` (id, centre, label and its lines, box size, title, link, mark, parts), ``edges``
        (from, to and an SVG path from the source's border to the target's), ``width``, ``height``, ``small``.
    """
    nodes = []
    for name, (x, y) in drawing.nodes.items():
        label = labels.get(name, {}).get("code") or name
        width, height = drawing.sizes.get(name, BOX)
        nodes.append({"id": name, "x": x, "y": y, "label": label, "lines": _lines(label),
                      "width": width, "height": height, "title": title(name) if title else label,
                      "href": f"{kind}/{slug(name)}.html" if kind else None,
                      "anchor": (anchors or {}).get(name), "mark": (marks or {}).get(name, ""),
                      "parts": (parts or {}).get(name), "focus": name == focus, "data": (data or {}).get(name, {})})
    return {"nodes": nodes, "edges": [{"from": a, "to": b, "d": drawing.path(a, b, points)}
                                      for a, b, points in drawing.edges],
            "width": drawing.width, "height": drawing.height, "small": small}
