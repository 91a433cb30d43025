"""Drawing a figure in a second process, off the critical path of a command.

A command that ends with a chart starts a :class:`FigureWorker` before its long work: a
fresh Python imports matplotlib (0.8-1.2 s of a 5 s ``kstp evaluate psr`` at XES3G5M
scale) on the machine's other core while the command reads and scores. The command then
hands it the chart's data (:meth:`FigureWorker.draw`, a function of
:mod:`kstp.reports.plots` and its arguments, pickled), and the worker draws and saves the
file while the command writes its other outputs; :meth:`FigureWorker.close` waits for it,
so the file exists when the command returns. Where no worker can be started, or the process
has imported matplotlib already (a long-lived one: the explorer, a notebook, a test session,
where a worker would only pay a second interpreter's start-up), the chart is drawn in the
command's own process.

Run as ``python -m kstp.reports.worker``: read one pickled ``(function, args, kwargs)``
from stdin and call it; an empty stdin (a command that failed before drawing) draws nothing.
"""

from __future__ import annotations

import pickle
import subprocess
import sys

from kstp.errors import KstpError

__all__ = ["FigureWorker", "main"]


class FigureWorker:
    """A second Python process, importing matplotlib from its start, that draws one chart.

    Raises
    ------
    KstpError
        From :meth:`close`, when the drawing failed (the worker's last error line).
    """

    def __init__(self, spawn: bool | None = None) -> None:
        """``spawn``: start the second process (by default only where this process has not imported
        matplotlib yet; ``False`` draws here)."""
        self._process: subprocess.Popen | None = None
        self._job: tuple | None = None
        if spawn is False or (spawn is None and "matplotlib" in sys.modules):
            return
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "kstp.reports.worker"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE)
        except OSError:
            pass

    def draw(self, function: str, *args, **kwargs) -> None:
        """Draw ``kstp.reports.plots.<function>(*args, **kwargs)`` in the worker (here, without one)."""
        if self._process is None:
            from kstp.reports import plots

            getattr(plots, function)(*args, **kwargs)
            return
        self._job = (function, args, kwargs)
        try:
            pickle.dump(self._job, self._process.stdin)
            self._process.stdin.close()
        except BrokenPipeError:  # the worker died early: draw here
            self._process = None
            self.draw(function, *args, **kwargs)

    def close(self) -> None:
        """Wait for the drawing (or, with none asked for, let the worker go); raise if it failed."""
        if self._process is None:
            return
        process, self._process = self._process, None
        if self._job is None:  # nothing to draw (the command failed first): no need to wait for its imports
            process.kill()
        if not process.stdin.closed:
            process.stdin.close()
        error = process.stderr.read().decode(errors="replace")
        if process.wait() and self._job is not None:
            last = next((line for line in reversed(error.splitlines()) if line.strip()), "no message")
            raise KstpError(f"drawing a chart ({self._job[0]}) failed in its worker process: {last}")


def main() -> int:
    """The worker: import the plots (matplotlib) now, then draw the one job that arrives on stdin."""
    from kstp.reports import plots

    data = sys.stdin.buffer.read()
    if not data:
        return 0
    function, args, kwargs = pickle.loads(data)
    getattr(plots, function)(*args, **kwargs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
