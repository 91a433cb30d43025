"""PNG charts of results (matplotlib, no display needed)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

__all__ = ["grouped_bars", "radar"]


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
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    angles = np.linspace(0, 2 * np.pi, len(frame.columns), endpoint=False)
    closed = np.append(angles, angles[0])
    fig, ax = plt.subplots(figsize=(6, 6), dpi=120, subplot_kw={"polar": True})
    for label, row in frame.iterrows():
        values = row.to_numpy(float)
        ax.plot(closed, np.append(values, values[0]), label=str(label))
        ax.fill(closed, np.append(values, values[0]), alpha=0.1)
    ax.set_xticks(angles, [str(c) for c in frame.columns])
    ax.set_ylim(0, 1)
    ax.set_title(title)
    ax.legend(frameon=False, loc="upper right", bbox_to_anchor=(1.3, 1.1))
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
