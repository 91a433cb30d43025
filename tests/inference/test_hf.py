"""The transformers backend on the CPU, with a tiny Llama built from a config (random weights) and the
word-level tokenizer kstp builds offline: no download, a second or two a test."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

torch = pytest.importorskip("torch", reason="the models extra (torch, transformers) is part of make test")

from kstp.cli.main import cli  # noqa: E402
from kstp.evaluators import answers  # noqa: E402
from kstp.inference.backend import Sampling  # noqa: E402
from kstp.inference.backends.hf import HFBackend, SeededSampler, offline_tokenizer, seeded_uniform  # noqa: E402
from tests.conftest import load_toy  # noqa: E402

CHATS = [[{"role": "user", "content": "w1 w2 w3"}],
         [{"role": "system", "content": "w9"}, {"role": "user", "content": "w4 w5 w6 w7 w8 w9 w10 w11"}],
         [{"role": "user", "content": "w12"}]]


def _tiny(seed: int = 0):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    tokenizer = offline_tokenizer(96)
    config = LlamaConfig(vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                         bos_token_id=2, eos_token_id=3, pad_token_id=0)
    return LlamaForCausalLM(config).float().eval(), tokenizer


@pytest.fixture(scope="module")
def tiny():
    return _tiny()


def _backend(tiny, window: int) -> HFBackend:
    model, tokenizer = tiny
    return HFBackend.of("tiny", model, tokenizer, concurrency=window, config="tiny-llama")


def test_a_sample_is_the_same_whatever_shares_its_batch(tiny):
    """Sample i of a prompt is drawn with seed + i alone: all in one batch, one at a time, or asked again."""
    sampling = Sampling(n=2, temperature=1.0, top_p=0.9, max_tokens=10, seed=5)
    together = _backend(tiny, 8).generate(CHATS, sampling)
    alone = _backend(tiny, 1).generate(CHATS, sampling)
    assert [[c.text for c in row] for row in together] == [[c.text for c in row] for row in alone]
    assert [[(c.sample_index, c.seed) for c in row] for row in together] == [[(0, 5), (1, 6)]] * 3
    again = _backend(tiny, 8).generate(CHATS, sampling, samples=[[1], [0], [1]])
    assert [row[0].text for row in again] == [together[0][1].text, together[1][0].text, together[2][1].text]
    assert together[0][0].text != together[0][1].text  # two seeds, two draws
    assert all(c.tokens_in and c.finish_reason in ("stop", "length") for row in together for c in row)


def test_greedy_length_and_stop_strings(tiny):
    backend = _backend(tiny, 4)
    [[cut]] = backend.generate(CHATS[:1], Sampling(temperature=0.0, max_tokens=6))
    assert (cut.finish_reason, cut.tokens_out) == ("length", 6) and 2 <= len(cut.text.split()) <= 6
    [[same]] = backend.generate(CHATS[:1], Sampling(temperature=0.0, max_tokens=6, seed=99))
    assert same.text == cut.text  # greedy: the seed changes nothing
    word = cut.text.split()[-1]
    [[stopped]] = backend.generate(CHATS[:1], Sampling(temperature=0.0, max_tokens=6, stop=(word,)))
    assert (stopped.text, stopped.finish_reason) == (cut.text[:cut.text.index(word)], "stop")


def test_a_context_window_leaves_each_prompt_its_own_reply_budget(tiny):
    """Under ``context`` (paper 1's window: prompt plus reply) each row of one batch may reply with what its own
    prompt leaves, at most max_tokens: the greedy reply is the unbounded one cut there, ``length`` where cut."""
    backend = _backend(tiny, 4)
    free = [row[0] for row in backend.generate(CHATS, Sampling(temperature=0.0, max_tokens=12))]
    window = max(c.tokens_in for c in free) + 4
    windowed = [row[0] for row in backend.generate(CHATS, Sampling(temperature=0.0, max_tokens=12, context=window))]
    budgets = [min(12, window - c.tokens_in) for c in free]
    assert budgets[1] == 4 and budgets[0] > 4 and budgets[2] > budgets[0]  # three prompts, three budgets
    for unbounded, cut, budget in zip(free, windowed, budgets, strict=True):
        assert cut.tokens_in == unbounded.tokens_in and cut.tokens_out == min(budget, unbounded.tokens_out)
        assert unbounded.text.startswith(cut.text)
        if unbounded.tokens_out > budget:
            assert cut.finish_reason == "length"


def test_the_seeded_sampler_draws_from_the_model_distribution():
    """Gumbel-max over 20,000 seeds: token frequencies match the softmax (and top-p's renormalised nucleus)."""
    rows = 20_000
    probabilities = torch.tensor([0.7, 0.2, 0.1])
    scores = probabilities.log().repeat(rows, 1)
    prompt = torch.zeros((rows, 4), dtype=torch.long)
    for top_p, expected in ((1.0, [0.7, 0.2, 0.1]), (0.75, [0.7 / 0.9, 0.2 / 0.9, 0.0])):
        picked = SeededSampler(range(rows), 1.0, top_p, 4, "cpu")(prompt, scores).argmax(dim=-1)
        frequencies = torch.bincount(picked, minlength=3).double() / rows
        assert frequencies.tolist() == pytest.approx(expected, abs=0.012)
    noise = seeded_uniform(torch.arange(1000), 3, 50)
    assert 0 < float(noise.min()) and float(noise.max()) < 1 and abs(float(noise.mean()) - 0.5) < 0.01
    assert torch.equal(noise[7], seeded_uniform(torch.tensor([7]), 3, 50)[0])  # a row's noise is its own
    assert not torch.equal(noise[7], seeded_uniform(torch.tensor([7]), 4, 50)[0])  # and changes with the step


def test_an_answers_run_through_the_hf_backend(toy, tiny):
    backend = _backend(tiny, 3)
    first = answers.evaluate(toy, backend, "toy", Sampling(max_tokens=8))
    summary = first.summary()
    assert (first.generated, summary["questions"], summary["pending"], summary["concurrency"]) == (8, 8, 0, 3)
    assert first.responses["verdict"].notna().all() and summary["tokensPerS"] > 0
    assert (first.responses["text"].str.len() > 0).all()
    assert answers.evaluate(toy, backend, "toy", Sampling(max_tokens=8)).generated == 0


def test_cli_evaluate_answers_with_a_saved_model(tmp_path, graph_location):
    model, tokenizer = _tiny(1)
    model.save_pretrained(tmp_path / "tiny")
    tokenizer.save_pretrained(tmp_path / "tiny")
    from kstp.graph.factory import open_store

    with open_store(graph_location) as store:
        load_toy(store, tmp_path)
    result = CliRunner().invoke(cli, ["--graph", graph_location, "evaluate", "answers", "--dataset", "toy",
                                      "--model", str(tmp_path / "tiny"), "--backend", "hf", "--model-args",
                                      "dtype=float32", "--gen-kwargs", "max_tokens=4", "--json"])
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert (summary["questions"], summary["pending"], summary["concurrency"]) == (8, 0, 8)
    missing = CliRunner().invoke(cli, ["--graph", graph_location, "evaluate", "answers", "--dataset", "toy",
                                       "--model", str(tmp_path / "absent"), "--backend", "hf"])
    assert missing.exit_code == 1 and "the hf backend could not load model" in missing.stderr


def test_top_k_and_min_p_draw_from_the_kept_tokens_renormalised():
    """Issue 43: the hf backend drew from the whole vocabulary where transformers' generate applies the
    model's generation_config (top_k=50); top_k, min_p and the repetition penalty are now its to apply.
    Over 20,000 seeds from (0.5, 0.3, 0.15, 0.05): top_k 2 keeps the two likeliest (5/8, 3/8); min_p 0.25
    drops what is under 0.125 (0.5, 0.3, 0.15 renormalised over 0.95)."""
    rows = 20_000
    scores = torch.tensor([0.5, 0.3, 0.15, 0.05]).log().repeat(rows, 1)
    prompt = torch.zeros((rows, 4), dtype=torch.long)
    for options, expected in (({"top_k": 2}, [0.5 / 0.8, 0.3 / 0.8, 0, 0]),
                              ({"min_p": 0.25}, [0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0])):
        picked = SeededSampler(range(rows), 1.0, 1.0, 4, "cpu", **options)(prompt, scores).argmax(dim=-1)
        assert (torch.bincount(picked, minlength=4).double() / rows).tolist() == pytest.approx(expected, abs=0.012)


def test_a_repetition_penalty_changes_the_greedy_reply_and_is_recorded(tiny):
    backend = _backend(tiny, 4)
    [[plain]] = backend.generate(CHATS[:1], Sampling(temperature=0.0, max_tokens=12))
    [[penalised]] = backend.generate(CHATS[:1], Sampling(temperature=0.0, max_tokens=12, repetition_penalty=50.0))
    words = penalised.text.split()
    assert len(set(words)) == len(words) and plain.text != penalised.text  # no token twice under so strong a one
    assert Sampling(repetition_penalty=50.0).as_dict()["repetition_penalty"] == 50.0
    assert "top_k" not in Sampling().as_dict()  # unset: out of every cache key, as before it existed


def test_each_row_has_its_own_latency(tiny):
    """Issue 43: latencyS repeated the batch's time on every row; a row's is now the time to its last token, so
    in one greedy batch a shorter reply never took longer than a longer one."""
    rows = [row[0] for row in _backend(tiny, 4).generate(CHATS, Sampling(temperature=0.0, max_tokens=12))]
    by_steps = sorted(rows, key=lambda c: c.tokens_out + (c.finish_reason == "stop"))  # the end token is a step
    assert all(a.latency_s <= b.latency_s for a, b in zip(by_steps, by_steps[1:], strict=False))
    if len({c.tokens_out for c in rows}) > 1:
        assert len({c.latency_s for c in rows}) > 1  # not the batch's one time on every row


def test_threads_is_applied_checked_and_logged(tmp_path):
    """Issue 43: the hf backend had no thread setting on a CPU; threads=N sets torch's and the log says so."""
    from kstp.errors import ConfigError
    from kstp.inference.runlog import environment

    before = torch.get_num_threads()
    try:
        with pytest.raises(ConfigError, match="threads=0: the hf backend needs a whole number >= 1"):
            HFBackend(str(tmp_path), threads=0)
        with pytest.raises(ConfigError, match="could not load model"):
            HFBackend(str(tmp_path), threads=1)  # an empty folder, read offline; threads applied before it loads
        assert torch.get_num_threads() == 1 and environment()["torch"]["threads"] == 1
    finally:
        torch.set_num_threads(before)
