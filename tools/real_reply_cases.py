"""Collect real model replies, published in public repositories, as test data for the answer grader.

    python tools/real_reply_cases.py SOURCE=GIT_DIR ... [--out tests/data/grading]

    python tools/real_reply_cases.py gsm8k-openai=/path/grade-school-math/.git \\
        mmlu-pro=/path/MMLU-Pro/.git lambda-lm-eval=/path/lm-evaluation-harness/.git \\
        tora=/path/ToRA/.git thinking-llms=/path/thinking-llms-interp/.git

Each GIT_DIR is a clone (or bare mirror) of a source's public repository; its evaluation
output files are read at the pinned commit in :data:`SOURCES` with ``git show`` (nothing of
the source is imported or run, and none of its code enters kstp). The replies are chosen
without looking at them: the first questions of a file, or a sample seeded by the source
and model name (:func:`sample`), the same questions for every model of a source. Each reply
is kept whole, exactly as published. Out comes ``<out>/real-replies.jsonl``, one JSON
object a line:

``id``
    ``<source>/<model key>/<question id>/<sample>``.
``repo``, ``commit``, ``file``
    Where the reply is published.
``model``, ``dataset``, ``question``, ``options``
    The model, the benchmark, the question text as published (or null) and, for multiple
    choice, the number of lettered options (else null).
``gold``, ``reply``, ``finish_reason``
    The gold answer and the model's whole reply as published; the finish reason where
    the source records one (else null).
``prompt_opens_think``
    Whether the prompt ended with an opened ``<think>`` (the chat template of the
    DeepSeek-R1 distills and QwQ adds it with the generation prompt): the reply then
    starts inside the reasoning trace, which only a ``</think>`` in the reply closes.
``source_verdict``, ``source_extracted``
    The source's own grader's verdict and the answer its extractor took, where the source
    publishes them per reply (else null).
``math_verify``
    Math-Verify's verdict with its defaults, ``verify(parse(gold), parse(reply))``; null
    where it raised.
``reference``, ``reference_by``, ``readable``, ``note``
    Human judgements, kept by id in ``<out>/real-replies.reference.jsonl`` and merged
    in: the correct verdict, ``"agree"`` (the source's grader and Math-Verify agree, and a
    glance confirmed it) or ``"read"`` (decided by reading the reply), whether a person can
    read one final answer in the reply, and the reason for every ``read`` decision and
    every unreadable reply. A reply without a judgement yet gets nulls, and the count is
    printed.

Notes
-----
Golds as published, with one reading each where the published field is a worked
solution: the openai/grade-school-math file ends each solution with ``A: <answer>`` and
thinking-llms-interp's GSM8K golds with ``#### <answer>``; the gold is that answer.
MMLU-Pro's own verdict is its extracted ``pred`` equal to the gold letter (its summary
also credits a seeded random guess where nothing was extracted; a reply without ``pred``
is recorded as not correct here). lm-evaluation-harness's verdict is ``exact_match``.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = "real-replies.jsonl"
REFERENCE = "real-replies.reference.jsonl"
JUDGEMENTS = ("reference", "reference_by", "readable", "note")

#: source -> (GitHub repository, pinned commit)
SOURCES = {
    "gsm8k-openai": ("openai/grade-school-math", "3101c7d5072418e28b9008a6636bde82a006892c"),
    "mmlu-pro": ("TIGER-AI-Lab/MMLU-Pro", "ff991b5b7f14a383fd41da3987447ab6c08bf138"),
    "lambda-lm-eval": ("LambdaLabsML/lm-evaluation-harness", "77baf5a631f08639dcc86b547d46d930cbd43525"),
    "tora": ("microsoft/ToRA", "213c1c995038c73fab10343814df7a42f990f026"),
    "thinking-llms": ("thaotnguyen/thinking-llms-interp", "501921e28720cd12361fe6f4a0eeec5fe4214f03"),
}

GSM8K_OPENAI = {  # key in the file -> model
    "6b_finetuning": "GPT-3 6B, finetuned",
    "6b_verification": "GPT-3 6B, finetuned, verifier best of 100",
    "175b_finetuning": "GPT-3 175B, finetuned",
    "175b_verification": "GPT-3 175B, finetuned, verifier best of 100",
}
MMLU_PRO = {"gpt4o": "gpt-4o", "deepseek": "deepseek-chat"}  # folder -> the API model its script calls
MMLU_PRO_CATEGORIES = ("biology", "business", "chemistry", "computer science", "economics", "engineering",
                       "health", "history", "law", "math", "other", "philosophy", "physics", "psychology")
LAMBDA = {  # folder -> (model, run directory, timestamp)
    "llama-3.3-70b": ("meta-llama/Llama-3.3-70B-Instruct",
                      "Llama-3.3-70B-Instruct/__mnt__model__meta-llama__Llama-3.3-70B-Instruct",
                      "2025-05-19T06-53-12.737541"),
    "llama-4-maverick": ("meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8",
                         "Llama-4-Maverick-17B-128E-Instruct-FP8/"
                         "__mnt__model__meta-llama__Llama-4-Maverick-17B-128E-Instruct-FP8",
                         "2025-05-19T05-32-08.381391"),
    "llama-4-scout": ("meta-llama/Llama-4-Scout-17B-16E-Instruct",
                      "Llama-4-Scout-17B-16E-Instruct/__mnt__model__meta-llama__Llama-4-Scout-17B-16E-Instruct",
                      "2025-05-19T05-59-38.392655"),
}
LAMBDA_CATEGORIES = ("computer_science", "history", "philosophy")  # the categories kept for all three models
TORA = {"tora-70b": "llm-agents/tora-70b-v1.0", "tora-code-34b": "llm-agents/tora-code-34b-v1.0"}
THINKING = [  # (key, results file, dataset, its short name, how many: None = all)
    ("r1-distill-qwen-32b", "hybrid/results/benchmark_results_qwen2.5-32b-on-deepseek-r1-distill-qwen-32b_gsm8k.json",
     "GSM8K (test)", "gsm8k", 40),
    ("qwq-32b", "hybrid/results/benchmark_results_qwen2.5-32b_gsm8k.json", "GSM8K (test)", "gsm8k", 40),
    ("qwq-32b", "hybrid/results/benchmark_results_qwen2.5-32b_math500.json", "MATH-500", "math500", None),
    ("r1-distill-qwen-14b", "hybrid/results/benchmark_results_qwen2.5-14b_math500.json", "MATH-500", "math500", 40),
    ("r1-distill-llama-8b", "hybrid/results/benchmark_results_llama-3.1-8b_aime.json", "AIME", "aime", None),
    ("r1-distill-qwen-1.5b", "hybrid/results/benchmark_results_qwen2.5-math-1.5b_gsm8k.json", "GSM8K (test)", "gsm8k",
     30),
]

#: how many replies each (source, model) keeps
COUNTS = {"gsm8k-openai": 30, "mmlu-pro": 50, "lambda-lm-eval": 40, "tora": 40}


def git_show(git_dir: Path, commit: str, path: str) -> str:
    return subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def sample(population: list, k: int | None, seed: str) -> list:
    """``k`` items of ``population`` drawn with a generator seeded by ``seed``, in population order.

    All of it where ``k`` is None or not smaller than the population.
    """
    if k is None or k >= len(population):
        return list(population)
    chosen = set(random.Random(seed).sample(range(len(population)), k))
    return [item for i, item in enumerate(population) if i in chosen]


def row(source: str, key: str, qid: str, path: str, *, model: str, dataset: str, question: str | None,
        options: int | None, gold: str, reply: str, finish_reason: str | None = None,
        source_verdict: bool | None = None, source_extracted: str | None = None, prompt_opens_think: bool = False,
        sample_index: int = 0) -> dict:
    repo, commit = SOURCES[source]
    return {"id": f"{source}/{key}/{qid}/{sample_index}", "repo": repo, "commit": commit, "file": path,
            "model": model, "dataset": dataset, "question": question, "options": options, "gold": gold,
            "reply": reply, "finish_reason": finish_reason, "prompt_opens_think": prompt_opens_think,
            "source_verdict": source_verdict,
            "source_extracted": source_extracted}


def after(text: str, marker: str) -> str:
    """The answer a worked solution states after its last ``marker`` line."""
    return text.rsplit(marker, 1)[1].strip()


def gsm8k_openai(git_dir: Path) -> list[dict]:
    """GPT-3's GSM8K test solutions (Cobbe et al. 2021): the first questions of the file, every model."""
    path = "grade_school_math/data/example_model_solutions.jsonl"
    records = [json.loads(line) for line in git_show(git_dir, SOURCES["gsm8k-openai"][1], path).splitlines()]
    rows = []
    for key, model in GSM8K_OPENAI.items():
        for index, record in enumerate(records[:COUNTS["gsm8k-openai"]]):
            rows.append(row("gsm8k-openai", key, f"q{index:04d}", path, model=model, dataset="GSM8K (test)",
                            question=record["question"], options=None, gold=after(record["ground_truth"], "A:"),
                            reply=record[key]["solution"], source_verdict=record[key]["is_correct"]))
    return rows


def mmlu_pro(git_dir: Path) -> list[dict]:
    """MMLU-Pro's own API runs: one seeded sample of questions answered by both models, all categories."""
    commit = SOURCES["mmlu-pro"][1]
    runs = {}
    for folder in MMLU_PRO:
        for category in MMLU_PRO_CATEGORIES:
            path = f"eval_results/{folder}/{category}_result.json"
            for record in json.loads(git_show(git_dir, commit, path)):
                runs.setdefault(folder, {})[record["question_id"]] = (path, record)
    common = sorted(set(runs["gpt4o"]) & set(runs["deepseek"]))
    rows = []
    for qid in sample(common, COUNTS["mmlu-pro"], "mmlu-pro"):
        for folder, model in MMLU_PRO.items():
            path, record = runs[folder][qid]
            rows.append(row("mmlu-pro", model, str(qid), path, model=model, dataset="MMLU-Pro",
                            question=record["question"], options=len(record["options"]), gold=record["answer"],
                            reply=record["response"], source_verdict=record["pred"] == record["answer"],
                            source_extracted=record["pred"]))
    return rows


def lambda_lm_eval(git_dir: Path) -> list[dict]:
    """lm-evaluation-harness ``samples_mmlu_pro_*.jsonl`` (CoT, chat template): one seeded sample of documents."""
    commit = SOURCES["lambda-lm-eval"][1]
    runs: dict[str, dict] = {}
    for key, (_, run, stamp) in LAMBDA.items():
        for category in LAMBDA_CATEGORIES:
            path = f"output/mmlu_pro/{run}/samples_mmlu_pro_{category}_{stamp}.jsonl"
            for line in git_show(git_dir, commit, path).splitlines():
                record = json.loads(line)
                runs.setdefault(key, {})[(category, record["doc_id"])] = (path, record)
    common = sorted(set.intersection(*(set(r) for r in runs.values())))
    rows = []
    for category, doc_id in sample(common, COUNTS["lambda-lm-eval"], "lambda-lm-eval"):
        for key, (model, _, _) in LAMBDA.items():
            path, record = runs[key][(category, doc_id)]
            doc = record["doc"]
            rows.append(row("lambda-lm-eval", key, f"{category}-{doc_id}", path, model=model, dataset="MMLU-Pro",
                            question=doc["question"], options=len(doc["options"]), gold=record["target"],
                            reply=record["resps"][0][0], source_verdict=record["exact_match"] == 1.0,
                            source_extracted=record["filtered_resps"][0]))
    return rows


def tora(git_dir: Path) -> list[dict]:
    """ToRA's tool-integrated GSM8K outputs (code, its output, the boxed answer): one seeded sample."""
    commit = SOURCES["tora"][1]
    runs = {}
    for key, run in TORA.items():
        path = f"src/outputs/{run}/gsm8k/test_tora_-1_seed0_t0.0_s0_e1319.jsonl"
        runs[key] = (path, {r["idx"]: r for r in map(json.loads, git_show(git_dir, commit, path).splitlines())})
    common = sorted(set.intersection(*(set(records) for _, records in runs.values())))
    rows = []
    for idx in sample(common, COUNTS["tora"], "tora"):
        for key, (path, records) in runs.items():
            record = records[idx]
            rows.append(row("tora", key, str(idx), path, model=f"llm-agents/{key}-v1.0", dataset="GSM8K (test)",
                            question=record["question"], options=None, gold=record["gt"], reply=record["code"][0],
                            source_extracted=record["pred"][0]))
    return rows


def thinking_llms(git_dir: Path) -> list[dict]:
    """Reasoning models' replies, the trace inline, no per-reply verdict published.

    The source prompts with the chat template's generation prompt, which opens ``<think>``
    for these models, and keeps the decoded continuation: a trace that ends is closed by
    ``</think>`` in the reply; one cut at the token limit never is.
    """
    commit = SOURCES["thinking-llms"][1]
    rows = []
    for key, path, dataset, short, k in THINKING:
        results = json.loads(git_show(git_dir, commit, path))
        model = results["metadata"]["thinking_model"]
        tasks = list(enumerate(results["tasks"]))
        for index, task in sample(tasks, k, f"thinking-llms/{key}/{short}"):
            gold = task["correct_answer"]
            if dataset.startswith("GSM8K"):
                gold = after(gold, "####")
            rows.append(row("thinking-llms", key, f"{short}-{index:04d}", path, model=model, dataset=dataset,
                            question=task["question"], options=None, gold=gold,
                            reply=task["model_answers"]["thinking_model"], prompt_opens_think=True))
    return rows


READERS = {"gsm8k-openai": gsm8k_openai, "mmlu-pro": mmlu_pro, "lambda-lm-eval": lambda_lm_eval, "tora": tora,
           "thinking-llms": thinking_llms}


def math_verify_verdict(gold: str, reply: str) -> bool | None:
    """Math-Verify with its defaults; None where it raised."""
    from math_verify import parse, verify

    try:
        return bool(verify(parse(gold), parse(reply)))
    except Exception:  # noqa: BLE001 - any failure of the peer is "no verdict"
        return None


def load_jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="+", metavar="SOURCE=GIT_DIR", help=f"sources: {', '.join(SOURCES)}")
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "grading")
    args = parser.parse_args(argv)
    given = {}
    for source in args.sources:
        name, _, git_dir = source.partition("=")
        if name not in SOURCES:
            parser.error(f"unknown source {name!r}; choose from {', '.join(SOURCES)}")
        given[name] = Path(git_dir)
    existing = {r["id"]: r for r in load_jsonl(args.out / DATA)}
    judged = {r["id"]: r for r in load_jsonl(args.out / REFERENCE)}
    rows = []
    for name in SOURCES:  # a source not given keeps its rows as they are
        if name not in given:
            rows += [r for r in existing.values() if r["id"].split("/", 1)[0] == name]
            continue
        fresh = READERS[name](given[name])
        for r in fresh:
            r["math_verify"] = math_verify_verdict(r["gold"], r["reply"])
        rows += fresh
        print(f"{name}: {len(fresh)} replies")
    ids = [r["id"] for r in rows]
    if len(ids) != len(set(ids)):
        raise SystemExit("duplicate ids")
    pending = 0
    for r in rows:
        judgement = judged.get(r["id"], {})
        for field in JUDGEMENTS:
            r[field] = judgement.get(field)
        pending += r["reference"] is None
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / DATA, "w", encoding="utf-8") as out:
        for r in rows:
            out.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(rows)} replies -> {args.out / DATA}; {pending} without a reference judgement "
          f"(add them to {args.out / REFERENCE})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
