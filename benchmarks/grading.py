"""Grading agreement: kstp's grader against the field's own answer-checker test suites.

The cases are data (``tests/data/grading/<suite>.jsonl``, extracted from the peers'
public test files by ``tools/peer_grading_cases.py``, each naming its repository, commit,
file and test). Every case is graded as a new user would, ``grade(reply, gold)`` with
default options (``kstp grade --gold GOLD REPLY``), and compared with the peer's expected
verdict. Printed per suite: agreement on all cases and on the in-scope ones (the cases
outside are answer kinds kstp does not claim, non-default peer settings, a peer's wrong
expectation, and kstp's documented conventions), wrong replies graded correct, the
out-of-scope cases refused as not supported, and the time per call (median, worst).
Then the stall probes of issue 32: a power tower, a 1 MB reply, 10,000 nested braces and
100,000 ``\\boxed{}``, each timed.

Then the real replies (issue 41): replies that models wrote, published in public evaluation
outputs (``tests/data/grading/real-replies.jsonl``, collected by ``tools/real_reply_cases.py``,
each naming its repository, commit and file), each with a reference verdict a person gave.
Per source and model: the replies, those whose final answer a person can read, and for
kstp's grader (``grade(reply, gold, options=options, opened=prompt_opens_think)``: told, as
``kstp grade --opened-think`` is, where the source's prompt opened the reasoning trace), Math-Verify (its
stored default verdict) and the source's own grader (where the source publishes one):
wrong replies graded correct first, then correct replies graded wrong, then agreement
with the reference; the totals, and the agreement on the readable replies alone.

A call that runs past 10 s is stopped by an alarm here (the benchmark's guard, so that a
grader without bounds can still be measured) and counted as stalled.
"""

from __future__ import annotations

import json
import signal
import statistics
import time
from pathlib import Path

from benchmarks.common import REPO, banner, print_table

SUITES = ("math-verify", "lighteval", "hendrycks-math", "skyrl", "open-r1")
DATA = REPO / "tests" / "data" / "grading"
REAL = "real-replies.jsonl"
#: the graders held to the real replies' reference: kstp's, and the verdicts stored with each reply
GRADERS = ("kstp", "math_verify", "source_grader")
STALL_S = 10

#: the issue's stall probes: (name, reply, gold)
PROBES = [
    ("power tower", r"\boxed{10^{10^{10^{10}}}}", "5"),
    ("1 MB reply", "so the answer is 7, I think. " * 36_000 + r"\boxed{7}", "7"),
    ("10,000 nested braces", "{" * 10_000 + "7" + "}" * 10_000, "7"),
    ("100,000 empty boxes", r"\boxed{}" * 100_000, "7"),
    ("100,000 boxes", r"\boxed{7}" * 100_000, "7"),
]


class _Stalled(Exception):
    pass


def _alarm(signum, frame):
    raise _Stalled


def load(suite: str, data: Path = DATA) -> list[dict]:
    """The cases of one suite, in file order."""
    with open(data / f"{suite}.jsonl", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def timed_grade(reply: str, gold: str, options: int | None = None, opened: bool = False):
    """(verdict or None if it stalled, seconds); ``opened``: the prompt opened the reasoning trace."""
    from kstp.inference.grading import grade

    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(STALL_S)
    start = time.perf_counter()
    try:
        verdict = grade(reply, gold, options=options, opened=opened)
    except _Stalled:
        verdict = None
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return verdict, time.perf_counter() - start


def refused(verdict) -> bool:
    """Whether a verdict declines to judge (an answer kind not supported, or too large / too slow)."""
    return verdict is not None and verdict.reason.startswith(("not supported", "not gradable"))


def score(suite: str) -> dict:
    """Grade every case of a suite; the counts and times :func:`main` prints."""
    rows = []
    for case in load(suite):
        verdict, seconds = timed_grade(case["reply"], case["gold"])
        rows.append({"case": case, "verdict": verdict, "s": seconds,
                     "agree": verdict is not None and verdict.correct == case["expected"]})
    inside = [r for r in rows if r["case"]["scope"] == "in"]
    outside = [r for r in rows if r["case"]["scope"] != "in"]
    return {
        "suite": suite, "cases": len(rows), "agree": sum(r["agree"] for r in rows),
        "in_scope": len(inside), "in_agree": sum(r["agree"] for r in inside),
        # a wrong reply graded correct, in scope or out (conventions aside: they are documented choices)
        "false_correct": [r["case"]["id"] for r in rows if r["verdict"] is not None and r["verdict"].correct
                          and not r["case"]["expected"] and not r["case"]["scope"].startswith("convention")],
        "refused_out": sum(refused(r["verdict"]) for r in outside),
        "stalled": [r["case"]["id"] for r in rows if r["verdict"] is None],
        "disagree": [r["case"]["id"] for r in inside if not r["agree"]],
        "median_ms": 1000 * statistics.median(r["s"] for r in rows),
        "worst_ms": 1000 * max(r["s"] for r in rows),
    }


def load_real(data: Path = DATA) -> list[dict]:
    """The real replies with their reference verdicts, in file order."""
    with open(data / REAL, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def _tally(rows: list[dict], grader: str) -> dict | None:
    """Agreement of one grader with the reference on ``rows``; None where it has no verdict on any of them.

    The source's grader is held only to the replies it published a verdict on; a reply
    kstp stalled on or Math-Verify raised on counts as not graded correct.
    """
    if grader == "source_grader":
        rows = [r for r in rows if r["verdicts"]["source_grader"] is not None]
    verdicts = [r["verdicts"][grader] for r in rows]
    if all(v is None for v in verdicts):
        return None
    fp = [r["id"] for r, v in zip(rows, verdicts, strict=True) if v is True and not r["reference"]]
    fn = [r["id"] for r, v in zip(rows, verdicts, strict=True) if v is not True and r["reference"]]
    return {"n": len(rows), "agree": len(rows) - len(fp) - len(fn), "fp": fp, "fn": fn}


def score_real(rows: list[dict]) -> dict:
    """Grade each real reply with kstp and hold kstp, Math-Verify and the source's grader to the reference.

    Parameters
    ----------
    rows : list of dict
        Records of ``real-replies.jsonl`` (``id``, ``reply``, ``gold``, ``options``,
        ``reference``, ``readable``, ``math_verify``, ``source_verdict``).

    Returns
    -------
    dict
        ``groups``: one entry a (source, model key of the id), in file order, with ``replies``,
        ``readable`` and, for each grader of :data:`GRADERS`, ``{n, agree, fp, fn}`` (the
        ids of wrong replies graded correct and of right replies graded wrong) or None
        where that grader has no verdict there; ``total`` and ``readable``: the same over
        all replies and over the readable ones; ``kstp``: kstp's verdict by id
        (``extracted``, ``method``, ``correct``, ``reason``; None if it stalled); ``stalled``;
        ``median_ms``, ``worst_ms``.
    """
    graded, times, stalled = [], [], []
    kstp = {}
    for record in rows:
        verdict, seconds = timed_grade(record["reply"], record["gold"], options=record["options"],
                                       opened=bool(record.get("prompt_opens_think")))
        times.append(seconds)
        if verdict is None:
            stalled.append(record["id"])
        kstp[record["id"]] = None if verdict is None else {
            "extracted": verdict.extracted, "method": verdict.method, "correct": verdict.correct,
            "reason": verdict.reason}
        graded.append({**record, "verdicts": {"kstp": None if verdict is None else verdict.correct,
                                              "math_verify": record["math_verify"],
                                              "source_grader": record["source_verdict"]}})
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in graded:
        groups.setdefault(tuple(r["id"].split("/")[:2]), []).append(r)

    def summary(part: list[dict]) -> dict:
        return {"replies": len(part), "readable": sum(r["readable"] for r in part),
                **{g: _tally(part, g) for g in GRADERS}}

    return {"groups": [{"source": source, "model": model, **summary(part)}
                       for (source, model), part in groups.items()],
            "total": summary(graded), "readable": summary([r for r in graded if r["readable"]]),
            "kstp": kstp, "stalled": stalled,
            "median_ms": 1000 * statistics.median(times), "worst_ms": 1000 * max(times)}


def _cell(tally: dict | None, key: str) -> str:
    if tally is None:
        return "-"
    if key == "agree":
        return f"{tally['agree']} ({100 * tally['agree'] / max(tally['n'], 1):.1f} %)"
    return str(len(tally[key]))


def print_real(result: dict, rows: list[dict]) -> None:
    """The real-reply tables, false positives first, and kstp's wrong verdicts one by one."""
    by_id = {r["id"]: r for r in rows}
    lines = [*result["groups"], {"source": "all", "model": "", **result["total"]},
             {"source": "all, readable only", "model": "", **result["readable"]}]
    for key, title in (("fp", "graded correct, reference wrong"), ("fn", "graded wrong, reference correct"),
                       ("agree", "agreement with the reference")):
        print(f"real replies: {title} (kstp / Math-Verify / source's grader)")
        print_table(["source", "model", "replies", "readable", "kstp", "Math-Verify", "source"],
                    [[g["source"], g["model"], str(g["replies"]), str(g["readable"]),
                      *(_cell(g[grader], key) for grader in GRADERS)] for g in lines])
    for key, label in (("fp", "PROBLEM: real reply graded correct, reference wrong"),
                       ("fn", "real reply graded wrong, reference correct")):
        for case_id in result["total"]["kstp"][key]:
            record, verdict = by_id[case_id], result["kstp"][case_id]
            print(f"{label}: {case_id} gold {record['gold']!r}; kstp took {verdict['extracted']!r} "
                  f"({verdict['method']}, {verdict['reason']})"
                  + ("" if record["readable"] else "; the reply has no readable answer"))
    for case_id in result["stalled"]:
        print(f"PROBLEM: real reply stalled past {STALL_S} s: {case_id}")
    print(f"kstp: {result['median_ms']:.2f} ms a reply (median), worst {result['worst_ms']:.0f} ms")


def main(quick: bool = False) -> dict:
    banner("grading: agreement with the peers' test suites")
    from kstp.inference.grading import grade

    grade("warm up: \\boxed{x^2}", "x^2")  # math-verify and sympy imports are not a case's time
    results = [score(suite) for suite in SUITES]
    table = []
    for r in results:
        table.append([r["suite"], str(r["cases"]), f"{r['agree']} ({100 * r['agree'] / r['cases']:.1f} %)",
                      str(r["in_scope"]), f"{r['in_agree']} ({100 * r['in_agree'] / max(r['in_scope'], 1):.1f} %)",
                      str(len(r["false_correct"])), str(r["refused_out"]), str(len(r["stalled"])),
                      f"{r['median_ms']:.2f}", f"{r['worst_ms']:.0f}"])
    print_table(["suite", "cases", "agree", "in scope", "agree in scope", "wrong graded correct",
                 "out refused", "stalled", "median ms", "worst ms"], table)
    for r in results:
        for case_id in r["disagree"]:
            print(f"  {r['suite']}: disagrees on {case_id}")
        for case_id in r["false_correct"]:
            print(f"PROBLEM: {r['suite']}: a wrong reply graded correct: {case_id}")
        for case_id in r["stalled"]:
            print(f"PROBLEM: {r['suite']}: stalled past {STALL_S} s: {case_id}")
    probes = []
    for name, reply, gold in PROBES[:2] if quick else PROBES:
        verdict, seconds = timed_grade(reply, gold)
        probes.append({"probe": name, "s": seconds, "reason": verdict.reason if verdict else "stalled"})
    print_table(["stall probe", "seconds", "verdict"], [[p["probe"], f"{p['s']:.3f}", p["reason"]] for p in probes])
    for p in probes:
        if p["s"] >= 1:
            print(f"PROBLEM: stall probe {p['probe']!r} took {p['s']:.1f} s (target < 1 s)")
    banner("grading: real replies, against a person's reference verdict")
    rows = load_real()
    real = score_real(rows)
    print_real(real, rows)
    return {"suites": results, "probes": probes, "real": real}


def summary(result: dict) -> str:
    """The one-line summary of :func:`main`'s result."""
    suites = result["suites"]
    inside = sum(r["in_scope"] for r in suites)
    agree = sum(r["in_agree"] for r in suites)
    per = ", ".join(f"{r['suite']} {r['in_agree']}/{r['in_scope']}" for r in suites)
    wrong = sum(len(r["false_correct"]) for r in suites)
    slowest = max(p["s"] for p in result["probes"])
    real = result["real"]
    total, readable = real["total"], real["readable"]

    def rate(tally: dict) -> str:
        return f"{tally['agree']}/{tally['n']} ({100 * tally['agree'] / tally['n']:.1f} %)"

    return (f"grading: in-scope agreement {agree}/{inside} ({100 * agree / inside:.1f} %; {per}); "
            f"wrong graded correct {wrong}; worst case {max(r['worst_ms'] for r in suites):.0f} ms, "
            f"slowest stall probe {slowest:.2f} s; real replies: kstp agrees on {rate(total['kstp'])} "
            f"(Math-Verify {rate(total['math_verify'])}), readable {rate(readable['kstp'])}, "
            f"wrong graded correct {len(total['kstp']['fp'])}, right graded wrong {len(total['kstp']['fn'])}")


if __name__ == "__main__":
    print(summary(main()))
