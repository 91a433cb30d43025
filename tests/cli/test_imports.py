"""Start-up cost: loading the CLI imports none of the heavy libraries; commands import them when they run."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("torch", "openai", "matplotlib", "statsmodels", "scipy.stats", "sentence_transformers", "transformers")


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
    """The check can fail: the plots a command imports when it runs bring matplotlib in."""
    assert "matplotlib" in _loaded_after("import kstp.cli.main\nimport kstp.platform.plots")


def test_cli_choices_named_for_start_up_equal_the_library_constants():
    from kstp.cli import derive, evaluate, kst, nextstep
    from kstp.evaluators.nextstep import CONDITIONS, SAMPLING
    from kstp.evaluators.psr import DENOMINATORS
    from kstp.platform.kst import RULES
    from kstp.platform.spaces import FRINGES

    assert (derive._RULES, evaluate._DENOMINATORS, nextstep._CONDITIONS, nextstep._SAMPLINGS, kst._FRINGES) == (
        tuple(RULES), tuple(DENOMINATORS), tuple(CONDITIONS), tuple(SAMPLING), tuple(FRINGES))
