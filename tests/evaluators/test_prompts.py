"""Paper 1's Prompts 1-3 as written (Appendix A): each rendered for a known question equals
the paper's template filled in by hand, and each prompt set is its own run identity."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import pytest

from kstp.errors import ConfigError
from kstp.evaluators import annotation, answers, scaffolding
from kstp.evaluators.prompts import load
from kstp.inference.backend import Completion, Sampling
from kstp.inference.runs import ConfigChangedError
from kstp.loaders import items

SYSTEM = "Please reason step by step, and put your final answer within \\boxed{}."
PROMPT_2 = ("You are an expert in mathematics education. You will be given a list of reference skills and a "
            "mathematical question along with its solution. Your task is to identify all the skill(s) from the "
            "given skill list that are required to solve the problem.\n\n"
            "Do NOT invent new skills. Do NOT modify skill names. Only choose from the provided skill list.\n"
            "Output a JSON array containing only the ids of selected skills.\n"
            "If no skill from the list applies, output an empty list: []\n"
            "Output ONLY valid JSON without any additional text.\n\n")


def test_paper1_prompt1_is_the_evaluation_prompt():
    assert answers.build_prompt("What is 17 + 25?", "paper") == [
        {"role": "system", "content": SYSTEM}, {"role": "user", "content": "What is 17 + 25?"}]
    # without exemplars the scaffolding prompt is Prompt 1 too
    assert scaffolding.build_prompt("What is 17 + 25?", (), "paper") == answers.build_prompt("What is 17 + 25?",
                                                                                            "paper")


def test_paper1_prompt3_is_the_scaffolding_prompt():
    shown = [scaffolding.Exemplar("d:1", "What is 10 + 20?", "30", "Add the tens."),
             scaffolding.Exemplar("d:2", "What is 7 + 5?", "12")]
    assert scaffolding.build_prompt("What is 17 + 25?", shown, "paper") == [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "The following problems and their solutions are provided as background "
                                    "knowledge:\n\n"
                                    "Problem 1: What is 10 + 20?\nSolution: Add the tens.\nAnswer: 30\n\n"
                                    "Problem 2: What is 7 + 5?\nAnswer: 12\n\n"
                                    "Now solve the main problem: What is 17 + 25?"}]


def test_paper1_prompt3_lays_out_multiple_choice_options(tmp_path):
    """Prompt 3's MCQ-only lines, filled in by hand: "Options: ..." in a multiple-choice exemplar, "Answer
    Choices: (A) ... (D) ..." after a multiple-choice target (every option the item has, written as the
    release's parse_question writes them); an open exemplar or target gets neither. The items come through
    the JSONL loader's "options" field."""
    (tmp_path / "m.jsonl").write_text(
        '{"id": "e1", "text": "Which number is even?", "options": {"A": "3", "B": "4", "C": "5"}, "answer": "B", '
        '"solution": "4 = 2 x 2."}\n'
        '{"id": "e2", "text": "What is 7 + 5?", "answer": "12"}\n'
        '{"id": "t", "text": "Which number is prime?", "options": {"A": "4", "B": "6", "C": "7", "D": "9"}, '
        '"answer": "C"}\n'
        '{"id": "o", "text": "What is 17 + 25?", "answer": "42"}\n')
    texts = items.read_items_jsonl(tmp_path / "m.jsonl", "m", None, set()).questions.set_index("localId")["text"]
    shown = [scaffolding.Exemplar("m:e1", texts["e1"], "B", "4 = 2 x 2."), scaffolding.Exemplar("m:e2", texts["e2"],
                                                                                                 "12")]
    intro = "The following problems and their solutions are provided as background knowledge:\n\n"
    exemplars = ("Problem 1: Which number is even?\nOptions: (A) 3 (B) 4 (C) 5\nSolution: 4 = 2 x 2.\nAnswer: B\n\n"
                 "Problem 2: What is 7 + 5?\nAnswer: 12\n\n")
    assert scaffolding.build_prompt(texts["t"], shown, "paper") == [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": intro + exemplars + "Now solve the main problem: Which number is prime?\n"
                                                         "Answer Choices: (A) 4 (B) 6 (C) 7 (D) 9"}]
    assert scaffolding.build_prompt(texts["o"], shown, "paper")[1]["content"] == (
        intro + exemplars + "Now solve the main problem: What is 17 + 25?")
    # without exemplars: Prompt 1 with the release's "Answer Choices" line
    assert scaffolding.build_prompt(texts["t"], (), "paper")[1]["content"] == (
        "Which number is prime?\nAnswer Choices: (A) 4 (B) 6 (C) 7 (D) 9")
    # kstp's own set keeps the options as lines of the problem
    assert scaffolding.build_prompt(texts["t"], (), "kstp")[1]["content"] == (
        "Problem:\nWhich number is prime?\nA. 4\nB. 6\nC. 7\nD. 9")


def test_paper1_prompt2_is_both_annotation_stages():
    outline = pd.DataFrame({"clusterId": ["an:c1", "an:c2"], "clusterName": ["add", "geo"], "grade": ["1", "2"],
                            "domainName": ["OA", "G"], "conceptId": ["an:A1", "an:G1"], "code": ["A.1", "G.1"],
                            "description": ["add two numbers", "name shapes"]})
    chat, offered = annotation.cluster_prompt("What is 17 + 25?", outline, "paper", "Add the tens.")
    assert offered == ["an:c1", "an:c2"]
    assert chat == [{"role": "user", "content": PROMPT_2 + "Skill list:\nan:c1: add\nan:c2: geo\n\n"
                                                           "Question:\nWhat is 17 + 25?\n\nSolution:\nAdd the tens."}]
    second, offered = annotation.concept_prompt("What is 17 + 25?", outline, ["an:c1"], "paper")
    assert offered == ["an:A1"]
    assert second == [{"role": "user", "content": PROMPT_2 + "Skill list:\nan:A1: add two numbers\n\n"
                                                            "Question:\nWhat is 17 + 25?"}]


def test_paper_prompt_sets_have_their_own_template_hash():
    assert answers.template_hash("paper") != answers.template_hash("kstp")
    assert scaffolding.template_hash("paper") != scaffolding.template_hash("kstp")
    assert annotation.PROMPTS["paper"].template_hash not in {annotation.PROMPTS[p].template_hash
                                                             for p in ("kstp", "release")}


def test_kstp_prompt_hash_is_what_earlier_runs_stored():
    """The default sets keep their identity: earlier runs resume (hashes as stored before the paper sets)."""
    assert answers.template_hash() == "ed32d9dab795420537559b77c3781344ad87b630aa33bd348ba394e711a11c43"
    assert scaffolding.template_hash() == "c216154bb9f55a0ec8bbed18a7b0464762e3e36a51364cbefbfd494fab54313a"


def test_unknown_prompt_set_or_file_is_refused():
    with pytest.raises(ConfigError, match="unknown answer prompt set 'papr'; use one of kstp, paper"):
        answers.build_prompt("1 + 1?", "papr")
    with pytest.raises(ConfigError, match="no prompt file 'paper9'; known: paper1_concept_extraction"):
        load("paper9")
    assert load("paper1_scaffolding")["source"] == "Cui, Do, Sachan 2026, Appendix A, Prompt 3 (arXiv 2609.05245)"


class Gold:
    """A scripted model: answers every question with its gold in \\boxed{} and keeps the chats it saw."""

    name, model = "scripted", "scripted"

    def __init__(self, gold):
        self.gold, self.asked = gold, []

    def generate(self, prompts, sampling: Sampling, samples: Sequence[Sequence[int]] | None = None, progress=None):
        self.asked += prompts
        return [[Completion(i, sampling.seed + i, text=f"So \\boxed{{{self.gold[chat[-1]['content']]}}}",
                            finish_reason="stop") for i in wanted] for chat, wanted in zip(prompts, samples,
                                                                                             strict=True)]

    def close(self):
        pass


def test_answers_run_with_paper_prompt_is_another_run(store, tmp_path):
    (tmp_path / "t.jsonl").write_text('{"id": "a", "text": "What is 17 + 25?", "answer": "42"}\n'
                                      '{"id": "b", "text": "What is 3 * 4?", "answer": "12"}\n')
    items.write_items(store, items.read_items_jsonl(tmp_path / "t.jsonl", "t", None, set()))
    model = Gold({"What is 17 + 25?": "42", "What is 3 * 4?": "12",
                  "Problem:\nWhat is 17 + 25?": "42", "Problem:\nWhat is 3 * 4?": "12"})
    first = answers.evaluate(store, model, "t", Sampling(seed=42))
    with pytest.raises(ConfigChangedError, match="promptTemplateHash"):
        answers.evaluate(store, model, "t", Sampling(seed=42), prompt="paper")
    paper = answers.evaluate(store, model, "t", Sampling(seed=42), prompt="paper", new_run=True)
    assert paper.run_id != first.run_id and paper.generated == 2  # nothing reused from the kstp run
    assert model.asked[2:] == [answers.build_prompt("What is 17 + 25?", "paper"),
                               answers.build_prompt("What is 3 * 4?", "paper")]
    assert paper.summary()["accuracy"] == 1.0
    run = store.frame("run_responses", {"runId": paper.run_id})
    assert run["correct"].astype(bool).tolist() == [True, True]


def test_cli_evaluate_answers_prompt_paper_is_another_run(graph_location, data_root):
    """`--prompt paper` reaches the evaluator: with the local model, the paper-prompt run is refused as a
    changed configuration of the kstp-prompt run, then runs as a new one."""
    import json

    from click.testing import CliRunner

    from kstp.cli.main import cli

    def kstp(*args):
        return CliRunner().invoke(cli, ["--graph", graph_location, *map(str, args)])

    folder = data_root / "responses/frcsub"
    assert kstp("ingest", "items", folder / "items.csv", "--dataset", "frcsub", "--qmatrix",
                folder / "qmatrix.csv").exit_code == 0
    args = ["evaluate", "answers", "--dataset", "frcsub", "--model", "smollm2", "--backend", "local", "--limit", "1",
            "--gen-kwargs", "max_tokens=8", "--json"]
    first = json.loads(kstp(*args).stdout)
    refused = kstp(*args, "--prompt", "paper")
    assert refused.exit_code == 1 and "promptTemplateHash" in refused.stderr
    paper = kstp(*args, "--prompt", "paper", "--new-run")
    assert paper.exit_code == 0, paper.output
    assert json.loads(paper.stdout)["runId"] != first["runId"]
    assert kstp(*args, "--prompt", "papr").exit_code == 2
