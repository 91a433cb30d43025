"""DAG-MATH generation as the authors' release does it (kstp/evaluators/dagmath_release.py): their prompt
file, their malformed-reply policy; and the truncated share every evaluate summary reports.

The prompt file is tests/fixtures/dagmath/fewshot_instructions.txt, a short stand-in written from paper 4's
description (§5, Appendix E) and the release's layout (see tests/fixtures/dagmath/README.md); its SHA-256 below
is ``sha256sum``'s."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from kstp.cli.main import cli
from kstp.cli.models import run_truncation, truncation_line
from kstp.errors import ConfigError
from kstp.evaluators import dagmath
from kstp.evaluators.dagmath_release import MalformedPolicy, parse_malformed, read_prompt_file
from kstp.inference.backend import MAX_TOKENS, Completion, Sampling, truncation
from tests.conftest import load_toy

PROMPT = Path(__file__).resolve().parents[1] / "fixtures" / "dagmath" / "fewshot_instructions.txt"
PROMPT_SHA256 = "405dc982eede8d3797cbf022a8fda73d675dada90f6318cab79ac3645a298198"


def _steps(*steps) -> str:
    return json.dumps({"steps": [{"step_id": s, "thinking": "t", "direct_dependent_steps": d, "text": x}
                                 for s, d, x in steps]})


class Scripted:
    """A backend that answers (problem, sample index) from a script, whatever the prompt's layout."""

    name, model = "scripted", "scripted"

    def __init__(self, script):
        self.script, self.calls, self.asked = script, [], []

    def generate(self, prompts, sampling, samples=None, progress=None):
        self.calls.append((prompts, samples))
        out = []
        for chat, wanted in zip(prompts, samples, strict=True):
            found = re.fullmatch(r"Problem:\s*(.*?)(\n\nSolution:)?", chat[-1]["content"], re.S)
            self.asked += [(found.group(1), i) for i in wanted]
            out.append([self.script(found.group(1), i) for i in wanted])
        return out

    def close(self):
        pass


def test_the_prompt_file_is_sent_whole_as_the_system_message_and_named_on_the_run(store, tmp_path):
    load_toy(store, tmp_path)  # toy:q1 "count" (gold 3)
    model = Scripted(lambda problem, i: Completion(i, 42 + i, text=_steps((1, None, "\\boxed{3}")),
                                                   finish_reason="stop"))
    prompt = read_prompt_file(PROMPT)
    result = dagmath.evaluate(store, model, "toy", Sampling(n=1, max_tokens=64), shots=0, limit=1,
                              prompt_file=prompt)
    [(chats, samples)] = model.calls
    assert chats == [[{"role": "system", "content": PROMPT.read_text()},
                      {"role": "user", "content": "Problem: count\n\nSolution:"}]] and samples == [[0]]
    config = json.loads(store.frame("run_by_id", {"runId": result.run_id}).iloc[0]["config"])
    assert (config["options"]["promptFile"], config["options"]["promptFileSha256"]) == ("fewshot_instructions.txt",
                                                                                      PROMPT_SHA256)
    kstp_prompt = dagmath.evaluate(store, model, "toy", Sampling(n=1, max_tokens=64), shots=0, limit=1, new_run=True)
    assert kstp_prompt.run_id != result.run_id  # another prompt, another configuration
    with pytest.raises(ConfigError, match="holds its own demonstrations"):
        dagmath.evaluate(store, model, "toy", Sampling(n=1), "cot:gold:toy", shots=4, prompt_file=prompt)


def test_the_prompt_file_reads_as_the_release_reads_it(tmp_path):
    crlf = tmp_path / "windows.txt"
    crlf.write_bytes(b"Give step_id and\r\ndirect_dependent_steps.\r\n")
    read = read_prompt_file(crlf)
    assert read.text == "Give step_id and\ndirect_dependent_steps.\n"  # universal newlines, as Path.read_text
    assert read.sha256 == "f0a047609a3123fae8d89f4738521fa8e9b102c886588306c139ba676c7a7731"  # the bytes' (sha256sum)


@pytest.mark.parametrize(("content", "why"), [
    (None, "cannot read the prompt file"), (b"", "is empty"), (b" \n\n", "is empty"),
    (b"\xff\xfe step_id", "is not UTF-8 text"), (b"Solve the problem.", "does not describe the DAG-MATH format"),
    (b"step_id \x00\x00 direct_dependent_steps", "holds NUL bytes"),
    (b"step_id direct_dependent_steps " * 40_000, "is not a text file of at most 1,000,000 bytes")])
def test_a_bad_prompt_file_is_a_one_line_error(tmp_path, content, why, graph_location):
    path = tmp_path / "prompt.txt"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ConfigError, match=why):
        read_prompt_file(path)
    result = CliRunner().invoke(cli, ["--graph", graph_location, "evaluate", "dagmath", "--dataset", "d", "--model",
                                      "m", "--prompt-file", str(path)])
    assert result.exit_code == 1 and why in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_the_prompt_file_excludes_graph_shots_on_the_command_line(graph_location):
    result = CliRunner().invoke(cli, ["--graph", graph_location, "evaluate", "dagmath", "--dataset", "d", "--model",
                                      "m", "--prompt-file", str(PROMPT), "--shots", "4"])
    assert result.exit_code == 2 and "leave out --shots" in result.stderr


def test_a_device_or_a_folder_as_prompt_file_is_one_line():
    """/dev/zero read whole was a MemoryError traceback (a new user's trial)."""
    with pytest.raises(ConfigError, match="not a text file of at most"):
        read_prompt_file("/dev/zero")
    with pytest.raises(ConfigError, match="cannot read the prompt file /tmp: a folder, not a file"):
        read_prompt_file("/tmp")


@pytest.mark.parametrize("text", ["retry", "retry:0", "retry:x", "drop", "retry:-1", "retry:11", "retry:99999999999",
                                  "retry:\u0661"])
def test_an_unknown_malformed_policy_is_refused(text):
    with pytest.raises(ConfigError, match=r"use fail .*, retry:N .* or release:N"):
        parse_malformed(text)
    assert str(parse_malformed("retry:3")) == "retry:3" and str(MalformedPolicy()) == "fail"
    assert parse_malformed("release:1") == MalformedPolicy(1, whole=True)
    assert parse_malformed("retry:10").retries == 10


def _malformed_script(problem, i):
    """toy:q1 "count" (gold 3): sample 0 cut at max_tokens, its retry (sample 2) perfect; sample 1 perfect.
    toy:q2 "add" (gold 5): sample 0 invalid JSON on every attempt (0, 2, 4); sample 1 closed but wrong (4)."""
    perfect = _steps((1, None, "three"), (2, [1], "\\boxed{3}"))
    if problem == "count":
        if i == 0:
            return Completion(i, 42 + i, text='{"steps": [{"step_id": 1, "thi', finish_reason="length")
        return Completion(i, 42 + i, text=perfect, finish_reason="stop")
    if i % 2 == 0:
        return Completion(i, 42 + i, text="The answer is 5.", finish_reason="stop")
    return Completion(i, 42 + i, text=_steps((1, None, "two and two"), (2, [1], "\\boxed{4}")), finish_reason="stop")


def test_kstps_policy_counts_malformed_replies_as_failures(store, tmp_path):
    """fail: q1 (truncated, perfect) PASS@1 1/2, PRR 1/2; q2 (invalid JSON, wrong) 0, 0: PASS@1 = PRR = 1/4."""
    load_toy(store, tmp_path)
    model = Scripted(_malformed_script)
    result = dagmath.evaluate(store, model, "toy", Sampling(n=2, max_tokens=64), shots=0, limit=2)
    summary = result.summary()
    assert (summary["passAt1"], summary["perfectReasoningRate"], summary["trajectories"]) == (0.25, 0.25, 4)
    assert summary["failures"] == {"invalid JSON": 1, "truncated": 1}
    assert (summary["malformed"], summary["droppedMalformed"], len(model.asked)) == ("fail", 0, 4)
    assert run_truncation(store, result.run_id, 64) == {"replies": 4, "truncated": 1, "share": 0.25, "maxTokens": 64}


def test_the_releases_policy_retries_with_new_seeds_then_drops(store, tmp_path):
    """retry:2: q2's slot 0 stays invalid JSON (samples 0, 2, 4, seeds 42, 44, 46) and is dropped; q1's slot 0,
    cut at max_tokens, is neither asked again nor dropped: a failure that stays in the figures and the
    truncation line. Kept: q1 samples 0 (cut), 1 (perfect); q2 sample 1 (closed, wrong).
    PASS@1 = PRR = (1/2 + 0) / 2 = 0.25; one slot dropped; 4 + 2 requests."""
    load_toy(store, tmp_path)
    model = Scripted(_malformed_script)
    result = dagmath.evaluate(store, model, "toy", Sampling(n=2, max_tokens=64), shots=0, limit=2,
                              malformed=MalformedPolicy(2))
    assert model.asked[4:] == [("add", 2), ("add", 4)]
    assert sorted(model.asked[:4]) == [("add", 0), ("add", 1), ("count", 0), ("count", 1)]
    summary = result.summary()
    assert (summary["passAt1"], summary["perfectReasoningRate"], summary["trajectories"]) == (0.25, 0.25, 3)
    assert (summary["malformed"], summary["droppedMalformed"], summary["requested"]) == ("retry:2", 1, 6)
    assert summary["failures"] == {"truncated": 1}
    assert result.metrics[["questionId", "sampleIndex"]].values.tolist() == [["toy:q1", 0], ["toy:q1", 1],
                                                                             ["toy:q2", 1]]
    stored = store.frame("run_responses", {"runId": result.run_id})
    assert (len(stored), stored.set_index("sampleIndex").loc[[2, 4], "seed"].tolist()) == (6, [44, 46])
    run = store._execute("MATCH (r:Run {id: $id}) RETURN r.malformedPolicy AS p, r.droppedMalformed AS d, "
                         "r.passAt1 AS a", {"id": result.run_id}, "test").iloc[0]
    assert (run["p"], run["d"], run["a"]) == ("retry:2", 1, 0.25)
    again = dagmath.evaluate(store, model, "toy", Sampling(n=2, max_tokens=64), shots=0, limit=2,
                             malformed=MalformedPolicy(2))
    assert (again.run_id, again.generated, again.summary()["droppedMalformed"]) == (result.run_id, 0, 1)
    rescored = dagmath.score_run(store, result.run_id)  # kstp report dagmath: the policy read from the run
    assert (dagmath.aggregate(rescored)["passAt1"], rescored.attrs["dropped"]) == (0.25, 1)
    assert run_truncation(store, result.run_id, 64) == {"replies": 6, "truncated": 1, "share": pytest.approx(1 / 6),
                                                        "maxTokens": 64}


def test_the_releases_rule_drops_a_problem_whole(store, tmp_path):
    """release:2 (the authors' run_hf_dataset_batch.py drops a problem with a sample still malformed): the same
    script as above, so q2's slot 0 stays invalid JSON and q2 goes whole (both its slots dropped); q1 stays
    (sample 0 cut, sample 1 perfect). PASS@1 = PRR = 1/2 over the one problem left, against 0.25 under retry:2."""
    load_toy(store, tmp_path)
    model = Scripted(_malformed_script)
    result = dagmath.evaluate(store, model, "toy", Sampling(n=2, max_tokens=64), shots=0, limit=2,
                              malformed=MalformedPolicy(2, whole=True))
    summary = result.summary()
    assert (summary["passAt1"], summary["perfectReasoningRate"], summary["trajectories"]) == (0.5, 0.5, 2)
    assert (summary["malformed"], summary["droppedMalformed"], summary["requested"]) == ("release:2", 2, 6)
    assert result.metrics[["questionId", "sampleIndex"]].values.tolist() == [["toy:q1", 0], ["toy:q1", 1]]
    rescored = dagmath.score_run(store, result.run_id)  # the policy read back from the run
    assert (dagmath.aggregate(rescored)["passAt1"], rescored.attrs["dropped"]) == (0.5, 2)


def test_the_authors_prompt_file_sends_no_temperature_or_top_p(graph_location, tmp_path):
    """The release sends neither (the provider's default): under --prompt-file kstp does the same unless
    --gen-kwargs names one."""
    from kstp.graph.factory import open_store
    from kstp.loaders import cot
    from tests.endpoint import FakeEndpoint

    with open_store(graph_location) as store:
        load_toy(store, tmp_path)
        cot.write_cot_set(store, cot.read_cot_files([PROMPT.parent / "log_count.json"], "logs"))
    sent = {}
    for name, extra in (("file", []), ("file, typed", ["--gen-kwargs", "temperature=0.6", "--new-run"]),
                        ("kstp", ["--shots", "0", "--new-run"])):
        with FakeEndpoint() as server:
            file = [] if name == "kstp" else ["--prompt-file", str(PROMPT)]
            result = CliRunner().invoke(cli, ["--graph", graph_location, "evaluate", "dagmath", "--dataset", "logs",
                                              "--samples", "1", *file, *extra, "--model", "m",
                                              "--base-url", server.base_url, "--json"])
            assert result.exit_code == 0, result.output
            sent[name] = {(b.get("temperature"), b.get("top_p")) for b in server.bodies}
    assert sent == {"file": {(None, None)}, "file, typed": {(0.6, None)}, "kstp": {(0.6, 0.95)}}


def _empty_conclusion(problem, i):
    """toy:q1 "count" (gold 3): sample 0 a step whose conclusion is "" (the release's schema takes it), sample 1
    perfect; sample 2 would be perfect if sample 0 were asked again."""
    if i == 0:
        return Completion(i, 42, text=_steps((1, None, ""), (2, [1], "\\boxed{3}")), finish_reason="stop")
    return Completion(i, 42 + i, text=_steps((1, None, "three"), (2, [1], "\\boxed{3}")), finish_reason="stop")


def test_an_empty_conclusion_passes_the_release_s_schema_and_is_kept(store, tmp_path):
    """gpt_eval/models.py's ``text: str`` takes "": under retry:1 the reply is kept (not asked again, not dropped),
    an invalid DAG whose boxed 3 still counts for PASS@1: PASS@1 = 1, PRR = 1/2."""
    load_toy(store, tmp_path)
    model = Scripted(_empty_conclusion)
    result = dagmath.evaluate(store, model, "toy", Sampling(n=2, max_tokens=64), shots=0, limit=1,
                              malformed=MalformedPolicy(1))
    assert sorted(model.asked) == [("count", 0), ("count", 1)]
    summary = result.summary()
    assert summary["failures"] == {"empty conclusion": 1} and summary["droppedMalformed"] == 0
    assert (summary["passAt1"], summary["perfectReasoningRate"], summary["trajectories"]) == (1.0, 0.5, 2)


def _empty_script(problem, i):
    """toy:q1 "count" (gold 3): sample 0 a reply whose content is null, sample 1 an empty string; both
    perfect when asked again (samples 2 and 3)."""
    if i in (0, 1):
        return Completion(i, 42 + i, text=None if i == 0 else "", finish_reason="stop")
    return Completion(i, 42 + i, text=_steps((1, None, "three"), (2, [1], "\\boxed{3}")), finish_reason="stop")


def test_an_empty_reply_is_empty_output_whether_its_content_is_null_or_blank(store, tmp_path):
    """A null content was stored as "empty: the reply has no content ..." and counted as kind "other", so
    retry:N neither asked it again nor dropped it while a blank one was retried. fail: both are "empty output",
    PASS@1 0; retry:1: both asked again (samples 2, 3), both perfect: PASS@1 = PRR = 2/2, nothing dropped."""
    load_toy(store, tmp_path)
    failed = dagmath.evaluate(store, Scripted(_empty_script), "toy", Sampling(n=2, max_tokens=64), shots=0, limit=1)
    assert (failed.summary()["failures"], failed.summary()["passAt1"]) == ({"empty output": 2}, 0.0)
    model = Scripted(_empty_script)
    result = dagmath.evaluate(store, model, "toy", Sampling(n=2, max_tokens=64), shots=0, limit=1, new_run=True,
                              malformed=MalformedPolicy(1))
    assert sorted(a for a in model.asked if a[1] >= 2) == [("count", 2), ("count", 3)]  # 0, 1 from the cache
    summary = result.summary()
    assert (summary["passAt1"], summary["perfectReasoningRate"], summary["droppedMalformed"]) == (1.0, 1.0, 0)


def test_the_truncation_line_and_default_caps():
    assert truncation_line(truncation(["length", "stop", "stop"], 32768)) == \
        "1 of 3 replies (33.3%) were cut at max_tokens (32,768 tokens; finish_reason length)"
    assert MAX_TOKENS == {"answers": 16_384, "scaffolding": 32_768, "dagmath": 32_768}
    shown = CliRunner().invoke(cli, ["evaluate", "dagmath", "--help"]).output
    assert "max_tokens (32768)" in " ".join(shown.split())
    answers_help = " ".join(CliRunner().invoke(cli, ["evaluate", "answers", "--help"]).output.split())
    assert "max_tokens (16384), context (16384: prompt plus reply" in answers_help
    assert truncation_line(truncation(["length", "stop"], 16384, 16384)) == \
        ("1 of 2 replies (50.0%) were cut at the context window (16,384 tokens, prompt plus reply; on a server, its "
         "own window; finish_reason length)")


def test_commands_send_their_papers_max_tokens_by_default(graph_location, tmp_path):
    """Without --gen-kwargs, evaluate answers runs in paper 1's 16,384-token context window (prompt plus reply,
    §4), so the openai backend sends no max_tokens and the server's window bounds the reply; evaluate dagmath
    caps the reply at 32,768 tokens; a --gen-kwargs max_tokens alone is sent as it is, without the window. The
    stored runs' sampling, the requests and the summaries' truncation figures say so."""
    from kstp.graph.factory import open_store
    from kstp.loaders import cot
    from tests.endpoint import FakeEndpoint

    with open_store(graph_location) as store:
        load_toy(store, tmp_path)
        cot.write_cot_set(store, cot.read_cot_files([PROMPT.parent / "log_count.json"], "logs"))
    caps, bodies = {}, []
    with FakeEndpoint(reply=lambda body: bodies.append(body) or "\\boxed{5}") as server:
        for name, args in (("answers", ["answers", "--dataset", "toy"]),
                           ("dagmath", ["dagmath", "--dataset", "logs", "--shots", "0", "--samples", "1"]),
                           ("answers 256", ["answers", "--dataset", "toy", "--gen-kwargs", "max_tokens=256",
                                            "--new-run"]),
                           ("answers 32k", ["answers", "--dataset", "toy", "--gen-kwargs", "context=32768",
                                            "--new-run"])):
            bodies.clear()
            result = CliRunner().invoke(cli, ["--graph", graph_location, "evaluate", *args, "--model", "m",
                                              "--base-url", server.base_url, "--json"])
            assert result.exit_code == 0, result.output
            summary = json.loads(result.stdout)
            with open_store(graph_location) as store:
                config = json.loads(store.frame("run_by_id", {"runId": summary["runId"]}).iloc[0]["config"])
            sent = {body.get("max_tokens") for body in bodies}
            caps[name] = (config["sampling"]["max_tokens"], config["sampling"].get("context"), sent,
                          summary["truncation"]["maxTokens"], summary["truncation"].get("context"),
                          summary["truncation"]["truncated"])
    assert caps == {"answers": (16384, 16384, {None}, 16384, 16384, 0),
                    "dagmath": (32768, None, {32768}, 32768, None, 0),
                    "answers 256": (256, None, {256}, 256, None, 0),
                    "answers 32k": (32768, 32768, {None}, 32768, 32768, 0)}  # a wider window alone: the reply fills it
