"""Running a campaign's cells: each its kstp command, in a process of its own, one after another.

A cell is the command a user would type (:attr:`~kstp.evaluators.campaign.plan.Cell.argv`),
so its run, logs and resume are that command's: the run engine resumes whatever a cell
had stored, and a campaign run again asks only what is left. A process per cell frees
what the cell held (a vLLM or transformers model's GPU memory, a local llama.cpp server)
before the next starts, and a cell that fails, or crashes, leaves the others to run.

A cell whose run finished with the same command is not started again (:func:`finished_cells`, one process
for the whole plan): its command would ask nothing, but it would start its backend first (a vLLM or transformers
model's load). The campaign passes each cell its command's hash (:func:`cell_hash`, in
:data:`~kstp.settings.CAMPAIGN_CELL_ENV`) and the run records it when it finishes; any change to the cell's
command (a limit, a strategy, a prompt) runs it again.

The cell runs in a session of its own, so a Ctrl-C at the terminal reaches the campaign
only, which passes one SIGINT on to the cell (a second signal would cut the cell's own
storing short); a SIGTERM to the campaign does the same; a campaign killed with SIGKILL
takes its cell with it (the kernel sends the cell SIGTERM, :func:`die_with_parent`),
which stores what had arrived. The embedded graph is opened by one process at a time:
the campaign holds it only between cells.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kstp.evaluators.campaign.plan import Cell
from kstp.inference.children import die_with_parent
from kstp.settings import CAMPAIGN_CELL_ENV

__all__ = ["CellOutcome", "run_cell", "cell_hash", "finished_cells", "GRACE_S"]

#: Seconds an interrupted cell has to store what arrived and write its logs before it is killed.
GRACE_S = 120.0


@dataclass(frozen=True)
class CellOutcome:
    """What one cell's command did.

    Attributes
    ----------
    status : str
        ``finished`` (exit 0), ``incomplete`` (exit 1 with its summary: requests got no
        reply, the next run asks them), ``failed`` (any other exit: ``error`` says why),
        ``interrupted`` (exit 130).
    exit_code : int
        The command's exit status.
    run_id : str or None
        The run the command reported (None where it printed no summary).
    summary : dict or None
        The command's ``--json`` summary.
    error : str or None
        The command's last ``Error: ...`` line (or its last stderr line) when it failed.
    seconds : float
        Wall time of the command.
    """

    status: str
    exit_code: int
    run_id: str | None
    summary: dict | None
    error: str | None
    seconds: float


def _command(graph: str | None, cell: Cell) -> list[str]:
    return [sys.executable, "-m", "kstp.cli.main", *(["--graph", graph] if graph else []), *cell.argv, "--json"]


def cell_hash(cell: Cell) -> str:
    """The SHA-256 of ``cell``'s command (its argv, without ``--graph`` and ``--json``): what its run records as
    ``campaignCell`` when it finishes.

    Examples
    --------
    >>> a = Cell("answers", "m", "toy", 42, None, ("evaluate", "answers", "--limit", "2"), {})
    >>> cell_hash(a) == cell_hash(Cell("answers", "m", "toy", 42, None, a.argv, {"other": 1}))
    True
    >>> cell_hash(a) == cell_hash(Cell("answers", "m", "toy", 42, None, (*a.argv[:3], "3"), {}))
    False
    """
    return hashlib.sha256(json.dumps(list(cell.argv)).encode()).hexdigest()


def _environment(cell: Cell | None = None) -> dict:
    """This kstp first on the cell's path: every cell runs the code the campaign runs (and, for a cell, its
    command's hash, which its run records when it finishes)."""
    root = str(Path(__file__).resolve().parents[3])
    path = os.environ.get("PYTHONPATH")
    cell_env = {CAMPAIGN_CELL_ENV: cell_hash(cell)} if cell is not None else {}
    return {**os.environ, "PYTHONPATH": root + (os.pathsep + path if path else ""), **cell_env}


def finished_cells(plan: Path, graph: str | None) -> tuple[dict[int, str], str | None]:
    """The cells of the campaign file ``plan`` whose run finished with the cell's command (``kstp campaign
    status``'s ``skip``), by their index in the plan, each with its run id; read in one process (the campaign
    keeps no graph, numpy or thread of its own while its cells run), with the reason where it could not be read
    (then no cell is skipped)."""
    command = [sys.executable, "-m", "kstp.cli.main", *(["--graph", graph] if graph else []), "campaign", "status",
               str(plan), "--json"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=_environment(), stdin=subprocess.DEVNULL,
                              timeout=600)
        rows = json.loads(done.stdout) if done.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError) as exc:
        return {}, str(exc)
    if not isinstance(rows, list):
        lines = done.stderr.strip().splitlines()
        return {}, lines[-1] if lines else f"kstp campaign status exited {done.returncode}"
    return {i: row["runId"] for i, row in enumerate(rows) if row.get("skip")}, None


class _Follower:
    """The lines a cell writes to its stderr file, passed to ``echo`` as they come (the last ones kept in
    ``tail``), read by the thread that runs the cell.

    The campaign holds no other thread while a cell runs (no thread of its own, and numpy, whose
    thread pool is one, is imported only after the cells): a child of a dying parent is handed
    to each live thread of it in turn and gets the parent-death signal at each hand-over, and a
    second SIGTERM would cut the cell's storing short.
    """

    def __init__(self, path: Path, echo: Callable[[str], None]):
        self.handle, self.echo, self.partial, self.tail = open(path, errors="replace"), echo, "", []

    def read(self, last: bool = False) -> None:
        chunk = self.handle.read()
        *lines, self.partial = (self.partial + chunk).split("\n")
        if last and self.partial:
            lines, self.partial = [*lines, self.partial], ""
        for line in lines:
            self.echo(line)
            self.tail = [*self.tail[-19:], line]

    def wait(self, process: subprocess.Popen, timeout: float | None = None) -> None:
        """Follow the cell until it ends (or ``timeout`` seconds pass: :class:`subprocess.TimeoutExpired`)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while process.poll() is None:
            self.read()
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(process.args, timeout)
            time.sleep(0.1)
        self.read(last=True)

    def close(self) -> None:
        self.handle.close()


def run_cell(cell: Cell, graph: str | None, echo: Callable[[str], None] = lambda line: None,
             grace: float = GRACE_S) -> CellOutcome:
    """Run ``cell``'s command to its end, its stderr lines passed to ``echo`` as they come.

    The cell writes its stdout and stderr to files, not pipes: a campaign killed with
    SIGKILL leaves no broken pipe behind, so the cell stores what arrived as a command
    given SIGTERM does.

    Parameters
    ----------
    graph : str or None
        The ``--graph`` of the campaign (None: the cell reads ``$KSTP_GRAPH`` as the campaign did).
    grace : float
        Seconds an interrupted cell has to store what arrived before it is killed.

    Returns
    -------
    CellOutcome

    Raises
    ------
    KeyboardInterrupt
        On Ctrl-C or SIGTERM, once the cell, passed one SIGINT, has stored what arrived and
        ended (or ``grace`` seconds passed); the outcome is its ``outcome`` attribute.
    """
    import tempfile

    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kstp-cell-") as folder:
        out_path, err_path = Path(folder) / "stdout", Path(folder) / "stderr"
        with open(out_path, "w") as out, open(err_path, "w") as err:
            process = subprocess.Popen(_command(graph, cell), stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                       env=_environment(cell), start_new_session=True, preexec_fn=die_with_parent)
        follower = _Follower(err_path, echo)
        try:
            follower.wait(process)
        except KeyboardInterrupt as exc:
            process.send_signal(signal.SIGINT)  # once: the cell stores what arrived, then exits 130
            try:
                follower.wait(process, grace)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            exc.outcome = _outcome(process.returncode, out_path.read_text(), follower.tail,
                                   time.monotonic() - start)
            raise
        finally:
            follower.close()
        return _outcome(process.returncode, out_path.read_text(), follower.tail, time.monotonic() - start)


def _outcome(code: int, out: str, tail: list[str], seconds: float) -> CellOutcome:
    """The outcome of a cell's exit status, stdout (its ``--json`` summary) and last stderr lines."""
    summary = None
    text = out.strip()
    if text:
        try:
            summary = json.loads(text)
        except ValueError:
            summary = None
    if isinstance(summary, dict) and isinstance(summary.get("runs"), list) and summary["runs"]:
        summary = summary["runs"][0]  # several runs of one command: the campaign names one dataset a cell
    run_id = summary.get("runId") if isinstance(summary, dict) else None
    errors = [line for line in tail if line.startswith("Error")]
    error = errors[-1] if errors else (tail[-1] if tail else None)
    if code == 0:
        status = "finished"
    elif code == 130 or code == -signal.SIGINT:
        status = "interrupted"
    elif code == 1 and run_id is not None:
        status = "incomplete"
    else:
        status = "failed"
    return CellOutcome(status, code, run_id, summary if isinstance(summary, dict) else None,
                       None if status == "finished" else error, round(seconds, 3))
