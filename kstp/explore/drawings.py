"""The explorer's drawings: a dataset's question prerequisites, its Hasse diagram, a chain of thought,
each as what the ``graph`` template macro draws (no HTML here).

Layouts come from :func:`~kstp.explore.layout.layered`; this module turns a knowledge space or a
trajectory into nodes and edges, sizes each node's box to its label (wrapped, never cut), marks
nodes (a learner's verdicts, a step's closure) and gives each edge a path from its source's border
to its target's. Assumes spaces small enough to draw (the pages check :data:`HASSE_LIMIT` and
their own limits first).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pandas as pd

from kstp.explore.layout import Drawing, layered
from kstp.explore.values import as_rows as _rows
from kstp.explore.values import slug

__all__ = ["class_dag", "broken_pairs", "hasse", "occupancy", "DRAW_LIMIT", "cot", "svg", "label_sizes",
           "HASSE_LIMIT", "VERDICTS"]

#: Most states a Hasse diagram is drawn for.
HASSE_LIMIT = 400
#: Most nodes a drawn graph holds; beyond it a neighbourhood is cut at a depth the user raises.
DRAW_LIMIT = 250
#: Drawn labels: characters a line holds before it wraps, the width one takes and a line's height (11 px
#: text, SVG units); the smallest box; a Hasse diagram's dot radius.
LINE_CHARS, CHAR_W, LINE_H = 18, 7, 14
BOX = (100, 32)
DOT_R = 9
#: What a mark on a learner's structure says of a question (a mixed box's tooltip, a line each).
VERDICTS = {"correct": "answered right", "wrong": "answered wrong", "inner": "inner fringe (learnt last)",
            "outer": "outer fringe (ready to learn)", "": "not answered"}


def class_dag(space, names: dict[str, str], marks: dict[str, str] | None = None,
              verdicts: dict[str, str] | None = None, broken: dict[tuple[str, str], str] | None = None) -> dict:
    """The question prerequisite relation drawn as its transitive reduction on classes of equally
    informative questions (the space's cover relation), each on its level; each box links its first
    question's page (``question/<slug>.html``).

    Parameters
    ----------
    space : KnowledgeSpace
        The dataset's space (:func:`~kstp.graph.structures.dataset_space`).
    names : dict of str to str
        A question's label (its local id); a question not in it is labelled with its id.
    marks : dict of str to str, optional
        A learner's mark per question (``correct``, ``wrong``, ``inner``, ``outer``; none: not answered).
    verdicts : dict of str to str, optional
        What each mark says in a tooltip (default :data:`VERDICTS`; a comparison of two learners has its own).
    broken : dict of (str, str) to str, optional
        Prerequisite pairs ``(prerequisite, question)`` to draw red, each with what breaks it (a learner's
        prerequisite answered wrong while the question was answered right; an edge the answers
        contradict). A pair on a drawn edge turns the edge red; a pair between classes no drawn edge
        joins (a prerequisite further up) gets a red edge of its own; a pair inside a class (equally
        informative questions) marks the box ``broken-inside``. Every pair is listed in its edge's or
        box's ``pairs``, so the drawing holds each exactly once.

    Returns
    -------
    dict
        What :func:`svg` returns, a node per class, with ``broken`` (the pairs drawn red). A class whose
        questions carry different marks (one answered right, one wrong) is marked ``mixed``, with ``parts``
        (a mark per question, in its order: the box is filled in parts) and each one's verdict in its tooltip.

    Examples
    --------
    a and b are equally informative and both come before c; a was answered right, b wrong.

    >>> from kstp.kst.spaces import KnowledgeSpace
    >>> space = KnowledgeSpace.build(["t:a", "t:b", "t:c"], [("t:a", "t:b"), ("t:b", "t:a"), ("t:b", "t:c")])
    >>> drawn = class_dag(space, {"t:a": "a", "t:b": "b"}, {"t:a": "correct", "t:b": "wrong"})
    >>> [(n["lines"], n["mark"], n["parts"], n["href"]) for n in drawn["nodes"]]
    [(['a = b'], 'mixed', ['correct', 'wrong'], 'question/t~3Aa.html'), (['t:c'], '', None, 'question/t~3Ac.html')]
    >>> print(drawn["nodes"][0]["title"])
    t:a: answered right
    t:b: answered wrong
    >>> drawn["edges"][0]["d"]  # centres (55, 40) and (55, 120), boxes 32 high: bottom of one to top of the other
    'M55,56 L55,104'

    b answered wrong, c right: the edge b -> c is red; b -> a inside the box too.

    >>> drawn = class_dag(space, {}, broken={("t:b", "t:c"): "b wrong, c right", ("t:b", "t:a"): "b wrong, a right"})
    >>> [(e["broken"], e["pairs"]) for e in drawn["edges"]], drawn["nodes"][0]["pairs"], len(drawn["broken"])
    ([(True, [['t:b', 't:c', 'b wrong, c right']])], [['t:b', 't:a', 'b wrong, a right']], 2)
    """
    nodes = [" = ".join(c) for c in space.classes]
    class_of = {q: nodes[k] for k, c in enumerate(space.classes) for q in c}
    edges = [(nodes[b], nodes[k]) for k in range(len(nodes)) for b in _bits(space.cover[k])]
    covers = set(edges)
    on_edge: dict[tuple[str, str], list[list[str]]] = {}
    inside: dict[str, list[list[str]]] = {}
    for (p, q), why in sorted((broken or {}).items()):
        if p not in class_of or q not in class_of:
            continue
        a, b = class_of[p], class_of[q]
        if a == b:
            inside.setdefault(a, []).append([p, q, why])
        else:
            on_edge.setdefault((a, b), []).append([p, q, why])
    further = [pair for pair in on_edge if pair not in covers]
    labels = {n: {"code": " = ".join(names.get(q, q) for q in c)} for n, c in zip(nodes, space.classes, strict=True)}
    drawing = layered(nodes, edges + further, {n: space.level[k] for k, n in enumerate(nodes)},
                      sizes=label_sizes(nodes, labels))
    classes = {n: c for n, c in zip(nodes, space.classes, strict=True)}
    said = verdicts or VERDICTS
    verdicts = {n: [(marks or {}).get(q, "") for q in classes[n]] for n in nodes}
    mark = {n: v[0] if len(set(v)) == 1 else "mixed" for n, v in verdicts.items()}
    parts = {n: v for n, v in verdicts.items() if mark[n] == "mixed"}

    def title(n: str) -> str:
        lines = ([", ".join(classes[n])] if marks is None else
                 [f"{q}: {said[m]}" for q, m in zip(classes[n], verdicts[n], strict=True)])
        return "\n".join(lines + [f"broken inside: {p} -> {q} ({why})" for p, q, why in inside.get(n, [])])

    drawn = svg(drawing, labels, None, marks={n: mark[n] + (" broken-inside" if n in inside else "") for n in nodes},
                title=title, parts=parts)
    for node in drawn["nodes"]:  # a link from the site root (relative, so a static export's links hold)
        node["href"] = f"question/{slug(classes[node['id']][0])}.html"
        node["pairs"] = inside.get(node["id"], [])
    for edge in drawn["edges"]:
        edge["pairs"] = on_edge.get((edge["from"], edge["to"]), [])
        edge["broken"] = bool(edge["pairs"])
        edge["further"] = (edge["from"], edge["to"]) not in covers
    drawn["broken"] = sorted([p, q] for p, q in broken or {} if p in class_of and q in class_of)
    return drawn


def broken_pairs(pre: dict[str, set[str]], right: set[str], wrong: set[str]) -> list[tuple[str, str]]:
    """The prerequisite pairs ``(p, q)`` a learner breaks: ``q`` answered right, its prerequisite ``p`` answered
    wrong (``kstp kst check``'s missing prerequisites of the learner's state that it did answer).

    >>> broken_pairs({"c": {"a", "b"}, "b": {"a"}}, right={"c", "a"}, wrong={"b"})
    [('b', 'c')]
    """
    return sorted((p, q) for q in right for p in pre.get(q, ()) if p in wrong)


def _bits(mask: int) -> list[int]:
    out, k = [], 0
    while mask:
        if mask & 1:
            out.append(k)
        mask >>= 1
        k += 1
    return out


def occupancy(space, patterns: dict[str, set[str]]) -> tuple[dict[int, list[str]], list[str]]:
    """The learners whose answer pattern (the questions answered right) is a state of ``space``, by the state's
    class mask, and the learners whose pattern is none (an item outside the space, half a class of equally
    informative questions, a question without its prerequisites).

    Examples
    --------
    >>> from kstp.kst.spaces import KnowledgeSpace
    >>> space = KnowledgeSpace.build(["a", "b"], [("a", "b")])
    >>> occupancy(space, {"l1": {"a"}, "l2": set(), "l3": {"b"}, "l4": {"a"}})
    ({1: ['l1', 'l4'], 0: ['l2']}, ['l3'])
    """
    class_of = {item: k for k, members in enumerate(space.classes) for item in members}
    sizes = [len(c) for c in space.classes]
    found: dict[int, list[str]] = {}
    off = []
    for learner in sorted(patterns):
        pattern = patterns[learner]
        counts: dict[int, int] = {}
        for q in pattern:
            k = class_of.get(q, -1)
            counts[k] = counts.get(k, 0) + 1
        mask = sum(1 << k for k in counts if k >= 0)
        whole = -1 not in counts and all(counts[k] == sizes[k] for k in counts)
        if whole and all(mask & space.below[k] == space.below[k] for k in counts):
            found.setdefault(mask, []).append(learner)
        else:
            off.append(learner)
    return found, off


def _covers(masks: list[int]) -> list[tuple[int, int]]:
    """(K, L) where L covers K among ``masks``: K a proper subset of L and no mask between them.

    >>> _covers([0b0, 0b1, 0b11, 0b111, 0b100])
    [(0, 1), (0, 4), (1, 3), (3, 7), (4, 7)]
    """
    out = []
    for big in masks:
        below = sorted((m for m in masks if m != big and m & ~big == 0), key=lambda m: -bin(m).count("1"))
        kept: list[int] = []
        for m in below:
            if not any(m & ~k == 0 for k in kept):
                kept.append(m)
        out += [(m, big) for m in kept]
    return sorted(out)


def hasse(space, dataset: str, patterns: dict[str, set[str]] | None = None, occupied_only: bool = False,
          probabilities: dict[frozenset, float] | None = None, kinds: dict[str, str] | None = None,
          fitted: int | None = None) -> dict:
    """The Hasse diagram of a knowledge space, each state weighted by the human learners whose answer pattern it
    is, the other learners (models) marked apart.

    States are drawn in rows by size (questions mastered), the empty state at the bottom as ``kstp kst
    space --out`` draws it, an edge where one notion is added; each state with its inner and outer fringe
    (``kstp kst space --enumerate``'s reading), its human learners (the circle's area grows with them; a
    state nobody is in is faded), the models whose pattern it is (a ring and a tag, ``M1``, named in
    ``apart``) and, where a BLIM fit exists, its fitted probability and the learners it expects there
    (``fitted`` x probability) beside those observed. With ``occupied_only`` (a space too large to draw):
    only the states somebody is in, at most :data:`HASSE_LIMIT` of them (the most occupied), an edge where
    one covers another among them; otherwise the cover among the occupied states is drawn too, hidden until
    the page's "occupied states only" toggle shows it in place of the whole diagram (edges of class
    ``occupied-cover``).

    Parameters
    ----------
    space : KnowledgeSpace
    dataset : str
    patterns : dict of str to set of str, optional
        Each learner's answer pattern, the questions it answered right (:func:`occupancy`).
    occupied_only : bool
    probabilities : dict of frozenset to float, optional
        BLIM's fitted probability of a state (its questions).
    kinds : dict of str to str, optional
        Each learner's kind; a learner that is not ``human`` (a model, an ability group) is counted apart.
    fitted : int, optional
        The learners the BLIM fit was fitted on (its expected count of a state is this times its probability).

    Returns
    -------
    dict
        What :func:`svg` returns, plus ``states`` (drawn), ``learners`` (node -> human learner ids),
        ``placed`` (human learners in a drawn state), ``off`` (human learners whose pattern is no state),
        ``apart`` (the other learners: ``tag``, ``id``, ``kind``, ``node``, the drawn state they are in, or
        None) and ``occupiedOnly``, ``caption`` (the picture's title) and ``axis`` (its vertical axis:
        ``label`` and a tick per row, ``y`` and the state size). Each node's ``data-learners`` is its weight:
        the weights sum to ``placed``.

    Examples
    --------
    a before b: states {}, {a}, {a, b}; two people answered a alone, a model answered both.

    >>> from kstp.kst.spaces import KnowledgeSpace
    >>> space = KnowledgeSpace.build(["t:a", "t:b"], [("t:a", "t:b")])
    >>> drawn = hasse(space, "t", {"p1": {"t:a"}, "p2": {"t:a"}, "m": {"t:a", "t:b"}}, kinds={"m": "model"})
    >>> [(n["data"]["state"], n["data"]["learners"], n["ring"]) for n in drawn["nodes"]]
    [('', 0, []), ('a', 2, []), ('a b', 0, ['M1'])]
    >>> [t["label"] for t in drawn["axis"]["ticks"]], drawn["placed"], drawn["apart"][0]["tag"]
    (['2', '1', '0'], 2, 'M1')
    >>> drawn["nodes"][0]["y"] > drawn["nodes"][2]["y"]  # the empty state at the bottom
    True
    """
    kinds = kinds or {}
    found, off_all = occupancy(space, patterns or {})
    apart_ids = sorted(learner for learner in (patterns or {}) if kinds.get(learner, "human") != "human")
    tags = {learner: f"{(kinds[learner][:1] or '?').upper()}{k + 1}" for k, learner in enumerate(apart_ids)}
    if occupied_only:
        masks = sorted(found, key=lambda m: (-len(found[m]), m))[:HASSE_LIMIT]
        masks.sort(key=lambda m: (bin(m).count("1"), m))
        sets = space.item_sets(masks)
        inner_sets = [frozenset(space.inner_fringe(s)) for s in sets]
        outer_sets = [frozenset(space.outer_fringe(s)) for s in sets]
        pairs = _covers(masks)
    else:
        masks, inner, outer = space.fringes("standard", HASSE_LIMIT)
        masks = [int(m) for m in masks]
        sets, inner_sets, outer_sets = space.item_sets(masks), space.item_sets(inner), space.item_sets(outer)
        known = set(masks)
        pairs = [(m, m | 1 << k) for m in masks for k in range(len(space.classes))
                 if not m >> k & 1 and (space.below[k] & ~m) == 0 and (m | 1 << k) in known]
    names = {m: f"s{i}" for i, m in enumerate(masks)}
    humans = {names[m]: [lid for lid in found.get(m, []) if lid not in tags] for m in masks}
    rings = {names[m]: [tags[lid] for lid in found.get(m, []) if lid in tags] for m in masks}
    weight = {n: len(v) for n, v in humans.items()}
    most = max(weight.values(), default=0) or 1
    # area by human learners: radius from 3.5 (nobody) to DOT_R + 3 (the most); edges end on each circle
    radius = {n: round(3.5 + (DOT_R - 0.5) * math.sqrt(w / most), 2) if patterns else DOT_R for n, w in weight.items()}
    size = {names[m]: len(s) for m, s in zip(masks, sets, strict=True)}
    top = max(size.values(), default=0)
    # rows by state size, the largest on top: the edges are laid out from the larger state down, then turned back
    drawing = layered(list(names.values()), [(names[b], names[a]) for a, b in pairs],
                      {n: top - k for n, k in size.items()}, x_step=26, y_step=56,
                      sizes={n: (2 * r, 2 * r) for n, r in radius.items()})
    drawing.round = True
    drawing.edges = [(b, a, points[::-1]) for a, b, points in drawing.edges]
    short = {q: q.split(":", 1)[-1] for q in space.items}
    info = {}
    for m, state, i_set, o_set in zip(masks, sets, inner_sets, outer_sets, strict=True):
        n = names[m]
        p = (probabilities or {}).get(frozenset(state))
        info[n] = {"state": " ".join(short[q] for q in sorted(state)),
                   "inner": " ".join(short[q] for q in sorted(i_set)),
                   "outer": " ".join(short[q] for q in sorted(o_set)),
                   "learners": weight[n], "size": len(state),
                   **({"models": " ".join(rings[n])} if rings[n] else {}),
                   **({"blim": repr(float(p))} if p is not None else {}),
                   **({"expected": repr(float(p) * fitted)} if p is not None and fitted else {})}

    def title(n: str) -> str:
        d = info[n]
        return (f"{{{', '.join(d['state'].split())}}}: {d['learners']} human learners"
                + (f" (BLIM expects {float(d['expected']):.1f})" if "expected" in d else "")
                + (f"; {', '.join(rings[n])} here" if rings[n] else "")
                + (f", BLIM probability {float(d['blim']):.4f}" if "blim" in d else "")
                + f"\ninner fringe: {', '.join(d['inner'].split()) or '-'}"
                + f"\nouter fringe: {', '.join(d['outer'].split()) or '-'}")

    labels = {n: {"code": str(weight[n]) if weight[n] else ""} for n in names.values()}
    occupied = {n for n in names.values() if weight[n] or rings[n]}
    drawn = svg(drawing, labels, None, title=title, small=True, data=info,
                marks={n: ("occupied" if n in occupied else "empty") + (" apart" if rings[n] else "")
                       for n in names.values()} if patterns else None)
    for node in drawn["nodes"]:
        node["label"] = str(weight[node["id"]]) if weight[node["id"]] else ""  # not the node's name
        node["ring"] = rings[node["id"]]
        node["focusable"] = True
    for edge in drawn["edges"]:
        edge["cls"] = "full"
    if patterns and not occupied_only:  # the cover among occupied states, for the toggle: straight lines
        chosen = [m for m in masks if names[m] in occupied]
        for a, b in _covers(chosen):
            na, nb = names[a], names[b]
            drawn["edges"].append({"from": na, "to": nb, "cls": "occupied-cover", "pairs": [], "broken": False,
                                   "d": drawing.path(na, nb, [drawing.nodes[na], drawing.nodes[nb]])})
    placed = sum(weight.values())
    ys = {}
    for node in drawn["nodes"]:
        ys[node["y"]] = info[node["id"]]["size"]
    drawn["caption"] = (f"The {len(masks)} states of {dataset}'s knowledge space somebody is in, an edge where "
                        "one covers another" if occupied_only else
                        f"Hasse diagram of {dataset}'s knowledge space: a circle per state, sized by its "
                        "human learners")
    drawn["axis"] = {"label": "knowledge state size (questions mastered)",
                     "ticks": [{"y": y, "label": str(k)} for y, k in sorted(ys.items())]}
    node_of = {lid: names[m] for m in masks for lid in found.get(m, [])}
    apart = [{"tag": tags[lid], "id": lid, "kind": kinds[lid], "node": node_of.get(lid),
              "state": info[node_of[lid]]["state"] if lid in node_of else None} for lid in apart_ids]
    return {**drawn, "states": len(masks), "occupiedOnly": occupied_only, "placed": placed,
            "learners": {n: v for n, v in humans.items() if v}, "off": [lid for lid in off_all if lid not in tags],
            "apart": apart,
            "unshown": sum(len([lid for lid in v if lid not in tags]) for m, v in found.items() if m not in names)}


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
