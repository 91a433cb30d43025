"""The model defaults of the CLI work offline: they name models that are installed."""

from __future__ import annotations

from pathlib import Path

from kstp.cli.main import cli
from kstp.inference.backends.openai_compat import OpenAIBackend
from kstp.inference.embeddings import resolve_model
from kstp.inference.similarity import LlmNli, nli_backend


def _default(command: str, option: str):
    group = cli.commands["evaluate"]
    return next(p for p in group.commands[command].params if p.name == option).default


def test_embedding_model_default_is_the_installed_minilm():
    default = _default("scaffolding", "embedding_model")
    assert default == "minilm" and (Path(resolve_model(default)) / "config.json").is_file()


def test_nli_default_is_the_llm_judge_which_needs_no_download():
    default = _default("rqeval", "nli")
    assert default == "llm"
    judge = OpenAIBackend("m", base_url="http://127.0.0.1:9/v1")  # constructing it contacts nothing
    assert isinstance(nli_backend(default, inference=judge), LlmNli)
