"""PNG charts of results (matplotlib, no display needed)."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.colors import Normalize, TwoSlopeNorm
from matplotlib.figure import Figure

__all__ = ["grouped_bars", "bar_panels", "bars_with_baseline", "heatmap", "curves", "box_groups", "radar",
           "interval_bars", "residual_plot", "error_rates", "labelled_hbars"]


def grouped_bars(frame: pd.DataFrame, path: str | Path, title: str, ylabel: str) -> Path:
    """Bar groups: one group per column of ``frame``, one bar per row (labelled by index).

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows are the series (e.g. datasets or learners), columns the groups (e.g.
        PSR buckets); values are bar heights.
    path : path
        Where to write the PNG (its folder is created).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    fig, ax = _subplots(figsize=(max(6, 1.2 * len(frame.columns)), 4), dpi=120)
    _bar_groups(ax, frame.columns, [(label, row.to_numpy(float), None) for label, row in frame.iterrows()])
    return _finish(fig, ax, path, title, ylabel)


def bar_panels(panels: list[tuple[pd.DataFrame, str, str, tuple[float, float]]], path: str | Path,
               title: str) -> Path:
    """Bar charts side by side, one per panel: a group per row of its frame, a bar per column.

    Parameters
    ----------
    panels : list of (frame, panel title, y label, (y min, y max))
        Each frame's rows are the groups (e.g. models), its columns the bars (e.g.
        metrics), in the given order.
    path : path
        Where to write the PNG (its folder is created).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    fig, axes = _subplots(1, len(panels), figsize=(5.5 * len(panels), 4), dpi=120, squeeze=False)
    for ax, (frame, panel, ylabel, limits) in zip(axes[0], panels, strict=True):
        _bar_groups(ax, frame.index, [(c, frame[c].to_numpy(float), None) for c in frame.columns], rotation=20)
        ax.set_ylim(*limits)
        ax.set_ylabel(ylabel)
        ax.set_title(panel)
        ax.legend(frameon=False)
        ax.spines[["top", "right"]].set_visible(False)
    fig.suptitle(title)
    return _save(fig, path)


def bars_with_baseline(frame: pd.DataFrame, baseline: pd.Series, path: str | Path, title: str, ylabel: str,
                       baseline_label: str = "no context") -> Path:
    """Bar groups, one per row of ``frame`` (one bar per column), each with a dashed baseline across it.

    The layout of Figure 3 of Cui, Do, Sachan 2026: per model, the accuracy under each
    exemplar strategy, and its accuracy without context as a line.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows are the groups (e.g. models), columns the bars (e.g. strategies); values
        are bar heights.
    baseline : pandas.Series
        Per row of ``frame`` (same index), the height of its dashed line; NaN draws none.
    path : path
        Where to write the PNG (its folder is created).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    fig, ax = _subplots(figsize=(max(6, 1.6 * len(frame) + 2), 4), dpi=120)
    groups = _bar_groups(ax, frame.index, [(column, frame[column].to_numpy(float), None) for column in frame.columns])
    for g, value in zip(groups, baseline.reindex(frame.index).to_numpy(float), strict=True):
        if np.isfinite(value):
            ax.hlines(value, g - 0.45, g + 0.45, colors="black", linestyles="dashed",
                      label=baseline_label if g == groups[0] else None)
    return _finish(fig, ax, path, title, ylabel)


def heatmap(frame: pd.DataFrame, path: str | Path, title: str, blocks: list[int] | None = None,
            vmin: float | None = None, vmax: float | None = 1.0, cmap: str = "viridis",
            center: float | None = None, label: str | None = None, text: pd.DataFrame | None = None) -> Path:
    """A matrix as an annotated heatmap, optionally split into blocks by lines.

    Parameters
    ----------
    frame : pandas.DataFrame
        Values by row and column label (e.g. learners x learners); NaN cells are left
        grey and marked with a dash.
    path : path
        Where to write the PNG (its folder is created).
    blocks : list of int, optional
        Sizes of consecutive blocks of rows and columns (e.g. humans, then models); a
        white line separates them, as in Figure 4 of Cui, Do, Sachan 2026.
    vmin, vmax : float, optional
        Colour range; ``vmin`` None uses the smallest value (KOC_norm can be negative).
    center : float, optional
        For a diverging ``cmap``: the value drawn in its middle colour (0 for KOC_norm).
    label : str, optional
        The colour bar's label.
    text : pandas.DataFrame, optional
        Cell labels of the same shape (e.g. ``"0.62**"``, or ranks); default: the values
        to two decimals.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    values = frame.to_numpy(float)
    n_rows, n_cols = values.shape
    side = max(4.0, 0.55 * max(n_rows, n_cols) + 2.5)
    fig, ax = _subplots(figsize=(side + 1, side), dpi=120)
    colours = matplotlib.colormaps[cmap].with_extremes(bad="#d9d9d9")
    finite = values[np.isfinite(values)]
    low = vmin if vmin is not None else float(finite.min()) if finite.size else 0.0
    high = vmax if vmax is not None else float(finite.max()) if finite.size else 1.0
    if center is not None:
        scale = TwoSlopeNorm(vcenter=center, vmin=min(low, center - 1e-9), vmax=max(high, center + 1e-9))
    else:
        scale = Normalize(vmin=low, vmax=high if high > low else low + 1)
    image = ax.imshow(np.ma.masked_invalid(values), cmap=colours, norm=scale)
    for i in range(n_rows):
        for j in range(n_cols):
            v = values[i, j]
            red, green, blue, _ = colours(scale(v)) if np.isfinite(v) else (1, 1, 1, 1)
            shown = str(text.iat[i, j]) if text is not None else "–" if np.isnan(v) else f"{v:.2f}"
            ax.text(j, i, shown, ha="center", va="center", fontsize=8,
                    color="black" if 0.299 * red + 0.587 * green + 0.114 * blue > 0.5 else "white")
    edge = 0
    for size in (blocks or [])[:-1]:
        edge += size
        ax.axhline(edge - 0.5, color="white", linewidth=3)
        ax.axvline(edge - 0.5, color="white", linewidth=3)
    ax.set_xticks(range(n_cols), [str(c) for c in frame.columns], rotation=45, ha="right")
    ax.set_yticks(range(n_rows), [str(r) for r in frame.index])
    ax.set_title(title)
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label=label)
    return _save(fig, path)


def curves(series: dict[str, pd.DataFrame], path: str | Path, title: str, xlabel: str, ylabel: str,
           x: str = "threshold", y: str = "rate") -> Path:
    """Line charts, one per labelled frame of ``x`` and ``y`` columns (e.g. the DAG-MATH closeness curve).

    Parameters
    ----------
    series : dict of str to pandas.DataFrame
        Label -> a frame with columns ``x`` and ``y``, drawn as a step line in ``x`` order.
    path : path
        Where to write the PNG (its folder is created).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    fig, ax = _subplots(figsize=(6, 4), dpi=120)
    for label, frame in series.items():
        ax.plot(frame[x].to_numpy(float), frame[y].to_numpy(float), drawstyle="steps-post", label=str(label))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title)
    ax.legend(frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return _save(fig, path)


def box_groups(frame: pd.DataFrame, columns: list[str], by: str, path: str | Path, title: str) -> Path:
    """One panel per column of ``columns``: a box plot of its values per group of ``by``.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per observation (e.g. a trajectory, with its class in ``by``); a row may
        appear in several groups (stack copies with different ``by`` values).
    path : path
        Where to write the PNG (its folder is created).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    groups = list(dict.fromkeys(frame[by]))
    fig, axes = _subplots(1, len(columns), figsize=(3 * len(columns), 3.6), dpi=120, squeeze=False)
    for ax, column in zip(axes[0], columns, strict=True):
        data = [frame.loc[frame[by] == g, column].dropna().to_numpy(float) for g in groups]
        ax.boxplot(data, tick_labels=[str(g) for g in groups])
        ax.set_title(column)
        ax.tick_params(axis="x", labelrotation=45)
        ax.spines[["top", "right"]].set_visible(False)
    fig.suptitle(title)
    return _save(fig, path)


def radar(frame: pd.DataFrame, path: str | Path, title: str) -> Path:
    """A radar (spider) chart: one closed polygon per row of ``frame`` over its columns.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows are the series (e.g. models), columns the axes (e.g. the six RQEval
        dimensions); values in [0, 1].
    path : path
        Where to write the PNG (its folder is created).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    angles = np.linspace(0, 2 * np.pi, len(frame.columns), endpoint=False)
    closed = np.append(angles, angles[0])
    fig, ax = _subplots(figsize=(6, 6), dpi=120, subplot_kw={"polar": True})
    for label, row in frame.iterrows():
        values = row.to_numpy(float)
        ax.plot(closed, np.append(values, values[0]), label=str(label))
        ax.fill(closed, np.append(values, values[0]), alpha=0.1)
    ax.set_xticks(angles, [str(c) for c in frame.columns])
    ax.set_ylim(0, 1)
    ax.set_title(title)
    ax.legend(frameon=False, loc="upper right", bbox_to_anchor=(1.3, 1.1))
    return _save(fig, path)


def interval_bars(frame: pd.DataFrame, series: dict[str, tuple[str, str, str]], path: str | Path, title: str,
                  ylabel: str = "score") -> Path:
    """Bar groups with error bars: one group per row of ``frame`` (labelled by index), one bar per series.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows are the groups (e.g. prompt conditions).
    series : dict of str to (str, str, str)
        Legend label -> the columns of the bar height and of the interval's low and
        high ends (e.g. ``{"exact-set accuracy": ("exact", "exact low", "exact high")}``).
    path : path
        Where to write the PNG (its folder is created).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    fig, ax = _subplots(figsize=(max(5, 1.3 * len(frame) + 1), 3.8), dpi=120)
    bars = []
    for label, (value, low, high) in series.items():
        heights = frame[value].to_numpy(float)
        bars.append((label, heights, np.vstack([heights - frame[low].to_numpy(float),
                                                frame[high].to_numpy(float) - heights])))
    _bar_groups(ax, frame.index, bars)
    ax.set_ylim(0, 1.05)
    return _finish(fig, ax, path, title, ylabel)



def residual_plot(fitted: np.ndarray, residual: np.ndarray, path: str | Path, title: str,
                  note: str | None = None) -> Path:
    """pks's diagnostic plot of a BLIM: residuals against predicted pattern probabilities.

    Points, a dashed line at zero and a lowess smooth (frac 2/3, 3 robustifying
    iterations, delta 1 % of the range: R's ``panel.smooth`` and ``lowess`` defaults), as
    ``plot.blim`` draws them.

    Parameters
    ----------
    fitted : ndarray (patterns,)
        Predicted response-pattern probabilities.
    residual : ndarray (patterns,)
        Deviance residuals of the same patterns (Pearson residuals where ``note`` says so).
    note : str, optional
        Printed under the title and labels the axis as Pearson residuals: why the
        deviance residuals are not shown (a fit with no degrees of freedom, where pks
        defines them all as 0).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    from statsmodels.nonparametric.smoothers_lowess import lowess

    fig, ax = _subplots(figsize=(6, 4), dpi=120)
    ax.scatter(fitted, residual, s=10, facecolors="none", edgecolors="black", linewidths=0.6)
    ax.axhline(0, linestyle="--", color="grey", linewidth=0.8)
    # R's lowess defaults: delta = 1 % of the range (neighbours closer than that are interpolated), which
    # also keeps a fit padded to 2^16 patterns quick
    smooth = lowess(residual, fitted, frac=2 / 3, it=3, delta=0.01 * float(np.ptp(fitted)) if len(fitted) else 0.0)
    ax.plot(smooth[:, 0], smooth[:, 1], color="red", linewidth=1)
    ax.set_xlabel("Predicted response probabilities")
    ax.set_ylabel("Pearson residuals" if note else "Deviance residuals")
    ax.set_title(title if not note else f"{title}\n{_wrapped(note, 70)}", fontsize=None if not note else 9)
    ax.spines[["top", "right"]].set_visible(False)
    return _save(fig, path)


def _wrapped(text: str, width: int) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width))


def error_rates(items: list[str], careless, guess, path: str | Path, title: str,
                careless_se=None, guess_se=None) -> Path:
    """Careless-error (beta) and lucky-guess (eta) rates per item as paired bars with SE whiskers."""
    fig, ax = _subplots(figsize=(max(6, 0.45 * len(items) + 2), 4), dpi=120)
    bars = [(label, np.asarray(values, float), None if se is None else np.nan_to_num(np.asarray(se, float)))
            for values, se, label in ((careless, careless_se, "careless error (beta)"),
                                      (guess, guess_se, "lucky guess (eta)"))]
    _bar_groups(ax, items, bars, capsize=2, rotation=90 if len(items) > 12 else 0)
    ax.set_ylim(0, None)
    return _finish(fig, ax, path, title, "rate")


def labelled_hbars(values: pd.Series, labels: pd.Series, path: str | Path, title: str, xlabel: str,
                   xmax: float = 100.0) -> Path:
    """Horizontal bars, one per index entry of ``values`` (top to bottom), each labelled at its end.

    The layout of Figure 3 of Steiner, Hochweber 2026: a model per bar, its exact-set
    accuracy, and the label "94.4% (17/18)".
    """
    fig, ax = _subplots(figsize=(7, 0.5 * len(values) + 1.2), dpi=120)
    rows = np.arange(len(values))[::-1]
    ax.barh(rows, values.to_numpy(float), color="#4c72b0")
    for y, x, text in zip(rows, values.to_numpy(float), labels.loc[values.index], strict=True):
        ax.text(x + xmax / 100, y, str(text), va="center")
    ax.set_yticks(rows, [str(i) for i in values.index])
    ax.set_xlim(0, xmax * 1.2)  # room for the labels of full bars
    ax.set_xticks(np.linspace(0, xmax, 6))
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.spines[["top", "right"]].set_visible(False)
    return _save(fig, path)


def _bar_groups(ax, groups, bars: list[tuple[str, np.ndarray, np.ndarray | None]], capsize: float = 3,
                rotation: float = 0) -> np.ndarray:
    """Side-by-side bars in one group per label of ``groups``: bar k of every group from ``bars[k]``,
    a (legend label, heights, error bars or None) triple; the groups' centres on the x axis."""
    centres = np.arange(len(groups))
    width = 0.8 / max(len(bars), 1)
    for k, (label, heights, errors) in enumerate(bars):
        ax.bar(centres + (k - (len(bars) - 1) / 2) * width, heights, width, label=str(label), yerr=errors,
               capsize=capsize if errors is not None else 0)
    ax.set_xticks(centres, [str(g) for g in groups], rotation=rotation)
    return centres


def _finish(fig, ax, path: str | Path, title: str, ylabel: str) -> Path:
    """Label, title and legend the axes of a bar chart, and save it."""
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return _save(fig, path)


def _save(fig, path: str | Path) -> Path:
    """Lay out, write the PNG (creating its folder) and free the figure."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path)
    return path


def _subplots(*grid, figsize, dpi, **kwargs):
    """A figure and its axes, as ``pyplot.subplots`` gives them, without pyplot: no global
    figure registry to close, and 0.2 s less to import (Figure prints PNGs through Agg)."""
    fig = Figure(figsize=figsize, dpi=dpi)
    return fig, fig.subplots(*grid, **kwargs)
