"""Prompt files and few-shot exemplars: how a chat is built from them, what their hash is, and a run asked
with them against a local endpoint (tests/endpoint.py), which records the messages it was sent."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kstp.cli.main import cli
from kstp.errors import InputError
from kstp.evaluators import answers
from kstp.evaluators.prompting import EXAMPLE_PROMPT_FILE, PromptTemplate, load_prompt_file, load_shots
from kstp.graph.factory import open_store
from kstp.inference.grading.choices import split_options
from tests.conftest import load_toy
from tests.endpoint import FakeEndpoint

PROMPT = "system: Answer with one number in \\boxed{}.\nuser: |-\n  Question: {question}\n  {options}\n"
SHOTS = ('{"question": "1 + 1?", "answer": "2", "solution": "One and one."}\n'
         '{"question": "Pick", "options": ["x", "y"], "answer": "B"}\n{"question": "3 - 1?", "answer": 2}\n')


def test_the_builtin_sets_keep_their_chats_and_hashes():
    for name in answers.PROMPTS:
        template = answers.template_of(name)
        assert template.hash() == answers.template_hash(name)
        for text in ("2 + 3 = ?", "Which is prime?\nA. 4\nB. 7", "Braces {text} and \\boxed{} stay"):
            assert template.chat(text) == answers.build_prompt(text, name)
    with_shot = PromptTemplate("kstp", *answers.PROMPTS["kstp"], ({"question": "q", "answer": "1"},),
                               builtin_hash=answers.template_hash("kstp"))
    assert with_shot.hash() != answers.template_hash("kstp")


def test_a_prompt_file_fills_question_and_options_and_exemplars_become_turns(tmp_path):
    (tmp_path / "p.yaml").write_text(PROMPT)
    (tmp_path / "shots.jsonl").write_text(SHOTS)
    template = load_prompt_file(tmp_path / "p.yaml")
    assert split_options("Which is prime?\nA. 4\nB. 7\nC. 9") == ("Which is prime?", "A. 4\nB. 7\nC. 9")
    assert template.chat("Which is prime?\nA. 4\nB. 7") == [
        {"role": "system", "content": "Answer with one number in \\boxed{}."},
        {"role": "user", "content": "Question: Which is prime?\nA. 4\nB. 7"}]
    shots = load_shots(tmp_path / "shots.jsonl", 2)
    chat = PromptTemplate(template.name, template.system, template.user, shots).chat("5 - 2?")
    assert [m["role"] for m in chat] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert [m["content"] for m in chat[1:]] == [
        "Question: 1 + 1?\n", "One and one.\n\nThe final answer is \\boxed{2}.", "Question: Pick\nA. x\nB. y",
        "The final answer is \\boxed{B}.", "Question: 5 - 2?\n"]
    assert len(load_shots(tmp_path / "shots.jsonl")) == 3
    (tmp_path / "bad.yaml").write_text("system: hi\nuser: 'no placeholder'\n")
    with pytest.raises(InputError, match="has no {question}"):
        load_prompt_file(tmp_path / "bad.yaml")


def test_a_run_with_a_prompt_file_and_exemplars_is_a_run_of_its_own(graph_location, tmp_path):
    with open_store(graph_location) as store:
        load_toy(store, tmp_path)
    (tmp_path / "p.yaml").write_text(PROMPT)
    (tmp_path / "shots.jsonl").write_text(SHOTS)
    base = ["--graph", graph_location, "evaluate", "answers", "--dataset", "toy", "--model", "m", "--limit", "2"]
    with FakeEndpoint() as server:
        plain = CliRunner().invoke(cli, [*base, "--base-url", server.base_url, "--json"])
        assert plain.exit_code == 0, plain.output
        args = [*base, "--base-url", server.base_url, "--prompt-file", tmp_path / "p.yaml", "--few-shot",
                tmp_path / "shots.jsonl", "--num-fewshot", "1", "--output-path", tmp_path / "out", "--json"]
        refused = CliRunner().invoke(cli, list(map(str, args)))
        assert refused.exit_code == 1 and "promptTemplateHash" in refused.stderr and "--new-run" in refused.stderr
        result = CliRunner().invoke(cli, [*map(str, args), "--new-run"])
        assert result.exit_code == 0, result.output
        sent = next(chat for chat in server.seen if chat[-1]["content"] == "Question: add\n")
    summary = json.loads(result.stdout)
    assert summary["shots"] == 1 and summary["runId"] != json.loads(plain.stdout)["runId"]
    assert sent == [{"role": "system", "content": "Answer with one number in \\boxed{}."},
                    {"role": "user", "content": "Question: 1 + 1?\n"},
                    {"role": "assistant", "content": "One and one.\n\nThe final answer is \\boxed{2}."},
                    {"role": "user", "content": "Question: add\n"}]
    [log] = (tmp_path / "out").glob("*.json")
    recorded = json.loads(log.read_text())["config"]["promptTemplate"]
    assert (recorded["name"], recorded["shots"][0]["answer"]) == ("p.yaml", "2")
    both = CliRunner().invoke(cli, [*base, "--base-url", "http://127.0.0.1:9/v1", "--prompt", "paper",
                                    "--prompt-file", str(tmp_path / "p.yaml")])
    assert both.exit_code == 2 and "--prompt-file and --prompt contradict each other" in both.output


@pytest.mark.parametrize(("text", "message"), [
    ('user: "Q: {question} {foo}"\n', r"the user template has the placeholder \{foo\}, which nothing fills .* it takes "
                                      r"\{question\}, \{options\}, \{text\}"),
    ('user: "{question}"\nshot_answer: "{reasoning} so {answer}"\n', r"shot_answer template has the placeholder "
                                                                    r"\{reasoning\}"),
    # YAML's double quotes read \b as a backspace: \boxed would reach the model as "<BS>oxed"
    ('system: "Put it in \\boxed{}"\nuser: "{question}"\n', r"control character '\\x08' near .*: in YAML's double "
                                                           r"quotes \\b is a backspace"),
])
def test_a_prompt_file_that_would_send_a_template_as_written_is_refused(tmp_path, text, message):
    """Issue 43: an unknown placeholder went to the model literally and a backspace replaced \\b silently."""
    path = tmp_path / "p.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        load_prompt_file(path)


def test_latex_groups_are_no_placeholders(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("user: 'Q: {question} with \\frac{a}{b}, x^{n}, y_{i} and \\boxed{x}'\n")
    assert load_prompt_file(path).chat("1 + 1?")[-1]["content"] == "Q: 1 + 1? with \\frac{a}{b}, x^{n}, y_{i} and " \
                                                                     "\\boxed{x}"


def test_an_empty_few_shot_file_is_refused_not_run_zero_shot(tmp_path):
    path = tmp_path / "shots.jsonl"
    path.write_text("")
    with pytest.raises(InputError, match="has no exemplars: --few-shot would run zero-shot"):
        load_shots(path)


def test_the_example_prompt_file_is_a_working_prompt_file():
    template = load_prompt_file(EXAMPLE_PROMPT_FILE)
    assert template.chat("Which is prime?\nA. 4\nB. 7") == [
        {"role": "system", "content": "You are a careful mathematics student. Reason step by step, then give only "
                                      "your final\nanswer inside \\boxed{}."},
        {"role": "user", "content": "Problem:\nWhich is prime?\nA. 4\nB. 7"}]
