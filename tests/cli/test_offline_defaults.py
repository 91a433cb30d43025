"""The model defaults of the CLI work offline: they name models that are installed, or (RQEval's LS judge,
the authors' release's) a model of the user's Hugging Face cache, which never triggers a download."""

from __future__ import annotations

from pathlib import Path

import pytest

from kstp.cli.main import cli
from kstp.errors import ConfigError
from kstp.inference.backends.openai_compat import OpenAIBackend
from kstp.inference.embeddings import resolve_model
from kstp.inference.similarity import LlmNli, nli_backend


def _default(command: str, option: str):
    group = cli.commands["evaluate"]
    return next(p for p in group.commands[command].params if p.name == option).default


def test_embedding_model_default_is_the_installed_minilm():
    default = _default("scaffolding", "embedding_model")
    assert default == "minilm" and (Path(resolve_model(default)) / "config.json").is_file()


def test_nli_default_is_the_release_cross_encoder_from_the_cache_and_llm_stays_an_option(tmp_path, monkeypatch):
    default = _default("rqeval", "nli")
    assert default == "cross-encoder:cross-encoder/nli-deberta-v3-small"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))  # an empty cache: a one-line error, no download
    with pytest.raises(ConfigError, match="`hf download cross-encoder/nli-deberta-v3-small`"):
        nli_backend(default)
    judge = OpenAIBackend("m", base_url="http://127.0.0.1:9/v1")  # constructing it contacts nothing
    assert isinstance(nli_backend("llm", inference=judge), LlmNli)


@pytest.mark.parametrize(("path", "module"), [(("annotate", "concepts"), "annotation"),
                                              (("evaluate", "reasoning"), "reasoning")])
def test_gen_kwargs_help_states_the_evaluators_own_sampling(path, module):
    """--help names the sampling a command really uses (the evaluator's SAMPLING), not another command's."""
    import importlib

    from kstp.cli.models import gen_kwargs_help

    group, name = path
    command = cli.commands[group].commands[name]
    sampling = importlib.import_module(f"kstp.evaluators.{module}").SAMPLING
    help_text = next(p for p in command.params if p.name == "gen_kwargs").help
    assert help_text == gen_kwargs_help(sampling.max_tokens, sampling.temperature, sampling.top_p)
