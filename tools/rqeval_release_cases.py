"""Build ``tests/data/rqeval/release_grading.jsonl``: RQEval's release graded real and hand-made replies, its
own functions run on each, so that kstp's rewrite of its rules is tested case by case against them.

Usage::

    python tools/rqeval_release_cases.py --release PATH/RQEval/.git [--graph ladybug:PATH] [--out FILE]

``--release`` is a clone of github.com/senolali/RQEval; its ``metrics/answer_extraction.py`` at HEAD is
loaded from git into a temporary module (its code is not in kstp) and ``extract_answer`` and
``is_correct`` are called on every case. The cases:

- ``hand``: the replies the issue names (an early "Yes." or "The answer is B." in a reply cut at the
  token cap, "The answer is $18. She sells 9 eggs ...") and the neighbours of each rule;
- ``real``: replies of ``tests/data/grading/real-replies.jsonl`` whose gold the release's kinds cover
  (the GSM8K replies of GPT-3 and ToRA, the MMLU-Pro replies whose gold is A-D);
- ``smollm2``: with ``--graph``, the primary replies of the RQEval runs stored there (the tests' local
  model, SmolLM2-135M-Instruct, asked by ``kstp evaluate rqeval --backend local`` at the paper's 256
  tokens, so many are cut), with the question's gold and the reply's finish reason.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILE = "metrics/answer_extraction.py"

#: (reply, gold, finish reason) by hand: the issue's examples first, then each rule's neighbours
HAND = [
    ("Yes. Hamsters are prey animals, so they are often", "yes", "length"),
    ("The answer is B. Option B says that the", "B", "length"),
    ("The answer is $18. She sells 9 eggs at 2 dollars each.", "18", "stop"),
    ("No, because the Earth is round. Yes, some believe otherwise.", "no", "stop"),
    ("It is not true that whales are fish.", "no", "stop"),
    ("Indeed, that is correct.", "yes", "stop"),
    ("I am not sure.", "yes", "stop"),
    ("Let me think about this question", "no", "length"),
    ("5 + 20 = 25.\n#### 25", "5", "stop"),
    ("Janet has 16 - 3 - 4 = 9 eggs, and 9 * 2 = 18.\n#### 18", "18", "stop"),
    ("The total is 1,234.5 dollars", "1234.5", "stop"),
    ("The total is 18.0004", "18", "stop"),
    ("That is drastic.", "D", "stop"),
    ("The answer is a number.", "A", "stop"),
    ("answer: c", "C", "stop"),
    ("The correct option is B because it fits.", "B", "stop"),
    ("The best interpretation of the passage is: D. It fits", "D", "stop"),
    ("Option C is wrong, the right one is (A)", "A", "stop"),
    ("B) 14 apples", "B", "stop"),
    ("Reasoning first.\n(C)", "C", "stop"),
    ("Reasoning first.\nD. 18", "D", "stop"),
    ("Paris is the capital of France.", "Paris", "stop"),
    ("paris", "Paris", "stop"),
    ("I would say it is the city of lights, which is a nickname for a city in Europe, long ago.", "Paris", "stop"),
    ("", "5", "stop"),
]


def release_module(git_dir: Path):
    """The release's ``metrics/answer_extraction.py`` at HEAD, loaded from git as a throw-away module."""
    source = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"HEAD:{FILE}"], check=True,
                            capture_output=True, text=True).stdout
    commit = subprocess.run(["git", "--git-dir", str(git_dir), "rev-parse", "HEAD"], check=True,
                            capture_output=True, text=True).stdout.strip()
    path = Path(tempfile.mkdtemp()) / "answer_extraction.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("rqeval_answer_extraction", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, commit


def real_cases() -> list[tuple[str, str, str, str | None]]:
    """(id, reply, gold, finish reason) of the real replies whose gold is a number or one of A-D."""
    out = []
    with open(ROOT / "tests" / "data" / "grading" / "real-replies.jsonl", encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            gold = row["gold"].strip()
            number = gold.replace(",", "").replace(".", "", 1).lstrip("-").isdigit()
            if (row["id"].startswith(("gsm8k-openai/", "tora/")) and number) or \
                    (row["id"].startswith(("mmlu-pro/", "lambda-lm-eval/")) and gold in ("A", "B", "C", "D")):
                out.append((f"real/{row['id']}", row["reply"], gold, row.get("finish_reason")))
    return out


def graph_cases(location: str) -> list[tuple[str, str, str, str | None]]:
    """(id, reply, gold, finish reason) of the primary replies of every RQEval run in the graph."""
    sys.path.insert(0, str(ROOT))
    from kstp.graph.factory import open_store

    out = []
    with open_store(location) as store:
        for run in store.frame("run_list", {"evaluator": "rqeval", "model": "", "dataset": ""}).itertuples():
            replies = store.frame("rqeval_responses", {"runId": run.runId})
            replies = replies[(replies["sampleIndex"] == 0) & replies["text"].notna()]
            golds = store.nodes("Question", replies["questionId"].tolist()).set_index("id")["answer"]
            finish = store.nodes("Response", replies["responseId"].tolist()).set_index("id")["finishReason"]
            for row in replies.itertuples():
                out.append((f"smollm2/{row.questionId}", row.text, str(golds[row.questionId]),
                            finish.get(row.responseId)))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--release", type=Path, required=True, help="git directory of a clone of senolali/RQEval")
    parser.add_argument("--graph", help="a kstp graph holding RQEval runs of the local model")
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "rqeval" / "release_grading.jsonl")
    args = parser.parse_args(argv)
    release, commit = release_module(args.release)
    cases = [(f"hand/{i}", *case) for i, case in enumerate(HAND)] + real_cases()
    if args.graph:
        cases += graph_cases(args.graph)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as out:
        for case_id, reply, gold, finish in cases:
            out.write(json.dumps({"id": case_id, "reply": reply, "gold": gold, "finish_reason": finish,
                                  "extracted": release.extract_answer(reply, gold),
                                  "correct": bool(release.is_correct(reply, gold)),
                                  "repo": "senolali/RQEval", "commit": commit, "file": FILE},
                                 ensure_ascii=False) + "\n")
    print(f"wrote {len(cases)} cases to {args.out}")


if __name__ == "__main__":
    main()
