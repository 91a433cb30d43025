"""BLIM fits: kstp against R's pks 0.6-0 on the same structures, data, methods and starting values.

Data: the shared probability (504 learners, 12 items) and fraction-subtraction (536
learners, 20 items) responses. Structures: the knowledge space of skill inclusion (Eq. 1,
reflexive rule, on the Q-matrix: 58 and 372 states) and the structure the Q-matrix
delineates (16 and 58 states). Methods ML, MD, MDML from pks's defaults (uniform pi,
beta = eta = 0.1, tol 1e-7).

pks is timed in the same run when ``Rscript`` can load it (``R_LIBS`` may point at its
library): this module writes each structure and the responses as CSV files and runs
``benchmarks/blim_pks.R`` on them, which times ``pks::blim`` with ``system.time``.
Otherwise the pks timings recorded with the test data (tests/data/blim/pks_<dataset>.json,
measured on the shared development machine under load) stand in and the table says so.
Every fit's G2 is checked against pks's to 1e-4.

With pks in the same run, the structures pks ships are fitted too, read from the kstIO
files kstIO wrote (tests/data/kst/kstio, as ``kstp fit blim --responses FILE --structure
FILE`` reads them): endm's K (not closed under union; 200 learners), DoignonFalmagne7
(1,000 learners) and chess DST3 (232 states for 92 learners).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import REPO, banner, data_root, fmt_ratio, fmt_s, print_table, r_package_version, timed
from kstp.kst.blim import delineate, fit_blim, response_patterns
from kstp.kst.spaces import KnowledgeSpace

__all__ = ["main", "summary"]

DATASETS = {"probability_pks": "responses_full.csv", "frcsub": "responses.csv"}
METHODS = ("ML", "MD", "MDML")
RECORDED = REPO / "tests" / "data" / "blim"


def _space(q: pd.DataFrame) -> np.ndarray:
    skills = {i: set(q.columns[q.loc[i] == 1]) for i in q.index}
    pairs = [(a, b) for a in q.index for b in q.index if a != b and skills[a] <= skills[b]]
    states = KnowledgeSpace.build(list(q.index), pairs).states()
    return np.array([[int(i in s) for i in q.index] for s in states], dtype=np.uint8)


def _inputs():
    for dataset, file in DATASETS.items():
        folder = data_root() / "responses" / dataset
        responses = pd.read_csv(folder / file, index_col=0)
        q = pd.read_csv(folder / "qmatrix.csv", index_col=0)
        for kind, states in (("space", _space(q)), ("delineated", delineate(q.to_numpy()))):
            yield dataset, kind, responses, q, states


#: pks's structures and data as kstIO files (tests/data/kst/kstio): key -> (structure file, data file).
PKS_FILES = {"pks endm/K": ("endm.kst", "endm.dat"), "pks DoignonFalmagne7/K": ("DoignonFalmagne7.spc",
                                                                                 "DoignonFalmagne7.dat"),
             "pks chess/DST3": ("chess_dst3.kst", "chess.dat")}


def _pks_file_inputs():
    """(dataset, kind, responses, items, states) of the structures pks ships, read from kstIO's files."""
    from kstp.loaders.kstio import read_kst_file

    folder = REPO / "tests" / "data" / "kst" / "kstio"
    for key, (structure, data) in PKS_FILES.items():
        states, answers = read_kst_file(folder / structure), read_kst_file(folder / data)
        dataset, kind = key.split("/")
        yield dataset, kind, pd.DataFrame(answers.matrix, columns=answers.items), pd.DataFrame(
            index=answers.items), states.matrix


def _pks_same_run(jobs: list[tuple[str, pd.DataFrame, np.ndarray]]) -> dict[str, dict] | None:
    """pks timings and G2 per ``dataset/kind/method``, or None when R cannot load pks."""
    version = r_package_version("pks")
    if version is None:
        return None
    with tempfile.TemporaryDirectory(prefix="kstp-blim-bench-") as tmp:
        listing = []
        for key, responses, states in jobs:
            stem = Path(tmp) / key.replace("/", "_")
            responses.to_csv(f"{stem}_R.csv", index=False)
            pd.DataFrame(states, columns=responses.columns).to_csv(f"{stem}_K.csv", index=False)
            listing.append({"key": key, "R": f"{stem}_R.csv", "K": f"{stem}_K.csv"})
        jobs_file = Path(tmp) / "jobs.csv"
        pd.DataFrame(listing).to_csv(jobs_file, index=False)
        out = Path(tmp) / "out.json"
        done = subprocess.run(["Rscript", str(REPO / "benchmarks" / "blim_pks.R"), str(jobs_file), str(out)],
                              capture_output=True, text=True, timeout=3600)
        if done.returncode:
            print(f"pks run failed: {done.stderr.strip()[-300:]}")
            return None
        return {"version": version, **json.loads(out.read_text())}


def main(quick: bool = False) -> dict:
    banner(f"BLIM: kstp against R pks{' [quick]' if quick else ''}")
    repeat = 1 if quick else 3
    inputs = list(_inputs())
    extra = [] if quick else list(_pks_file_inputs())
    jobs = [(f"{d}/{k}", r, s) for d, k, r, _, s in inputs + extra]
    pks = None if quick else _pks_same_run(jobs)
    if pks:  # the structures pks ships have no recorded timings: fitted only beside pks in the same run
        inputs += extra
    recorded = {key: value for dataset in DATASETS
                for key, value in json.loads((RECORDED / f"pks_{dataset}.json").read_text()).items()}
    source = f"pks {pks['version']}, same run" if pks else "pks 0.6-0, recorded timings (tests/data/blim)"
    print(f"pks timings: {source}; kstp: median of {repeat}", flush=True)
    rows, records, problems = [], [], []
    for dataset, kind, responses, q, states in inputs:
        patterns, counts, _ = response_patterns(responses.to_numpy())
        items = list(q.index)
        for method in METHODS:
            key = f"{dataset}/{kind}/{method}"
            fit, seconds, _ = timed(lambda m=method, k=states, p=patterns, n=counts, i=items: fit_blim(k, p, n, i, m),
                                    repeat)
            theirs = pks[key] if pks else recorded[key]
            if abs(fit.g2 - theirs["G2"]) > 1e-4 or fit.iterations != theirs["iter"]:
                problems.append(f"{key}: G2 {fit.g2:.6f} / {theirs['G2']:.6f}, iterations "
                                f"{fit.iterations} / {theirs['iter']}")
            ratio = theirs["seconds"] / seconds if seconds > 0 else float("nan")
            records.append({"fit": key, "states": len(states), "patterns": len(patterns),
                            "iterations": fit.iterations, "kstp_s": seconds, "pks_s": theirs["seconds"],
                            "ratio": ratio})
            rows.append([key, str(len(states)), str(len(patterns)), str(fit.iterations), fmt_s(seconds),
                         fmt_s(theirs["seconds"]), fmt_ratio(ratio)])
    print_table(["fit", "states", "patterns", "iterations", "kstp s", "pks s", "pks/kstp"], rows)
    for problem in problems:
        print(f"MISMATCH {problem}")
    return {"records": records, "problems": problems, "source": source, "bootstrap": _bootstrap(quick)}


def _bootstrap(quick: bool) -> dict:
    """``bootstrap_p``'s ML refits side by side against the same refits one ``fit_blim`` at a time (the
    baseline), on probability's knowledge space (58 states), the same draws; G2 checked equal to 1e-9."""
    from kstp.kst.blim_gof import _refit_ml, simulate_counts

    dataset, kind, responses, q, states = next(i for i in _inputs() if i[:2] == ("probability_pks", "space"))
    patterns, counts, _ = response_patterns(responses.to_numpy())
    fit = fit_blim(states, patterns, counts, list(q.index), "ML")
    rng = np.random.default_rng(1)
    samples = [simulate_counts(fit, rng) for _ in range(10 if quick else 100)]
    banner(f"BLIM parametric bootstrap: {len(samples)} ML refits, {dataset} {kind} ({len(states)} states)")
    one, one_s, _ = timed(lambda: [fit_blim(states, p, c, list(q.index), "ML", standard_errors=False).g2
                                   for p, c in samples])
    batch, batch_s, _ = timed(lambda: _refit_ml(fit, samples))
    equal = bool(np.allclose(one, batch[0], rtol=1e-9, atol=0))
    print_table(["refits", "steps", "one at a time s", "side by side s", "ratio", "G2 equal"],
                [[str(len(samples)), str(int(batch[3].sum())), fmt_s(one_s), fmt_s(batch_s),
                  fmt_ratio(one_s / batch_s), "yes" if equal else "NO"]])
    return {"refits": len(samples), "one_s": one_s, "batch_s": batch_s, "equal": equal}


def summary(r: dict) -> str:
    """The one-line summary of :func:`main`'s result."""
    ratios = [rec["ratio"] for rec in r["records"] if np.isfinite(rec["ratio"])]
    slowest = max(r["records"], key=lambda rec: rec["kstp_s"])
    agree = "NO" if r["problems"] else "yes"
    boot = r["bootstrap"]
    return (f"blim: {len(r['records'])} fits, G2 and iterations equal to pks: {agree}; pks/kstp "
            f"{min(ratios):.1f}x-{max(ratios):.1f}x ({r['source']}); slowest kstp fit {slowest['fit']} "
            f"{fmt_s(slowest['kstp_s'])} s; bootstrap: refits side by side "
            f"{fmt_ratio(boot['one_s'] / boot['batch_s'])} "
            f"the speed of one at a time, G2 equal: {'yes' if boot['equal'] else 'NO'}")


if __name__ == "__main__":
    main()
