"""Every command line the README shows (code blocks and inline code) and the ``--help`` example blocks show is one
kstp accepts: the command exists, every option is its own, every value has the option's type
and choices (issue 24, §5: the README named ``kstp koc``).

Each line is parsed by click down to the last subcommand, as a run would; then every
``--help`` example runs (test_every_help_example_runs) and the README's "Using kstp" block
runs on both engines (test_the_using_kstp_block_runs_on_frcsub). A synopsis line is read as one command:
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
from click.testing import CliRunner

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
#: `evaluate answers` (a model server) and `runs show|delete|export|diff ID` (ID is one of the user's runs);
#: `kst check --state Item10` is the README's non-state (exit 1); `kstp explore` without --export serves
#: until Ctrl-C (tests/explore runs it). The block ends with `db delete-dataset D`, so every line before
#: it has the data.
SKIPPED = ("kstp db reset", "xes_skills_nys.json", "kstp evaluate answers", "kstp runs show", "kstp runs delete",
           "kstp runs export", "kstp runs diff", "kstp explore [")
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


#: ``--help`` examples that cannot run here, and why; every other example runs in
#: test_every_help_example_runs.
NOT_RUN = {
    "train_valid_sequences_quelevel.csv": "XES3G5M's student log is not in ../shared/data",
    "--subset verified": "the hand-checked XES3G5M annotations (ASSESSES.verified) are not here",
    "evaluate koc --dataset xes3g5m": "XES3G5M's students are not here",
    "evaluate reasoning --dataset xes3g5m": "judges answers runs of two models on the 4,118 XES3G5M questions",
    "evaluate scaffolding --dataset xes3g5m": "asks about 1,400 XES3G5M questions five times, after embedding 4,118",
    "report scaffolding --dataset xes3g5m": "reports the run of the line above",
    "annotate concepts --items xes3g5m": "asks about the 4,118 XES3G5M questions twice",
    "cross-encoder:/models/": "names an NLI model folder of the user's (no hub downloads here)",
    "xes3g5m.csv": "XES3G5M's student log is not in ../shared/data",
    "db load": "stops and refills the Neo4j server kstp manages (tests/graph/test_bulk.py loads a throw-away one)",
    "explore --open": "serves until Ctrl-C (tests/explore/test_browser.py serves and stops it)",
    "explore --port": "serves until Ctrl-C",
    "7687 explore": "serves until Ctrl-C",
    "examples/campaign.toml": "names two vLLM servers of the user's (tests/cli/test_campaign.py runs a campaign "
                              "against a local endpoint, tests/evaluators/test_campaign.py reads this file)",
    "--samples 4 --limit 12": "48 completions of the local model, 4 minutes here (tests/inference/test_runlog.py "
                              "runs the same options against a local endpoint)",
}
#: Examples that change what every later example reads run last, in this order: the import of 500 simulated
#: learners into probability_pks (the README's probability_pks fits read its 504 real ones; with the simulated
#: half the ``fit blim --bootstrap 200`` example's refits run to the EM's 10,000-step cap, 3x the time),
#: then those that end in the graph's loss or another graph's gain.
LAST = ("kstp kst import simulated.dat --dataset probability_pks --json",
        "kstp runs delete 'answers:smollm2:frcsub:3f2a9c1d0b7e'", "kstp db delete-dataset probability_pks",
        "kstp --graph neo4j://localhost:7687 db import backup/", "kstp --graph ladybug:/data/copy db import backup/",
        "kstp db reset --yes")
#: The example that exits 1 by design: Item04 and Item10 are no knowledge state of frcsub.
EXIT_1_EXAMPLES = ("kstp kst check --dataset frcsub --state Item04,Item10",)
RUN_ID = re.compile(r"^(RUN\d?|RUN_[AB]|[a-z]+:[^:\s]+:[^:\s]+:[0-9a-f]{12})$")


def _user_files(folder: Path, data_root: Path) -> None:
    """The files the examples name as the user's, in the working folder: frcsub's, the toy
    curriculum's, the DAG-MATH fixtures as gold and sampled trajectories, a catalogue and weights, pks's
    DoignonFalmagne7 learning space with its data."""
    import shutil

    from tests.conftest import write_toy_files

    for name in ("items.csv", "qmatrix.csv", "skills.csv", "responses.csv"):
        shutil.copy(data_root / "responses" / "frcsub" / name, folder / name)
    toy = write_toy_files(folder)
    toy["concepts"].rename(folder / "concepts.csv")
    toy["edges"].rename(folder / "edges.csv")
    (folder / "gold").mkdir()
    for name in ("log_count.json", "heptagon.json"):
        shutil.copy(ROOT / "tests" / "fixtures" / "dagmath" / name, folder / "gold" / name)
    # Few-shot examples come from perfect gold trajectories of other problems: the perfect one of the
    # log count under a second problem id
    perfect = json.loads((folder / "gold" / "log_count.json").read_text())[0]
    (folder / "gold" / "log_count_again.json").write_text(json.dumps([{**perfect, "problem_id": "log_count_again"}]))
    shutil.copy(ROOT / "tests" / "fixtures" / "dagmath" / "log_count.json", folder / "samples.json")
    # the authors' few-shot prompt file (evaluate dagmath --prompt-file): the tests' stand-in for it
    shutil.copy(ROOT / "tests" / "fixtures" / "dagmath" / "fewshot_instructions.txt", folder)
    shutil.copy(ROOT / "kstp" / "catalogues" / "frcsub_mixed.yaml", folder / "my_domain.yaml")
    for name in ("DoignonFalmagne7.spc", "DoignonFalmagne7.dat"):  # a learning space and its data (fit slm)
        shutil.copy(ROOT / "tests" / "data" / "kst" / "kstio" / name, folder / name)
    for name in ("weights.yaml", "my_weights.yaml"):
        (folder / name).write_text("correct_first: {cq: 0.5, cs: 0.2, rs: 0.1, ls: 0.1, es: 0.05, ss: 0.05}\n")
    # Records as datasets and hub downloads leave them, a prompt file and exemplars (evaluate answers)
    import pyarrow as pa
    import pyarrow.parquet as pq

    (folder / "gsm8k" / "main").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist([{"question": "Half of 10?", "answer": "10 / 2 = 5\n#### 5"}]),
                   folder / "gsm8k" / "main" / "test-00000-of-00001.parquet")
    (folder / "mmlu.jsonl").write_text(json.dumps({"question": "2 + 2?", "choices": ["3", "4"], "answer": 1}) + "\n")
    (folder / "my_prompt.yaml").write_text("system: Answer in \\boxed{}.\nuser: 'Q: {question}\n{options}'\n")
    (folder / "shots.jsonl").write_text('{"question": "1 + 1?", "answer": "2"}\n{"question": "2 + 1?", "answer": 3}\n')


def _example_order() -> list[str]:
    """The ``--help`` examples, then the README's other command lines (its "Using kstp" block runs in
    test_the_using_kstp_block_runs_on_frcsub), less NOT_RUN's, with LAST's at the end."""
    using = set(_using_kstp_block())
    lines = [line for _, line in EXAMPLES] + [line for line in README if line not in using]
    lines = list(dict.fromkeys(line for line in lines if not any(mark in line for mark in NOT_RUN)))
    assert set(LAST) <= set(lines)
    return [line for line in lines if line not in LAST] + list(LAST)


def _filled(line: str) -> str:
    """A README synopsis as a user types it: optional ``[...]`` parts left out, ``--model M`` a
    served model, ``--base-url URL`` the server's (see the test), ``RUN`` placeholders runs."""
    line = re.sub(r"\s*\[[^\[\]]*\]", "", re.sub(r"\s*\[[^\[\]]*\]", "", line))
    line = re.sub(r"--model M\b", "--model Qwen/Qwen2.5-7B-Instruct", line)
    return line.replace("--base-url URL", "--base-url http://127.0.0.1:8000/v1")


@pytest.mark.slow
def test_every_help_example_and_readme_command_runs(data_root, tmp_path, monkeypatch):
    """Every ``--help`` example and README command line, run in order on one embedded graph as
    a user would type it (issue 24, §5): the shipped local model answers the ``--backend local``
    lines, an OpenAI-compatible endpoint on 127.0.0.1 (tests/endpoint.py) the lines that name a
    server or none (``$OPENAI_BASE_URL``), and the user's files are real ones (_user_files).
    Only NOT_RUN's lines are left out.

    Placeholders are read as a user fills them in (_filled): a run id that is not in the graph
    (RUN, RUN_A, ``answers:smollm2:frcsub:3f2a...``) is a run of the same evaluator (the
    reported one's for RUN) that is, another one for a second placeholder of the same line;
    ``--graph`` of an import is a new embedded graph."""
    from tests.endpoint import FakeEndpoint

    work = tmp_path / "work"
    work.mkdir()
    _user_files(work, data_root)
    monkeypatch.chdir(work)
    monkeypatch.setenv("KSTP_DATA", str(data_root))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    graph = f"ladybug:{tmp_path / 'graph'}"

    def run(*args):
        return CliRunner().invoke(cli, ["--graph", graph, *map(str, args)])

    def real_runs(args: list[str]) -> list[str]:
        runs = {r["runId"]: r["evaluator"] for r in json.loads(run("runs", "list", "--json").stdout)}
        taken, out = set(), []
        wanted = [w for w in args if RUN_ID.match(w) and w not in runs]
        for word in args:
            if RUN_ID.match(word) and word not in runs:
                evaluator = args[1] if word.startswith("RUN") else word.split(":")[0]  # kstp report EVALUATOR
                same = [r for r, e in runs.items() if e == evaluator] or [r for r in runs if r.startswith("cot:")]
                # Runs of one dataset, enough for every id the line names (`runs diff` pairs two on one
                # dataset), the example's own dataset first: the list's order is not the examples' order.
                ds = lambda r: r.split(":")[-2] if r.count(":") >= 3 else ""  # noqa: E731
                plenty = {d for d in map(ds, same) if sum(ds(r) == d for r in same) >= len(wanted)}
                same.sort(key=lambda r: (ds(r) not in plenty, ds(r) != ds(word), ds(r)))
                word = next((r for r in same if r not in taken), same[0] if same else word)
                taken.add(word)
            out.append(word)
        return out

    # What every example takes as there: the curriculum and the probability data, as the demo ingests them.
    pks = data_root / "responses" / "probability_pks"
    for setup in (["ingest", "standards", data_root / "standards" / "nys_concepts.json"],
                  ["ingest", "items", pks / "items.csv", "--dataset", "probability_pks", "--qmatrix",
                   pks / "qmatrix.csv", "--skills", pks / "skills.csv"],
                  ["ingest", "responses", pks / "responses_full.csv", "--dataset", "probability_pks"],
                  ["derive", "question-prerequisites", "--dataset", "probability_pks", "--rule", "reflexive"]):
        assert run(*setup).exit_code == 0
    ran = []
    with FakeEndpoint() as endpoint:
        monkeypatch.setenv("OPENAI_BASE_URL", endpoint.base_url)
        for line in _example_order():
            line = _filled(line).replace("../shared/data", str(data_root))
            line = line.replace("kstp/catalogues/", f"{ROOT}/kstp/catalogues/")
            line = re.sub(r"https?://(127\.0\.0\.1:8000|api\.openai\.com)/v1", endpoint.base_url, line)
            if "table7.csv" in line:  # the user's scores table: the one report rqeval wrote
                (work / "table7.csv").write_bytes((work / "results" / "rqeval_scores.csv").read_bytes())
            args = real_runs(shlex.split(line)[1:])
            args = [str(p) for a in args for p in ((sorted(work.glob(a)) or [a]) if "*" in a else [a])]  # as bash
            if args[0] == "--graph":  # an import into another graph: a new embedded one
                args[1] = f"ladybug:{tmp_path / f'copy{len(ran)}'}"
                result = CliRunner().invoke(cli, args)
            else:
                result = run(*args)
            expected = 1 if line in EXIT_1_EXAMPLES else 0
            assert result.exit_code == expected, f"{line}\n{result.output[-3000:]}"
            ran.append(line)
    assert len(ran) == len(_example_order()) >= 90
