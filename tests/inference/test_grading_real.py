"""kstp's grader against real model replies, published in public evaluation outputs.

The replies are data in ``tests/data/grading/real-replies.jsonl`` (collected by
``tools/real_reply_cases.py``; the sources, and how the replies were chosen, are in
``tests/data/grading/README.md``): GSM8K, MMLU-Pro, MATH-500 and AIME replies of 14
models, reasoning models with their traces inline among them, each kept whole as
published, with the gold as published, the source's own verdict where it publishes
one, Math-Verify's default verdict, and a reference verdict a person gave (stored by id
in ``real-replies.reference.jsonl``). Each reply is graded as a user would,
``grade(reply, gold, options=options, opened=prompt_opens_think)`` (the source's prompt
opened the reasoning trace, as ``kstp grade --opened-think`` says), and held to the reference
(issue 41): no wrong
reply graded correct, agreement at least Math-Verify's, and at least 99 % on the replies
whose final answer a person can read.
"""

from __future__ import annotations

import json
import re
from functools import cache

from benchmarks.grading import DATA, REAL, load_real, score_real

FIELDS = {"id": str, "repo": str, "commit": str, "file": str, "model": str, "dataset": str, "gold": str,
          "reply": str, "prompt_opens_think": bool, "reference": bool, "reference_by": str, "readable": bool}
OPTIONAL = {"question": str, "options": int, "finish_reason": str, "source_verdict": bool,
            "source_extracted": str, "math_verify": bool, "note": str}


@cache
def scored() -> dict:
    return score_real(load_real())


def describe(ids: list[str]) -> str:
    verdicts = scored()["kstp"]
    return "; ".join(f"{i}: took {verdicts[i]['extracted']!r} ({verdicts[i]['method']}, {verdicts[i]['reason']})"
                     for i in ids)


def test_real_replies_data_is_whole():
    rows = load_real()
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids))
    for r in rows:
        for field, kind in FIELDS.items():
            assert isinstance(r[field], kind), (r["id"], field)
        for field, kind in OPTIONAL.items():
            assert r[field] is None or isinstance(r[field], kind), (r["id"], field)
        assert re.fullmatch(r"[0-9a-f]{40}", r["commit"]), r["id"]
        assert r["reply"].strip() and r["gold"].strip(), r["id"]
        assert r["reference_by"] in ("agree", "read"), r["id"]
        # "agree": the source's grader and Math-Verify gave the reference verdict; anything else was read
        assert (r["reference_by"] == "agree") == (r["source_verdict"] is not None
                                                   and r["source_verdict"] == r["math_verify"] == r["reference"])
        if r["reference_by"] == "read" or not r["readable"]:
            assert r["note"], r["id"]
        if not r["readable"]:  # no final answer a person can read is no right answer
            assert r["reference"] is False, r["id"]
        if r["options"] is not None:
            assert 2 <= r["options"] <= 10 and re.fullmatch(r"[A-J]", r["gold"]), r["id"]


def test_real_replies_cover_models_sources_traces_and_choices():
    rows = load_real()
    assert len({r["model"].lower() for r in rows}) >= 5
    assert len({r["repo"] for r in rows}) >= 3
    assert sum("</think>" in r["reply"] for r in rows) >= 20
    assert sum(r["options"] is not None for r in rows) >= 20
    assert 400 <= len(rows) <= 700
    assert (DATA / REAL).stat().st_size < 4_000_000


def test_real_replies_references_are_kept_by_id():
    with open(DATA / "real-replies.reference.jsonl", encoding="utf-8") as lines:
        judged = {r["id"]: r for r in map(json.loads, lines)}
    rows = load_real()
    assert set(judged) == {r["id"] for r in rows}
    for r in rows:
        assert {k: r[k] for k in ("reference", "reference_by", "readable", "note")} == \
            {k: v for k, v in judged[r["id"]].items() if k != "id"}


def test_real_replies_no_wrong_reply_graded_correct():
    fp = scored()["total"]["kstp"]["fp"]
    assert not fp, f"{len(fp)} wrong replies graded correct: {describe(fp)}"


def test_real_replies_agreement_at_least_math_verify():
    total = scored()["total"]
    assert total["kstp"]["agree"] >= total["math_verify"]["agree"]


def test_real_replies_readable_agreement_at_least_99_percent():
    tally = scored()["readable"]["kstp"]
    assert tally["agree"] >= 0.99 * tally["n"], \
        f"{tally['agree']}/{tally['n']}; wrong: {describe(tally['fp'] + tally['fn'])}"
