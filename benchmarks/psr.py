"""(c) PSR for every learner of the synthetic XES3G5M-scale log, with the strict Eq. 1 prerequisites.

kstp path: ``score_pairs`` + ``aggregate`` + ``distribution`` on the answers and the
prerequisite pairs (what ``evaluate_dataset`` runs after reading them from the graph).
Baseline: a plain per-learner dictionary loop, the shape of the authors' script (per learner
a dict question -> correct; for each correct question, loop over its prerequisite list and
count attempted / correct ones; micro and macro per learner; the six-bucket distribution in
the same pass). The baseline takes minutes at full scale, so the ratio is measured on a
deterministic subsample of learners, both paths on the same answers, and the results are
checked equal (per learner, within 1e-12). kstp alone then runs at full scale in a fresh
interpreter for its time and peak RSS (targets: under 60 s, under 8 GB).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import (
    DATASET,
    banner,
    build_item_graph,
    fmt_bytes,
    fmt_int,
    fmt_ratio,
    fmt_s,
    print_table,
    rss_now,
    run_isolated,
    sizes,
    synthetic_log,
    timed,
    workdir,
)

__all__ = ["main", "summary", "baseline_psr", "kstp_psr"]

MIN_PREREQUISITES = 5
TIME_TARGET_S = 60
RSS_TARGET = 8 * 10**9
TOLERANCE = 1e-12


def kstp_psr(answers: pd.DataFrame, prerequisites: pd.DataFrame, min_prerequisites: int = MIN_PREREQUISITES):
    """kstp's evaluator: per-learner table and distribution (and the scored pairs)."""
    from kstp.evaluators.psr import aggregate, distribution, score_pairs

    pairs = score_pairs(answers, prerequisites)
    return aggregate(answers, pairs), distribution(pairs, min_prerequisites), pairs


def baseline_psr(answers: pd.DataFrame, prerequisites: pd.DataFrame,
                 min_prerequisites: int = MIN_PREREQUISITES) -> tuple[pd.DataFrame, pd.Series]:
    """The authors' shape: dictionaries and loops, one learner at a time (last answer per question wins)."""
    prereqs: dict[str, list[str]] = {}
    for a, b in zip(prerequisites["fromId"].tolist(), prerequisites["toId"].tolist(), strict=True):
        prereqs.setdefault(b, []).append(a)
    logs: dict[str, dict[str, bool]] = {}
    for learner, question, correct in zip(answers["learnerId"].tolist(), answers["questionId"].tolist(),
                                          answers["correct"].tolist(), strict=True):
        logs.setdefault(learner, {})[question] = correct
    rows = {}
    buckets = [0] * 6
    for learner, resp in logs.items():
        satisfied_total = observed_total = 0
        ratios = []
        for question, ok in resp.items():
            if not ok or question not in prereqs:
                continue
            observed = satisfied = 0
            for p in prereqs[question]:
                if p in resp:
                    observed += 1
                    if resp[p]:
                        satisfied += 1
            if observed:
                observed_total += observed
                satisfied_total += satisfied
                ratios.append(satisfied / observed)
                if observed >= min_prerequisites:
                    buckets[5 if satisfied == observed else min(int(5 * satisfied / observed), 4)] += 1
        correct = sum(resp.values())
        rows[learner] = {"answered": len(resp), "correct": correct, "accuracy": correct / len(resp),
                         "psrMicro": satisfied_total / observed_total if observed_total else float("nan"),
                         "psrMacro": sum(ratios) / len(ratios) if ratios else float("nan"),
                         "questionsScored": len(ratios), "pairs": observed_total}
    total = sum(buckets)
    return (pd.DataFrame.from_dict(rows, orient="index"),
            pd.Series([b / total if total else 0.0 for b in buckets], dtype=float))


def compare(kstp: pd.DataFrame, kstp_dist: pd.Series, base: pd.DataFrame, base_dist: pd.Series) -> list[str]:
    """Differences between the two results; empty when equal (floats within 1e-12)."""
    problems = []
    if set(kstp.index) != set(base.index):
        return [f"learner sets differ: {len(kstp):,} vs {len(base):,}"]
    k, b = kstp.loc[base.index], base
    for column in ("answered", "correct", "questionsScored", "pairs"):
        bad = int((k[column].to_numpy(np.int64) != b[column].to_numpy(np.int64)).sum())
        if bad:
            problems.append(f"{column}: {bad} learners differ")
    for column in ("accuracy", "psrMicro", "psrMacro"):
        x, y = k[column].to_numpy(float), b[column].to_numpy(float)
        nan_mismatch = int((np.isnan(x) != np.isnan(y)).sum())
        worst = float(np.nanmax(np.abs(x - y))) if np.isfinite(x - y).any() else 0.0
        if nan_mismatch or worst > TOLERANCE:
            problems.append(f"{column}: {nan_mismatch} NaN mismatches, max |diff| {worst:.3g}")
    worst = float(np.max(np.abs(kstp_dist.to_numpy(float) - base_dist.to_numpy(float))))
    if worst > TOLERANCE:
        problems.append(f"distribution: max |diff| {worst:.3g}")
    return problems


def child_full(answers: str, prerequisites: str) -> dict:
    """kstp at full scale: read the inputs (untimed), then score_pairs, aggregate, distribution, timed apart."""
    from kstp.evaluators.psr import aggregate, distribution, score_pairs

    ans, pre = pd.read_parquet(answers), pd.read_parquet(prerequisites)
    rss_inputs = rss_now()
    pairs, score_s, _ = timed(lambda: score_pairs(ans, pre))
    learners, aggregate_s, _ = timed(lambda: aggregate(ans, pairs))
    dist, dist_s, _ = timed(lambda: distribution(pairs, MIN_PREREQUISITES))
    return {"score_s": score_s, "aggregate_s": aggregate_s, "distribution_s": dist_s, "rss_inputs": rss_inputs,
            "answers": len(ans), "prerequisites": len(pre), "scored": len(pairs),
            "triples": int(pairs["observed"].sum()), "learners": len(learners),
            "with_psr": int(learners["psrMicro"].notna().sum()), "micro": float(learners["psrMicro"].mean()),
            "macro": float(learners["psrMacro"].mean()), "distribution": dist.tolist()}


def _prerequisites(tmp: Path) -> pd.DataFrame:
    from kstp.platform.kst import question_prerequisite_pairs

    store = build_item_graph(tmp / "graph")
    qc = store.frame("question_concepts", {"dataset": DATASET})
    closure = store.frame("dataset_concept_closure", {"dataset": DATASET})
    store.close()
    return question_prerequisite_pairs(qc, closure, "strict")


def main(quick: bool = False) -> dict:
    size = sizes(quick)
    banner(f"(c) PSR, all learners of the synthetic XES3G5M-scale log{' [quick]' if quick else ''}")
    with workdir("psr") as tmp:
        start = time.perf_counter()
        log = synthetic_log(size.learners, size.min_answers, size.max_answers)
        answers = log.answers_frame()
        prerequisites = _prerequisites(tmp)
        prep_s = time.perf_counter() - start
        print(f"inputs: {fmt_int(log.n_learners)} learners, {fmt_int(len(answers))} answers, "
              f"{fmt_int(len(prerequisites))} strict Eq. 1 prerequisite pairs (prepared in {fmt_s(prep_s)} s)",
              flush=True)

        rng = np.random.default_rng(2)
        chosen = np.sort(rng.choice(log.n_learners, size=min(size.psr_subsample, log.n_learners), replace=False))
        sub = log.answers_frame(chosen)
        (base, base_dist), base_s, _ = timed(lambda: baseline_psr(sub, prerequisites))
        (kstp, kstp_dist, _), kstp_s, _ = timed(lambda: kstp_psr(sub, prerequisites), repeat=3)
        problems = compare(kstp, kstp_dist, base, base_dist)

        answers.to_parquet(tmp / "answers.parquet")
        prerequisites.to_parquet(tmp / "prerequisites.parquet")
        n_learners = log.n_learners
        del log, answers
        full = run_isolated("benchmarks.psr:child_full", answers=str(tmp / "answers.parquet"),
                            prerequisites=str(tmp / "prerequisites.parquet"))

    full_s = full["score_s"] + full["aggregate_s"] + full["distribution_s"]
    estimate = base_s * n_learners / len(chosen)
    print(f"subsample: {len(chosen):,} learners, {len(sub):,} answers; results equal (1e-12): "
          f"{'yes' if not problems else 'NO'}")
    print_table(["step", "seconds", "peak RSS", "baseline/kstp"], [
        [f"baseline dict loop, {len(chosen):,} learners", fmt_s(base_s), "-", "1.00x"],
        [f"kstp score_pairs+aggregate+distribution, {len(chosen):,} learners (median of 3)", fmt_s(kstp_s), "-",
         fmt_ratio(base_s / kstp_s)],
        [f"kstp score_pairs, all {full['learners']:,} learners", fmt_s(full["score_s"]), "-", "-"],
        [f"kstp aggregate, all {full['learners']:,} learners", fmt_s(full["aggregate_s"]), "-", "-"],
        [f"kstp distribution, all {full['learners']:,} learners", fmt_s(full["distribution_s"]), "-", "-"],
        [f"kstp total, all {full['learners']:,} learners", fmt_s(full_s), fmt_bytes(full["peak_rss"]),
         fmt_ratio(estimate / full_s) + " (est.)"],
        [f"baseline, all learners (extrapolated x{n_learners / len(chosen):.1f})", fmt_s(estimate), "-", "1.00x"],
    ])
    print(f"full scale: {full['answers']:,} answers, {full['scored']:,} scored (learner, question) pairs, "
          f"{full['triples']:,} (learner, question, attempted prerequisite) triples; {full['with_psr']:,} learners "
          f"with a PSR, mean micro {full['micro']:.4f}, macro {full['macro']:.4f}")
    print(f"targets: time {fmt_s(full_s)} s vs < {TIME_TARGET_S} s: {'met' if full_s < TIME_TARGET_S else 'MISSED'}; "
          f"peak RSS {fmt_bytes(full['peak_rss'])} vs < 8 GB: {'met' if full['peak_rss'] < RSS_TARGET else 'MISSED'} "
          f"(RSS with the inputs loaded, before scoring: {fmt_bytes(full['rss_inputs'])})")
    for problem in problems:
        print("PROBLEM:", problem)
    return {"subsample": len(chosen), "equal": not problems, "baseline_s": base_s, "kstp_sub_s": kstp_s,
            "ratio": base_s / kstp_s, "full_s": full_s, "full_peak_rss": full["peak_rss"],
            "baseline_full_estimate_s": estimate}


if __name__ == "__main__":
    main()


def summary(r: dict) -> str:
    """The one-line summary of :func:`main`'s result."""
    return (f"psr: {r['subsample']:,}-learner subsample, equal: {'yes' if r['equal'] else 'NO'}; dict loop / kstp "
            f"{fmt_ratio(r['ratio'])}; kstp full scale {fmt_s(r['full_s'])} s")
