"""The explorer's charts as SVG geometry: bars, a scatter, a histogram and a 0/1 grid, each with a title,
axis labels and its numbers as a table (no HTML here; the ``chart`` template macro draws any of them).

A chart is a dict: ``title``, ``width`` and ``height`` (SVG units), ``marks`` (each an SVG element
as ``tag``, ``attrs``, ``cls``, an optional tooltip ``title``, ``data-`` attributes and ``text``),
``axes`` (tick lines and labels, the axis labels, the title: marks too) and ``table`` (``columns`` and
``rows``: the figures drawn, one click away under the picture). Geometry is computed here so it can
be tested without a browser; values go into ``data-`` attributes at full precision, so a test reads
back what was drawn. Assumes finite values; NaN or None are left out of a picture and still listed
in its table.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

__all__ = ["Scale", "ticks", "bars", "hbars", "scatter", "histogram", "grid", "strip", "svg_marks", "PLOT",
           "SCATTER_POINTS", "SERIES_COLOURS"]

#: Margins around the plot area (left, right, top, bottom), in SVG units: room for the title, the tick
#: labels and the axis labels.
PLOT = (58, 16, 34, 46)
#: Most points a scatter draws one by one; beyond it the points are counted in a grid of cells.
SCATTER_POINTS = 3000
#: Cells per side of a dense scatter's grid.
DENSITY_CELLS = 25
#: Colours the style sheet has for a chart's series (``series-0`` ...); more series cycle through them.
SERIES_COLOURS = 6


class Scale:
    """A linear map from the data interval ``[lo, hi]`` to the drawing interval ``[a, b]`` (SVG units).

    >>> s = Scale(0, 1, 58, 358)
    >>> s(0.5), s(0), s(1)
    (208.0, 58.0, 358.0)
    >>> Scale(0, 0, 10, 20)(0)  # an empty interval maps to the start
    10.0
    """

    def __init__(self, lo: float, hi: float, a: float, b: float):
        self.lo, self.hi, self.a, self.b = float(lo), float(hi), float(a), float(b)

    def __call__(self, value: float) -> float:
        if self.hi == self.lo:
            return self.a
        return round(self.a + (float(value) - self.lo) * (self.b - self.a) / (self.hi - self.lo), 2)


def ticks(hi: float, lo: float = 0.0, count: int = 5, integer: bool = False) -> list[float]:
    """About ``count`` round tick values from ``lo`` to at least ``hi`` (steps of 1, 2 or 5 times a power of ten;
    with ``integer``, whole steps: counts).

    >>> ticks(1.0), ticks(7), ticks(0)
    ([0.0, 0.2, 0.4, 0.6, 0.8, 1.0], [0.0, 2.0, 4.0, 6.0, 8.0], [0.0, 1.0])
    >>> ticks(2, integer=True)
    [0.0, 1.0, 2.0]
    """
    span = hi - lo
    if span <= 0:
        return [lo, lo + 1.0]
    raw = span / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw - 1e-12)
    if integer:
        step = max(step, 1.0)
    out, k = [], 0
    while True:
        value = round(lo + k * step, 10)
        out.append(value)
        if value >= hi - 1e-12:
            return out
        k += 1


def svg_marks(marks: Sequence[dict], root: str = "") -> str:
    """Marks as SVG elements, every value escaped (as Jinja's autoescape does); a mark with ``href`` inside a link
    (relative to ``root``, the site's top, unless it is an in-page ``#anchor``).

    Written here rather than by a template macro: a run's strip has a cell per question (4,118 at XES3G5M
    scale), which a macro call per mark draws in about 100 ms, this in a tenth of that.

    >>> svg_marks([_mark("rect", "bar", "a < b", {"value": "0.5"}, x=1, y=2)])
    '<rect class="bar" x="1" y="2" data-value="0.5"><title>a &lt; b</title></rect>'
    >>> svg_marks([{**_mark("text", "t", text="q1"), "href": "sample/s.html"}], "../")
    '<a href="../sample/s.html"><text class="t">q1</text></a>'
    """
    from markupsafe import escape

    out = []
    for m in marks:
        attrs = "".join(f' {k}="{escape(v)}"' for k, v in m["attrs"].items())
        data = "".join(f' data-{k}="{escape(v)}"' for k, v in m["data"].items())
        inner = (f"<title>{escape(m['title'])}</title>" if m["title"] else "") + \
            (str(escape(m["text"])) if m["text"] is not None else "")
        element = f'<{m["tag"]} class="{escape(m["cls"])}"{attrs}{data}>{inner}</{m["tag"]}>'
        href = m.get("href")
        if href:
            element = f'<a href="{escape(href if href.startswith("#") else root + href)}">{element}</a>'
        out.append(element)
    return "".join(out)


def _title_width(title: str) -> float:
    """Room for a title: 13 px bold text is about 7.5 units a character."""
    return 7.5 * len(title) + 24


def _label(value: float) -> str:
    return f"{value:g}" if abs(value) < 1e5 else f"{value:,.0f}"


def _mark(tag: str, cls: str, title: str | None = None, data: dict | None = None, text: str | None = None,
          **attrs) -> dict:
    return {"tag": tag, "cls": cls, "title": title, "data": data or {}, "text": text, "attrs": attrs}


def _frame(title: str, width: float, height: float, x_label: str, y_label: str, right: float = PLOT[1],
           bottom: float = PLOT[3]) -> list[dict]:
    """The title and the two axis labels (the y label turned along its axis)."""
    left, _, top, _ = PLOT
    return [_mark("text", "chart-title", text=title, x=width / 2, y=18),
            _mark("text", "axis-label", text=x_label, x=(left + width - right) / 2, y=height - 8),
            _mark("text", "axis-label", text=y_label, x=14, y=(top + height - bottom) / 2,
                  transform=f"rotate(-90 14 {(top + height - bottom) / 2})")]


def _y_axis(scale: Scale, values: list[float], x0: float, x1: float) -> list[dict]:
    out = [_mark("line", "axis", x1=x0, y1=scale.a, x2=x0, y2=scale.b)]
    for v in values:
        y = scale(v)
        out += [_mark("line", "gridline", x1=x0, y1=y, x2=x1, y2=y),
                _mark("text", "tick y", text=_label(v), x=x0 - 4, y=y + 4)]
    return out


def _x_axis(scale: Scale, values: list[float], y0: float) -> list[dict]:
    out = [_mark("line", "axis", x1=scale.a, y1=y0, x2=scale.b, y2=y0)]
    for v in values:
        x = scale(v)
        out += [_mark("line", "tickmark", x1=x, y1=y0, x2=x, y2=y0 + 4),
                _mark("text", "tick x", text=_label(v), x=x, y=y0 + 16)]
    return out


def _finite(value) -> bool:
    """A finite real number, NumPy's included (``np.int64`` is no ``int``); not a bool, None or NaN.

    >>> import numpy as np
    >>> _finite(np.int64(3)), _finite(np.float32(0.5)), _finite(True), _finite(np.bool_(True)), _finite(float("nan"))
    (True, True, False, False, False)
    """
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def bars(title: str, categories: Sequence[str], series: dict[str, Sequence[float | None]], x_label: str,
         y_label: str, errors: dict[str, Sequence[float | None]] | None = None, y_max: float | None = None,
         band: float = 28.0, height: float = 240.0, links: Sequence[str | None] | None = None,
         integer: bool = False) -> dict:
    """Vertical bars: a group per category, a bar per series in it, optional error bars (± one value).

    Parameters
    ----------
    categories : sequence of str
        The groups, left to right.
    series : dict of str to sequence of float or None
        A bar height per category for each series (None: no bar, listed in the table as empty).
    x_label, y_label : str
        The axis labels.
    errors : dict of str to sequence of float or None, optional
        Per series, a standard error per category: a whisker from value - e to value + e.
    y_max : float, optional
        The top of the y axis (else the largest value and whisker, rounded up to a tick).
    band : float
        Width of one bar, SVG units; a group is as wide as its bars plus one bar of gap.
    links : sequence of str or None, optional
        Per category, a page a click on its bars opens (relative to the site's top).
    integer : bool
        Counts: whole ticks on the y axis.

    Returns
    -------
    dict
        The chart (see the module notes). Each bar is a ``rect`` mark with ``data-category``,
        ``data-series`` and ``data-value``; the table has a row per category, a column per series
        (and its error).

    Examples
    --------
    One series, values 0.5 and 1 on a 0-1 axis: the plot is 240 - 34 - 46 = 160 high, so the first
    bar is 80 high; bars are 26 wide (a band of 28 less 2 between bars) with one band of gap between groups
    (left margin 58, half a gap 14).

    >>> chart = bars("t", ["a", "b"], {"s": [0.5, 1.0]}, "x", "y", y_max=1)
    >>> [(m["attrs"]["x"], m["attrs"]["y"], m["attrs"]["height"]) for m in chart["marks"] if m["tag"] == "rect"]
    [(72.0, 114.0, 80.0), (128.0, 34.0, 160.0)]
    >>> chart["table"]
    {'columns': ['category', 's'], 'rows': [['a', 0.5], ['b', 1.0]]}
    """
    names = list(series)
    left, right, top, bottom = PLOT
    turned = len(categories) > 8  # labels turned 45 degrees: room below for them
    if turned:
        bottom += 6 * min(max((len(c) for c in categories), default=0), 14)
        height += bottom - PLOT[3]
    if len(names) > 1:  # a legend to the right of the plot
        right += 25 + 7 * max(len(n) for n in names)
    group = band * (len(names) + 1)
    width = max(left + right + group * max(len(categories), 1), 320.0, _title_width(title))
    whiskers = [v + (e or 0) for n in names for v, e in zip(series[n], (errors or {}).get(n, [None] * len(
        categories)), strict=True) if _finite(v)]
    top_value = y_max if y_max is not None else max(whiskers, default=1.0) or 1.0
    y_ticks = ticks(top_value, integer=integer)
    y = Scale(0, y_ticks[-1], height - bottom, top)
    axes = _frame(title, width, height, x_label, y_label, right, bottom) + _y_axis(y, y_ticks, left, width - right)
    marks: list[dict] = []
    for c, category in enumerate(categories):
        x0 = left + c * group + band / 2
        for s, name in enumerate(names):
            value = series[name][c]
            if not _finite(value):
                continue
            x = round(x0 + s * band, 2)
            attrs = {"x": x, "y": y(value), "width": band - 2, "height": round(y(0) - y(value), 2)}
            mark = _mark("rect", f"bar series-{s % SERIES_COLOURS}", f"{category} · {name}: {value:.4g}",
                         {"category": category, "series": name, "value": repr(float(value))}, **attrs)
            if links and links[c]:
                mark["href"] = links[c]
            marks.append(mark)
            error = (errors or {}).get(name, [None] * len(categories))[c]
            if _finite(error):
                cx = round(x + (band - 2) / 2, 2)
                marks.append(_mark("line", "whisker", f"± {error:.4g}", {"error": repr(float(error))},
                                   x1=cx, y1=y(max(value - error, 0)), x2=cx, y2=y(value + error)))
        cx = round(x0 + (band * len(names) - 2) / 2, 2)  # under the middle of its bars
        axes.append(_mark("text", "tick x" + (" turned" if turned else ""), text=category, x=cx,
                          y=height - bottom + 14,
                          **({"transform": f"rotate(-45 {cx} {height - bottom + 14})"} if turned else {})))
    axes.append(_mark("line", "axis", x1=left, y1=y(0), x2=width - right, y2=y(0)))
    columns = ["category"]
    for name in names:
        columns.append(name)
        if errors and name in errors:
            columns.append(f"{name} SE")
    rows = []
    for c, category in enumerate(categories):
        row = [category]
        for name in names:
            row.append(series[name][c])
            if errors and name in errors:
                row.append(errors[name][c])
        rows.append(row)
    legend = []  # a swatch of the series' colour and its name in the text colour (readable on any background)
    for s, name in enumerate(names if len(names) > 1 else []):
        y0 = top + 12 + 14 * s
        legend += [_mark("rect", f"swatch series-{s % SERIES_COLOURS}", x=width - right + 12, y=y0 - 9, width=9,
                         height=9),
                   _mark("text", "legend", text=name, x=width - right + 25, y=y0)]
    return {"title": title, "width": width, "height": height, "marks": marks, "axes": axes + legend,
            "table": {"columns": columns, "rows": rows}}


def scatter(title: str, points: Sequence[tuple[str, float | None, float | None, str]], x_label: str,
            y_label: str, x_range: tuple[float, float] = (0.0, 1.0), y_range: tuple[float, float] = (0.0, 1.0),
            size: tuple[float, float] = (460.0, 340.0), limit: int = SCATTER_POINTS) -> dict:
    """Points (id, x, y, kind): one circle each, or, past ``limit`` points, their count in a grid of cells.

    A point with x or y missing is not drawn (the table lists it, and ``missing`` counts it). Past
    ``limit``, points of kind ``human`` are counted in :data:`DENSITY_CELLS` squared cells (a cell's
    shade by its count, ``data-count``); the other kinds (models) are still drawn one by one.

    Returns
    -------
    dict
        The chart; each drawn point a ``circle`` with ``data-id``, ``data-x``, ``data-y``
        (``repr`` of the value) and the class ``point <kind>``, humans first and models last (on top),
        each model named beside its point (a ``text`` of class ``point-label``); ``missing``, ``dense``.

    Examples
    --------
    On the default 460 x 340 chart the plot runs x 58..444, y 294..34:

    >>> chart = scatter("t", [("a", 0.5, 1.0, "human"), ("b", None, 0.2, "human")], "x", "y")
    >>> [(m["attrs"]["cx"], m["attrs"]["cy"], m["data"]["id"]) for m in chart["marks"]], chart["missing"]
    ([(251.0, 34.0, 'a')], 1)
    """
    width, height = size
    left, right, top, bottom = PLOT
    x = Scale(*x_range, left, width - right)
    y = Scale(*y_range, height - bottom, top)
    drawn = [p for p in points if _finite(p[1]) and _finite(p[2])]
    dense = len(drawn) > limit
    axes = (_frame(title, width, height, x_label, y_label)
            + _y_axis(y, ticks(y_range[1], y_range[0]), left, width - right)
            + _x_axis(x, ticks(x_range[1], x_range[0]), height - bottom))
    marks: list[dict] = []
    singles = [p for p in drawn if not dense or p[3] != "human"]
    if dense:
        marks += _density([p for p in drawn if p[3] == "human"], x, y, x_range, y_range)
    # humans first, then groups, models last: drawn on top, each named beside its point
    for ident, px, py, kind in sorted(singles, key=lambda p: {"human": 0, "model": 2}.get(p[3], 1)):
        marks.append(_mark("circle", f"point {kind}", f"{ident}: {x_label} {px:.3f}, {y_label} {py:.3f}",
                           {"id": ident, "x": repr(float(px)), "y": repr(float(py))},
                           cx=x(px), cy=y(py), r=4 if kind == "human" else 6))
        if kind == "model":
            name = ident.split(":", 1)[-1]
            name = name if len(name) <= 24 else name[:23] + "…"
            beyond = x(px) + 9 + 6.2 * len(name) > width - 4  # near the right edge: the name to the left
            marks.append(_mark("text", "point-label" + (" left" if beyond else ""), ident, {"id": ident},
                               text=name, x=round(x(px) + (-9 if beyond else 9), 2), y=round(y(py) + 4, 2)))
    rows = [[ident, kind, px, py] for ident, px, py, kind in points]
    return {"title": title, "width": width, "height": height, "marks": marks, "axes": axes,
            "table": {"columns": ["id", "kind", x_label, y_label], "rows": rows},
            "missing": len(points) - len(drawn), "dense": dense}


def _density(points, x: Scale, y: Scale, x_range, y_range) -> list[dict]:
    n = DENSITY_CELLS
    counts: dict[tuple[int, int], int] = {}
    for _, px, py, _ in points:
        i = min(int((px - x_range[0]) / (x_range[1] - x_range[0]) * n), n - 1)
        j = min(int((py - y_range[0]) / (y_range[1] - y_range[0]) * n), n - 1)
        counts[i, j] = counts.get((i, j), 0) + 1
    most = max(counts.values(), default=1)
    out = []
    for (i, j), count in sorted(counts.items()):
        lo_x, hi_x = (x_range[0] + (x_range[1] - x_range[0]) * k / n for k in (i, i + 1))
        lo_y, hi_y = (y_range[0] + (y_range[1] - y_range[0]) * k / n for k in (j, j + 1))
        out.append(_mark("rect", "cell", f"{count} learners: x {lo_x:.2f}-{hi_x:.2f}, y {lo_y:.2f}-{hi_y:.2f}",
                         {"count": count}, x=x(lo_x), y=y(hi_y), width=round(x(hi_x) - x(lo_x), 2),
                         height=round(y(lo_y) - y(hi_y), 2),
                         style=f"fill-opacity: {0.15 + 0.85 * math.sqrt(count / most):.3f}"))
    return out


def histogram(title: str, values: Sequence[float | None], x_label: str, bins: int = 10,
              y_label: str = "count") -> dict:
    """Counts of ``values`` in ``bins`` equal bins from their least to their greatest (None left out).

    Bin k holds ``[lo + k w, lo + (k + 1) w)``, the last one its upper end too.

    Examples
    --------
    >>> chart = histogram("t", [1, 2, 2, 3, None], "x", bins=2)
    >>> chart["table"]["rows"]
    [['1-2', 1], ['2-3', 3]]
    >>> [row[0] for row in histogram("t", [0.678207, 0.847746, 1.525], "s", bins=5)["table"]["rows"]][:2]
    ['0.68-0.85', '0.85-1.02']
    """
    finite = [float(v) for v in values if _finite(v)]
    lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)
    width = (hi - lo) / bins if hi > lo else 1.0
    counts = [0] * bins
    for v in finite:
        counts[min(int((v - lo) / width), bins - 1)] += 1
    digits = max(0, 1 - math.floor(math.log10(width)))  # two significant digits of a bin's width: 0.68-0.85
    labels = [f"{_label(round(lo + k * width, digits))}-{_label(round(lo + (k + 1) * width, digits))}"
              for k in range(bins)]
    chart = bars(title, labels, {y_label: counts}, x_label, y_label, band=24, height=200, integer=True)
    chart["table"]["columns"] = [x_label, y_label]
    return chart


def hbars(title: str, categories: Sequence[str], values: Sequence[float], x_label: str, integer: bool = True,
          row: float = 22.0) -> dict:
    """Horizontal bars, one per category, each label whole at its left (failure kinds are sentences: turned
    labels under vertical bars overprint each other), the values on a bottom axis (whole ticks for counts).

    Each bar is a ``rect`` with ``data-category`` and ``data-value``.

    Examples
    --------
    >>> chart = hbars("t", ["failed: a timeout", "invalid"], [2, 1], "samples")
    >>> [(m["data"]["category"], m["attrs"]["width"]) for m in chart["marks"]]
    [('failed: a timeout', 300.0), ('invalid', 150.0)]
    >>> [m["text"] for m in chart["axes"] if m["cls"] == "tick x"]
    ['0', '1', '2']
    """
    label_w = 6.6 * max((len(c) for c in categories), default=4) + 12
    left, top, plot = label_w + 12, PLOT[2], 300.0
    width = max(left + plot + PLOT[1] + 8, _title_width(title))
    height = top + row * max(len(categories), 1) + PLOT[3]
    top_value = max((v for v in values if _finite(v)), default=1) or 1
    x_ticks = ticks(top_value, integer=integer)
    x = Scale(0, x_ticks[-1], left, left + plot)
    axes = [_mark("text", "chart-title", text=title, x=width / 2, y=18),
            _mark("text", "axis-label", text=x_label, x=left + plot / 2, y=height - 8)]
    bottom = top + row * max(len(categories), 1)
    for v in x_ticks:
        axes += [_mark("line", "gridline", x1=x(v), y1=top, x2=x(v), y2=bottom),
                 _mark("text", "tick x", text=_label(v), x=x(v), y=bottom + 16)]
    axes.append(_mark("line", "axis", x1=left, y1=bottom, x2=left + plot, y2=bottom))
    marks = []
    for k, (category, value) in enumerate(zip(categories, values, strict=True)):
        y0 = top + row * k
        axes.append(_mark("text", "tick row", text=category, x=left - 6, y=y0 + row / 2 + 4))
        if _finite(value):
            marks.append(_mark("rect", "bar series-0", f"{category}: {_label(value)}",
                               {"category": category, "value": repr(float(value))}, x=left, y=y0 + 3,
                               width=round(x(value) - left, 2), height=row - 6))
    return {"title": title, "width": width, "height": height, "marks": marks, "axes": axes,
            "table": {"columns": ["category", x_label], "rows": [[c, v] for c, v in zip(categories, values,
                                                                                         strict=True)]}}


def grid(title: str, rows: Sequence[str], columns: Sequence[str], on: set[tuple[str, str]], x_label: str,
         y_label: str, row_titles: dict[str, str] | None = None, column_titles: dict[str, str] | None = None,
         cell: float = 16.0, row_links: dict[str, str] | None = None,
         column_links: dict[str, str] | None = None) -> dict:
    """A 0/1 grid, a row per ``rows`` entry and a column per ``columns`` entry; ``on`` holds the 1 cells.

    Each cell is a ``rect`` with ``data-row``, ``data-column`` and ``data-value`` (0 or 1); a row's and
    a column's tooltip come from ``row_titles`` and ``column_titles`` (a question's text, a skill's
    description). The table is the matrix itself.

    Examples
    --------
    >>> chart = grid("t", ["q1", "q2"], ["s1"], {("q2", "s1")}, "skill", "question")
    >>> [(m["attrs"]["x"], m["attrs"]["y"], m["data"]["value"]) for m in chart["marks"]]
    [(52.0, 114.0, 0), (52.0, 130.0, 1)]
    >>> chart["table"]["rows"]
    [['q1', 0], ['q2', 1]]
    """
    row_titles, column_titles = row_titles or {}, column_titles or {}
    label_w = min(max((len(r) for r in rows), default=4), 24) * 7 + 10
    left, top = 28 + label_w, PLOT[2] + 80
    width = max(left + cell * len(columns) + 16, 320.0, _title_width(title))
    height = top + cell * len(rows) + 28
    axes = [_mark("text", "chart-title", text=title, x=width / 2, y=18),
            _mark("text", "axis-label", text=x_label, x=left + cell * len(columns) / 2, y=height - 8),
            _mark("text", "axis-label", text=y_label, x=14, y=top + cell * len(rows) / 2,
                  transform=f"rotate(-90 14 {top + cell * len(rows) / 2})")]
    for j, column in enumerate(columns):
        cx = left + cell * j + cell / 2
        mark = _mark("text", "tick column", column_titles.get(column, column), text=column[:14], x=cx, y=top - 6,
                     transform=f"rotate(-60 {cx} {top - 6})")
        if column_links and column in column_links:
            mark["href"] = column_links[column]
        axes.append(mark)
    marks = []
    for i, row in enumerate(rows):
        mark = _mark("text", "tick row", row_titles.get(row, row), text=row[:24], x=left - 6,
                     y=top + cell * i + cell / 2 + 4)
        if row_links and row in row_links:
            mark["href"] = row_links[row]
        axes.append(mark)
        for j, column in enumerate(columns):
            value = int((row, column) in on)
            tip = f"{row} × {column}: {value}" + (f"\n{column_titles[column]}" if column in column_titles else "")
            marks.append(_mark("rect", f"cell {'on' if value else 'off'}", tip,
                               {"row": row, "column": column, "value": value},
                               x=round(left + cell * j, 2), y=round(top + cell * i, 2), width=cell - 1,
                               height=cell - 1))
    table = {"columns": ["question", *columns],
             "rows": [[row, *(int((row, c) in on) for c in columns)] for row in rows]}
    return {"title": title, "width": width, "height": height, "marks": marks, "axes": axes, "table": table}


def strip(title: str, labels: Sequence[str], values: Sequence[float | None], x_label: str,
          links: Sequence[str | None] | None = None, per_row: int = 60, cell: float = 12.0) -> dict:
    """A strip of cells, one per label in order, shaded by its value in [0, 1] (None: hatched as no value),
    wrapped after ``per_row`` cells; each a ``rect`` with ``data-label`` and ``data-value``.

    Examples
    --------
    Cells start at x 58 and y 34, ``cell`` apart, a new row after ``per_row``:

    >>> chart = strip("t", ["q1", "q2", "q3"], [1.0, 0.5, None], "question", per_row=2)
    >>> [(m["attrs"]["x"], m["attrs"]["y"], m["data"]["value"], m["cls"]) for m in chart["marks"]]
    [(58.0, 34.0, '1.0', 'cell share'), (70.0, 34.0, '0.5', 'cell share'), (58.0, 46.0, '', 'cell none')]
    """
    left, _, top, _ = PLOT
    rows = max(1, math.ceil(len(labels) / per_row))
    width = max(left + cell * min(len(labels), per_row) + 16, 320.0, _title_width(title))
    height = top + cell * rows + 30
    axes = [_mark("text", "chart-title", text=title, x=width / 2, y=18),
            _mark("text", "axis-label", text=x_label, y=height - 8,  # centred, but never cut at the left edge
                  x=max(left + cell * min(len(labels), per_row) / 2, 4 + 3.3 * len(x_label)))]
    axes += [_mark("text", "tick y", text=str(r * per_row + 1), x=left - 4, y=top + cell * r + cell - 2)
             for r in range(rows)]
    marks = []
    for k, (label, value) in enumerate(zip(labels, values, strict=True)):
        drawn = _finite(value)
        mark = _mark("rect", "cell share" if drawn else "cell none",
                     f"{label}: {value:.3f}" if drawn else f"{label}: no value",
                     {"label": label, "value": repr(float(value)) if drawn else ""},
                     x=round(left + cell * (k % per_row), 2), y=round(top + cell * (k // per_row), 2),
                     width=cell - 1, height=cell - 1,
                     **({"style": f"fill-opacity: {0.08 + 0.92 * float(value):.3f}"} if drawn else {}))
        if links and links[k]:
            mark["href"] = links[k]
        marks.append(mark)
    return {"title": title, "width": width, "height": height, "marks": marks, "axes": axes,
            "table": {"columns": [x_label, "value"], "rows": [[label, value] for label, value in zip(
                labels, values, strict=True)]}}
