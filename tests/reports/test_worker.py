"""The figure worker: a chart drawn in a second process, the same PNG as drawn in-process; in a process that has
imported matplotlib (this one), drawn here by default."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

from kstp.errors import KstpError
from kstp.reports import plots
from kstp.reports.worker import FigureWorker


def test_worker_draws_the_chart_the_process_would_draw(tmp_path):
    shares = pd.DataFrame({"[0,.2)": [0.1, 0.3], "1.0": [0.9, 0.7]}, index=["a", "b"])
    worker = FigureWorker(spawn=True)
    assert worker._process is not None
    worker.draw("grouped_bars", shares, tmp_path / "worker.png", "Title", "share")
    worker.close()
    plots.grouped_bars(shares, tmp_path / "here.png", "Title", "share")
    assert (tmp_path / "worker.png").read_bytes() == (tmp_path / "here.png").read_bytes()
    here = FigureWorker()  # matplotlib is imported here (kstp.reports.plots): nothing left for a worker to hide
    assert here._process is None
    here.draw("grouped_bars", shares, tmp_path / "default.png", "Title", "share")
    here.close()
    assert (tmp_path / "default.png").read_bytes() == (tmp_path / "here.png").read_bytes()


def test_a_failed_drawing_is_one_kstp_error_and_a_worker_without_a_job_draws_nothing(tmp_path):
    worker = FigureWorker(spawn=True)
    worker.draw("grouped_bars", "not a frame", tmp_path / "x.png", "Title", "share")
    with pytest.raises(KstpError, match=r"drawing a chart \(grouped_bars\) failed in its worker process: "):
        worker.close()
    idle = FigureWorker(spawn=True)
    idle.close()  # the command failed before drawing: nothing written, nothing raised
    assert not (tmp_path / "x.png").exists()


def test_a_fresh_process_starts_a_worker_by_default():
    """A command's own process (no matplotlib yet) hands the chart to a worker, as ``kstp evaluate psr --out`` does."""
    probe = ("import sys; from kstp.reports.worker import FigureWorker; worker = FigureWorker(); "
             "print('matplotlib' in sys.modules, worker._process is not None); worker.close()")
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True).stdout.split() == ["False", "True"]
