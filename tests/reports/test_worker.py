"""The figure worker: a chart drawn in a second process, the same PNG as drawn in-process."""

from __future__ import annotations

import pandas as pd
import pytest

from kstp.errors import KstpError
from kstp.reports import plots
from kstp.reports.worker import FigureWorker


def test_worker_draws_the_chart_the_process_would_draw(tmp_path):
    shares = pd.DataFrame({"[0,.2)": [0.1, 0.3], "1.0": [0.9, 0.7]}, index=["a", "b"])
    worker = FigureWorker()
    worker.draw("grouped_bars", shares, tmp_path / "worker.png", "Title", "share")
    worker.close()
    plots.grouped_bars(shares, tmp_path / "here.png", "Title", "share")
    assert (tmp_path / "worker.png").read_bytes() == (tmp_path / "here.png").read_bytes()


def test_a_failed_drawing_is_one_kstp_error_and_a_worker_without_a_job_draws_nothing(tmp_path):
    worker = FigureWorker()
    worker.draw("grouped_bars", "not a frame", tmp_path / "x.png", "Title", "share")
    with pytest.raises(KstpError, match=r"drawing a chart \(grouped_bars\) failed in its worker process: "):
        worker.close()
    idle = FigureWorker()
    idle.close()  # the command failed before drawing: nothing written, nothing raised
    assert not (tmp_path / "x.png").exists()
