"""PNG charts of results (matplotlib, no display needed)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

__all__ = ["grouped_bars", "heatmap", "condition_bars"]


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
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    groups = np.arange(len(frame.columns))
    width = 0.8 / max(len(frame), 1)
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(groups)), 4), dpi=120)
    for k, (label, row) in enumerate(frame.iterrows()):
        ax.bar(groups + (k - (len(frame) - 1) / 2) * width, row.to_numpy(float), width, label=str(label))
    ax.set_xticks(groups, [str(c) for c in frame.columns])
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def heatmap(frame: pd.DataFrame, path: str | Path, title: str, label: str) -> Path:
    """A heatmap of ``frame`` (rows by index, columns by name) with each value printed in its cell.

    Parameters
    ----------
    frame : pandas.DataFrame
        Values in [0, 1] (e.g. exact-set accuracy, domain x condition); NaN cells stay blank.
    label : str
        The colour bar's label.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    values = frame.to_numpy(float)
    fig, ax = plt.subplots(figsize=(max(4, 1.1 * len(frame.columns) + 2), max(2.5, 0.45 * len(frame) + 1.2)),
                           dpi=120)
    image = ax.imshow(values, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(frame.columns)), [str(c) for c in frame.columns])
    ax.set_yticks(range(len(frame)), [str(i) for i in frame.index])
    for (i, j), value in np.ndenumerate(values):
        if not np.isnan(value):
            ax.text(j, i, f"{value:.2f}", ha="center", va="center", color="white" if value < 0.6 else "black")
    fig.colorbar(image, ax=ax, label=label)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def condition_bars(frame: pd.DataFrame, value: str, low: str, high: str, path: str | Path, title: str) -> Path:
    """One bar per row of ``frame`` (labelled by index) at column ``value``, error bars ``low``..``high``.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    heights = frame[value].to_numpy(float)
    errors = np.vstack([heights - frame[low].to_numpy(float), frame[high].to_numpy(float) - heights])
    fig, ax = plt.subplots(figsize=(max(5, 1.1 * len(frame) + 1), 3.8), dpi=120)
    ax.bar(range(len(frame)), heights, 0.6, yerr=errors, capsize=4, color="tab:blue")
    ax.set_xticks(range(len(frame)), [str(i) for i in frame.index])
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(value)
    ax.set_title(title)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
