"""Every command line the README shows (code blocks and inline code) and the ``--help`` example blocks show is one
kstp accepts: the command exists, every option is its own, every value has the option's type
and choices (issue 24, §5: the README named ``kstp koc``).

Each line is parsed by click down to the last subcommand, as a run would, without running
it (the examples need data, models and servers). A synopsis line is read as one command:
``[...]`` marks are dropped and their options kept, ``a|b`` takes ``a``, ``kstp db init |
stats`` is two commands, ``--model ...`` gives some value, and the placeholders N, S and L
(counts, seeds, thresholds) read as numbers. A
path that must exist and does not is accepted: the examples name the user's files.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import click
import pytest

from kstp.cli.main import cli
from tests.cli.test_cli import kstp  # noqa: F401 (fixture)

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDERS = {"N": "2", "S": "1", "L": "3"}


def _logical_lines(lines: list[str]) -> list[str]:
    out, pending = [], ""
    for line in lines:
        pending += line.rstrip().removesuffix("\\").strip() + " "
        if not line.rstrip().endswith("\\"):
            out.append(pending.strip())
            pending = ""
    return out


def _commands(lines: list[str]) -> list[str]:
    """The ``kstp`` command lines of a code block's lines: continuations joined, comments dropped."""
    commands = []
    for line in _logical_lines(lines):
        line = re.sub(r"\s+#\s.*$", "", line)
        if not line.startswith("kstp "):
            continue
        first, *more = line.split(" | ")
        commands.append(first)
        prefix = " ".join(first.split()[:2])
        commands += [f"{prefix} {part}" for part in more]
    return commands


def _readme_commands() -> list[str]:
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", (ROOT / "README.md").read_text(), re.M | re.S)
    return [command for block in blocks for command in _commands(block.splitlines())]


def _readme_prose_commands() -> list[str]:
    """Inline ``kstp ...`` spans of the prose: they name a command, often without its required options."""
    text = (ROOT / "README.md").read_text()
    return sorted({" ".join(span.split()) for span in re.findall(r"(?<!`)`(kstp [^`]+)`(?!`)", text)})


def _help_examples() -> list[tuple[str, str]]:
    found = []

    def walk(command: click.Command, path: str) -> None:
        lines = (command.help or "").splitlines()
        examples = [line for line in _logical_lines(lines) if line.startswith("kstp ")]
        found.extend((path, example) for example in examples)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}")

    walk(cli, "kstp")
    return found


def _arguments(line: str) -> list[str]:
    line = line.replace('"$KSTP_GRAPH"', "ladybug:.kstp/graph")
    line = re.sub(r"(?<=\s-)(-[\w-]+) \.\.\.(?=[\s\]]|$)", r"\1 VALUE", line)  # "--model ...": some value
    line = re.sub(r"(?<=\s)\.\.\.(?=[\s\]]|$)", " ", line)  # "more of the same", not a quoted "..."
    line = line.replace("[", " ").replace("]", " ")
    return [PLACEHOLDERS.get(w, w).split("|")[0] for w in shlex.split(line)[1:]]


def _parse(args: list[str]) -> None:
    """Parse ``kstp ARGS`` down to its last subcommand, as click does before it runs one."""
    command, ctx = cli, cli.make_context("kstp", list(args))
    while isinstance(command, click.Group):
        name, command, rest = command.resolve_command(ctx, [*ctx._protected_args, *ctx.args])
        ctx = command.make_context(name, rest, parent=ctx)


def _accepted(line: str, prose: bool = False) -> None:
    try:
        _parse(_arguments(line))
    except click.exceptions.Exit as exc:  # --help, --version
        assert exc.exit_code == 0, line
    except click.exceptions.NoArgsIsHelpError:  # a group named alone: its help
        if not prose:
            pytest.fail(f"{line}\n  -> names a group, not a command")
    except click.MissingParameter as exc:
        if not prose:
            pytest.fail(f"{line}\n  -> {exc.format_message()}")
    except click.BadParameter as exc:
        if "does not exist" not in exc.format_message():
            pytest.fail(f"{line}\n  -> {exc.format_message()}")
    except click.UsageError as exc:
        pytest.fail(f"{line}\n  -> {exc.format_message()}")


README = _readme_commands()
PROSE = _readme_prose_commands()
EXAMPLES = _help_examples()


def test_every_command_has_an_example_and_the_readme_shows_commands():
    assert len(README) >= 30 and len(EXAMPLES) >= 60


@pytest.mark.parametrize("line", README)
def test_readme_command_is_accepted(line):
    _accepted(line)


@pytest.mark.parametrize("line", PROSE)
def test_readme_prose_names_real_commands_and_options(line):
    _accepted(line, prose=True)


@pytest.mark.parametrize(("command", "line"), EXAMPLES, ids=[f"{c}::{i}" for i, (c, _) in enumerate(EXAMPLES)])
def test_help_example_is_accepted(command, line, monkeypatch):
    monkeypatch.setenv("NEO4J_USER", "neo4j")  # an example may name a Neo4j server: its credentials are the user's
    monkeypatch.setenv("NEO4J_PASSWORD", "unused")
    _accepted(line)


@pytest.mark.parametrize("line", ["kstp koc", "kstp evaluate psr --no-such-option",
                                  "kstp kst fringe --dataset d --fringe classes"])
def test_a_wrong_command_line_is_caught(line):
    with pytest.raises(pytest.fail.Exception):
        _accepted(line, prose=True)


#: How the "Using kstp" block runs on the real fraction-subtraction data (the demo's frcsub):
#: D is frcsub, the file names are its files, DIR a fresh folder, optional [...] parts are left
#: out, a|b takes a except the rule, which is the demo's (reflexive). Not run: `db reset` (it
#: empties the graph), the XES3G5M map (4,118 questions: minutes, and no other line reads it),
#: `evaluate answers` (a model server) and `runs show|delete ID` (ID is one of the user's runs);
#: `kst check --state Item10` is the README's non-state (exit 1); `kstp explore` without --export serves
#: until Ctrl-C (tests/explore runs it). The block ends with `db delete-dataset D`, so every line before
#: it has the data.
SKIPPED = ("kstp db reset", "xes_skills_nys.json", "kstp evaluate answers", "kstp runs show", "kstp runs delete",
           "kstp explore [")
EXIT_1 = ("kstp kst check",)


def _using_kstp_block() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return _commands(re.search(r"^## Using kstp.*?^```\n(.*?)^```", text, re.M | re.S).group(1).splitlines())


def test_the_using_kstp_block_runs_on_frcsub(kstp, data_root, tmp_path):  # noqa: F811 (fixture)
    folder = data_root / "responses" / "frcsub"
    files = {"nys_concepts.json": data_root / "standards" / "nys_concepts.json", "items.csv": folder / "items.csv",
             "q.csv": folder / "qmatrix.csv", "responses.csv": folder / "responses.csv", "DIR": tmp_path / "export",
             "D": "frcsub", "site/": tmp_path / "site"}
    ran = []
    for line in _using_kstp_block():
        if any(skip in line for skip in SKIPPED):
            continue
        line = re.sub(r"\s*\[[^\[\]]*\]", "", re.sub(r"\s*\[[^\[\]]*\]", "", line))  # optional parts, nested
        line = line.replace("--rule strict|reflexive", "--rule reflexive").replace("--dataset D", "--dataset frcsub")
        args = [str(files.get(word, word)) for word in _arguments(line)]
        result = kstp(*args)
        expected = 1 if line.startswith(EXIT_1) else 0
        assert result.exit_code == expected, f"{line}\n{result.output[-2000:]}"
        ran.append(" ".join(line.split()[:3]))
    assert len(ran) >= 18 and ran[-1] == "kstp db delete-dataset"
    assert "kstp explore --export" in ran and (tmp_path / "site" / "index.html").is_file()
    assert "frcsub" not in {d["datasetId"] for d in json.loads(kstp("db", "stats", "--json").stdout)["datasets"]}
