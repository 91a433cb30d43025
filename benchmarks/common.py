"""What the benchmarks share: data paths, the synthetic log, timing, peak RSS, isolated steps, tables.

Peak RSS: a step that needs its own figure runs in a fresh interpreter (:func:`run_isolated`)
and reports the ``VmHWM`` of that process (``/proc/self/status``). ``ru_maxrss`` is not used
for children on Linux: a child spawned by a large parent inherits the parent's high-water
mark through fork/exec, so it would report the parent's size.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["REPO", "SEED", "DATASET", "FRAMEWORK", "data_root", "standards_path", "annotation_path",
           "Sizes", "sizes", "SyntheticLog", "synthetic_log", "annotation_map", "timed", "rss_now", "peak_rss",
           "process_peak_rss", "PeakRss", "run_isolated", "THREADS", "run_cli", "build_item_graph",
           "fmt_s", "fmt_bytes", "fmt_int",
           "fmt_ratio", "print_table", "workdir", "banner"]

REPO = Path(__file__).resolve().parents[1]
#: One BLAS / OpenMP thread in every measured process: the machine is shared and has two cores.
THREADS = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
SEED = 20260611
DATASET = "xes3g5m"
FRAMEWORK = "ccss"


# ---- data --------------------------------------------------------------------------------
def r_package_version(name: str) -> str | None:
    """The version of R package ``name`` as ``Rscript`` loads it, or None where R or the package is missing."""
    try:
        probe = subprocess.run(["Rscript", "-e", f"cat(as.character(packageVersion('{name}')))"],
                               capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return probe.stdout.strip() if probe.returncode == 0 else None


def data_root() -> Path:
    """``$KSTP_DATA`` (relative to the working directory), else ``../shared/data`` next to the repo."""
    value = os.environ.get("KSTP_DATA")
    path = Path(value) if value else REPO.parent / "shared" / "data"
    if not path.is_dir():
        sys.exit(f"benchmarks: data folder {path} not found; set KSTP_DATA to the folder holding standards/ "
                 "and llm_kst/")
    return path.resolve()


def standards_path() -> Path:
    return data_root() / "standards" / "nys_concepts.json"


def annotation_path() -> Path:
    return data_root() / "llm_kst" / "xes_skills_nys.json"


def annotation_map() -> dict[str, list[str]]:
    """The real question -> Coherence Map concept map (4,118 questions), ids as strings."""
    return {q: [str(c) for c in cs] for q, cs in json.loads(annotation_path().read_text()).items()}


@dataclass(frozen=True)
class Sizes:
    """Scale of a run: full (XES3G5M) or quick (smoke)."""

    learners: int
    min_answers: int
    max_answers: int
    unwind_edges: int
    psr_subsample: int
    eq1_questions: int | None  # None: the whole map


FULL = Sizes(learners=18_066, min_answers=200, max_answers=400, unwind_edges=50_000, psr_subsample=1_000,
             eq1_questions=None)
QUICK = Sizes(learners=1_000, min_answers=50, max_answers=150, unwind_edges=5_000, psr_subsample=200,
              eq1_questions=1_000)


def sizes(quick: bool) -> Sizes:
    return QUICK if quick else FULL


# ---- synthetic log -----------------------------------------------------------------------
@dataclass
class SyntheticLog:
    """A learner log in answer order: learner index, question local id, correctness, 1-based position.

    Every learner answers distinct questions (no repeats), so each answer is one ANSWERED edge.
    """

    learner: np.ndarray  # int64, learner index 0..n-1 (uid = str(index))
    question: np.ndarray  # int64, local question id of the annotation map
    correct: np.ndarray  # bool
    position: np.ndarray  # int64, 1-based within the learner's sequence
    n_learners: int

    def __len__(self) -> int:
        return len(self.learner)

    def to_pykt_csv(self, path: Path, chunk: int = 200) -> int:
        """Write the pyKT question-level layout (uid, questions, responses, selectmasks).

        Sequences are cut into rows of ``chunk`` answers; the last row of a learner is padded
        with -1 (selectmask -1), as pyKT does. Returns the number of rows.
        """
        starts = np.flatnonzero(np.r_[True, self.learner[1:] != self.learner[:-1]])
        ends = np.r_[starts[1:], len(self.learner)]
        questions = self.question.astype(str).tolist()
        responses = self.correct.astype(np.int8).astype(str).tolist()
        rows = 0
        with open(path, "w", newline="") as out:
            out.write("uid,questions,responses,selectmasks\n")
            for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
                uid = str(int(self.learner[s]))
                for a in range(s, e, chunk):
                    b = min(a + chunk, e)
                    pad = chunk - (b - a)
                    tail = ",-1" * pad
                    ones = ",".join(["1"] * (b - a))
                    out.write(f'{uid},"{",".join(questions[a:b])}{tail}","{",".join(responses[a:b])}{tail}",'
                              f'"{ones}{tail}"\n')
                    rows += 1
        return rows

    def answers_frame(self, learners: np.ndarray | None = None) -> pd.DataFrame:
        """``learnerId, questionId, correct`` with graph ids (``xes3g5m:<local id>``), as PSR reads them.

        ``learners``: restrict to these learner indices (sorted or not), keeping answer order.
        """
        keep = slice(None) if learners is None else np.isin(self.learner, learners)
        return pd.DataFrame({"learnerId": f"{DATASET}:" + pd.Series(self.learner[keep]).astype(str),
                             "questionId": f"{DATASET}:" + pd.Series(self.question[keep]).astype(str),
                             "correct": self.correct[keep]})


def synthetic_log(n_learners: int, min_answers: int = 200, max_answers: int = 400,
                  seed: int = SEED, questions: list[str] | None = None) -> SyntheticLog:
    """A deterministic log over the 4,118 questions of the real annotation map (or ``questions``).

    Each learner answers ``U{min_answers..max_answers}`` distinct questions (mean 300 at full
    scale: about 5.4 M answers for 18,066 learners), drawn with a per-question popularity;
    correctness follows a Rasch model (ability - difficulty) so that accuracy and PSR vary.
    """
    rng = np.random.default_rng(seed)
    qids = np.array(sorted(int(q) for q in (questions or annotation_map())), dtype=np.int64)
    nq = len(qids)
    lengths = rng.integers(min_answers, max_answers + 1, n_learners)
    popularity = rng.gamma(2.0, 1.0, nq)
    # Gumbel top-k: a weighted sample without replacement per learner, vectorised by blocks.
    logp = np.log(popularity / popularity.sum())
    chosen = []
    block = 512
    for start in range(0, n_learners, block):
        keys = logp + rng.gumbel(size=(min(block, n_learners - start), nq))
        order = np.argsort(-keys, axis=1)
        for row, n in zip(order, lengths[start:start + block], strict=True):
            chosen.append(row[:n])
    q_index = np.concatenate(chosen)
    learner = np.repeat(np.arange(n_learners, dtype=np.int64), lengths)
    ability = rng.normal(0.3, 1.0, n_learners)
    difficulty = rng.normal(0.0, 1.0, nq)
    p = 1.0 / (1.0 + np.exp(-(ability[learner] - difficulty[q_index])))
    correct = rng.random(len(q_index)) < p
    position = np.arange(len(learner)) - np.repeat(np.cumsum(lengths) - lengths, lengths) + 1
    return SyntheticLog(learner, qids[q_index], correct, position.astype(np.int64), n_learners)


# ---- measuring -----------------------------------------------------------------------------
def timed(fn: Callable, repeat: int = 1):
    """Run ``fn`` ``repeat`` times; return (last result, median seconds, all seconds)."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return result, statistics.median(times), times


def _status_kb(field: str) -> int | None:
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def rss_now() -> int | None:
    """Current resident set size in bytes (Linux), else None."""
    kb = _status_kb("VmRSS")
    return None if kb is None else kb * 1024


def peak_rss() -> int:
    """High-water RSS of this process in bytes since the last :class:`PeakRss` reset (VmHWM), else ru_maxrss."""
    kb = _status_kb("VmHWM")
    return (kb if kb is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


_EARLIER_PEAK = 0  # the highest VmHWM seen before a reset


def process_peak_rss() -> int:
    """Peak RSS of this process in bytes over its whole life, across :class:`PeakRss` resets."""
    return max(_EARLIER_PEAK, peak_rss())


class PeakRss:
    """Peak RSS over a block of this process: resets the high-water mark (``clear_refs`` 5) on entry.

    ``peak`` is None where the reset is not allowed; the figure includes what the process
    already held when the block started (``start``).
    """

    def __enter__(self):
        global _EARLIER_PEAK
        _EARLIER_PEAK = process_peak_rss()
        self.start = rss_now()
        try:
            with open("/proc/self/clear_refs", "w") as handle:
                handle.write("5")
            self._ok = True
        except OSError:
            self._ok = False
        self.peak = None
        return self

    def __exit__(self, *exc):
        self.peak = peak_rss() if self._ok else None


def run_isolated(target: str, **kwargs) -> dict:
    """Run ``module:function(**kwargs)`` in a fresh interpreter; its dict result plus ``peak_rss``.

    The function's keyword arguments and result must be JSON-serialisable.
    """
    with tempfile.TemporaryDirectory(prefix="kstp-bench-child-") as tmp:
        out = Path(tmp) / "result.json"
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
        cmd = [sys.executable, "-m", "benchmarks._child", target, json.dumps(kwargs), str(out)]
        proc = subprocess.run(cmd, cwd=REPO, env=env)
        if proc.returncode != 0:
            raise RuntimeError(f"isolated step {target} failed with exit status {proc.returncode}")
        return json.loads(out.read_text())


_CLI = ("import sys, time\nstart = time.perf_counter()\nfrom kstp.cli.main import cli\ncode = 0\n"
        "try:\n    cli.main(sys.argv[1:], prog_name='kstp')\nexcept SystemExit as exit:\n    code = exit.code or 0\n"
        "from benchmarks.common import peak_rss\n"
        "print('BENCH', time.perf_counter() - start, peak_rss(), code, file=sys.stderr)")


def run_cli(*args: str) -> dict:
    """``kstp ARGS`` as a user runs it, in a fresh interpreter with :data:`THREADS`.

    Returns ``wall`` (seconds, interpreter start-up included), ``inside`` (seconds from before
    kstp's import to the command's end), ``peak_rss`` (bytes, that process's VmHWM) and ``stdout``.
    Raises ``RuntimeError`` with the end of its stderr when the command fails.
    """
    env = dict(os.environ, **THREADS, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO),
                                                                                 os.environ.get("PYTHONPATH")])))
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _CLI, *args], capture_output=True, text=True, env=env, cwd=REPO)
    wall = time.perf_counter() - start
    bench = next((line.split()[1:] for line in done.stderr.splitlines() if line.startswith("BENCH")), None)
    if done.returncode != 0 or bench is None or bench[2] != "0":
        raise RuntimeError(f"kstp {' '.join(args)} failed: {done.stderr[-2000:]}")
    return {"wall": wall, "inside": float(bench[0]), "peak_rss": int(bench[1]), "stdout": done.stdout}


@contextmanager
def workdir(tag: str) -> Iterator[Path]:
    """A temporary folder (under ``$TMPDIR``) removed afterwards."""
    with tempfile.TemporaryDirectory(prefix=f"kstp-bench-{tag}-") as tmp:
        yield Path(tmp)


def build_item_graph(path: Path | str, annotation: Path | None = None):
    """A graph with the Coherence Map and the annotation map (kstp's loaders).

    ``path``: a LadybugDB folder, or a graph location string (``ladybug:...``, ``neo4j://...``).
    Returns the open store; the caller closes it.
    """
    from kstp.graph.factory import open_store
    from kstp.loaders.items import framework_concepts, read_concept_map, write_items
    from kstp.loaders.standards import load_standards

    store = open_store(path if isinstance(path, str) and ":" in path else f"ladybug:{path}")
    load_standards(store, standards_path())
    known = framework_concepts(store, FRAMEWORK)
    write_items(store, read_concept_map(annotation or annotation_path(), DATASET, FRAMEWORK, known))
    return store


# ---- printing ------------------------------------------------------------------------------
def fmt_s(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.3f}" if seconds < 10 else f"{seconds:.1f}"


def fmt_bytes(n: float | None) -> str:
    if n is None:
        return "-"
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"


def fmt_int(n: float | None) -> str:
    return "-" if n is None else f"{int(round(n)):,}"


def fmt_ratio(r: float | None) -> str:
    return "-" if r is None or not np.isfinite(r) else f"{r:.1f}x" if r >= 10 else f"{r:.2f}x"


def banner(title: str) -> None:
    print(f"\n== {title} ==", flush=True)


def print_table(header: list[str], rows: list[list[str]]) -> None:
    """A plain text table: first column left-aligned, the others right-aligned."""
    cells = [header, *rows]
    widths = [max(len(str(r[i])) for r in cells) for i in range(len(header))]
    for n, row in enumerate(cells):
        line = "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                         for i, (c, w) in enumerate(zip(row, widths, strict=True)))
        print(line.rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))
    sys.stdout.flush()
